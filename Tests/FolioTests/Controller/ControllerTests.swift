import Foundation
import Testing
@testable import Folio

/// A fresh fetch of what `controller` shows, as sections of identifiers.
@MainActor
func freshModel(_ controller: FetchedResultsController<Article>) throws -> TableViewModel {
    try freshModel(of: controller)
}

@MainActor
final class RecordingDelegate: FetchedResultsControllerDelegate {
    var events: [String] = []
    var changeSets: [ChangeSet] = []
    func controllerWillChangeContent(_ controller: FetchedResultsController<Article>) { events.append("will") }
    func controller(
        _ controller: FetchedResultsController<Article>, didChange section: SectionInfo, atSectionIndex sectionIndex: Int,
        for type: FetchedResultsChangeType
    ) {
        events.append("section \(type) \(sectionIndex) \(section.name)")
    }
    func controller(
        _ controller: FetchedResultsController<Article>, didChangeObject id: RecordID, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        events.append("object \(type) \(id)")
    }
    func controllerDidChangeContent(_ controller: FetchedResultsController<Article>) { events.append("did") }
    func controller(_ controller: FetchedResultsController<Article>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
    }
}

@Suite("FetchedResultsController")
@MainActor
struct ControllerTests {
    let store: Store
    init() throws { store = try Store.inMemory(records: [Article.self]) }

    func request(_ predicate: Predicate<Article>? = nil, limit: Int? = nil, offset: Int? = nil) -> RecordRequest<Article> {
        var r = RecordRequest<Article>(
            predicate: predicate, sortBy: [SortDescriptor(\.score), SortDescriptor(\.title)], limit: limit, offset: offset)
        r.batchSize = 10
        return r
    }

    /// Runs `write`, waits for the controller, applies the change set to `model` and
    /// checks it equals a fresh fetch.
    func step(
        _ controller: FetchedResultsController<Article>, _ model: inout TableViewModel, _ changes: RecordingDelegate,
        expectChange: Bool = true, _ write: (WriteTransaction) throws -> Void
    ) async throws -> ChangeSet? {
        let before = changes.changeSets.count
        try writeSync(store, write)
        await controller.waitForChanges()
        var change: ChangeSet? = nil
        #expect(changes.changeSets.count == before + (expectChange ? 1 : 0))
        if expectChange, let last = changes.changeSets.last {
            change = last
            try model.apply(last, dataSource: controller.snapshot)
        }
        #expect(model == TableViewModel(controller.snapshot))
        #expect(model == (try freshModel(controller)))
        return change
    }

