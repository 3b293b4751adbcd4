import Foundation
import Testing
@testable import Folio

@Suite("Writes by other connections")
@MainActor
struct ExternalChangeTests {
    /// Another connection's commits reach the controller as row-by-row change sets through
    /// the change log: at `synchronize()`, and before the store's own next write.
    @Test func aControllerFollowsAnotherConnectionsWritesRowByRow() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 50)
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 10
        let controller = FetchedResultsController(request, store: store)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try await controller.performFetch()
        let other = try DatabaseQueueFactory.open(store.path!)
        try await other.write { db in try db.execute(sql: "DELETE FROM article WHERE score < 20") }
        try store.synchronize()
        await controller.waitForChanges()
        #expect(delegate.changeSets.last?.isReload == false)
        #expect(delegate.changeSets.last?.deletedItems.count == 20)
        #expect(controller.snapshot.numberOfItems == 30)
        // Followed before the store's own next write too (if the store was not woken for it
        // already), without synchronize(): the other connection's commit, then the store's own.
        try await other.write { db in try db.execute(sql: "DELETE FROM article WHERE score < 30") }
        try writeSync(store) { tx in
            var a = Article(title: "own", score: 1000); try tx.insert(&a)
        }
        await controller.waitForChanges()
        #expect(delegate.changeSets.suffix(2).map(\.isReload) == [false, false])
        #expect(delegate.changeSets.suffix(2).map(\.deletedItems.count) == [10, 0])
        #expect(delegate.changeSets.last?.insertedItems.count == 1)
        #expect(controller.snapshot.numberOfItems == 21)
        #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))
    }
}

@Suite("Change hub")
@MainActor
struct ChangeHubTests {
    /// The change log holds the rows of a transaction that was running when the controller
    /// subscribed: they arrive as a change set, none lost, not as a reload.
    @Test func aControllerThatSubscribesDuringATransactionGetsItsRows() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 10)
        let began = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
        // No controller yet: the transaction's rows are in the change log all the same.
        let write = Task.detached {
            try await store.write { tx in
                for i in 0..<10 { var a = Article(title: "x\(i)", score: 100 + i); try tx.insert(&a) }
                began.signal()
                proceed.wait()
                for i in 0..<10 { var a = Article(title: "y\(i)", score: 200 + i); try tx.insert(&a) }
            }
        }
        began.wait()
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 10
        let controller = FetchedResultsController(request, store: store)
        let delegate = RecordingDelegate()
        controller.delegate = delegate
        try await controller.performFetch()  // reads the state before the transaction
        #expect(controller.snapshot.numberOfItems == 10)
        proceed.signal()
        try await write.value
        await controller.waitForChanges()
        #expect(delegate.changeSets.last?.isReload == false, "rows it never saw are not lost, nor a reload")
        #expect(delegate.changeSets.last?.insertedItems.count == 20)
        #expect(controller.snapshot.numberOfItems == 30)
        #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))
    }

    @Test func aClosedStoreThrowsStoreClosed() throws {
        let store = try Store.temporary(records: [Article.self])
        try store.close()
        #expect(throws: FolioError.storeClosed) { try store.count(RecordRequest<Article>()) }
    }
}
