import Foundation
import Testing

@testable import Folio

/// After a commit, every tracker keeps its table's change token; the trackers of one table
/// share one read of it per commit.
@Suite("Change tokens per commit")
@MainActor
struct CommitTokensTests {
    @Test func everyControllerOfATableSharesOneTokenReadPerCommit() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 100)
        var controllers: [FetchedResultsController<Article>] = []
        var recorders: [LiveRecorder] = []
        let sorts: [[SortDescriptor<Article>]] = [
            [SortDescriptor(\.score)], [SortDescriptor(\.score, order: .reverse)], [SortDescriptor(\.title)],
            [SortDescriptor(\.published)], [SortDescriptor(\.url)],
        ]
        for sortBy in sorts {
            let controller = FetchedResultsController(RecordRequest<Article>(sortBy: sortBy), store: store)
            let recorder = LiveRecorder()
            controller.delegate = recorder
            try await controller.performFetch()
            controllers.append(controller)
            recorders.append(recorder)
        }
        let sql = SQLRecorder(store)
        try await store.write { tx in
            var article = Article(title: "new", url: "https://example.com/new", score: 50)
            try tx.insert(&article)
        }
        for controller in controllers { await controller.waitForChanges() }
        let tokenReads = sql.statements.filter { $0.contains("change_id FROM folio_entities WHERE name") }
        #expect(tokenReads.count == 1, "\(tokenReads)")
        for recorder in recorders { #expect(recorder.changeSets.map(\.insertedItems.count) == [1]) }
        for controller in controllers { #expect(controller.fetchedObjects?.count == 101) }
    }
}
