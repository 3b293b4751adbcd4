import Foundation
import Folio
import GRDB

/// A source with a derived unread count of its entries (issue 43), indexed.
@PersistentRecord("source")
struct CountedSource {
    var id: RecordID?
    @Stored(.indexed) var name = ""
    @Derived(.count(\FeedEntry.source, where: #Predicate { $0.isRead == false }), .indexed) var unreadCount = 0

    init() {}
}

/// The same table without the derived attribute: the write-cost baseline.
@PersistentRecord("source")
struct PlainSource {
    var id: RecordID?
    @Stored(.indexed) var name = ""

    init() {}
}

/// An entry of a source, read or not.
@PersistentRecord("entry")
struct FeedEntry {
    var id: RecordID?
    var title = ""
    @Stored(.indexed) var published = Date(timeIntervalSince1970: 0)
    var isRead = false
    var source = ToOne<CountedSource>()

    init() {}
}

/// The same entry pointing to the plain source.
@PersistentRecord("entry")
struct PlainEntry {
    var id: RecordID?
    var title = ""
    @Stored(.indexed) var published = Date(timeIntervalSince1970: 0)
    var isRead = false
    var source = ToOne<PlainSource>()

    init() {}
}

extension Bench {
    static let derivedSources = 1_000

    /// A store of `rows` entries over 1,000 sources, a tenth of them unread; with the
    /// derived unread count when `counted`, without it otherwise (the same rows either way).
    func makeDerivedStore(counted: Bool) throws -> Store {
        let records: [any PersistentRecord.Type] =
            counted ? [CountedSource.self, FeedEntry.self] : [PlainSource.self, PlainEntry.self]
        let store = try Store.temporary(records: records)
        try store.write { tx in
            let db = tx.database
            try db.execute(
                sql: """
                    WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
                    INSERT INTO source (id, name) SELECT i, printf('Source %04d', i) FROM seq
                    """, arguments: [Self.derivedSources])
            try db.execute(
                sql: """
                    WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
                    INSERT INTO entry (title, published, isRead, source)
                    SELECT 'Entry ' || i, ? + ((i * ?) % ?) * ?, (i % 10) != 0, 1 + (i * 7919) % ?
                    FROM seq
                    """,
                arguments: [rows - 1, dataset.base, dataset.stride, rows, dataset.spacing, Self.derivedSources])
        }
        return store
    }

    /// Issue 43's rows: one entry's read toggle delivered to a list of sources sorted by
    /// their derived unread count (against the peers' way, the `GROUP BY` re-run per
    /// commit); the same write with and without the derived attribute's triggers (paired,
    /// alternated); and opening the list against SQLite's own indexed query.
    func derived() async throws {
        log("derived: generating two stores of \(Report.count(rows)) entries over \(Self.derivedSources) sources")
        let watch = Stopwatch()
        let counted = try makeDerivedStore(counted: true)
        let countedSeconds = Double(watch.lap().wall) / 1e9
        let plainWatch = Stopwatch()
        let plain = try makeDerivedStore(counted: false)
        let plainSeconds = Double(plainWatch.lap().wall) / 1e9
        log(String(format: "generated in %.1f s (with the derived count) and %.1f s (without)", countedSeconds, plainSeconds))
        try derivedWriteCost(counted, plain)
        try await derivedDelivery(counted)
        try derivedOpening(counted)
        report.notes.append(
            "Derived attributes: two stores of \(Report.count(rows)) entries (published indexed, isRead, a to-one `source`) over "
                + "\(Self.derivedSources) sources, one with `unreadCount` derived and indexed, one without; generated in "
                + String(format: "%.1f s and %.1f s", countedSeconds, plainSeconds) + ".")
    }

    private var sourcesByUnread: RecordRequest<CountedSource> {
        RecordRequest<CountedSource>(
            sortBy: [SortDescriptor(\CountedSource.unreadCount, order: .reverse), SortDescriptor(\CountedSource.name)],
            batchSize: 50)
    }

    /// Toggles entry `id`'s read flag in one transaction.
    private func toggle(_ store: Store, _ id: Int64) throws {
        try store.write { tx in
            try tx.database.execute(sql: "UPDATE entry SET isRead = NOT isRead WHERE id = ?", arguments: [id])
        }
    }

    private func derivedWriteCost(_ counted: Store, _ plain: Store) throws {
        let count = max(50, repetitions * 20)
        log("derived: one entry's toggle with and without the derived count, alternated (\(count) pairs)")
        var with = Samples(), without = Samples()
        var rng = SystemRandomNumberGenerator()
        for rep in 0...count {
            let id = Int64.random(in: 1...Int64(rows), using: &rng)
            let order = rep % 2 == 0 ? [counted, plain] : [plain, counted]
            for store in order {
                let lap = Stopwatch()
                try toggle(store, id)
                let took = lap.lap()
                if rep > 0 { store === counted ? with.add(took) : without.add(took) }
            }
        }
        addBaseline("derived.plainWrite", "the same toggle in a store without the derived attribute", without)
        report.results.append(
            ResultRow(
                id: "derived.writeCost",
                what: "one entry's read toggle (one-row transaction), with the sources' derived unread count kept by triggers",
                samples: with, baseline: ("derived.plainWrite", without), target: Targets.derivedCount, clause: 1,
                check: { ($0.ratio ?? .infinity) <= Targets.derivedWriteRatio },
                detail: "paired: each toggle of one random entry in both stores, alternating which goes first; no live list open")
        )
    }

    private func derivedDelivery(_ store: Store) async throws {
        log("derived: a live list of sources sorted by unread count; toggling one entry (\(repetitions * 10) times)")
        let recorder = DeliveryRecorder<CountedSource>(timeout: 60)
        let live = FetchedResultsController(sourcesByUnread, store: store)
        live.completesInBackground = false
        live.delegate = recorder
        try performFetch(live)
        var folio = Samples(), naive = Samples()
        var moved = 0, other = 0
        var grdb = Configuration()
        grdb.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: store.path!, configuration: grdb)
        defer { try? queue.close() }
        let groupBy = """
            SELECT source.id FROM source LEFT JOIN entry ON entry.source = source.id AND entry.isRead = 0 \
            GROUP BY source.id ORDER BY count(entry.id) DESC, source.name LIMIT 50
            """
        var rng = SystemRandomNumberGenerator()
        for rep in 0...(repetitions * 10) {
            let id = Int64.random(in: 1...Int64(rows), using: &rng)
            let watch = Stopwatch()
            try toggle(store, id)
            guard let delivered = await recorder.next() else {
                throw BenchError.noDelivery("toggling an entry: no change set for the sources within 60 s")
            }
            let lap = watch.lap(until: delivered.at)
            let change = delivered.change
            if change.movedIdentifiers.count + change.updatedIdentifiers.count == 1 && change.insertedIdentifiers.isEmpty
                && change.deletedIdentifiers.isEmpty
            {
                moved += 1
            } else {
                other += 1
            }
            let naiveWatch = Stopwatch()
            let first = try Self.identifiers(queue, groupBy)
            let naiveLap = naiveWatch.lap()
            guard first.count == 50 else { throw BenchError.wrongResults("the GROUP BY read \(first.count) sources") }
            guard rep > 0 else { continue }
            folio.add(lap)
            naive.add(naiveLap)
        }
        live.delegate = nil
        withExtendedLifetime(recorder) {}
        addBaseline(
            "derived.groupBy",
            "the peers' way: the list's first 50 sources by unread count, a GROUP BY over the entries re-run after the commit (GRDB)",
            naive)
        report.results.append(
            ResultRow(
                id: "derived.toggle",
                what:
                    "one entry's read toggle → the live list of \(Self.derivedSources) sources sorted by unread count delivered",
                samples: folio, baseline: ("derived.groupBy", naive), asSpeedup: true, target: Targets.derivedCount,
                clause: 0, check: { $0.median <= Targets.derivedDeliveryMedian },
                detail:
                    "\(moved) of \(folio.count + 1) change sets were the one source's row moved or updated and nothing else"
                    + (other > 0 ? ", \(other) others" : "")))
    }

    /// The identifiers a query reads, synchronously (in an async context the async overload
    /// of `read` would be chosen).
    private static func identifiers(_ queue: DatabaseQueue, _ sql: String) throws -> [Int64] {
        try queue.read { db in try Int64.fetchAll(db, sql: sql) }
    }

    private func derivedOpening(_ store: Store) throws {
        log("derived: opening the sources list sorted by unread count against SQLite's own indexed query")
        var folio = Samples(), sqlite = Samples()
        let sql = "SELECT id FROM source ORDER BY unreadCount DESC, name"
        for rep in 0...(repetitions * 4) {
            let controller = FetchedResultsController(sourcesByUnread, store: store)
            controller.completesInBackground = false
            let watch = Stopwatch()
            try performFetch(controller)
            let lap = watch.lap()
            let sqliteWatch = Stopwatch()
            let ids = try store.read { db in try Int64.fetchAll(db, sql: sql) }
            let sqliteLap = sqliteWatch.lap()
            guard ids.count == Self.derivedSources, controller.fetchedObjects?.count == ids.count else {
                throw BenchError.wrongResults("the sources list has \(ids.count) rows")
            }
            guard rep > 0 else { continue }
            folio.add(lap)
            sqlite.add(sqliteLap)
        }
        addBaseline("derived.sqliteOrder", "SQLite's own query over the derived column: \(sql), with GRDB", sqlite)
        report.results.append(
            ResultRow(
                id: "derived.open",
                what: "performFetch of the \(Self.derivedSources) sources sorted by their derived unread count",
                samples: folio, baseline: ("derived.sqliteOrder", sqlite), target: Targets.derivedOpen,
                check: { ($0.ratio ?? .infinity) <= Targets.derivedOpenRatio }))
    }
}
