import Foundation
import Folio
import GRDB

/// The parent of the relationship measurements: a feed's source, whose items point to it.
@PersistentRecord("source")
struct FeedSource {
    var id: RecordID?
    @Stored(.indexed) var name = ""
    @ToMany(\FeedItem.source, deleteRule: .nullify) var items: RecordRequest<FeedItem>

    init() {}
}

/// The child: an item with a to-one to its source.
@PersistentRecord("item")
struct FeedItem {
    var id: RecordID?
    var title = ""
    @Stored(.indexed) var published = Date(timeIntervalSince1970: 0)
    var source = ToOne<FeedSource>()

    init() {}
}

/// The same item as a plain GRDB record, for SQLite's own queries.
struct FeedItemRow: FetchableRecord, Sendable {
    var id: Int64
    var title: String
    var published: Date
    var source: Int64?

    init(row: Row) throws {
        id = row[0]
        title = row[1]
        published = Date(timeIntervalSince1970: row[2])
        source = row[3]
    }
}

extension Bench {
    /// The sources of the relationship store: one "big" source with a tenth of the items, and
    /// 90 sources sharing the rest (10,000 items each at 1,000,000 rows).
    static let relationshipSmallSources = 90

    /// A third store: `rows` items, one source of `rows / 10` items (`id` 1) and 90 of about
    /// `rows / 100` (ids 2…91), with `published` scattered as in the article table.
    func makeRelationshipStore() throws -> Store {
        let store = try Store.temporary(records: [FeedSource.self, FeedItem.self])
        let small = Self.relationshipSmallSources
        try store.write { tx in
            let db = tx.database
            try db.execute(sql: "INSERT INTO source (id, name) VALUES (1, 'Source 00')")
            for n in 1...small {
                try db.execute(
                    sql: "INSERT INTO source (id, name) VALUES (?, ?)", arguments: [n + 1, String(format: "Source %02d", n)])
            }
            try db.execute(
                sql: """
                    WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
                    INSERT INTO item (title, published, source)
                    SELECT 'Item ' || i || ': a headline of a typical length for a feed',
                           ? + ((i * ?) % ?) * ?,
                           CASE WHEN i < ? THEN 1 ELSE 2 + (i % ?) END
                    FROM seq
                    """,
                arguments: [rows - 1, dataset.base, dataset.stride, rows, dataset.spacing, rows / 10, small])
        }
        return store
    }

    /// Two measurements of relationships (issue 22), on a third store:
    /// - renaming a source whose items are in a live list sorted and sectioned by the source's
    ///   name, against a fresh performFetch of the same list and a snapshot difference;
    /// - the to-many of the big source: its count and its first batch, against SQLite's own
    ///   queries through the reference index, with GRDB.
    func relationships() async throws {
        log(
            "relationships: generating \(Report.count(rows)) items of \(Self.relationshipSmallSources + 1) sources (a third store)"
        )
        let start = now()
        let store = try makeRelationshipStore()
        let seconds = Double(now() - start) / 1e9
        log(String(format: "generated in %.1f s", seconds))
        let bigCount = try Self.children(of: 1, in: store)
        let renamedCount = try Self.children(of: 46, in: store)
        try await parentRename(store, children: renamedCount)
        try await toMany(store, children: bigCount)
        report.notes.append(
            "Relationships: a third store of \(Report.count(rows)) items (title, published indexed, a to-one `source` with its index) "
                + "and \(Self.relationshipSmallSources + 1) sources (name indexed), generated in \(String(format: "%.1f s", seconds)): "
                + "source 1 has \(Report.count(bigCount)) items, the others about \(Report.count(renamedCount)) each.")
    }

    /// The number of items of source `id` (synchronously: in an async context the async
    /// overload of `read` would be chosen).
    private static func children(of id: Int64, in store: Store) throws -> Int {
        try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE source = ?", arguments: [id]) ?? 0 }
    }

    // MARK: Renaming a parent

    /// The synchronous write to `store` (in an async context the async overload would be chosen).
    private func write(_ store: Store, _ body: (WriteTransaction) throws -> Void) throws {
        try store.write(body)
    }

