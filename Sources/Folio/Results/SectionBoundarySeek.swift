import Foundation
import GRDB
import GRDBSQLite

/// Finds where each section of a list begins by seeking the sort index, so that an
/// identifier scan of a sectioned list steps the identifiers alone, as an unsectioned one
/// does, instead of reading and comparing every row's section value.
///
/// It applies when the section key is the request's first sort key itself — day sections
/// of the sorted date, attribute sections of the sorted attribute, first-letter sections of
/// the sorted text, on the entity's own column — and SQLite answers the seek from a
/// covering index with a range on the key (``indexedPlan(_:)``).
/// Once a section starts at a row whose key is `k`, the first row of the next section is
/// the first row of the results whose key is past every key of `k`'s section: one
/// `LIMIT 1` query (``SQLBuilder/sectionBoundary(_:column:condition:)``) with the request's
/// filter and order and one more bound on the key:
///
/// - descending: `key < k` (attribute sections) or `key < firstSeconds(day(k))` (days:
///   ``DayNumber/firstSeconds(ofDay:in:)``, exact for the zone's 23- and 25-hour days), then `key IS NULL` when no value is
///   left (NULLs sort last);
/// - ascending: `key IS NOT NULL` after the NULLs, `key > k` or `key > lastSeconds(day(k))`.
///
/// First letters (``FirstLetter``) are prefixes of the key's bytes, so the texts of one
/// letter `p` are one range of the byte order, from `p` (included) to the next text of
/// `p`'s length (``FirstLetter/successor(of:)``, excluded): descending, the next section
/// starts at `key < p`; ascending at `key >= successor(p)`, or `key > p` when `p` is a whole
/// text shorter than its lead byte says (the letter holds that text alone). A blob's letter
/// is its first byte, likewise; a number is its own section, as for attribute sections.
///
/// The sections are exactly those of ``SectionRunBuilder``: a section of values is a run
/// of values SQLite finds equal (or of one day, whose numbers form one interval of
/// SQLite's order), text or a blob in a date column is its own section, NULL is one; each
/// section's value is read from its first row. The order is total (it ends with the
/// rowid), so the first row past a bound is the first such row of the scan.
struct SectionBoundarySeek {
    let query: CompiledQuery
    let column: String
    let descending: Bool
    /// How a key becomes a section.
    let mode: Mode
    /// The seek statements prepared so far, by shape (one scan's).
    private let statements = Statements()

    private struct Prepared {
        var statement: Statement
        /// The values the filter binds, after the bound's.
        var filterArguments: [DatabaseValue]
    }

    private final class Statements {
        var byShape: [String: Prepared] = [:]
    }

    enum Mode: Equatable {
        /// The key itself (attribute sections).
        case value
        /// The key's local day in the zone.
        case day(DayZone)
        /// The key's first letter (``FirstLetter``).
        case firstLetter
    }

    /// `nil` when the section key is not the first sort key's own column read as it is
    /// (first letters, `.computed`, a to-one's target, a ranked search first).
    init?(query: CompiledQuery, section: SectionExpression) {
        guard section.related == nil, section.fragment.arguments.isEmpty, let first = query.order.first else { return nil }
        let plain = section.fragment.sql == SQLBuilder.section(attribute: first.column).sql
        let mode: Mode
        switch section.kind {
        case .value where plain: mode = .value
        case .value where section.fragment.sql == SQLBuilder.section(firstLetterOf: first.column).sql: mode = .firstLetter
        case .day(let zone) where plain: mode = .day(zone)
        default: return nil
        }
        self.init(firstKeyOf: query, mode: mode)
    }

    /// The seeks of `mode`'s groups of the first sort key (`.value`: the rows that share a
    /// value, for a list without sections reading the rest of a first screen after it):
    /// `nil` when that key is not a column of the entity's own, or the order starts with a
    /// search's rank.
    init?(firstKeyOf query: CompiledQuery, mode: Mode = .value) {
        guard query.rankingQuery == nil, let first = query.order.first, first.related == nil, !first.isRowID else {
            return nil
        }
        self.query = query
        self.column = first.column
        self.descending = first.descending
        self.mode = mode
    }

    /// The plan of a seek when SQLite answers it from a covering index, with a range on the
    /// key, in the request's order (no sort of its own): then a seek costs O(log n) plus the
    /// index entries the filter skips past the boundary. `nil` otherwise, and the scan reads
    /// every row's section value instead: without an index each seek could read the whole
    /// table, and with a filter the index does not hold (a table lookup per row) each seek
    /// would look up again the rows up to its section's first match — with a selective
    /// filter, every row the scan itself looks up.
    func indexedPlan(_ db: Database) throws -> QueryPlan? {
        let bound = SQLFragment("?", [0.databaseValue])
        let fragment = SQLBuilder.sectionBoundary(
            query, column: column, condition: descending ? .below(bound) : .above(bound))
        let plan = try QueryPlan.read(db, fragment)
        let range = "\(column)\(descending ? "<" : ">")?)"
        let seeks = plan.steps.contains {
            $0.detail.hasPrefix("SEARCH ") && $0.detail.contains(" USING COVERING INDEX ")
                && ($0.detail.hasSuffix("(" + range) || $0.detail.hasSuffix(" " + range))
        }
        return seeks && plan.steps.count == 1 ? plan : nil
    }

    /// The first row of the results (`after` nil), or of the section after the one whose
    /// first row's key is `after`: its identifier and its key; `nil` past the last section.
    /// Adds the queries it ran (one, or two past the last value of a descending order) to
    /// `queries`.
    func next(after key: SQLiteValue?, _ db: Database, queries: inout Int) throws -> (id: Int64, key: SQLiteValue)? {
        guard let key else { return try first(.first, db, &queries) }
        if case .null = key {
            // NULLs sort first ascending, last descending.
            return descending ? nil : try first(.notNull, db, &queries)
        }
        if let condition = condition(past: key) {
            if let row = try first(condition, db, &queries) { return row }
        }
        return descending ? try first(.null, db, &queries) : nil
    }

