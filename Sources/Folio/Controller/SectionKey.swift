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
/// section is one run of consecutive results. A to-one's target attribute can section too
/// (`.attribute(\Item.source.name)`, sorted by `SortDescriptor(\Item.source.name)`): the
/// sections follow the target when it changes (see <doc:Relationships>).
// @unchecked Sendable: the key path is immutable.
public struct SectionKey<R: PersistentRecord>: @unchecked Sendable, CustomStringConvertible {
    enum Kind: Hashable {
        case attribute
        /// `nil`: the user's time zone when the controller fetches (``DayZone/current``).
        case day(timeZone: TimeZone?)
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
    ///
    /// An enum (any `RawRepresentable` attribute) sections by its raw value, which names the
    /// section (`"draft"`, or `"1"` for an integer): ``SectionInfo/name`` gives it back
    /// (`Status(rawValue: section.name)`), or `computed(_:name:_:)` names
    /// the sections otherwise.
    /// - Complexity: O(1).
    public static func attribute<V: AttributeValue>(_ keyPath: KeyPath<R, V>) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .attribute)
    }

    /// Sections by the value of an attribute of a `Codable` type that is no
    /// ``AttributeValue``: an enum declared `enum Status: String, Codable` sections by its raw
    /// value, as `attribute(_:)` does. (An attribute stored as JSON cannot
    /// section a list: the request cannot sort by it.)
    /// - Complexity: O(1).
    @_disfavoredOverload
    public static func attribute<V: Codable & Sendable>(_ keyPath: KeyPath<R, V>) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .attribute)
    }

    /// Sections by local calendar day (`YYYY-MM-DD`) of a date, in `timeZone` — by default
    /// the user's time zone, `TimeZone.current`, as Core Data apps section by the user's
    /// calendar.
    ///
    /// The zone's daylight-saving and other transitions are followed: an item published at
    /// 00:30 in Paris is in that day, summer or winter, and a day can be 23 or 25 hours long
    /// (or skipped, as Samoa skipped 30 December 2011). A `TimeZone(secondsFromGMT:)`
    /// sections by that fixed offset (`.gmt` for UTC days).
    ///
    /// With the default, the zone is the user's when the controller fetches:
    /// ``FetchedResultsController/performFetch()-68xbj`` takes `TimeZone.current` and the
    /// controller keeps it — its change sets and ``FetchedResultsController/setRequest(_:)``
    /// stay in that zone (``FetchedResultsController/sectionTimeZone`` tells which) — until
    /// the next `performFetch()`, or a new controller, takes the zone of that moment. A
    /// persistent section cache written in another zone, or under other rules of the same
    /// zone (a new time-zone database), is rebuilt. See <doc:SectionsAndCaches>.
    ///
    /// Day numbers are computed from the stored date as rows are stepped, from a table of
    /// the zone's transitions read from Foundation once per zone; no SQL function is
    /// registered, so other processes, the `sqlite3` shell among them, can still write the file.
    ///
    /// - Complexity: O(1); the first use of a zone in a process reads its transitions, a
    ///   few hundred for a zone with daylight saving (about a millisecond).
    public static func day(_ keyPath: KeyPath<R, Date>, timeZone: TimeZone? = nil) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .day(timeZone: timeZone))
    }

    /// Sections by local calendar day of an optional date, in `timeZone` (by default the
    /// user's, when the controller fetches), as for a date that is not optional (above);
    /// `nil` forms its own section.
    ///
    /// - Complexity: O(1).
    public static func day(_ keyPath: KeyPath<R, Date?>, timeZone: TimeZone? = nil) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .day(timeZone: timeZone))
    }

    /// Sections by the first character of a string. (Exact, not case-folded: strings sort
    /// by their bytes, so "a…" and "A…" are far apart and must be separate sections; the
    /// default index title upper-cases it.)
    ///
    /// The first character is taken from the stored bytes: the first Unicode scalar of valid
    /// UTF-8 (`"e\u{301}"` is in `"e"`, `"é"` in `"é"`), NUL included (`"\0x"` is in
    /// `"\0"`); for bytes another program stored that are not UTF-8, as many bytes as the
    /// first one announces (one when it cannot begin a sequence), so that sections are always
    /// contiguous runs of the byte order. A number in the column is its own section, a blob
    /// is in the section of its first byte. See <doc:SectionsAndCaches>.
    ///
    /// Under a folded sort of the attribute (`SortDescriptor(\.title.folded)`, for an
    /// attribute declared `folded`), the sections are the first characters of the folded
    /// text instead — "Émile" and "emile" are both in "e" — as with `.firstLetter(\.title.folded)`.
    public static func firstLetter(_ keyPath: KeyPath<R, String>) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .firstLetter)
    }

    /// Sections by the first character of an optional string, such as a to-one's target
    /// attribute (`.firstLetter(\Item.source.name)`); `nil` forms its own section, first.
    /// - Complexity: O(1).
    public static func firstLetter(_ keyPath: KeyPath<R, String?>) -> SectionKey {
        SectionKey(keyPath: keyPath, kind: .firstLetter)
    }

    /// Sections by a value computed in Swift from one attribute. Only that column is read
    /// to compute sections — never whole records — but every row's value passes through
    /// `transform`, so prefer the SQL keys above for large tables.
    ///
    /// `transform` must agree with the sort: rows with the same section must be
    /// consecutive in the results, or ``FetchedResultsController/performFetch()-68xbj`` throws
    /// ``FolioError/sectionsNotContiguous(_:)``. `name` identifies
    /// the transform in persistent caches: change it when the transform changes.
    ///
    /// ```swift
    /// .computed(\.score, name: "tens") { score in "\(score / 10 * 10)s" }
    /// ```
    public static func computed<V: AttributeValue>(
        _ keyPath: KeyPath<R, V>, name: String, _ transform: @escaping @Sendable (V) -> String?
    ) -> SectionKey {
        computed(keyPath, name: name, decode: { try V.decode(stored: $0, column: $1) }, transform)
    }

    /// Sections by a value computed in Swift from an attribute of a `Codable` type that is no
    /// ``AttributeValue`` (an enum declared `enum Status: String, Codable`), decoded as the
    /// attribute stores it; otherwise as `computed(_:name:_:)`.
    ///
    /// ```swift
    /// .computed(\.status, name: "status titles") { $0.title }
    /// ```
    /// - Complexity: O(1); every row's value passes through `transform` when sections are
    ///   computed.
    @_disfavoredOverload
    public static func computed<V: Codable & Sendable>(
        _ keyPath: KeyPath<R, V>, name: String, _ transform: @escaping @Sendable (V) -> String?
    ) -> SectionKey {
        computed(keyPath, name: name, decode: CodableStorage<V>.chosen.decode, transform)
    }

    private static func computed<V>(
        _ keyPath: KeyPath<R, V>, name: String, decode: @escaping @Sendable (DatabaseValue, String) throws -> V,
        _ transform: @escaping @Sendable (V) -> String?
    ) -> SectionKey {
        let column = (R.entity.attribute(for: keyPath)?.column) ?? "?"
        return SectionKey(keyPath: keyPath, kind: .computed(name: name)) { stored in
            guard let value = try? decode(stored, column), let section = transform(value) else {
                return .null
            }
            return section.databaseValue
        }
    }

    /// The key's kind and attribute, such as `day(\Article.published, in: Europe/Paris)`
    /// (`in: current` for the user's zone, whichever it is when fetched).
    public var description: String {
        let path = Self.name(of: keyPath)
        return switch kind {
        case .attribute: path
        case .day(let zone): "day(\(path), in: \(zone?.identifier ?? "current"))"
        case .firstLetter: "firstLetter(\(path))"
        case .computed(let name): "computed(\(path), \(name))"
        }
    }

    /// A key path as written (`\Article.title`); one through a to-one by its columns
    /// (`\Item.source.name`), since Swift describes a member of `ToOne` by the address of
    /// its accessor, which changes from launch to launch (and a persistent cache's
    /// fingerprint includes this text).
    static func name(of keyPath: AnyKeyPath) -> String {
        if let related = try? R.entity.relatedKey(for: keyPath) {
            return "\\\(R.self).\(related.referenceColumn).\(related.targetColumn)"
        }
        return KeyPathName.describe(keyPath, in: R.self)
    }

    /// The column sections are computed from under `query`'s order: the key path's column
    /// (or a to-one's target column, `\Item.source.name`) — or, for `.firstLetter` of a
    /// folded attribute under a folded sort of it, its folded key, so that each section is
    /// one run of the folded order.
    func source(under query: CompiledQuery) throws -> SectionSource {
        if let related = try R.entity.relatedKey(for: keyPath) {
            if case .firstLetter = kind, let first = query.order.first, let sorted = first.related,
                sorted.referenceColumn == related.referenceColumn, sorted.targetTable == related.targetTable,
                sorted.targetColumn == ColumnSchema.foldedKeyColumn(of: related.targetColumn)
            {
                return SectionSource(column: sorted.targetColumn, related: sorted)
            }
            return SectionSource(column: related.targetColumn, related: related)
        }
        let column = try R.entity.column(for: keyPath)
        if case .firstLetter = kind, let attribute = R.entity.attribute(for: keyPath), attribute.isFolded {
            let key = ColumnSchema.foldedKeyColumn(of: attribute.column)
            if query.order.first?.column == key, query.order.first?.related == nil {
                return SectionSource(column: key, related: nil)
            }
        }
        return SectionSource(column: column, related: nil)
    }

    /// The zone day sections are in if fetched now: the key's, or the user's current zone;
    /// `nil` for other keys.
    func resolvedZone() -> DayZone? {
        guard case .day(let zone) = kind else { return nil }
        return DayZone.of(zone ?? DayZone.current)
    }

    /// The SQL expression of the section value on `source` (see ``source(under:)``), for rows
    /// of `table`, and how its value becomes a section; day sections are in `zone`
    /// (``resolvedZone()`` when not given).
    func expression(source: SectionSource, table: String, zone: DayZone? = nil) -> SectionExpression {
        let value =
            source.related.map { SQLBuilder.section(related: $0, table: table) } ?? SQLBuilder.section(attribute: source.column)
        let related = source.related.map { RelatedTable(table: $0.targetTable, column: $0.referenceColumn) }
        switch kind {
        case .attribute: return SectionExpression(fragment: value, kind: .value, related: related)
        case .day:
            // The raw column: the day number is computed while stepping, from the zone's
            // table of transitions — far cheaper than SQLite formatting a date string, or
            // walking a CASE of the transitions, for every row.
            let zone = zone ?? resolvedZone() ?? DayZone.of(.gmt)
            return SectionExpression(fragment: value, kind: .day(zone), related: related)
        case .firstLetter:
            let letter =
                source.related.map { SQLBuilder.section(firstLetterOfValue: SQLBuilder.relatedValue($0, table: table)) }
                ?? SQLBuilder.section(firstLetterOf: source.column)
            return SectionExpression(fragment: letter, kind: .value, related: related)
        case .computed:
            guard let transform else { return SectionExpression(fragment: value, kind: .value, related: related) }
            return SectionExpression(fragment: value, kind: .computed(transform), related: related)
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

/// Where a section key's value is read: a column of the entity, or of a to-one's target.
struct SectionSource: Sendable {
    var column: String
    var related: RelatedKey?

    /// Whether `term` orders by this value.
    func isOrdered(by term: OrderTerm?) -> Bool {
        guard let term else { return false }
        return term.column == column && term.related == related
    }
}
