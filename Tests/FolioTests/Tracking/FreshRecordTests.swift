import Foundation
import GRDB
import Testing
@testable import Folio

/// A record read after a change set is the stored one, never a copy loaded before a commit
/// changed it while it was outside the window.
@Suite("Records read after a change are the stored ones")
@MainActor
struct FreshRecordTests {
    /// `limit 1, offset 3`, a `.computed` section key and a cache name: the record at the
    /// window was loaded, left the window (an insert before it), was updated while outside
    /// (a commit whose change set for the window was empty, so nothing was delivered), and
    /// came back (the insert deleted). The loaded copy was handed from results to results
    /// across the commit that changed it, and `object(at:)` returned its old title.
    @Test(.tags(Testing.Tag.threadSanitized)) func aRecordReadAfterItsChangeSetIsTheStoredOne() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 10)
        var request = sorted([SortDescriptor(\.score)], limit: 1, offset: 3, batchSize: 1)
        request.maxBatchesInMemory = 1
        let live = try await LiveHarness(
            store, request, sectionBy: .computed(\.score, name: "tens") { "\($0 / 10 * 10)" }, cacheName: "stale")
        let x = try #require(live.controller.object(at: IndexPath(item: 0, section: 0)))
        #expect(x.score == 3)
        var early = Article(title: "early", score: -1)
        try await live.step { tx in try tx.insert(&early) }
        #expect(live.controller.object(at: IndexPath(item: 0, section: 0))?.score == 2, "x left the window")
        var changed = x
        changed.title = "changed while outside the window"
        let silent = try await live.step { tx in try tx.update(changed) }
        #expect(silent.isEmpty, "nothing shown changed")
        try await live.step { tx in try tx.delete(early) }
        #expect(live.controller.identifier(at: IndexPath(item: 0, section: 0)) == x.id)
        #expect(live.controller.object(at: IndexPath(item: 0, section: 0))?.title == "changed while outside the window")
        #expect(live.controller.fetchedObjects?.first??.title == "changed while outside the window")
    }

    /// Day sections (+05:30), limit 1, batch 0, a cache name, the delegate set after the fetch,
    /// an `updates` subscriber. Row 3 is loaded in the window, pushed out by an insert, updated
    /// by one of two writers at once while outside, and comes back when the insert is deleted:
    /// it is shown with its stored flag, not the one loaded before.
    @Test func aRecordBackInTheWindowIsTheStoredOne() async throws {
        let store = try Store.temporary(records: [Article.self])
        try writeSync(store) { tx in
            var a = Article(title: "one", published: Date(timeIntervalSince1970: .infinity))
            a.isRead = true
            try tx.insert(&a)
            var b = Article(title: "two", published: Date(timeIntervalSince1970: 604_801))
            try tx.insert(&b)
            var c = Article(title: "K", published: Date(timeIntervalSince1970: 0), category: "a\0")
            c.isRead = true
            try tx.insert(&c)
        }
        var request = sorted([SortDescriptor(\.published)], limit: 1, batchSize: 0)
        request.maxBatchesInMemory = 1
        let controller = FetchedResultsController(
            request, store: store, sectionBy: .day(\.published, timeZone: TimeZone(secondsFromGMT: 19_800)!),
            cacheName: "window")
        try await controller.performFetch()
        let recorder = LiveRecorder()
        controller.delegate = recorder
        let updates = controller.updates
        #expect(controller.object(at: IndexPath(item: 0, section: 0))?.title == "K")
        var early = Article(title: "early", published: Date(timeIntervalSince1970: -1e15))
        try writeSync(store) { tx in try tx.insert(&early) }
        await controller.waitForChanges()
        #expect(controller.object(at: IndexPath(item: 0, section: 0))?.title == "early")
        // Two writers at once: one updates row 3 (outside the window), one touches nothing.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await store.write { tx in try tx.database.execute(sql: "UPDATE article SET isRead = 0 WHERE id = 3") }
            }
            group.addTask {
                try await store.write { tx in try tx.database.execute(sql: "UPDATE article SET isRead = 0 WHERE id = 99") }
            }
            try await group.waitForAll()
        }
        await controller.waitForChanges()
        _ = try writeSync(store) { tx in try tx.delete(early) }
        await controller.waitForChanges()
        #expect(controller.identifier(at: IndexPath(item: 0, section: 0)) == RecordID(3))
        #expect(controller.object(at: IndexPath(item: 0, section: 0))?.isRead == false, "the stored flag, not the loaded one")
        _ = updates
    }
}