    /// Renames source 46 (about `rows / 100` items) back and forth between a name in the middle of
    /// the list and one at its end, so that its section moves; timed from just before
    /// `store.write` to the delivery. The baseline, measured after each rename: a new
    /// controller's performFetch of the same request and `Snapshot.difference(from:)` of the
    /// snapshot before the rename — the refetch a list without live tracking does.
    private func parentRename(_ store: Store, children: Int) async throws {
        var request = RecordRequest<FeedItem>(
            sortBy: [SortDescriptor(\FeedItem.source.name), SortDescriptor(\FeedItem.published)], batchSize: 50)
        request.batchSize = 50
        let sectionKey = SectionKey<FeedItem>.attribute(\FeedItem.source.name)
        log("relationships: live list sorted and sectioned by the source's name, performFetch")
        let recorder = DeliveryRecorder<FeedItem>(timeout: 120)
        let live = FetchedResultsController(request, store: store, sectionBy: sectionKey)
        live.completesInBackground = false
        live.delegate = recorder
        try performFetch(live)
        let sections = live.sections.count
        var folio = Samples(), refetch = Samples()
        var scans = 0, unexpected = 0, sectionMoves = 0
        log("relationships: renaming a source of \(Report.count(children)) items (\(repetitions) repetitions after a warm-up)")
        for rep in 0...repetitions {
            let before = live.snapshot
            var source = try store.fetchOne(FeedSource.self, id: RecordID(46))!
            source.name = source.name.hasPrefix("Zz") ? "Source 45" : "Zz Source 45"
            let counters = store.diagnostics.counters
            let watch = Stopwatch()
            try write(store) { tx in try tx.update(source) }
            guard let delivered = await recorder.next() else {
                throw BenchError.noDelivery("renaming a source: no change set within 120 s")
            }
            let lap = watch.lap(until: delivered.at)
            let scansDuring = store.diagnostics.counters.identifierScans - counters.identifierScans

            let baselineWatch = Stopwatch()
            let fresh = FetchedResultsController(request, store: store, sectionBy: sectionKey)
            fresh.completesInBackground = false
            try performFetch(fresh)
            let difference = fresh.snapshot.difference(from: before)
            let baselineLap = baselineWatch.lap()
            guard fresh.snapshot == live.snapshot else {
                throw BenchError.wrongResults("renaming a source: the live snapshot differs from a fresh fetch's")
            }
            if delivered.change.isReload || difference.isReload { unexpected += 1 }
            if delivered.change.deletedSections.count == 1 && delivered.change.insertedSections.count == 1 {
                sectionMoves += 1
            }
            guard rep > 0 else { continue }  // warm-up
            folio.add(lap)
            refetch.add(baselineLap)
            scans += scansDuring
        }
        live.delegate = nil
        withExtendedLifetime(recorder) {}
        addBaseline(
            "relationships.refetch",
            "a new controller's performFetch of the same list (sorted and sectioned by the source's name) + Snapshot.difference(from:)",
            refetch)
        var detail =
            "\(Report.count(rows)) items in \(sections) sections; each rename moves the source's section (between the middle and the end of the "
            + "list); \(sectionMoves) of \(folio.count + 1) change sets were one section deleted and one inserted; "
            + "\(scans) full identifier scans during the \(folio.count) measured renames (0: the items were placed by binary search; "
            + "a commit that changes more rows than the incremental path takes, max(2,048, rows / 500), is followed by one "
            + "identifier scan of the list, sorted through the to-one as the baseline's fetch is)"
        if unexpected > 0 { detail += "; \(unexpected) reloads" }
        detail += "; the live snapshot equal to the fresh fetch's after every rename"
        report.results.append(
            ResultRow(
                id: "relationships.rename",
                what:
                    "renaming a source of \(Report.count(children)) items, live list sorted and sectioned by the source's name → change set",
                samples: folio, baseline: ("relationships.refetch", refetch), asSpeedup: true, target: Targets.parentRename,
                check: {
                    $0.median <= Targets.parentRenameMilliseconds && ($0.speedup ?? 0) >= Targets.parentRenameSpeedup
                }, detail: detail))
    }

    // MARK: A to-many

