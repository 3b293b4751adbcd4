import Foundation
import GRDB
import GRDBSQLite

/// Steps an identifier query with the SQLite C API: no row objects, no per-row
/// allocation, section values materialized only where they change.
enum IdentifierScan {
    /// - Parameters:
    ///   - section: when set, the query's second column is the section expression's value,
    ///     and the result's runs are its sections.
    ///   - progress: called every `progressInterval` rows with the rows read so far.
    static func run(
        _ db: Database,
        _ fragment: SQLFragment,
        section: SectionExpression? = nil,
        diagnostics: Diagnostics,
        progressInterval: Int = 4096,
        progress: ((Int) throws -> Void)? = nil
    ) throws -> (IdentifierList, [SectionRun]) {
        let statement = try db.cachedStatement(sql: fragment.sql)
        try statement.setArguments(fragment.statementArguments)
        diagnostics.count { $0.identifierScans += 1 }
        var builder = IdentifierList.Builder()
        var sections = section.map { SectionRunBuilder($0, column: 1) }
        var rows = 0
        try statement.forEachRow(in: db) { sqlite in
            builder.append(sqlite3_column_int64(sqlite, 0))
            rows += 1
            sections?.add(sqlite)
            if let progress, rows % progressInterval == 0 { try progress(rows) }
        }
        if let progress { try progress(rows) }
        if diagnostics.logsQueryPlans {
            let plan = try QueryPlan.read(db, fragment)
            diagnostics.note("QUERY PLAN: \(plan.summary)\(plan.readsEveryRow ? " (reads every row)" : "")")
        }
        return (builder.finish(), try sections?.finish() ?? [])
    }
}

/// Turns the section column of rows stepped in result order into section runs.
///
/// A section's identity is its value compared as SQLite compares values (text and blobs by
/// bytes, numbers exactly): rows SQLite orders as ties are in one section, and text that
/// Swift would find equal (`"é"` and `"e\u{301}"`) is not. The raw column is compared
/// with the previous row's in place, so a value is materialized (and a `.computed`
/// closure called) only where it changes.
struct SectionRunBuilder {
    private let expression: SectionExpression
    private let column: Int32
    private var runs: [SectionRun] = []
    /// The current run's section value, and the raw column value it came from.
    private var current: SQLiteValue?
    private var currentRaw: SQLiteValue?
    /// The current run's day number, for day sections of numbers.
    private var currentDay: Int64?
    private var count = 0

    init(_ expression: SectionExpression, column: Int32) {
        self.expression = expression
        self.column = column
    }

    @inline(__always)
    mutating func add(_ sqlite: OpaquePointer) {
        switch expression.kind {
        case .day(let offset):
            let type = sqlite3_column_type(sqlite, column)
            if type == SQLITE_INTEGER || type == SQLITE_FLOAT {
                let day = DayNumber.of(seconds: sqlite3_column_double(sqlite, column), offsetSeconds: offset)
                if count > 0, currentDay == day {
                    count += 1
                } else {
                    start(.integer(day))
                    currentDay = day
                }
            } else {
                let raw = SQLiteValue(sqliteStatement: sqlite, index: column)
                if count > 0, currentDay == nil, current == raw { count += 1 } else { start(raw) }
            }
        case .value:
            if count > 0, let current, current.equalsColumn(sqlite, column) {
                count += 1
            } else {
                start(SQLiteValue(sqliteStatement: sqlite, index: column))
            }
        case .computed:
            if count > 0, let currentRaw, currentRaw.isIdenticalToColumn(sqlite, column) {
                count += 1
                return
            }
            let raw = SQLiteValue(sqliteStatement: sqlite, index: column)
            let value = expression.value(of: raw)
            if count > 0, current == value {
                count += 1
            } else {
                start(value)
            }
            currentRaw = raw
        }
    }

    private mutating func start(_ value: SQLiteValue) {
        if let current { runs.append(SectionRun(value: current, count: count)) }
        current = value
        currentRaw = nil
        currentDay = nil
        count = 1
    }

    /// The runs; throws when a section value appears in two places (the section key does
    /// not follow the sort).
    mutating func finish() throws -> [SectionRun] {
        if let current { runs.append(SectionRun(value: current, count: count)) }
        current = nil
        count = 0
        var seen = Set<SQLiteValue>()
        for run in runs where !seen.insert(run.value).inserted {
            throw FolioError.sectionsNotContiguous(
                "the section \(run.value) appears in two places of the sorted results; the section key must follow the first sort descriptor"
            )
        }
        return runs
    }
}
