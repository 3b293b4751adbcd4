import Foundation
import GRDB
import Observation
import Testing
@testable import Folio

/// The model at the edges: windows, persistent caches, other processes, many writers.
@Suite("FetchedResultsModel edges")
@MainActor
struct ResultsModelEdgeTests {
    /// A `limit`/`offset` window: commits outside the window do not notify; a commit that
    /// shifts the window does, once.
    @Test func aWindowNotifiesOnlyForCommitsThatChangeTheWindow() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 5_000)
        var request = articles()
        request.limit = 20
        request.offset = 4_090
        let model = FetchedResultsModel(request, store: store)
        try await model.performFetch()
        #expect(model.items.count == 20)
        let counter = ObservationCounter { readEverythingButRecords(model) }
        func commit(_ expected: Int, _ what: Comment, _ write: (WriteTransaction) throws -> Void) async throws {
            try writeSync(store, write)
            await model.waitForChanges()
            #expect(counter.take() == expected, what)
            try expectFresh(model)
        }
        try await commit(0, "a row after the window") { tx in
            var a = Article(title: "after", score: 9_999)
            try tx.insert(&a)
        }
        try await commit(0, "a row after the window changed") { tx in
            try tx.database.execute(sql: "UPDATE article SET title = 'x' WHERE score = 4500")
        }
        try await commit(1, "a row before the window shifts it") { tx in
            var a = Article(title: "before", score: -1)
            try tx.insert(&a)
        }
        try await commit(1, "a row inside the window changed") { tx in
            try tx.database.execute(sql: "UPDATE article SET title = 'y' WHERE score = 4095")
        }
        #expect(model.items[6].record?.title == "y")
    }

    /// With a persistent section cache, the second model reuses it; neither loads a record
    /// when every identifier is read, and both follow commits.
    @Test func aModelWithAPersistentCache() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 6_000)
        let request = articles(sortBy: [SortDescriptor(\.published)])
        let first = FetchedResultsModel(request, store: store, sectionBy: .day(\.published, timeZone: .gmt), cacheName: "model")
        try await first.performFetch()
        await first.controller.flushCache()
        let second = FetchedResultsModel(request, store: store, sectionBy: .day(\.published, timeZone: .gmt), cacheName: "model")
        try await second.performFetch()
        #expect(second.controller.lastCacheOutcome == .reused)
        store.diagnostics.resetCounters()
        readEverythingButRecords(first)
        readEverythingButRecords(second)
        #expect(store.diagnostics.counters.batchesLoaded == 0)
        #expect(ModelShape(first) == ModelShape(second))
        let counter = ObservationCounter { readEverythingButRecords(second) }
        try writeSync(store) { tx in
            var a = Article(title: "new day", published: Date(timeIntervalSince1970: 1e9))
            try tx.insert(&a)
        }
        await second.waitForChanges()
        await first.waitForChanges()
        #expect(counter.take() == 1)
        try expectFresh(first)
        try expectFresh(second)
    }

    /// Another connection (as another process would) writes: the store follows its commit
    /// (woken, or at `synchronize()`) through the change log, row by row, and the model
    /// gets one notification per commit that changed what it shows, then equals a fresh
    /// fetch. A write there to another table, or to rows the model does not show, does not
    /// notify.
    @Test func anotherProcessesCommitIsOneNotification() async throws {
        let store = try Store.temporary(records: [Article.self, Note.self])
        try seed(store, count: 4_200)
        let model = FetchedResultsModel(articles(#Predicate { $0.score >= 100 }), store: store)
        try await model.performFetch()
        let counter = ObservationCounter { readEverythingButRecords(model) }
        let other = try DatabaseQueueFactory.open(store.path!)

        try await other.write { db in try db.execute(sql: "INSERT INTO note (text) VALUES ('elsewhere')") }
        try store.synchronize()
        await model.waitForChanges()
        #expect(counter.take() == 0, "another table")

        try await other.write { db in try db.execute(sql: "UPDATE article SET title = 'x' WHERE score < 50") }
        try store.synchronize()
        await model.waitForChanges()
        // The change log names the rows: none of them is shown, so nothing changed here (before
        // the log, SQLite told only that the table was written, and the model reloaded).
        #expect(counter.take() == 0, "another process's commit to rows the predicate excludes")
        try expectFresh(model)

        try await other.write { db in
            try db.execute(sql: "INSERT INTO article (title, url, published, score, isRead) VALUES ('ext', 'ext', 0, 150, 0)")
        }
        try store.synchronize()
        await model.waitForChanges()
        #expect(counter.take() == 1)
        #expect(model.items.count == 4_101)
        try expectFresh(model)
    }

    /// Many writers at once, without waiting between commits: at most one notification per
    /// commit, and the model ends as a fresh fetch.
    @Test func manyConcurrentWritersEndAsAFreshFetch() async throws {
        let store = try Store.inMemory(records: [Article.self, Note.self])
        try seed(store, count: 4_000)
        let model = FetchedResultsModel(
            articles(#Predicate { $0.score >= 1_000 }, sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)]),
            store: store, sectionBy: .attribute(\.category))
        try await model.performFetch()
        let counter = ObservationCounter { readEverythingButRecords(model) }
        let commits = 60
        await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<3 {
                group.addTask {
                    for i in 0..<(commits / 3) {
                        let n = writer * 1_000 + i
                        try await store.write { tx in
                            var a = Article(title: "w\(n)", score: 10_000 + n, category: ["a", "z", nil][n % 3])
                            try tx.insert(&a)
                            var note = Note(text: "n\(n)")
                            try tx.insert(&note)
                            try tx.database.execute(sql: "DELETE FROM article WHERE score = ?", arguments: [n])
                        }
                    }
                }
            }
        }
        await model.waitForChanges()
        let notifications = counter.take()
        #expect(notifications >= 1 && notifications <= commits)
        try expectFresh(model)
    }
}
