import Foundation
import GRDB

/// What divides a controller's results into sections, computed in SQL so that sections
/// never need records loaded.
///
/// ```swift
/// FetchedResultsController(request, store: store, sectionBy: .day(\.published))
/// FetchedResultsController(request, store: store, sectionBy: .firstLetter(\.title))
/// FetchedResultsController(request, store: store, sectionBy: .attribute(\.category))
/// ```
///
/// The request's first sort descriptor must order by the same attribute, so that each
/// section is one run of consecutive results.
// @unchecked Sendable: the key path is immutable.
public struct SectionKey<R: Record>: @unchecked Sendable, CustomStringConvertible {
    enum Kind: Hashable {
        case attribute
        case day(offsetSeconds: Int)
        case firstLetter
        case computed(name: String)
    }

    let keyPath: AnyKeyPath
    let kind: Kind
    let transform: (@Sendable (DatabaseValue) -> DatabaseValue)?

    init(keyPath: AnyKeyPath, kind: Kind, transform: (@Sendable (DatabaseValue) -> DatabaseValue)? = nil) {
        self.keyPath = keyPath
        self.kind = kind
        self.transform = transform
    }

    /// Sections by an attribute's value. A `nil` value forms its own section.
    public static func attribute<V: AttributeValue>(_ keyPath: KeyPath<R, V>) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .attribute)
    }

    /// Sections by calendar day (`YYYY-MM-DD`) of a date, in `timeZone` (fixed offset,
    /// taken when the key is made; UTC by default).
    public static func day(_ keyPath: KeyPath<R, Date>, timeZone: TimeZone = TimeZone(secondsFromGMT: 0)!) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .day(offsetSeconds: timeZone.secondsFromGMT()))
    }

    /// Sections by calendar day of an optional date.
    public static func day(_ keyPath: KeyPath<R, Date?>, timeZone: TimeZone = TimeZone(secondsFromGMT: 0)!) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .day(offsetSeconds: timeZone.secondsFromGMT()))
    }

    /// Sections by the first character of a string. (Exact, not case-folded: strings sort
    /// by their bytes, so "a…" and "A…" are far apart and must be separate sections; the
    /// default index title upper-cases it.)
    public static func firstLetter(_ keyPath: KeyPath<R, String>) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .firstLetter)
    }

    /// Sections by a value computed in Swift from one attribute. Only that column is read
    /// to compute sections — never whole records — but every row's value passes through
    /// `transform`, so prefer the SQL keys above for large tables.
    ///
    /// `transform` must agree with the sort: rows with the same section must be
    /// consecutive in the results, or ``FetchedResultsController/performFetch()`` throws
    /// ``FolioError/sectionKeyNotLeadingSort(sectionKey:firstSort:)``. `name` identifies
    /// the transform in persistent caches: change it when the transform changes.
    ///
    /// ```swift
    /// .computed(\.score, name: "tens") { score in "\(score / 10 * 10)s" }
    /// ```
    public static func computed<V: AttributeValue>(
        _ keyPath: KeyPath<R, V>, name: String, _ transform: @escaping @Sendable (V) -> String?
    ) -> SectionKey {
        let column = (R.entity.attribute(for: keyPath)?.column) ?? "?"
        return SectionKey(keyPath: keyPath, kind: .computed(name: name)) { stored in
            guard let value = try? V.decode(stored: stored, column: column), let section = transform(value) else {
                return .null
            }
            return section.databaseValue
        }
    }

    public var description: String {
        switch kind {
        case .attribute: "\(keyPath)"
        case .day(let offset): "day(\(keyPath), offset: \(offset)s)"
        case .firstLetter: "firstLetter(\(keyPath))"
        case .computed(let name): "computed(\(keyPath), \(name))"
        }
    }

    /// The SQL expression of the section value, and the Swift transform applied to it.
    func expression() throws -> SectionExpression {
        let column = try R.entity.column(for: keyPath)
        switch kind {
        case .attribute: return SectionExpression(fragment: SQLBuilder.section(attribute: column))
        case .day(let offset): return SectionExpression(fragment: SQLBuilder.section(dayOf: column, offsetSeconds: offset))
        case .firstLetter: return SectionExpression(fragment: SQLBuilder.section(firstLetterOf: column))
        case .computed: return SectionExpression(fragment: SQLBuilder.section(attribute: column), transform: transform)
        }
    }

    /// The section's name for a section value.
    static func name(of value: DatabaseValue) -> String {
        switch value.storage {
        case .null: ""
        case .string(let s): s
        case .int64(let i): String(i)
        case .double(let d): String(d)
        case .blob(let b): b.map { String(format: "%02x", $0) }.joined()
        }
    }
}

/// How a section value is read: an SQL expression, optionally passed through Swift.
struct SectionExpression: Sendable {
    var fragment: SQLFragment
    var transform: (@Sendable (DatabaseValue) -> DatabaseValue)? = nil

    @inline(__always)
    func value(_ raw: DatabaseValue) -> DatabaseValue { transform.map { $0(raw) } ?? raw }
}