    @Test func sectionsComeFromTheDatabaseWithoutRecords() throws {
        try seed(store, count: 100)
        var r = RecordRequest<Article>(sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)])
        r.batchSize = 10
        let controller = FetchedResultsController(r, store: store, sectionBy: .attribute(\.category))
        store.diagnostics.resetCounters()
        try controller.performFetch()
        #expect(controller.sections.map(\.name) == ["", "a", "b", "c"])
        #expect(controller.sections.map(\.numberOfObjects) == [25, 25, 25, 25])
        #expect(controller.sections[0].isNil)
        #expect(controller.sectionIndexTitles == ["A", "B", "C"])
        #expect(controller.section(forSectionIndexTitle: "B", at: 1) == 2)
        _ = controller.snapshot
        #expect(store.diagnostics.counters.batchesLoaded == 0)
        #expect(store.diagnostics.counters.recordsMaterialized == 0)
        #expect(store.diagnostics.counters.identifierScans == 1)
        let first = controller.object(at: IndexPath(item: 0, section: 1))
        #expect(first?.category == "a")
        #expect(first?.score == 0)
        #expect(controller.indexPath(for: first!.id!) == IndexPath(item: 0, section: 1))
        #expect(store.diagnostics.counters.batchesLoaded == 1)
    }

    @Test func sectionKeyMustLeadTheSort() throws {
        let controller = FetchedResultsController(request(), store: store, sectionBy: .attribute(\.category))
        #expect(throws: FolioError.self) { try controller.performFetch() }
        let noSort = FetchedResultsController(RecordRequest<Article>(), store: store)
        #expect(throws: FolioError.missingSortDescriptor(entity: "article")) { try noSort.performFetch() }
    }

    @Test func daySections() throws {
        try seed(store, count: 72)  // one per hour: three days
        var r = RecordRequest<Article>(sortBy: [SortDescriptor(\.published, order: .reverse)])
        r.batchSize = 10
        let controller = FetchedResultsController(r, store: store, sectionBy: .day(\.published, timeZone: .gmt))
        try controller.performFetch()
        #expect(controller.sections.map(\.name) == ["1970-01-03", "1970-01-02", "1970-01-01"])
        #expect(controller.sections.map(\.numberOfObjects) == [24, 24, 24])
    }

    @Test func handWrittenCases() async throws {
        let controller = FetchedResultsController(request(), store: store, sectionBy: nil)
        let changes = RecordingDelegate()
        controller.delegate = changes
        try await controller.performFetch()
        var model = TableViewModel(controller.snapshot)
        #expect(model.sections == [[]])
        // Insert into empty.
        var a = Article(title: "a", score: 10)
        let c1 = try await step(controller, &model, changes) { tx in try tx.insert(&a) }
        #expect(c1?.insertedItems == [IndexPath(item: 0, section: 0)])
        // Ties in the sort key: ordered by title, then rowid.
        var b = Article(title: "b", score: 10), b2 = Article(title: "b", score: 10)
        _ = try await step(controller, &model, changes) { tx in
            try tx.insert(&b); try tx.insert(&b2)
        }
        #expect(controller.snapshot.identifiers.map(\.self) == [a.id!, b.id!, b2.id!])
        // Update in place: an update, no move.
        a.isRead = true
        let c3 = try await step(controller, &model, changes) { tx in try tx.update(a) }
        #expect(c3?.updatedItems == [IndexPath(item: 0, section: 0)])
        #expect(c3?.updatedIdentifiers == [a.id!])
        #expect(c3?.movedItems.isEmpty == true)
        // Sort key change: a move, marked updated.
        a.score = 20
        let c4 = try await step(controller, &model, changes) { tx in try tx.update(a) }
        #expect(
            c4?.movedItems == [
                ChangeSet.Move(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 2, section: 0), isUpdated: true)
            ])
        #expect(c4?.movedIdentifiers == [a.id!])
        #expect(c4?.updatedItems.isEmpty == true)
        // Delete.
        let c5 = try await step(controller, &model, changes) { tx in try tx.delete(b) }
        #expect(c5?.deletedItems == [IndexPath(item: 0, section: 0)])
        #expect(c5?.deletedIdentifiers == [b.id!])
        // A rolled-back transaction delivers nothing.
        #expect(throws: FolioError.self) {
            try store.write { tx in
                var c = Article(title: "c")
                try tx.insert(&c)
                throw FolioError.invalidArgument("rollback")
            }
        }
        // Raw SQL on the escape hatch is seen too.
        _ = try await step(controller, &model, changes) { tx in
            try tx.database.execute(sql: "UPDATE article SET score = 5 WHERE id = ?", arguments: [b2.id!.rawValue])
        }
        // Batch update and delete by predicate are seen.
        _ = try await step(controller, &model, changes) { tx in
            try tx.updateAll(Article.self, where: #Predicate { $0.score > 0 }, set: [.set(\.score, to: 1)])
        }
        _ = try await step(controller, &model, changes) { tx in try tx.deleteAll(Article.self) }
        #expect(model.sections == [[]])
    }

    @Test func sectionedCases() async throws {
        var r = RecordRequest<Article>(sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)])
        r.batchSize = 5
        let controller = FetchedResultsController(r, store: store, sectionBy: .attribute(\.category))
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        let changes = delegate
        try await controller.performFetch()
        var model = TableViewModel(controller.snapshot)
        var x = Article(title: "x", score: 1, category: "m")
        var y = Article(title: "y", score: 2, category: "m")
        let c1 = try await step(controller, &model, changes) { tx in
            try tx.insert(&x); try tx.insert(&y)
        }
        #expect(c1?.insertedSections == [0])
        #expect(c1?.insertedItems.isEmpty == true, "rows of an inserted section come from the data source")
        // Move across sections (section key update).
        x.category = "z"
        let c2 = try await step(controller, &model, changes) { tx in try tx.update(x) }
        #expect(c2?.insertedSections == [1])
        // Delete the last row of a section.
        let c3 = try await step(controller, &model, changes) { tx in try tx.delete(y) }
        #expect(c3?.deletedSections == [0])
        #expect(c3?.deletedItems.isEmpty == true)
        // Move between two existing sections.
        var w = Article(title: "w", score: 3, category: "a")
        _ = try await step(controller, &model, changes) { tx in try tx.insert(&w) }
        var v = Article(title: "v", score: 4, category: "a")
        _ = try await step(controller, &model, changes) { tx in try tx.insert(&v) }
        w.category = "z"
        let c6 = try await step(controller, &model, changes) { tx in try tx.update(w) }
        #expect(
            c6?.movedItems == [
                ChangeSet.Move(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 1, section: 1), isUpdated: true)
            ])
        // nil section.
        var n = Article(title: "n", score: 0, category: nil)
        let c7 = try await step(controller, &model, changes) { tx in try tx.insert(&n) }
        #expect(c7?.insertedSections == [0])
        #expect(controller.sections[0].isNil)
        #expect(delegate.changeSets.count == 7)
        #expect(delegate.events.first == "will")
        #expect(delegate.events.contains("section insert 0 "))
    }

    @Test func predicateEnteringAndLeaving() async throws {
        let controller = FetchedResultsController(request(#Predicate { $0.score >= 10 }), store: store)
        let changes = RecordingDelegate()
        controller.delegate = changes
        try seed(store, count: 20)
        try await controller.performFetch()
        var model = TableViewModel(controller.snapshot)
        #expect(controller.snapshot.numberOfItems == 10)
        let ids = try store.fetchIdentifiers(request())
        // Leaves the predicate → delete.
        let c1 = try await step(controller, &model, changes) { tx in
            try tx.database.execute(sql: "UPDATE article SET score = 3 WHERE id = ?", arguments: [ids[12].rawValue])
        }
        #expect(c1?.deletedItems == [IndexPath(item: 2, section: 0)])
        // Enters → insert.
        let c2 = try await step(controller, &model, changes) { tx in
            try tx.database.execute(sql: "UPDATE article SET score = 100 WHERE id = ?", arguments: [ids[1].rawValue])
        }
        #expect(c2?.insertedItems == [IndexPath(item: 9, section: 0)])
        // A change outside the results delivers nothing.
        _ = try await step(controller, &model, changes, expectChange: false) { tx in
            try tx.database.execute(sql: "UPDATE article SET title = 'zz' WHERE id = ?", arguments: [ids[0].rawValue])
        }
    }

    @Test func limitAndOffsetHoldAfterChanges() async throws {
        try seed(store, count: 30)
        let controller = FetchedResultsController(request(limit: 5, offset: 3), store: store)
        let changes = RecordingDelegate()
        controller.delegate = changes
        try await controller.performFetch()
        var model = TableViewModel(controller.snapshot)
        #expect(model.sections[0].count == 5)
        // An insert before the window shifts it.
        var early = Article(title: "early", score: -1)
        _ = try await step(controller, &model, changes) { tx in try tx.insert(&early) }
        #expect(controller.snapshot.numberOfItems == 5)
        // Many inserts: the limit holds.
        _ = try await step(controller, &model, changes) { tx in
            for i in 0..<10 { var a = Article(title: "n\(i)", score: 4); try tx.insert(&a) }
        }
        #expect(controller.snapshot.numberOfItems == 5)
        // Deletes inside the window pull rows in.
        let shown = controller.snapshot.identifiers
        _ = try await step(controller, &model, changes) { tx in
            for id in shown.prefix(3) { try tx.delete(Article.self, id: id) }
        }
        #expect(controller.snapshot.numberOfItems == 5)
    }

    @Test func snapshotAndSectionsOfAHundredThousandRowsLoadNothing() async throws {
        try writeSync(store) { tx in
            try tx.database.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
                    INSERT INTO article (title, url, published, score, category, isRead)
                    SELECT 'T' || i, 'u' || i, i * 60.0, i % 1000, 'c' || (i % 7), 0 FROM n
                    """)
        }
        var r = RecordRequest<Article>(sortBy: [SortDescriptor(\.published, order: .reverse)])
        r.batchSize = 50
        let controller = FetchedResultsController(r, store: store, sectionBy: .day(\.published, timeZone: .gmt))
        let changes = RecordingDelegate()
        controller.delegate = changes
        store.diagnostics.resetCounters()
        try await controller.performFetch()
        // A list this long may be shown from its first screen and completed in the background
        // (one more scan then): either way, nothing is loaded.
        try await controller.waitUntilComplete()
        let scans = 1 + store.diagnostics.counters.firstScreens
        let snapshot = controller.snapshot
        #expect(snapshot.numberOfItems == 100_000)
        #expect(controller.sections.count == 70)  // 100,000 minutes ≈ 69.4 days
        #expect(store.diagnostics.counters.batchesLoaded == 0)
        #expect(store.diagnostics.counters.recordsMaterialized == 0)
        // A one-row insert queries only that row (plus a binary search of point lookups).
        let recorder = SQLRecorder(store)
        var a = Article(title: "new", published: Date(timeIntervalSince1970: 50_000 * 60 + 30))
        try writeSync(store) { tx in try tx.insert(&a) }
        await controller.waitForChanges()
        #expect(changes.changeSets.last?.insertedItems.count == 1)
        let reads = recorder.statements.filter { $0.hasPrefix("SELECT") }
        #expect(reads.filter { $0.contains("json_each") }.count == 1, "one query for the changed rows")
        // Besides: the table's change token (one indexed lookup in Folio's own table), and the
        // change log's new rows.
        #expect(
            reads.filter { !$0.contains("json_each") && !$0.contains("folio_entities") && !changeLogReads.contains($0) }
                .allSatisfy {
                    $0.hasSuffix("WHERE \"id\" = ?")
                })
        #expect(reads.count <= 20, "about log2(n) probes: \(reads.count)")
        #expect(store.diagnostics.counters.identifierScans == scans, "no rescan")
        #expect(store.diagnostics.counters.recordsMaterialized == 0)
    }

    @Test func changingTheRequestReportsTheDifference() async throws {
        try seed(store, count: 20)
        let controller = FetchedResultsController(request(#Predicate { $0.score < 10 }), store: store)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try await controller.performFetch()
        var model = TableViewModel(controller.snapshot)
        let change = try controller.setRequest(request(#Predicate { $0.score >= 5 && $0.score < 15 }))
        try model.apply(change, dataSource: controller.snapshot)
        #expect(model == (try freshModel(controller)))
        #expect(change.deletedItems.count == 5)
        #expect(change.insertedItems.count == 5)
        var reversed = request(#Predicate { $0.score >= 5 && $0.score < 15 })
        reversed.sortBy = [SortDescriptor(\.score, order: .reverse)]
        let change2 = try controller.setRequest(reversed)
        try model.apply(change2, dataSource: controller.snapshot)
        #expect(model == (try freshModel(controller)))
        #expect(change2.movedItems.count == 9, "a reversal of ten rows is nine moves")
        #expect(delegate.changeSets == [change, change2])
    }

    @Test func noTrackingWithoutDelegateOrSubscriber() async throws {
        try seed(store, count: 5)
        let controller = FetchedResultsController(request(), store: store)
        try await controller.performFetch()
        #expect(controller.trackingMode == .none)
        var a = Article(title: "new", score: 2)
        try writeSync(store) { tx in try tx.insert(&a) }
        await controller.waitForChanges()
        #expect(controller.snapshot.numberOfItems == 5, "the results stay as fetched")
        let delegate = RecordingDelegate()
        let recorder = SQLRecorder(store)
        controller.delegate = delegate
        #expect(controller.trackingMode == .memory)
        #expect(
            recorder.statements.filter { $0.contains(#"FROM "article""#) }.isEmpty,
            "setting the delegate fetches nothing on the caller: \(recorder.statements)")
        #expect(controller.snapshot.numberOfItems == 5)
        await controller.waitForChanges()
        #expect(controller.snapshot.numberOfItems == 6, "tracking starts by catching up, off the caller")
        #expect(
            delegate.changeSets.map(\.insertedItems) == [[IndexPath(item: 3, section: 0)]],
            "the commit since the fetch, read from the change log after the fetch's position: one insert")
        #expect(delegate.changeSets.first?.isReload == false)
        // Then it follows commits one by one.
        var b = Article(title: "b", score: 3)
        try writeSync(store) { tx in try tx.insert(&b) }
        await controller.waitForChanges()
        #expect(delegate.changeSets.last?.insertedItems == [IndexPath(item: 5, section: 0)])
    }

    @Test func snapshotDifference() throws {
        try seed(store, count: 10)
        let controller = FetchedResultsController(request(), store: store)
        try controller.performFetch()
        let before = controller.snapshot
        try store.write { tx in
            try tx.delete(Article.self, id: before.identifiers[0])
            var a = Article(title: "z", score: 100)
            try tx.insert(&a)
        }
        try controller.performFetch()
        let after = controller.snapshot
        var model = TableViewModel(before)
        let change = after.difference(from: before)
        try model.apply(change, dataSource: after)
        #expect(model == TableViewModel(after))
        #expect(change.deletedItems == [IndexPath(item: 0, section: 0)])
        #expect(change.insertedItems == [IndexPath(item: 9, section: 0)])
    }

    @Test func computedSectionKeyReadsOnlyItsColumn() async throws {
        try seed(store, count: 100)
        var r = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        r.batchSize = 10
        let controller = FetchedResultsController(
            r, store: store, sectionBy: .computed(\.score, name: "tens") { "\($0 / 10 * 10)" })
        let changes = RecordingDelegate()
        controller.delegate = changes
        let recorder = SQLRecorder(store)
        store.diagnostics.resetCounters()
        try await controller.performFetch()
        #expect(controller.sections.count == 10)
        #expect(Array(controller.sections.map(\.name).prefix(3)) == ["0", "10", "20"])
        #expect(recorder.statements.contains(#"SELECT "id", "score" FROM "article" ORDER BY "score", "id""#))
        #expect(store.diagnostics.counters.recordsMaterialized == 0)
        var model = TableViewModel(controller.snapshot)
        let first = controller.identifier(at: IndexPath(item: 0, section: 0))
        let change = try await step(controller, &model, changes) { tx in
            try tx.database.execute(sql: "UPDATE article SET score = 1000 WHERE id = ?", arguments: [first.rawValue])
        }
        #expect(change?.insertedSections == [10])
        #expect(controller.sections.last?.name == "1000")
    }

    @Test func sectionsThatDoNotFollowTheSortThrow() async throws {
        try seed(store, count: 10)
        let controller = FetchedResultsController(
            RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]), store: store,
            sectionBy: .computed(\.score, name: "parity") { $0 % 2 == 0 ? "even" : "odd" })
        await #expect(throws: FolioError.self) { try await controller.performFetch() }
    }

    @Test func replacingTheWholeTableGivesACorrectChangeSetOrOneReload() async throws {
        try seed(store, count: 3_000)
        let controller = FetchedResultsController(request(), store: store)
        let changes = RecordingDelegate()
        controller.delegate = changes
        try await controller.performFetch()
        var model = TableViewModel(controller.snapshot)
        // 3,000 of 3,000 rows touched: the rescan path, still an exact change set.
        let change = try await step(controller, &model, changes) { tx in
            try tx.deleteAll(Article.self)
            for i in 0..<2_500 { var a = Article(title: "r\(i)", score: i % 50); try tx.insert(&a) }
        }
        #expect(change?.isReload == false)
        #expect(change?.deletedItems.count == 3_000)
        #expect(change?.insertedItems.count == 2_500)
        #expect(store.diagnostics.counters.identifierScans >= 2)
    }

    @Test func hugeReplacementsAreOneReload() async throws {
        try writeSync(store) { tx in
            try tx.database.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 59999)
                    INSERT INTO article (title, url, published, score, category, isRead)
                    SELECT 'T' || i, 'u' || i, i, i, NULL, 0 FROM n
                    """)
        }
        let controller = FetchedResultsController(request(), store: store)
        let changes = RecordingDelegate()
        controller.delegate = changes
        try await controller.performFetch()
        var model = TableViewModel(controller.snapshot)
        let change = try await step(controller, &model, changes) { tx in try tx.deleteAll(Article.self) }
        #expect(change?.isReload == true)
        #expect(controller.snapshot.numberOfItems == 0)
    }

    @Test(arguments: [
        0.0, 86_399.9, 86_400, -1, 951_782_400 /* 2000-02-29 */, 4_102_444_800 /* 2100-01-01 */,
        -62_135_596_800 /* 0001-01-01 */, 1_763_700_000,
    ])
    func dayNamesMatchSQLite(_ seconds: Double) throws {
        // SQLite's date() is the oracle (proleptic Gregorian, like Folio; Foundation's
        // calendar switches to Julian before 1582).
        let expected = try sqliteDate(store, seconds)
        #expect(DayNumber.name(of: DayNumber.of(seconds: seconds, offsetSeconds: 0)) == expected)
    }

    @Test func absurdDatesStillGetOrderedSections() async throws {
        try writeSync(store) { tx in
            for (i, seconds) in [-Double.infinity, -1e300, 0, 1e300, Double.infinity].enumerated() {
                var a = Article(title: "d\(i)", published: Date(timeIntervalSince1970: seconds))
                try tx.insert(&a)
            }
        }
        let controller = FetchedResultsController(
            RecordRequest<Article>(sortBy: [SortDescriptor(\.published)]), store: store,
            sectionBy: .day(\.published, timeZone: .gmt))
        try await controller.performFetch()
        #expect(controller.sections.count == 3)  // -∞ and -1e300 clamp together, 1970-01-01, +1e300 and +∞
        #expect(controller.sections[1].name == "1970-01-01")
    }

    @Test func sortKeysThatDifferOnlyAfterANULAreOrderedExactly() async throws {
        var r = RecordRequest<Article>(sortBy: [SortDescriptor(\.title)])
        r.batchSize = 5
        let controller = FetchedResultsController(r, store: store)
        let changes = RecordingDelegate()
        controller.delegate = changes
        try writeSync(store) { tx in
            for title in ["a\0c", "a\0a", "a"] { var x = Article(title: title); try tx.insert(&x) }
        }
        try await controller.performFetch()
        var model = TableViewModel(controller.snapshot)
        _ = try await step(controller, &model, changes) { tx in
            var x = Article(title: "a\0b"); try tx.insert(&x)
        }
        let titles = (0..<4).compactMap { controller.object(at: IndexPath(item: $0, section: 0))?.title }
        #expect(titles == ["a", "a\0a", "a\0b", "a\0c"])
    }

    @Test func reentrantStoreCallsThrowInsteadOfTrapping() throws {
        try seed(store, count: 3)
        #expect(throws: FolioError.reentrantAccess) {
            try store.write { tx in _ = try store.count(RecordRequest<Article>()) }
        }
        #expect(throws: FolioError.reentrantAccess) {
            try store.read { _ in try store.write { _ in } }
        }
        #expect(try store.count(RecordRequest<Article>()) == 3, "the store stays usable")
    }

    @Test func loadedRecordsTheCommitDidNotTouchAreKept() async throws {
        try seed(store, count: 100)
        let controller = FetchedResultsController(request(), store: store)
        let changes = RecordingDelegate()
        controller.delegate = changes
        try await controller.performFetch()
        #expect(controller.object(at: IndexPath(item: 3, section: 0))?.score == 3)
        let far = controller.identifier(at: IndexPath(item: 90, section: 0))
        var model = TableViewModel(controller.snapshot)
        store.diagnostics.resetCounters()
        _ = try await step(controller, &model, changes) { tx in
            try tx.database.execute(sql: "UPDATE article SET isRead = 1 WHERE id = ?", arguments: [far.rawValue])
        }
        #expect(controller.object(at: IndexPath(item: 3, section: 0))?.score == 3)
        #expect(store.diagnostics.counters.batchesLoaded == 0, "the visible batch was not read again")
        // A batch holding the changed record is read again, with its new values.
        #expect(controller.object(at: IndexPath(item: 90, section: 0))?.isRead == true)
        #expect(store.diagnostics.counters.batchesLoaded == 1)
    }

    @Test func updatesCarryTheSnapshotTheyLeadTo() async throws {
        try seed(store, count: 5)
        let controller = FetchedResultsController(request(), store: store)
        let updates = controller.updates
        try await controller.performFetch()
        try writeSync(store) { tx in
            var a = Article(title: "a", score: 100); try tx.insert(&a)
        }
        try writeSync(store) { tx in
            var b = Article(title: "b", score: 200); try tx.insert(&b)
        }
        await controller.waitForChanges()
        var seen: [Int] = []
        for await update in updates {
            seen.append(update.snapshot.numberOfItems)
            if seen.count == 2 { break }
        }
        #expect(seen == [6, 7], "each change set comes with its own state, not the controller's latest")
    }

    @Test func daySectionsIndexByMonthByDefault() async throws {
        try seed(store, count: 24 * 40, categories: [])  // 40 days from 1970-01-01
        var r = RecordRequest<Article>(sortBy: [SortDescriptor(\.published)])
        r.batchSize = 10
        let controller = FetchedResultsController(r, store: store, sectionBy: .day(\.published, timeZone: .gmt))
        try await controller.performFetch()
        #expect(controller.sectionIndexTitles == ["1970-01", "1970-02"])
        #expect(controller.section(forSectionIndexTitle: "1970-02", at: 1) == 31)
        controller.sectionIndexTitle = { String($0.suffix(2)) }
        #expect(controller.sections[0].indexTitle == "01")
    }
}
