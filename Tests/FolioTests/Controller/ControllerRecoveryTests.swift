import Foundation
import GRDB
import Testing
@testable import Folio

/// A reload that fails is reported on every channel, and the controller recovers.
@Suite("A failed reload is reported and the controller recovers", .tags(Testing.Tag.threadSanitized))
@MainActor
struct ControllerRecoveryTests {
    /// The rows another connection wrote make the sections non-contiguous (a `.computed` key
    /// that puts 55 in section "0"): the reload threw, and the controller kept its old rows
    /// and never followed the store again, with no error anywhere. Now the error reaches
    /// `lastError`, the delegate and the `updates` stream (which goes on), and the controller
    /// recovers at a later commit.
    @Test func aFailedReloadIsReportedAndTheControllerRecovers() async throws {
        let (store, key) = try tensWithABreakingSectionKey()
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.score)]), sectionBy: key)
        let updates = live.controller.updates
        let collector = Task { @MainActor in
            var received: [ControllerUpdate] = []
            for await update in updates {
                received.append(update)
                if received.count == 4 { break }
            }
            return received
        }
        // Another process writes the row that breaks the sections.
        let other = try DatabaseQueueFactory.open(store.path!)
        try await other.write { db in
            try db.execute(sql: "INSERT INTO article (title, url, published, score, isRead) VALUES ('bad', 'bad', 0, 55, 0)")
        }
        try store.synchronize()
        await live.controller.waitForChanges()
        guard case .sectionsNotContiguous? = live.controller.lastError else {
            Issue.record("expected sectionsNotContiguous, got \(String(describing: live.controller.lastError))")
            return
        }
        #expect(live.recorder.errors.count == 1)
        #expect(live.controller.snapshot.numberOfItems == 10, "the results stay as they were")
        // Its own commits fail too while the bad row is there — reported each time.
        try writeSync(store) { tx in
            var a = Article(title: "own", score: 35)
            try tx.insert(&a)
        }
        await live.controller.waitForChanges()
        #expect(live.recorder.errors.count == 2)
        // The bad row goes; the controller recovers with a reload as soon as the store looks
        // (synchronize(), or before its next write).
        try await other.write { db in try db.execute(sql: "DELETE FROM article WHERE url = 'bad'") }
        try store.synchronize()
        let reload = try await live.settle()
        #expect(reload == [.reload])
        #expect(live.controller.lastError == nil)
        // And it follows commits one by one again.
        let insert = try await live.step { tx in
            var a = Article(title: "after", score: 77)
            try tx.insert(&a)
        }
        #expect(insert.first?.insertedItems.count == 1)
        let events = await collector.value
        #expect(events.map { $0.error != nil } == [true, true, false, false])
        #expect(events[0].changes.isEmpty && events[0].snapshot.numberOfItems == 10)
        #expect(events[2].changes.isReload && events[3].snapshot == live.controller.snapshot)
    }

    /// A controller whose first fetch failed (sections not contiguous) and that got its
    /// delegate only afterwards — before the fetch that succeeds, or after it — follows every
    /// commit from that fetch on, with a section cache or without. The randomized workloads
    /// never checked this: they gave such a controller no delegate at all.
    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func aControllerWhoseFirstFetchFailedFollowsCommitsAfterAFetchThatSucceeds(
        delegateAfterTheRefetch: Bool, cached: Bool
    ) async throws {
        let (store, key) = try tensWithABreakingSectionKey()
        try execute(store, "INSERT INTO article (title, url, published, score, isRead) VALUES ('bad', 'bad', 0, 55, 0)")
        let controller = FetchedResultsController(
            sorted([SortDescriptor(\.score)]), store: store, sectionBy: key, cacheName: cached ? "recovery" : nil)
        #expect(throws: FolioError.self) { try Self.fetchNow(controller) }
        let recorder = LiveRecorder()
        if !delegateAfterTheRefetch { controller.delegate = recorder }
        try execute(store, "DELETE FROM article WHERE url = 'bad'")
        try Self.fetchNow(controller)
        // A commit after the fetch (and before the delegate, when it comes last).
        try execute(store, "UPDATE article SET title = 'between' WHERE score = 20")
        if delegateAfterTheRefetch { controller.delegate = recorder }
        await controller.waitForChanges()
        var model = TableViewModel(controller.snapshot)
        let caughtUp = recorder.changeSets.count
        // Followed from the fetch, or caught up with from the fetch's position in the change
        // log, that commit is an update.
        #expect(caughtUp == 1, "\(recorder.changeSets)")
        #expect(recorder.changeSets.first?.isReload == false)
        #expect(recorder.changeSets.first?.updatedItems.count == 1)
        // Then every commit arrives as its own change set, the moved row included.
        try execute(store, "UPDATE article SET title = 'edited' WHERE score = 30")
        try execute(store, "UPDATE article SET score = 95 WHERE score = 40")
        await controller.waitForChanges()
        #expect(recorder.changeSets.count == caughtUp + 2, "\(recorder.changeSets)")
        #expect(recorder.changeSets.last?.isReload == false)
        for (change, source) in zip(recorder.changeSets[caughtUp...], recorder.dataSources[caughtUp...]) {
            try model.apply(change, dataSource: source)
        }
        #expect(model == (try freshModel(controller)))
        #expect(recorder.errors.isEmpty && controller.lastError == nil)
    }

    /// The synchronous `performFetch` (an async test would pick the async overload).
    private static func fetchNow(_ controller: FetchedResultsController<Article>) throws {
        try controller.performFetch()
    }
}
