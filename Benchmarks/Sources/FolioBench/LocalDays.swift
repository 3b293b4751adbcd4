import Foundation
import Folio
import GRDB
import GRDBSQLite

/// A dated record for the local-day sections: `at` indexed (boundaries found by seeks),
/// `loose` the same dates without an index (every row's day computed while stepping).
struct Stamp: PersistentRecord {
    var id: RecordID?
    var at = Date(timeIntervalSince1970: 0)
    var loose = Date(timeIntervalSince1970: 0)

    static let entity = EntityDescription<Stamp>(
        "stamp", [AttributeDescription(\.at, indexed: true), AttributeDescription(\.loose)])

    init() {}
}

extension Bench {
    /// Issue 41: day sections in a real time zone. `performFetch` by day in UTC (one fixed
    /// offset, what `.day` computed before), in Paris and in New York (their transitions
    /// from 1900 to 2100 in Folio's table), row by row and by index seeks; and what SQLite's
    /// built-ins would cost per row for the same days — a fixed offset, a `CASE` of Paris's
    /// transitions walked in order or nested as a binary search, a correlated lookup in a
    /// table of them — against stepping the raw column.
    func localDays() throws {
        log("local days: generating \(Report.count(rows)) stamps over \(options.days) days (a store of their own)")
        let store = try Store.temporary(records: [Stamp.self])
        // From 2024-01-01T00:00:00Z, evenly over `days` days: two transitions a year.
        let span = Double(options.days) * 86_400 / Double(rows)
        try store.write { tx in
            try tx.database.execute(
                sql: """
                    WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
                    INSERT INTO stamp (at, loose) SELECT 1704067200.0 + i * ?, 1704067200.0 + i * ? FROM seq
                    """, arguments: [rows - 1, span, span])
        }
        let zones: [(String, TimeZone)] = [
            ("utc", .gmt), ("paris", TimeZone(identifier: "Europe/Paris")!),
            ("newYork", TimeZone(identifier: "America/New_York")!),
        ]
        for indexed in [false, true] {
            var request = RecordRequest<Stamp>(sortBy: [SortDescriptor(indexed ? \Stamp.at : \Stamp.loose, order: .reverse)])
            request.batchSize = 50
            var utc: Samples?
            for (id, zone) in zones {
                let key: SectionKey<Stamp> = indexed ? .day(\.at, timeZone: zone) : .day(\.loose, timeZone: zone)
                var samples = Samples()
                var sections = 0
                for rep in 0...repetitions {
                    let controller = FetchedResultsController(request, store: store, sectionBy: key)
                    let watch = Stopwatch()
                    try performFetch(controller)
                    let lap = watch.lap()
                    guard controller.snapshot.numberOfItems == rows else { throw BenchError.wrongResults("localDays \(id)") }
                    sections = controller.sections.count
                    if rep > 0 { samples.add(lap) }
                }
                let rowID = "performFetch.localDays.\(indexed ? "seek" : "rows").\(id)"
                let what =
                    "performFetch, \(Report.count(sections)) day sections in \(zone.identifier) (\(indexed ? "index seeks" : "every row's day"))"
                report.results.append(ResultRow(id: rowID, what: what, samples: samples, baseline: utc.map { ("utc", $0) }))
                if id == "utc" { utc = samples }
            }
        }
        try localDaysInSQL(store)
    }

