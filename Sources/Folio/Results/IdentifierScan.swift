import Foundation
import GRDB
import GRDBSQLite

/// A run of consecutive results with the same section value.
struct SectionRun: Sendable, Equatable {
    var value: DatabaseValue
    var count: Int
}

/// Steps an identifier query with the SQLite C API: no row objects, no per-row
/// allocation, section values materialized only where they change.
enum IdentifierScan {
    /// - Parameters:
    ///   - withSection: the query's second column is a section value.
    ///   - progress: called every `progressInterval` rows with the rows read so far.
    static func run(
        _ db: Database,
        _ fragment: SQLFragment,
        withSection: Bool,
        sectionTransform: (@Sendable (DatabaseValue) -> DatabaseValue)? = nil,
        dayOffset: Int? = nil,
        diagnostics: Diagnostics,
        progressInterval: Int = 4096,
        progress: ((Int) throws -> Void)? = nil
    ) throws -> (IdentifierList, [SectionRun]) {
        let statement = try db.cachedStatement(sql: fragment.sql)
        try statement.setArguments(fragment.statementArguments)
        diagnostics.count { $0.identifierScans += 1 }
        var builder = IdentifierList.Builder()
        var runs: [SectionRun] = []
        var previousText: [UInt8] = []
        var previousValue: DatabaseValue? = nil
        var runCount = 0
        var previousDay: Int64? = nil
        var rows = 0
        /// Closes the current section run and opens one for `value`.
        func startRun(_ value: DatabaseValue) {
            if let previousValue { runs.append(SectionRun(value: previousValue, count: runCount)) }
            previousValue = value
            runCount = 1
        }
        try statement.forEachRow(in: db) { sqlite in
            builder.append(sqlite3_column_int64(sqlite, 0))
            rows += 1
            if withSection, let dayOffset {
                let type = sqlite3_column_type(sqlite, 1)
                let day: Int64? =
                    type == SQLITE_NULL
                    ? nil
                    : DayNumber.of(seconds: sqlite3_column_double(sqlite, 1), offsetSeconds: dayOffset)
                if runCount > 0, day == previousDay {
                    runCount += 1
                } else {
                    previousDay = day
                    startRun(day.map { $0.databaseValue } ?? .null)
                }
            } else if withSection, let sectionTransform {
                let value = sectionTransform(DatabaseValue(sqliteStatement: sqlite, index: 1))
                if let previousValue, value == previousValue { runCount += 1 } else { startRun(value) }
            } else if withSection {
                var same = false
                if let previousValue {
                    let type = sqlite3_column_type(sqlite, 1)
                    if type == SQLITE_TEXT, case .string = previousValue.storage {
                        let length = Int(sqlite3_column_bytes(sqlite, 1))
                        if length == previousText.count, let bytes = sqlite3_column_text(sqlite, 1) {
                            same =
                                length == 0
                                || previousText.withUnsafeBufferPointer { memcmp($0.baseAddress!, bytes, length) == 0 }
                        }
                    } else if type != SQLITE_TEXT {
                        same = DatabaseValue(sqliteStatement: sqlite, index: 1) == previousValue
                    }
                }
                if same {
                    runCount += 1
                } else {
                    let value = DatabaseValue(sqliteStatement: sqlite, index: 1)
                    if case .string(let s) = value.storage { previousText = Array(s.utf8) }
                    startRun(value)
                }
            }
            if let progress, rows % progressInterval == 0 { try progress(rows) }
        }
        if let previousValue { runs.append(SectionRun(value: previousValue, count: runCount)) }
        if let progress { try progress(rows) }
        if withSection && Set(runs.map(\.value)).count != runs.count {
            throw FolioError.sectionsNotContiguous(
                "a section value appears in two places of the sorted results; the section key must follow the first sort descriptor"
            )
        }
        return (builder.finish(), runs)
    }
}
