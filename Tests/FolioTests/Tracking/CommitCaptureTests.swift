import Foundation
import GRDB
import Testing
@testable import Folio

/// Every commit reaches a live list: one in flight when the first controller subscribes,
/// one that lands while performFetch reads, and a raw SQL change of a rowid.
@Suite("Every commit reaches a live list", .tags(Testing.Tag.threadSanitized))
@MainActor
struct CommitCaptureTests: LiveListSuite {
    /// A write transaction changes a row while no controller listens (the change hub stops
    /// recording its rows); a controller subscribes and reads; the transaction commits while
    /// it reads. The hub reported "unknown changes" to a tracker that had no state yet, which
    /// ignored it: the row never appeared, not even after later commits.
    @Test(arguments: [false, true])
    func aTransactionInFlightWhenTheFirstControllerSubscribesIsNotLost(async: Bool) async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 5)
        let began = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
        let committed = DispatchSemaphore(value: 0)
        Thread {
            try? store.write { tx in
                var a = Article(title: "in flight", score: 100)
                try tx.insert(&a)
                began.signal()
                proceed.wait()
            }
            committed.signal()
        }.start()
        began.wait()
        // The transaction commits while the controller scans its identifiers.
        let armed = Locked(true)
        store.diagnostics.logSQL { line in
            guard line.contains("ORDER BY"),
                armed.withLock({
                    let was = $0
                    $0 = false
                    return was
                })
            else { return }
            proceed.signal()
            committed.wait()
        }
        let controller = FetchedResultsController(sorted([SortDescriptor(\.score)]), store: store)
        let recorder = LiveRecorder()
        controller.delegate = recorder
        if async { try await controller.performFetch() } else { try Self.fetch(controller) }
        #expect(!armed.current, "the transaction committed during the read")
        #expect(controller.snapshot.numberOfItems == 5, "the read began before the commit")
        var model = TableViewModel(controller.snapshot)
        await controller.waitForChanges()
        for change in recorder.changeSets { try model.apply(change, dataSource: controller.snapshot) }
        #expect(controller.snapshot.numberOfItems == 6, "the row of the transaction in flight is shown")
        #expect(model == (try freshModel(controller)))
        // And it keeps following.
        try writeSync(store) { tx in
            var b = Article(title: "later", score: 50)
            try tx.insert(&b)
        }
        await controller.waitForChanges()
        for change in recorder.changeSets.dropFirst(recorder.changeSets.count - 1) {
            try model.apply(change, dataSource: controller.snapshot)
        }
        #expect(model == (try freshModel(controller)))
        #expect(controller.snapshot.numberOfItems == 7)
    }

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

    /// SQLite's update hook reports an UPDATE of the rowid under the new rowid only: the old
    /// identifier must leave the controller (a delete and an insert), not stay for ever.
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
