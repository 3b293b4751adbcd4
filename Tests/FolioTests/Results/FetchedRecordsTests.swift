import Foundation
import Testing
@testable import Folio

@Suite("Batch-faulting results")
struct FetchedResultsTests {
    @Test func batchedFetchRunsOneIdentifierQueryAndLoadsNothing() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 100_000)
        let recorder = SQLRecorder(store)
        store.diagnostics.resetCounters()
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.published, order: .reverse)])
        request.batchSize = 20
        let results = try store.fetch(request)
        #expect(results.count == 100_000)
        let counters = store.diagnostics.counters
        #expect(counters.identifierScans == 1)
        #expect(counters.batchesLoaded == 0)
        #expect(counters.recordsMaterialized == 0)
        let selects = recorder.statements.filter { $0.hasPrefix("SELECT") }
        #expect(selects == [#"SELECT "id" FROM "article" ORDER BY "published" DESC, "id" DESC"#])
    }

    @Test func touchingFiftyItemsWithBatchTwentyLoadsThreeBatches() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 1_000)
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 20
        let results = try store.fetch(request)
        store.diagnostics.resetCounters()
        let recorder = SQLRecorder(store)
        for i in 0..<50 { #expect(results[i]?.score == i) }
        #expect(store.diagnostics.counters.batchesLoaded == 3)
        #expect(store.diagnostics.counters.recordsMaterialized == 60)
        let batchQueries = recorder.statements.filter { $0.contains("json_each") }
        #expect(batchQueries.count == 3)
        #expect(Set(batchQueries).count == 1, "one statement text, whatever the batch")
    }

    @Test func iterationLoadsEachBatchOnceAndKeepsTheCacheBounded() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 1_005)
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 50
        request.maxBatchesInMemory = 3
        let results = try store.fetch(request)
        store.diagnostics.resetCounters()
        var seen = 0
        for (i, article) in results.enumerated() {
            #expect(article?.score == i)
            seen += 1
            #expect(results.loadedBatchCount <= 3)
        }
        #expect(seen == 1_005)
        #expect(store.diagnostics.counters.batchesLoaded == 21)  // ceil(1005 / 50)
        // Slices, first, last and prefix keep batching.
        store.diagnostics.resetCounters()
        #expect(results.last??.score == 1_004)
        #expect(results.prefix(3).compactMap { $0?.score } == [0, 1, 2])
        #expect(results[500..<510].compactMap { $0?.score } == Array(500..<510))
        #expect(store.diagnostics.counters.batchesLoaded == 2)
    }

    @Test func recordDeletedAfterTheFetchReadsAsNil() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 30)
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 10
        let results = try store.fetch(request)
        let victim = results.identifier(at: 4)
        try store.write { tx in try tx.delete(Article.self, id: victim) }
        #expect(results[4] == nil)
        #expect(results[3]?.score == 3)
        #expect(results[5]?.score == 5)
        #expect(results.count == 30)
    }

    @Test func fetchWithoutBatchSizeLoadsEverythingAtOnce() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 40)
        store.diagnostics.resetCounters()
        let results = try store.fetch(RecordRequest<Article>(sortBy: [SortDescriptor(\.score, order: .reverse)]))
        #expect(store.diagnostics.counters.recordsMaterialized == 40)
        #expect(store.diagnostics.counters.identifierScans == 0)
        #expect(results.map { $0!.score } == Array((0..<40).reversed()))
        #expect(store.diagnostics.counters.batchesLoaded == 0)
    }

    @Test func aDeletedRecordsIdentifierIsNeverReused() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 5)
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 2
        let results = try store.fetch(request)
        let last = results.identifier(at: 4)
        try store.write { tx in
            try tx.delete(Article.self, id: last)
            var newcomer = Article(title: "newcomer", score: 99)
            try tx.insert(&newcomer)
            #expect(newcomer.id != last)
        }
        #expect(results[4] == nil, "a stale identifier reads as nil, never as another record")
    }
}

extension FetchedResultsTests {
    /// Inside the store's own `write` closure, the results collection reads a batch through the
    /// closure's connection and does not keep it (as `object(at:)` does: `ReadsInsideStoreClosuresTests`).
    @Test(.tags(Testing.Tag.threadSanitized)) func subscriptInsideWriteReturnsTheRecord() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 30)
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 10
        let results = try store.fetch(request)
        let inside = try store.write { _ in (results[15], results[29]) }
        #expect(inside.0?.score == 15 && inside.1?.score == 29)
        #expect(results.lastError == nil)
        #expect(results.loadedBatchCount == 0, "batches read inside the write are not kept")
    }
}
