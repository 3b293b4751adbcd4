import Foundation
import Testing
@testable import Folio

/// A section kept by the app after a commit deleted all its rows: its items still answer —
/// their identifiers as delivered, their records `nil` (deleted), never another record.
@Suite("FetchedResultsModel: items of a deleted section")
@MainActor
struct ResultsModelDeletedSectionTests {
    @Test func theItemsOfADeletedSectionReadAsDeleted() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 40)
        let request = articles(sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)], batchSize: 4)
        let model = FetchedResultsModel(request, store: store, sectionBy: .attribute(\.category))
        try await model.performFetch()
        let kept = try #require(model.sections.first { $0.name == "b" })
        let ids = kept.items.map(\.id)
        #expect(ids.count == 10)
        let first = kept.items[0].record
        #expect(first?.category == "b")
        let counter = ObservationCounter { readEverythingButRecords(model) }
        try await store.write { tx in
            _ = try tx.deleteAll(Article.self, where: #Predicate { $0.category == "b" })
            var a = Article(title: "new", url: "new", score: 1_000, category: "c")
            try tx.insert(&a)
        }
        await model.waitForChanges()
        #expect(counter.take() == 1)
        #expect(!model.sections.contains { $0.id == kept.id })
        try expectFresh(model)
        // The kept section: the identifiers as delivered; the loaded batch as loaded; the
        // rest deleted.
        #expect(kept.items.map(\.id) == ids)
        #expect(kept.items[0].record?.id == ids[0])
        for position in 4..<kept.items.count {
            #expect(kept.items[position].record == nil)
            #expect(try kept.items[position].loadRecord() == nil)
        }
        #expect(kept.items.firstIndex(of: ids[7]) == 7)
        #expect(counter.take() == 0, "reading never notifies")
    }
}
