import Foundation
import Testing
@testable import Folio

/// Filter, sort and search set on the main actor while other tasks commit: every change
/// lands, and once the writes are over the model is a fresh fetch of its last request.
@Suite("FetchedResultsModel: request changes racing writes")
@MainActor
struct ResultsModelRaceTests {
    @Test(arguments: [false, true])
    func requestChangesWhileWritersCommitEndAsAFreshFetch(fileStore: Bool) async throws {
        let store = fileStore ? try Store.temporary(records: [Article.self]) : try Store.inMemory(records: [Article.self])
        try seed(store, count: 3_000)
        let model = FetchedResultsModel(
            articles(#Predicate { $0.score >= 500 }, sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)]),
            store: store, sectionBy: .attribute(\.category))
        try await model.performFetch()
        let counter = ObservationCounter { readEverythingButRecords(model) }
        let commits = 90
        let writers = Task.detached {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<3 {
                    group.addTask {
                        for i in 0..<(commits / 3) {
                            let n = writer * 1_000 + i
                            try await store.write { tx in
                                var a = Article(
                                    title: "w\(n)", url: "race/\(n)", score: 5_000 + n, category: ["a", "z", nil][n % 3])
                                try tx.insert(&a)
                                try tx.database.execute(sql: "DELETE FROM article WHERE score = ?", arguments: [n * 7])
                                try tx.database.execute(
                                    sql: "UPDATE article SET score = score + 1, category = 'b' WHERE score = ?",
                                    arguments: [n * 11 + 3])
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let predicates: [Predicate<Article>?] = [
            #Predicate { $0.score >= 500 }, nil, #Predicate { $0.category == "a" || $0.score < 100 },
            #Predicate { $0.score % 2 == 0 },  // unsupported: refused, nothing changes
        ]
        var sets = 0
        for round in 0..<40 {
            let before = ModelShape(model)
            let predicate = predicates[(round / 2) % predicates.count]
            switch round % 4 {
            case 0, 3: model.predicate = predicate
            case 1: model.sortBy = [SortDescriptor(\.category, order: .reverse), SortDescriptor(\.score)]
            default: model.sortBy = [SortDescriptor(\.category), SortDescriptor(\.title)]
            }
            sets += 1
            if round % 4 != 1 && round % 4 != 2 && (round / 2) % predicates.count == 3 {
                guard case .unsupportedPredicate? = model.lastError else {
                    Issue.record("expected unsupportedPredicate, got \(String(describing: model.lastError))")
                    continue
                }
                #expect(ModelShape(model) == before, "a refused request changes nothing")
            } else {
                #expect(model.lastError == nil)
            }
            // Not a wait: lets the writers' commits reach the model between request changes.
            await Task.yield()
        }
        try await writers.value
        await model.waitForChanges()
        #expect(counter.take() <= commits + sets)
        try expectFresh(model)
        #expect(model.items.map(\.id) == Array(try store.fetchIdentifiers(model.fetchRequest)))
    }
}
