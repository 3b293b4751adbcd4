import Foundation
import Testing
@testable import Folio

@Suite("Writes by other connections")
@MainActor
struct ExternalChangeTests {
    @Test func aControllerReloadsAfterAnotherConnectionWrites() async throws {
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
        #expect(delegate.changeSets.last?.isReload == true)
        #expect(controller.snapshot.numberOfItems == 30)
        // Detected before the store's own next write too, without synchronize(): a reload for
        // the other connection's commit, then the store's own commit row by row.
        try await other.write { db in try db.execute(sql: "DELETE FROM article WHERE score < 30") }
        try writeSync(store) { tx in
            var a = Article(title: "own", score: 1000); try tx.insert(&a)
        }
        await controller.waitForChanges()
        #expect(delegate.changeSets.suffix(2).map(\.isReload) == [true, false])
        #expect(delegate.changeSets.last?.insertedItems.count == 1)
        #expect(controller.snapshot.numberOfItems == 21)
        #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))
    }
}

@Suite("Change hub")
@MainActor
struct ChangeHubTests {
    @Test func aControllerThatSubscribesDuringAnUnobservedTransactionReloads() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 10)
        let began = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
        // No controller yet: the hub stops recording this transaction's rows at the first one.
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
        #expect(delegate.changeSets.last?.isReload == true, "rows it never saw are not silently lost")
        #expect(controller.snapshot.numberOfItems == 30)
        #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))
    }

    @Test func aClosedStoreThrowsStoreClosed() throws {
        let store = try Store.temporary(records: [Article.self])
        try store.close()
        #expect(throws: FolioError.storeClosed) { try store.count(RecordRequest<Article>()) }
    }
}
