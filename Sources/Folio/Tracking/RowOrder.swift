import Foundation
import GRDB
import GRDBSQLite

/// The sort-key values of one row, as SQLite holds them.
struct RowKey {
    var id: Int64
    /// One value per ``OrderTerm`` of the query, the rowid included.
    var values: [SQLiteValue]
    /// The section value, when the controller has sections.
    var section: SQLiteValue?
}

/// Reads `id, key…, section` rows (``SQLBuilder/sortKeyColumns(_:section:)``) and
/// compares them exactly as the query's `ORDER BY` does: every term with
/// ``SQLiteValue/compare(_:_:)``, which is SQLite's own order, so a position found in
/// Swift is the position SQLite gives the row.
struct RowOrder: Sendable {
    let terms: [OrderTerm]
    let section: SectionExpression?
    /// For each term, the column of the row that holds it.
    private let sources: [Int32]

    init(query: CompiledQuery, section: SectionExpression?) {
        self.terms = query.order
        self.section = section
        var sources: [Int32] = []
        var next: Int32 = 1
        for term in query.order {
            if term.isRowID { sources.append(0) } else { sources.append(next); next += 1 }
        }
        self.sources = sources
    }

    /// The keys of the current row of a stepped statement, read with the C API, with its
    /// section when `withSection` (which calls a `.computed` section key's closure: never
    /// while holding a lock). A binary search's probes need no section.
    func key(statement sqlite: OpaquePointer, withSection: Bool = true) -> RowKey {
        let id = sqlite3_column_int64(sqlite, 0)
        var values: [SQLiteValue] = []
        values.reserveCapacity(sources.count)
        for source in sources { values.append(SQLiteValue(sqliteStatement: sqlite, index: source)) }
        let value: SQLiteValue? =
            withSection
            ? section.map { $0.value(of: SQLiteValue(sqliteStatement: sqlite, index: sqlite3_column_count(sqlite) - 1)) }
            : nil
        return RowKey(id: id, values: values, section: value)
    }

    /// Every column of the current row of a stepped statement, as SQLite holds them: what
    /// ``key(values:withSection:)`` decodes, kept for the other trackers of a commit.
    static func columns(of sqlite: OpaquePointer) -> [SQLiteValue] {
        let count = sqlite3_column_count(sqlite)
        var values: [SQLiteValue] = []
        values.reserveCapacity(Int(count))
        for index in 0..<count { values.append(SQLiteValue(sqliteStatement: sqlite, index: index)) }
        return values
    }

    /// ``key(statement:withSection:)`` from the columns ``columns(of:)`` read.
    func key(values columns: [SQLiteValue], withSection: Bool) -> RowKey {
        let id: Int64
        if case .integer(let rowid) = columns[0] { id = rowid } else { id = 0 }
        var values: [SQLiteValue] = []
        values.reserveCapacity(sources.count)
        for source in sources { values.append(columns[Int(source)]) }
        let value: SQLiteValue? = withSection ? section.map { $0.value(of: columns[columns.count - 1]) } : nil
        return RowKey(id: id, values: values, section: value)
    }

    /// Whether `a` comes before `b` in the results.
    func precedes(_ a: RowKey, _ b: RowKey) -> Bool {
        for (i, term) in terms.enumerated() {
            let c = SQLiteValue.compare(a.values[i], b.values[i])
            if c != 0 { return term.descending ? c > 0 : c < 0 }
        }
        return false
    }

    /// Where `key` falls between `low` and `high` by their first sort value, from 0 to 1,
    /// when all three are finite numbers and the two bounds differ; `nil` otherwise. Only a
    /// guess for a search to start from: it never decides an order.
    func fraction(of key: RowKey, between low: RowKey, and high: RowKey) -> Double? {
        func number(_ value: SQLiteValue) -> Double? {
            switch value {
            case .integer(let v): Double(v)
            case .real(let v): v.isFinite ? v : nil
            default: nil
            }
        }
        guard let x = number(key.values[0]), let a = number(low.values[0]), let b = number(high.values[0]), a != b else {
            return nil
        }
        let f = (x - a) / (b - a)
        return f.isFinite ? Swift.min(1, Swift.max(0, f)) : nil
    }
}

