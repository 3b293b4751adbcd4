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
    }

    let keyPath: AnyKeyPath
    let kind: Kind

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

    /// Sections by the upper-cased first character of a string (ASCII case mapping).
    public static func firstLetter(_ keyPath: KeyPath<R, String>) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .firstLetter)
    }

    public var description: String {
        switch kind {
        case .attribute: "\(keyPath)"
        case .day(let offset): "day(\(keyPath), offset: \(offset)s)"
        case .firstLetter: "firstLetter(\(keyPath))"
        }
    }

    /// The SQL expression of the section value.
    func expression() throws -> SQLFragment {
        let column = try R.entity.column(for: keyPath)
        switch kind {
        case .attribute: return SQLBuilder.section(attribute: column)
        case .day(let offset): return SQLBuilder.section(dayOf: column, offsetSeconds: offset)
        case .firstLetter: return SQLBuilder.section(firstLetterOf: column)
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
