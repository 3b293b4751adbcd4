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
public struct SectionKey<R: PersistentRecord>: @unchecked Sendable, CustomStringConvertible {
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
    ///
    /// Under a folded sort of the attribute (`SortDescriptor(\.title.folded)`, for an
    /// attribute declared `folded`), the sections are the first characters of the folded
    /// text instead — "Émile" and "emile" are both in "e" — as with `.firstLetter(\.title.folded)`.
    public static func firstLetter(_ keyPath: KeyPath<R, String>) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .firstLetter)
    }

    /// Sections by a value computed in Swift from one attribute. Only that column is read
    /// to compute sections — never whole records — but every row's value passes through
    /// `transform`, so prefer the SQL keys above for large tables.
    ///
    /// `transform` must agree with the sort: rows with the same section must be
    /// consecutive in the results, or ``FetchedResultsController/performFetch()-68xbj`` throws
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

    /// The key's kind and attribute, such as `day(\Article.published, offset: 0s)`.
    public var description: String {
        switch kind {
        case .attribute: "\(keyPath)"
        case .day(let offset): "day(\(keyPath), offset: \(offset)s)"
        case .firstLetter: "firstLetter(\(keyPath))"
        case .computed(let name): "computed(\(keyPath), \(name))"
        }
    }

    /// The column sections are computed from under `query`'s order: the key path's column —
    /// or, for `.firstLetter` of a folded attribute under a folded sort of it, its folded
    /// key, so that each section is one run of the folded order.
    func column(under query: CompiledQuery) throws -> String {
        let column = try R.entity.column(for: keyPath)
        if case .firstLetter = kind, let attribute = R.entity.attribute(for: keyPath), attribute.isFolded {
            let key = ColumnSchema.foldedKeyColumn(of: attribute.column)
            if query.order.first?.column == key { return key }
        }
        return column
    }

    /// The SQL expression of the section value on `column` (see ``column(under:)``), and how
    /// its value becomes a section.
    func expression(column: String) -> SectionExpression {
        switch kind {
        case .attribute: return SectionExpression(fragment: SQLBuilder.section(attribute: column), kind: .value)
        case .day(let offset):
            // The raw column: the day number is computed while stepping, far cheaper than
            // SQLite formatting a date string for every row.
            return SectionExpression(fragment: SQLBuilder.section(attribute: column), kind: .day(offsetSeconds: offset))
        case .firstLetter: return SectionExpression(fragment: SQLBuilder.section(firstLetterOf: column), kind: .value)
        case .computed:
            guard let transform else { return SectionExpression(fragment: SQLBuilder.section(attribute: column), kind: .value) }
            return SectionExpression(fragment: SQLBuilder.section(attribute: column), kind: .computed(transform))
        }
    }

    /// The section's name for a section value.
    func name(of value: SQLiteValue) -> String {
        if case .day = kind, case .integer(let day) = value { return DayNumber.name(of: day) }
        return Self.name(of: value)
    }

    /// A value as text: text as itself (invalid UTF-8 repaired, for display only), numbers
    /// in decimal, blobs in hexadecimal, `""` for NULL.
    static func name(of value: SQLiteValue) -> String {
        switch value {
        case .null: ""
        case .text(let bytes): String(decoding: bytes, as: UTF8.self)
        case .integer(let i): String(i)
        case .real(let d): String(d)
        case .blob(let b): b.map { String(format: "%02x", $0) }.joined()
        }
    }
}

/// How a section value is read: an SQL expression, and what turns its value into the
/// section's identity.
struct SectionExpression: Sendable {
    enum Kind: Sendable {
        /// The expression's value is the section.
        case value
        /// The expression is a date: the section is its day number (numbers only; any other
        /// stored value is its own section).
        case day(offsetSeconds: Int)
        /// The expression's value passes through the app's closure (``SectionKey/computed(_:name:_:)``).
        /// User code: never called while a lock is held.
        case computed(@Sendable (DatabaseValue) -> DatabaseValue)
    }

    let fragment: SQLFragment
    let kind: Kind
    /// The day sections' time-zone offset, `nil` for other kinds.
    let dayOffset: Int?

    init(fragment: SQLFragment, kind: Kind) {
        self.fragment = fragment
        self.kind = kind
        if case .day(let offset) = kind { dayOffset = offset } else { dayOffset = nil }
    }

    /// The section of a row whose section expression has the value `raw`.
    @inline(__always)
    func value(of raw: SQLiteValue) -> SQLiteValue {
        switch kind {
        case .value: return raw
        case .day(let offset): return DayNumber.value(of: raw, offsetSeconds: offset)
        case .computed(let transform): return SQLiteValue(transform(raw.databaseValue))
        }
    }
}

/// Days since 1970-01-01 of a stored date, and their `YYYY-MM-DD` names.
enum DayNumber {
    /// Day numbers are clamped to ±10⁹ (±2.7 million years), so infinities and absurd
    /// dates still get a finite, ordered section.
    static let limit: Int64 = 1_000_000_000

    @inline(__always)
    static func of(seconds: Double, offsetSeconds: Int) -> Int64 {
        let days = ((seconds + Double(offsetSeconds)) / 86_400).rounded(.down)
        if days.isNaN { return 0 }
        if days >= Double(limit) { return limit }
        if days <= -Double(limit) { return -limit }
        return Int64(days)
    }

    /// The day of a stored date; a value that is not a number (NULL, or text or a blob
    /// written by raw SQL) is its own section, so sections still follow the sort.
    static func value(of stored: SQLiteValue, offsetSeconds: Int) -> SQLiteValue {
        switch stored {
        case .real(let seconds): .integer(of(seconds: seconds, offsetSeconds: offsetSeconds))
        case .integer(let seconds): .integer(of(seconds: Double(seconds), offsetSeconds: offsetSeconds))
        default: stored
        }
    }

    /// `YYYY-MM-DD` of a day number (proleptic Gregorian calendar; Howard Hinnant's
    /// civil-from-days algorithm).
    static func name(of day: Int64) -> String {
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func pad(_ v: Int64, _ width: Int) -> String {
            let text = String(abs(v))
            return (v < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))"
    }
}
