import Foundation
import Testing
@testable import Folio

/// Setting the request (or one of its parts) to what it already is changes nothing: no
/// notification, no identifier scan. A binding that writes back what it read, or a search
/// field cleared twice, must not redraw the list.
@Suite("FetchedResultsModel: the same request again")
@MainActor
struct ResultsModelSameValueTests {
    @Test func theSameRequestAgainIsNoNotificationAndNoScan() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 300)
        let model = FetchedResultsModel(
            articles(#Predicate { $0.score < 200 }, sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)]), store: store,
            sectionBy: .attribute(\.category))
        try model.performFetch()
        let shape = ModelShape(model)
        let everything = ObservationCounter { readEverythingButRecords(model) }
        store.diagnostics.resetCounters()

        // Before: one notification and one identifier scan each.
        model.sortBy = model.sortBy
        model.predicate = model.predicate
        model.search = nil
        model.fetchRequest = model.fetchRequest
        model.predicate = #Predicate { $0.score < 200 }  // another instance, the same SQL
        try model.setRequest(model.fetchRequest)
        #expect(everything.take() == 0)
        #expect(store.diagnostics.counters.identifierScans == 0)
        #expect(ModelShape(model) == shape)

        // What differs is applied, the batching too.
        var request = model.fetchRequest
        request.batchSize = 7
        model.fetchRequest = request
        #expect(everything.take() == 1)
        #expect(model.fetchRequest.batchSize == 7)
        model.predicate = #Predicate { $0.score < 100 }
        #expect(everything.take() == 1)
        #expect(model.items.count == 100)
        try expectFresh(model)
    }

    @Test func theSameRequestAfterAFailedOneClearsOnlyTheError() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 50)
        let model = FetchedResultsModel(articles(), store: store)
        try model.performFetch()
        let good = model.fetchRequest
        #expect(throws: FolioError.self) { try model.setRequest(articles(sortBy: [])) }
        #expect(model.lastError == .missingSortDescriptor(entity: "article"))
        let results = ObservationCounter {
            _ = model.sections
            _ = model.items
        }
        try model.setRequest(good)
        #expect(model.lastError == nil)
        #expect(results.take() == 0)
        try expectFresh(model)
    }
}

/// An article whose title is searchable.
struct SearchableArticle: PersistentRecord {
    var id: RecordID?
    var title = ""
    var score = 0
    static let entity = EntityDescription<SearchableArticle>(
        "searchable_article", [AttributeDescription(\.title, searchable: true), AttributeDescription(\.score)])
}

extension ResultsModelSameValueTests {
    @Test func aSearchAsTypedIsKeptEvenWithoutWords() throws {
        let store = try Store.inMemory(records: [SearchableArticle.self])
        try store.write { tx in
            for i in 0..<20 {
                var row = SearchableArticle(title: i % 2 == 0 ? "red fox \(i)" : "blue jay \(i)", score: i)
                try tx.insert(&row)
            }
        }
        var request = RecordRequest<SearchableArticle>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 5
        let model = FetchedResultsModel(request, store: store)
        try model.performFetch()
        let results = ObservationCounter {
            _ = model.items
            _ = model.fetchRequest
        }
        model.search = TextSearch(" ")
        #expect(model.lastError == nil)
        #expect(model.search?.text == " ", "a search field keeps what was typed")
        #expect(model.items.count == 20)
        #expect(results.take() == 1)
        model.search = TextSearch(" ")
        #expect(results.take() == 0)
        model.search = TextSearch("fox", matchingPrefixes: true)
        #expect(model.items.count == 10)
        #expect(results.take() == 1)
        model.search = TextSearch("fox", matchingPrefixes: false)
        #expect(model.search?.matchesPrefixes == false)
        #expect(results.take() == 1)
        model.search = TextSearch("fox", matchingPrefixes: false)
        #expect(results.take() == 0)
        model.search = nil
        #expect(model.items.count == 20)
        #expect(results.take() == 1)
    }
}