/// Reads the sort keys of one row at a time: the statement is prepared and its section
/// arguments bound at the first probe; each probe binds the rowid, steps once, and reads the
/// columns with the C API (no row objects, no argument arrays).
///
/// With a commit's shared reads (`shared`), a row another tracker of the same commit
/// probed with the same statement (the same sort keys and section expression) is not read
/// again: the probe decodes the values that read kept, with its own ``RowOrder`` (a
/// `.computed` section key's closure is the probing list's own).
final class KeyProbe {
    private let db: Database
    private let order: RowOrder
    private let fragment: SQLFragment
    private let shared: CommitTokens?
    /// The statement's number in `shared` (``CommitTokens/probeStatement(_:)``).
    private let sharedKey: Int
    private var prepared: (statement: Statement, idParameter: Int32)?
    /// Probes answered from `shared` (the caller counts them in its diagnostics).
    private(set) var sharedReads = 0

    /// `fragment` is ``SQLBuilder/sortKeys(_:section:)``'s, and `key` its fingerprint
    /// (both worked out once per list).
    init(fragment: SQLFragment, key: String, order: RowOrder, shared: CommitTokens?, _ db: Database) {
        self.fragment = fragment
        self.sharedKey = shared?.probeStatement(key) ?? 0
        self.order = order
        self.shared = shared
        self.db = db
    }

    /// The section value of the row with rowid `id`, or `nil` if there is none. Calls a
    /// `.computed` section key's closure: never while holding a lock.
    func section(of id: Int64) throws -> SQLiteValue? {
        try values(of: id).map { order.key(values: $0, withSection: true).section ?? .null }
    }

    /// The sort keys of the row with rowid `id` (not its section), or `nil` if there is none.
    /// Unshared (one list follows the commit), the keys are decoded straight from the
    /// statement: the columns are not kept, so they are not copied first.
    func key(_ id: Int64) throws -> RowKey? {
        guard shared?.sharesRows == true else {
            return try step(id) { order.key(statement: $0, withSection: false) }
        }
        return try values(of: id).map { order.key(values: $0, withSection: false) }
    }

    private func values(of id: Int64) throws -> [SQLiteValue]? {
        guard let shared else { return try read(id) }
        let (values, wasShared) = try shared.row(sharedKey, id: id) { try read(id) }
        if wasShared { sharedReads += 1 }
        return values
    }

    /// Every column of the row with rowid `id`, stepping the statement.
    private func read(_ id: Int64) throws -> [SQLiteValue]? {
        try step(id) { RowOrder.columns(of: $0) }
    }

    /// Steps the statement with rowid `id` bound and decodes its row with `decode`; `nil`
    /// when there is no such row.
    private func step<T>(_ id: Int64, _ decode: (OpaquePointer) -> T) throws -> T? {
        let (statement, idParameter) = try prepare()
        let sqlite = statement.sqliteStatement
        defer { sqlite3_reset(sqlite) }
        sqlite3_bind_int64(sqlite, idParameter, id)
        let code = sqlite3_step(sqlite)
        if code == SQLITE_DONE { return nil }
        guard code == SQLITE_ROW else { throw FolioError.stepFailure(code, db, sql: statement.sql) }
        return decode(sqlite)
    }

    private func prepare() throws -> (Statement, Int32) {
        if let prepared { return prepared }
        let statement = try db.cachedStatement(sql: fragment.sql)
        try statement.setArguments(StatementArguments(fragment.arguments + [0.databaseValue]))
        let made = (statement, sqlite3_bind_parameter_count(statement.sqliteStatement))
        prepared = made
        return made
    }
}
