import Foundation
import Folio
import GRDB
import GRDBSQLite

/// A contact-like record for the first-letter and attribute sections: names that start
/// with 30 letters (four of them not ASCII), and a team number (1,000 teams).
@PersistentRecord
struct Person {
    var id: RecordID?
    @Stored(.indexed) var name = ""
    var team = 0
    #CompoundIndex<Person>(.key(\.team), .key(\.name))

    init() {}
}

extension Bench {
    /// Issue 26, goal 1, for the other section kinds: `performFetch` sectioned by the first
    /// letter of the sorted name (index on the name), and by an attribute (the team, sorted
    /// by team then name, index `(team, name)`), each against SQLite stepping the same
    /// identifiers in the same order through the same index (C API, into an array), on a
    /// store of its own.
    func sectionKinds() throws {
        log("sections by first letter and by attribute: generating \(Report.count(rows)) people (a store of their own)")
        let store = try Store.temporary(records: [Person.self])
        try store.write { tx in
            try tx.database.execute(
                sql: """
                    WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
                    INSERT INTO person (name, team)
                    SELECT substr('ABCDEFGHIJKLMNOPQRSTUVWXYZÄÉÖØ', 1 + (i * 7919) % 30, 1) || 'name ' || ((i * 104729) % ?),
                           (i * 15485863) % 1000
                    FROM seq
                    """, arguments: [rows - 1, rows])
        }
        struct Kind {
            var id: String
            var what: String
            var request: RecordRequest<Person>
            var key: SectionKey<Person>
            var sql: String
        }
        var byName = RecordRequest<Person>(sortBy: [SortDescriptor(\Person.name)])
        byName.batchSize = 50
        var byTeam = RecordRequest<Person>(sortBy: [SortDescriptor(\Person.team), SortDescriptor(\Person.name)])
        byTeam.batchSize = 50
        let kinds = [
            Kind(
                id: "firstLetter", what: "first letter of the name (sorted by name, indexed)", request: byName,
                key: .firstLetter(\.name), sql: "SELECT id FROM person ORDER BY name, id"),
            Kind(
                id: "attribute", what: "attribute: the team (sorted by team, then name; index (team, name))",
                request: byTeam, key: .attribute(\.team), sql: "SELECT id FROM person ORDER BY team, name, id"),
        ]
        for kind in kinds {
            var limit = Samples(), sectioned = Samples()
            var sections = 0, recordsLoaded = 0, seeks = 0
            for rep in 0...repetitions {
                let scanWatch = Stopwatch()
                let ids = try store.read { db in try Self.stepIdentifiers(db, sql: kind.sql) }
                let scanLap = scanWatch.lap()
                guard ids.count == rows else { throw BenchError.wrongResults("\(kind.id): SQLite read \(ids.count) ids") }
                let c = FetchedResultsController(kind.request, store: store, sectionBy: kind.key)
                let before = store.diagnostics.counters
                let watch = Stopwatch()
                try performFetch(c)
                let lap = watch.lap()
                let after = store.diagnostics.counters
                guard c.fetchedObjects?.count == rows, c.snapshot.numberOfItems == rows else {
                    throw BenchError.wrongResults("\(kind.id): performFetch found \(c.fetchedObjects?.count ?? -1) rows")
                }
                guard rep > 0 else { continue }  // warm-up
                limit.add(scanLap)
                sectioned.add(lap)
                sections = c.sections.count
                recordsLoaded += after.recordsMaterialized - before.recordsMaterialized
                seeks += after.sectionBoundarySeeks - before.sectionBoundarySeeks
            }
            let baselineID = "limit.\(kind.id)"
            addBaseline(baselineID, "SQLite steps the identifiers: `\(kind.sql)` (C API, into an array)", limit)
            report.results.append(
                ResultRow(
                    id: "performFetch.sections.\(kind.id)",
                    what: "performFetch, \(Report.count(sections)) sections by \(kind.what)", samples: sectioned,
                    baseline: (baselineID, limit), target: Targets.sections,
                    check: { $0.ratio! <= Targets.sectionsRatio && recordsLoaded == 0 },
                    detail:
                        "\(recordsLoaded) records loaded and \(Report.count(seeks)) section boundary seeks over \(sectioned.count) fetches"
                ))
        }
    }

    /// Steps `sql`'s single integer column into an array with the C API (the baselines that
    /// read identifiers: `limit` and its siblings).
    nonisolated static func stepIdentifiers(
        _ db: Database, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> [Int64] {
        let statement = try db.cachedStatement(sql: sql)
        try statement.setArguments(arguments)
        let s = statement.sqliteStatement
        defer { sqlite3_reset(s) }
        var ids: [Int64] = []
        while true {
            let code = sqlite3_step(s)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
            ids.append(sqlite3_column_int64(s, 0))
        }
        return ids
    }
}
