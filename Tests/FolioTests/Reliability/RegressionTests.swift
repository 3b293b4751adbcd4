import Foundation
import Testing
@testable import Folio

/// Focused regressions for library bugs the randomized suites found.
@Suite("Reliability regressions")
@MainActor
struct RegressionTests {
    func tracked(_ store: Store, _ request: RecordRequest<Article>, sectionBy: SectionKey<Article>? = nil)
        throws -> (FetchedResultsController<Article>, EventRecorder, TableViewModel)
    {
        let controller = FetchedResultsController(request, store: store, sectionBy: sectionBy)
        let recorder = EventRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        return (controller, recorder, TableViewModel(controller.snapshot))
    }

    static func request(_ sortBy: [SortDescriptor<Article>] = [SortDescriptor(\.score)]) -> RecordRequest<Article> {
        RecordRequest<Article>(sortBy: sortBy)
    }

    /// SQLite's update hook reports an UPDATE of the rowid under the new rowid only: the
    /// old identifier used to stay in the controller for ever (seed 0, transaction 43).
    @Test(arguments: [false, true])
    func rawSQLChangingARowidIsADeleteAndAnInsert(onDisk: Bool) async throws {
        let store = onDisk ? try Store.temporary(records: [Article.self]) : try Store.inMemory(records: [Article.self])
        try seed(store, count: 5)
        let (controller, recorder, before) = try tracked(store, Self.request())
        var model = before
        let old = controller.snapshot.identifiers[2]
        try writeSync(store) { tx in
            try tx.database.execute(sql: "UPDATE article SET id = 1000 WHERE id = ?", arguments: [old.rawValue])
        }
        await controller.waitForChanges()
        #expect(recorder.changeSets.count == 1)
        let change = try #require(recorder.changeSets.last)
        #expect(change.deletedItems == [IndexPath(item: 2, section: 0)])
        #expect(change.insertedIdentifiers == [RecordID(1000)])
        try model.apply(change, dataSource: controller.snapshot)
        #expect(model == (try freshModel(controller)))
        #expect(!controller.snapshot.identifiers.contains(old))
        // A rolled-back rowid change reports nothing.
        struct Rollback: Error {}
        #expect(throws: Rollback.self) {
            try store.write { tx in
                try tx.database.execute(sql: "UPDATE article SET id = 2000 WHERE id = 1000")
                throw Rollback()
            }
        }
        try writeSync(store) { tx in try tx.database.execute(sql: "UPDATE article SET title = 'x' WHERE id = 1000") }
        await controller.waitForChanges()
        #expect(recorder.changeSets.count == 2)
        #expect(recorder.changeSets.last?.updatedItems.count == 1)
        #expect(recorder.changeSets.last?.deletedItems.isEmpty == true)
    }
}

extension RegressionTests {
    /// Upper-casing the first letter made sections that do not follow the binary sort
    /// ("A…" < "B…" < "a…" gave sections A, B, A): the section "A" appeared twice and
    /// change sets were built from a wrong section map (seed 1).
    @Test func firstLetterSectionsFollowTheSort() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try writeSync(store) { tx in
            for title in ["apple", "Banana", "Apple", "cherry", "éclair", "Éclair"] {
                var a = Article(title: title)
                try tx.insert(&a)
            }
        }
        let (controller, recorder, before) = try tracked(
            store, Self.request([SortDescriptor(\.title)]), sectionBy: .firstLetter(\.title))
        var model = before
        #expect(controller.sections.map(\.name) == ["A", "B", "a", "c", "É", "é"])
        #expect(controller.sections.map(\.numberOfObjects) == [1, 1, 1, 1, 1, 1])
        #expect(controller.sectionIndexTitles == ["A", "B", "C", "É"])
        #expect(controller.section(forSectionIndexTitle: "C", at: 2) == 3)
        try TableViewModel.check(dataSource: controller.snapshot)
        try writeSync(store) { tx in
            var a = Article(title: "avocado")
            try tx.insert(&a)
            var b = Article(title: "Aardvark")
            try tx.insert(&b)
        }
        await controller.waitForChanges()
        let change = try #require(recorder.changeSets.last)
        #expect(change.insertedSections.isEmpty)
        #expect(change.insertedItems == [IndexPath(item: 0, section: 0), IndexPath(item: 1, section: 2)])
        try model.apply(change, dataSource: controller.snapshot)
        #expect(model == (try freshModel(controller)))
    }
}

extension RegressionTests {
    /// A commit that lands after performFetch's read began but before the controller
    /// installs what it read used to be held back until the next commit: with no next
    /// commit the controller showed stale results for ever, and `waitForChanges()` did
    /// not wait for it. The SQL log's sink commits exactly in that window.
    @Test(arguments: [false, true])
    func aCommitDuringPerformFetchIsNotLost(async: Bool) async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 5)
        let armed = Locked(true)
        store.diagnostics.logSQL { [store] line in
            guard line.contains("ORDER BY"),
                armed.withLock({
                    let was = $0; $0 = false; return was
                })
            else { return }
            // Inside performFetch's read, on the reader's queue: another connection commits
            // (from another thread, since this one is inside a store closure).
            let done = DispatchSemaphore(value: 0)
            Thread {
                try? store.write { tx in
                    var late = Article(title: "late", score: 2)
                    try tx.insert(&late)
                }
                done.signal()
            }.start()
            done.wait()
        }
        let controller = FetchedResultsController(Self.request(), store: store)
        let recorder = EventRecorder()
        controller.delegate = recorder
        if async { try await controller.performFetch() } else { try Self.fetch(controller) }
        #expect(!armed.current, "the write ran inside the fetch")
        var model = TableViewModel(controller.snapshot)
        await controller.waitForChanges()
        for change in recorder.changeSets { try model.apply(change, dataSource: controller.snapshot) }
        #expect(controller.snapshot.numberOfItems == 6)
        #expect(model == (try freshModel(controller)))
        // The same on a live controller whose request changes.
        armed.withLock { $0 = true }
        let change = try controller.setRequest(Self.request([SortDescriptor(\.score, order: .reverse)]))
        #expect(!armed.current, "the write ran inside the fetch")
        try model.apply(change, dataSource: controller.snapshot)
        await controller.waitForChanges()
        for change in recorder.changeSets.dropFirst(recorder.changeSets.firstIndex(of: change)! + 1) {
            try model.apply(change, dataSource: controller.snapshot)
        }
        #expect(controller.snapshot.numberOfItems == 7)
        #expect(model == (try freshModel(controller)))
    }

    /// The synchronous performFetch, from async code.
    static func fetch(_ controller: FetchedResultsController<Article>) throws { try controller.performFetch() }
}