    /// What SQLite's built-ins cost per row to compute the same days, stepping
    /// `SELECT id, <day> FROM stamp ORDER BY loose DESC` over every row.
    private func localDaysInSQL(_ store: Store) throws {
        let paris = TimeZone(identifier: "Europe/Paris")!
        var starts: [Double] = []
        var offsets = [paris.secondsFromGMT(for: Date(timeIntervalSince1970: -2_208_988_800))]
        var cursor = Date(timeIntervalSince1970: -2_208_988_800)
        while let next = paris.nextDaylightSavingTimeTransition(after: cursor), next.timeIntervalSince1970 < 4_133_980_800 {
            starts.append(next.timeIntervalSince1970)
            offsets.append(paris.secondsFromGMT(for: next))
            cursor = next
        }
        // Numbers Folio computed itself, as literals (integers: the transitions are whole seconds).
        let linear =
            "CASE"
            + zip(starts, offsets).map { " WHEN loose < \(Int64($0)) THEN \($1)" }.joined() + " ELSE \(offsets.last!) END"
        func nested(_ low: Int, _ high: Int) -> String {
            // Offsets low...high, separated by starts[low..<high].
            if low == high { return "\(offsets[low])" }
            let middle = (low + high) / 2
            return "CASE WHEN loose < \(Int64(starts[middle])) THEN \(nested(low, middle)) ELSE \(nested(middle + 1, high)) END"
        }
        try store.write { tx in
            try tx.database.execute(sql: "CREATE TABLE IF NOT EXISTS zone_paris (start REAL PRIMARY KEY, offset INTEGER)")
            try tx.database.execute(sql: "DELETE FROM zone_paris")
            try tx.database.execute(sql: "INSERT INTO zone_paris VALUES (-1e308, ?)", arguments: [offsets[0]])
            for (start, offset) in zip(starts, offsets.dropFirst()) {
                try tx.database.execute(sql: "INSERT INTO zone_paris VALUES (?, ?)", arguments: [start, offset])
            }
        }
        let table = "(SELECT offset FROM zone_paris WHERE start <= loose ORDER BY start DESC LIMIT 1)"
        // Integer division truncates: exact for these dates, all after 1970 (before, a floor
        // costs one more step).
        func day(_ offset: String) -> String { "(CAST(loose AS INTEGER) + \(offset)) / 86400" }
        let forms: [(id: String, what: String, expression: String)] = [
            ("raw", "the raw column (what Folio reads; the day is computed in Swift)", "loose"),
            ("fixed", "a fixed offset: (t + 3600) / 86400", day("3600")),
            ("caseLinear", "Paris, 1900–2100: CASE of \(starts.count) transitions in order", day("(\(linear))")),
            ("caseNested", "Paris, 1900–2100: CASE nested as a binary search", day("(\(nested(0, offsets.count - 1)))")),
            ("table", "Paris, 1900–2100: correlated lookup in a table of transitions", day(table)),
        ]
        var raw: Samples?
        for form in forms {
            let sql = "SELECT id, \(form.expression) FROM stamp ORDER BY loose DESC"
            var samples = Samples()
            for rep in 0...repetitions {
                let watch = Stopwatch()
                let count = try store.read { db in try Self.stepWithValue(db, sql: sql) }
                let lap = watch.lap()
                guard count == rows else { throw BenchError.wrongResults("localDays SQL \(form.id): \(count) rows") }
                if rep > 0 { samples.add(lap) }
            }
            let id = "sqlite.localDays.\(form.id)"
            if form.id == "raw" {
                addBaseline(id, "SQLite steps `SELECT id, loose FROM stamp ORDER BY loose DESC` (C API)", samples)
                raw = samples
            } else {
                report.results.append(
                    ResultRow(
                        id: id, what: "SQLite steps every row's day, \(form.what)", samples: samples,
                        baseline: raw.map { ("sqlite.localDays.raw", $0) },
                        detail: raw.map {
                            String(
                                format: "%.0f ns a row over the raw column (CPU %.0f ns)",
                                (samples.median - $0.median) * 1e6 / Double(rows),
                                (samples.cpuMedian - $0.cpuMedian) * 1e6 / Double(rows))
                        }))
            }
        }
    }

    /// Steps `sql` (an identifier, then a value), reading both columns as Folio's scan
    /// does; returns the rows.
    nonisolated static func stepWithValue(_ db: Database, sql: String) throws -> Int {
        let statement = try db.makeStatement(sql: sql)
        let s = statement.sqliteStatement
        defer { sqlite3_reset(s) }
        var rows = 0
        var sum: Int64 = 0
        while true {
            let code = sqlite3_step(s)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
            sum &+= sqlite3_column_int64(s, 0) &+ Int64(sqlite3_column_double(s, 1))
            rows += 1
        }
        return sum == .min ? -1 : rows
    }
}
