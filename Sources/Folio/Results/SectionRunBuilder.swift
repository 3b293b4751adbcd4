import Foundation
import GRDB
import GRDBSQLite

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
    /// Day numbers in the section's zone, for day sections.
    private var days: DayZone.Cursor?
    private var count = 0

    init(_ expression: SectionExpression, column: Int32) {
        self.expression = expression
        self.column = column
        days = expression.dayZone.map(DayZone.Cursor.init)
    }

    @inline(__always)
    mutating func add(_ sqlite: OpaquePointer) {
        switch expression.kind {
        case .day:
            let type = sqlite3_column_type(sqlite, column)
            if type == SQLITE_INTEGER || type == SQLITE_FLOAT {
                let day = days!.day(of: sqlite3_column_double(sqlite, column))
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
