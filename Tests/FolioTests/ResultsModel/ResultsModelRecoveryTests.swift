import Foundation
import GRDB
import Testing
@testable import Folio

/// A recovery — a commit the controller follows after one it could not — changes the
/// results and clears ``FetchedResultsModel/lastError``: one change for every observer,
/// whichever of the two it reads. (Before, the model assigned them one after the other, and
/// an observer reading both was notified twice.)
@MainActor
@Suite("Results model: recovery is one change")
struct ResultsModelRecoveryTests {
    @Test func aRecoveryNotifiesAnObserverOfResultsAndErrorOnce() async throws {
        let (store, key) = try tensWithABreakingSectionKey()
        let model = FetchedResultsModel(articles(), store: store, sectionBy: key)
        try await model.performFetch()
        let both = ObservationCounter {
            _ = model.sections
            _ = model.lastError
        }
        let results = ObservationCounter { _ = model.items }
        let error = ObservationCounter { _ = model.lastError }
        let state = ObservationCounter { _ = model.loadingState }

        // Another connection writes a row that breaks the sections: the failure.
        let other = try DatabaseQueueFactory.open(store.path!)
        try await other.write { db in
            try db.execute(sql: "INSERT INTO article (title, url, published, score, isRead) VALUES ('bad', 'bad', 0, 55, 0)")
        }
        try store.synchronize()
        await model.waitForChanges()
        guard case .sectionsNotContiguous? = model.lastError else {
            Issue.record("expected sectionsNotContiguous, got \(String(describing: model.lastError))")
            return
        }
        #expect(both.take() == 1 && error.take() == 1 && results.take() == 0)

        // One commit that recovers: the results change and the error clears, as one change.
        try await other.write { db in
            try db.execute(sql: "DELETE FROM article WHERE url = 'bad'")
            try db.execute(sql: "INSERT INTO article (title, url, published, score, isRead) VALUES ('good', 'good', 0, 36, 0)")
        }
        try store.synchronize()
        await model.waitForChanges()
        #expect(model.lastError == nil && model.items.count == 11)
        #expect(both.take() == 1, "the results and the error in one notification")
        #expect(results.take() == 1 && error.take() == 1)
        #expect(state.take() == 0)
        try expectFresh(model)

        // A commit after that: the results alone.
        try writeSync(store) { tx in
            var a = Article(title: "later", score: 37)
            try tx.insert(&a)
        }
        await model.waitForChanges()
        #expect(both.take() == 1 && results.take() == 1 && error.take() == 0)
        try expectFresh(model)
    }

    /// A fetch that clears an error of an earlier attempt: one notification too.
    @Test func aFetchThatClearsAnErrorNotifiesOnce() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 50)
        let model = FetchedResultsModel(articles(), store: store)
        try await model.performFetch()
        #expect(throws: FolioError.self) { try model.setRequest(RecordRequest<Article>(), sectionBy: nil) }
        #expect(model.lastError != nil)
        let both = ObservationCounter {
            _ = model.sections
            _ = model.lastError
        }
        try model.setRequest(articles(sortBy: [SortDescriptor(\.score, order: .reverse)]), sectionBy: nil)
        #expect(model.lastError == nil)
        #expect(both.take() == 1)
        try expectFresh(model)
    }
}