    /// The big source's to-many (`RecordRequest(relatedTo:through:)`, no sort: ordered by
    /// rowid, which the reference index gives): `store.count` against SQLite's `count(*)`
    /// through the index, and a fetch with its first batch read against SQLite's
    /// `… ORDER BY id LIMIT 50`, both with GRDB on another connection to the same file.
    private func toMany(_ store: Store, children: Int) async throws {
        let batchSize = 50
        let request = RecordRequest<FeedItem>(relatedTo: RecordID(1), through: \.source, batchSize: batchSize)
        // A controller needs an order: the same one, said.
        let listed = RecordRequest<FeedItem>(
            relatedTo: RecordID(1), through: \.source, sortBy: [SortDescriptor(\.id)], batchSize: batchSize)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let grdb = try DatabaseQueue(path: store.path!, configuration: configuration)
        let countSQL = "SELECT count(*) FROM item WHERE source = ?"
        let batchSQL = "SELECT id, title, published, source FROM item WHERE source = ? ORDER BY id LIMIT \(batchSize)"
        let n = Swift.max(20, repetitions * 4)
        log("relationships: the to-many of a source of \(Report.count(children)) items, count and first batch (\(n) each)")
        var count = Samples(), sqliteCount = Samples(), first = Samples(), sqliteFirst = Samples()
        var fetchOnly = Samples(), batchOnly = Samples(), screen = Samples(), sqliteIDs = Samples()
        var batches = 0
        let idsSQL = "SELECT id FROM item WHERE source = ? ORDER BY id"
        for rep in 0...n {
            let countWatch = Stopwatch()
            let counted = try store.count(request)
            let countLap = countWatch.lap()
            let sqliteWatch = Stopwatch()
            let expected = try readNow(grdb) { db in try Int.fetchOne(db.cachedStatement(sql: countSQL), arguments: [1]) ?? 0 }
            let sqliteLap = sqliteWatch.lap()
            precondition(counted == children && expected == children, "the to-many counted \(counted), SQLite \(expected)")

            let before = store.diagnostics.counters
            let firstWatch = Stopwatch()
            let items = try fetchNow(store, request)
            let fetched = firstWatch.lap()
            let head = items[0]
            let firstLap = firstWatch.lap()
            batches += store.diagnostics.counters.batchesLoaded - before.batchesLoaded
            let rowsWatch = Stopwatch()
            let rows = try readNow(grdb) { db in try FeedItemRow.fetchAll(db.cachedStatement(sql: batchSQL), arguments: [1]) }
            let rowsLap = rowsWatch.lap()
            precondition(head?.id?.rawValue == rows.first?.id && rows.count == batchSize && items.count == children)

            // What a list shows: a controller's first screen, the rest read in the background.
            let screenWatch = Stopwatch()
            let controller = FetchedResultsController(listed, store: store)
            try fetchFirstScreen(controller)
            let shown = controller.object(at: IndexPath(item: 0, section: 0))
            let screenLap = screenWatch.lap()
            try await controller.waitUntilComplete()
            guard shown?.id?.rawValue == rows.first?.id, controller.fetchedObjects?.count == children else {
                throw BenchError.wrongResults(
                    "to-many first screen: row \(shown?.id?.rawValue ?? -1) of \(controller.fetchedObjects?.count ?? -1)")
            }
            // What store.fetch does: SQLite stepping every child's identifier.
            let idsWatch = Stopwatch()
            let allIDs = try readNow(grdb) { db in
                try Self.stepIdentifiers(db, sql: idsSQL, arguments: [1])
            }
            let idsLap = idsWatch.lap()
            precondition(allIDs.count == children)

            guard rep > 0 else { continue }
            count.add(countLap)
            sqliteCount.add(sqliteLap)
            first.add(firstLap)
            fetchOnly.add(fetched)
            batchOnly.add(Lap(wall: firstLap.wall - fetched.wall, cpu: firstLap.cpu - fetched.cpu))
            sqliteFirst.add(rowsLap)
            screen.add(screenLap)
            sqliteIDs.add(idsLap)
        }
        addBaseline("relationships.count.sqlite", "SQLite's `\(countSQL)` through the reference index (GRDB)", sqliteCount)
        addBaseline(
            "relationships.first.sqlite", "SQLite's `\(batchSQL)` through the reference index (GRDB, FetchableRecord)",
            sqliteFirst)
        report.results.append(
            ResultRow(
                id: "relationships.count",
                what: "to-many of a source of \(Report.count(children)) items: store.count(RecordRequest(relatedTo:through:))",
                samples: count, baseline: ("relationships.count.sqlite", sqliteCount), target: Targets.toMany,
                check: { ($0.ratio ?? .infinity) <= Targets.toManyRatio }))
        addBaseline(
            "relationships.ids.sqlite", "SQLite steps every child's identifier: `\(idsSQL)` (C API, into an array)", sqliteIDs)
        report.results.append(
            ResultRow(
                id: "relationships.screen",
                what:
                    "to-many of a source of \(Report.count(children)) items: a controller's first screen (performFetch + object(at: [0, 0]))",
                samples: screen, baseline: ("relationships.first.sqlite", sqliteFirst), target: Targets.toMany,
                check: { ($0.ratio ?? .infinity) <= Targets.toManyRatio },
                detail: "a new FetchedResultsController of RecordRequest(relatedTo:through:), the rest read in the background"))
        report.results.append(
            ResultRow(
                id: "relationships.first",
                what:
                    "to-many of a source of \(Report.count(children)) items: store.fetch + first batch of \(batchSize) (items[0])",
                samples: first, baseline: ("relationships.ids.sqlite", sqliteIDs),
                detail:
                    "store.fetch reads every identifier, as Core Data's fetch does (a list shows the controller's first screen, above): "
                    + "it read the \(Report.count(children)) identifiers in \(Report.ms(fetchOnly.median)), then items[0] loaded "
                    + "one batch in \(Report.ms(batchOnly.median)) (medians); \(batches) batches loaded over \(first.count + 1) fetches"
            ))
    }
}

/// GRDB's synchronous read, also from an async context (where `read` is its async overload).
func readNow<T>(_ queue: DatabaseQueue, _ body: (Database) throws -> T) throws -> T { try queue.read(body) }

/// `Store.fetch`, the synchronous one, also from an async context.
func fetchNow<R: PersistentRecord>(_ store: Store, _ request: RecordRequest<R>) throws -> FetchedRecords<R> {
    try store.fetch(request)
}