    /// The rows past every row of `key`'s section, in the list's order, as conditions on the
    /// key, one query each, the rows of one before those of the next: what ``next(after:)``
    /// finds first, and every row after it. Empty when no row can follow that section.
    func remainder(after key: SQLiteValue) -> [SectionBoundaryCondition] {
        if case .null = key {
            // NULLs sort first ascending, last descending.
            return descending ? [] : [.notNull]
        }
        let past = condition(past: key).map { [$0] } ?? []
        // Descending, the NULLs follow every value (`key < bound` leaves them out).
        return descending ? past + [.null] : past
    }

    /// The condition on the key of the rows past every key of `key`'s section; `nil` when no
    /// value can be past it.
    private func condition(past key: SQLiteValue) -> SectionBoundaryCondition? {
        if mode == .firstLetter { return letterCondition(past: key) }
        let bound: SQLFragment?
        switch key {
        case .integer(let value):
            guard case .day(let zone) = mode else { return past(SQLFragment("?", [value.databaseValue])) }
            bound = dayBound(zone.day(of: Double(value)), zone)
        case .real(let value):
            guard case .day(let zone) = mode else { return past(SQLFragment("?", [value.databaseValue])) }
            bound = dayBound(zone.day(of: value), zone)
        case .text(let bytes): bound = SQLBuilder.exactPlaceholder(text: bytes)
        case .blob(let bytes): bound = SQLFragment("?", [Data(bytes).databaseValue])
        case .null: bound = nil
        }
        return bound.map(past)
    }

    /// The rows whose key is strictly past `bound` in the list's direction.
    private func past(_ bound: SQLFragment) -> SectionBoundaryCondition {
        descending ? .below(bound) : .above(bound)
    }

    /// ``condition(past:)`` for first-letter sections (see the type's discussion).
    private func letterCondition(past key: SQLiteValue) -> SectionBoundaryCondition? {
        let letter: [UInt8]
        let asText: Bool
        switch section(of: key) {
        case .text(let bytes): (letter, asText) = (bytes, true)
        case .blob(let bytes): (letter, asText) = (bytes, false)
        case .null: return nil
        case let number: return past(SQLFragment("?", [number.databaseValue]))
        }
        func value(_ bytes: [UInt8]) -> SQLFragment {
            asText ? SQLBuilder.exactPlaceholder(text: bytes) : SQLFragment("?", [Data(bytes).databaseValue])
        }
        // Every text and blob of the letter is at least the letter itself.
        if descending { return .below(value(letter)) }
        // A letter shorter than its lead byte's length is a whole text (or the empty blob):
        // no other text is in its section.
        let whole = letter.first.map { asText ? letter.count < FirstLetter.length(lead: $0) : false } ?? true
        if whole { return .above(value(letter)) }
        guard let next = FirstLetter.successor(of: letter) else {
            // Past the last possible text come the blobs (all of them); past the last blob
            // letter, nothing.
            return asText ? .atLeast(SQLFragment("?", [Data().databaseValue])) : nil
        }
        return .atLeast(value(next))
    }

    private func dayBound(_ day: Int64, _ zone: DayZone) -> SQLFragment? {
        let seconds =
            descending
            ? DayNumber.firstSeconds(ofDay: day, in: zone)
            : DayNumber.lastSeconds(ofDay: day, in: zone)
        // Past ±infinity there is no number, but text and blobs sort after every number.
        if descending && seconds == -.infinity { return nil }
        return SQLFragment("?", [seconds.databaseValue])
    }

    private func first(_ condition: SectionBoundaryCondition, _ db: Database, _ queries: inout Int) throws -> (
        id: Int64, key: SQLiteValue
    )? {
        queries += 1
        // A scan makes one seek a section with a handful of statement shapes: each is built
        // and looked up once, then only its bound changes (building the SQL and hashing it
        // for GRDB's statement cache cost more than the seek itself).
        let shape = condition.shape
        let prepared: Prepared
        if let known = statements.byShape[shape.key] {
            prepared = known
        } else {
            let fragment = SQLBuilder.sectionBoundary(query, column: column, condition: condition)
            prepared = Prepared(
                statement: try db.cachedStatement(sql: fragment.sql),
                filterArguments: Array(fragment.arguments.dropFirst(shape.bound == nil ? 0 : 1)))
            statements.byShape[shape.key] = prepared
        }
        let statement = prepared.statement
        try statement.setArguments(StatementArguments((shape.bound.map { [$0] } ?? []) + prepared.filterArguments))
        var row: (id: Int64, key: SQLiteValue)?
        _ = try statement.stepRows(in: db) { sqlite in
            row = (sqlite3_column_int64(sqlite, 0), SQLiteValue(sqliteStatement: sqlite, index: 1))
            return true
        }
        return row
    }

    /// The section a row whose key is `key` is in (``SectionExpression/value(of:)``), as
    /// SQL computes it (``SQLBuilder/section(firstLetterOf:)`` for first letters).
    func section(of key: SQLiteValue) -> SQLiteValue {
        switch mode {
        case .value: return key
        case .day(let zone): return DayNumber.value(of: key, in: zone)
        case .firstLetter:
            switch key {
            case .text(let bytes): return .text(FirstLetter.prefix(of: bytes))
            case .blob(let bytes): return .blob(Array(bytes.prefix(1)))
            default: return key
            }
        }
    }
}
