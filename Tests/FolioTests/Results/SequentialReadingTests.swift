import Foundation
import GRDB
import Testing

@testable import Folio

/// The sequential reader of ``FetchedRecords`` (its iterator, which reads within a loaded
/// batch without the cache) and the in-order batch statement: every test compares it with
/// the subscript, which reads through the cache, and with the file.
@Suite("Sequential reading of batched results")
struct SequentialReadingTests {
    private func results(_ store: Store, batchSize: Int, maxBatches: Int = 8) throws -> FetchedRecords<Article> {
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score, order: .reverse)])
        request.batchSize = batchSize
        request.maxBatchesInMemory = maxBatches
        return try store.fetch(request)
    }

    @Test(arguments: [0, 1, 99, 100, 101, 250])
    func iterationGivesTheSubscriptsElementsAcrossBatchBoundaries(count: Int) throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: count)
        for batchSize in [1, 7, 100, 1_000] {
            let results = try results(store, batchSize: batchSize, maxBatches: 2)
            store.diagnostics.resetCounters()
            var iterated: [Article?] = []
            for article in results { iterated.append(article) }
            #expect(iterated.count == count)
            #expect(iterated.map { $0?.id } == results.identifiers.map { Optional($0) })
            #expect(iterated.map { $0?.score } == (0..<count).reversed().map { Optional($0) })
            let batches = (count + batchSize - 1) / batchSize
            #expect(store.diagnostics.counters.batchesLoaded == batches, "each batch read once, size \(batchSize)")
            #expect(store.diagnostics.counters.recordsMaterialized == count)
            // The subscript (through the cache) gives the same records.
            let subscripted = (0..<results.count).map { results[$0] }
            #expect(subscripted == iterated)
            #expect(results.lastError == nil)
        }
    }

    @Test func aBatchIsOneInOrderStatementWhoseRowsArePlacedByPosition() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 30)
        let results = try results(store, batchSize: 10)
        let recorder = SQLRecorder(store)
        var iterator = results.makeIterator()
        #expect(iterator.next()??.score == 29)
        let batchQueries = recorder.statements.filter { $0.contains("json_each") }
        #expect(
            batchQueries == [
                #"SELECT "r"."id", "r"."title", "r"."url", "r"."published", "r"."score", "r"."category", "r"."isRead", "j"."key" FROM json_each(?) AS "j" CROSS JOIN "article" AS "r" ON "r"."id" = "j"."value""#
            ])
        // SQLite walks the array and looks each row up by rowid: no temporary b-tree, no sort.
        let plan = try store.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + batchQueries[0], arguments: ["[1,2]"])
                .map { $0["detail"] as String? ?? "" }
        }
        #expect(plan.count == 2, "\(plan)")
        #expect(plan.last?.contains("INTEGER PRIMARY KEY") == true, "\(plan)")
        #expect(!plan.joined().contains("TEMP B-TREE"), "\(plan)")
    }

    @Test func aWriteBetweenTwoBatchesShowsInTheLaterBatchAsTheSubscriptShowsIt() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 30)
        let results = try results(store, batchSize: 10)
        var iterator = results.makeIterator()
        var seen: [Article?] = []
        for _ in 0..<10 { seen.append(iterator.next()!) }  // batch 0: scores 29…20
        let changed = results.identifier(at: 12)  // score 17
        let deleted = results.identifier(at: 15)  // score 14
        let earlier = results.identifier(at: 3)  // score 26, in the batch already read
        try store.write { tx in
            try tx.database.execute(sql: "UPDATE article SET score = 1000 WHERE id = ?", arguments: [changed.rawValue])
            try tx.database.execute(sql: "UPDATE article SET title = 'later' WHERE id = ?", arguments: [earlier.rawValue])
            try tx.delete(Article.self, id: deleted)
            var newcomer = Article(title: "newcomer", score: 18)
            try tx.insert(&newcomer)
        }
        while let next = iterator.next() { seen.append(next) }
        #expect(seen.count == 30, "the identifiers are the fetch's: the newcomer is not among them")
        #expect(seen[12]?.score == 1000, "a batch read after the write reads the row as it is now")
        #expect(seen[12]?.id == changed)
        #expect(seen[15] == nil, "a row deleted before its batch was read is nil")
        #expect(seen[3]?.title == "Article 26", "the batch read before the write is kept as read")
        #expect(seen.compactMap { $0?.title }.contains("newcomer") == false)
        // The subscript agrees, element by element (batch 0 is cached as read, the rest too).
        #expect((0..<30).map { results[$0] } == seen)
    }

    @Test func rowsDeletedUnderASequentialReaderReadAsNilAndOthersKeepTheirPlaces() throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 1_000)
        let results = try results(store, batchSize: 64, maxBatches: 2)
        var iterator = results.makeIterator()
        var seen: [Article?] = []
        for _ in 0..<100 { seen.append(iterator.next()!) }
        // Batch 1 (64…127) is loaded. Every third row after it, and the whole of batches 5
        // and 6, deleted by raw SQL.
        let gone = Set((128..<1_000).filter { $0 % 3 == 0 || (320..<448).contains($0) }.map { results.identifier(at: $0) })
        try store.write { tx in
            try tx.database.execute(
                sql: "DELETE FROM article WHERE id IN (SELECT value FROM json_each(?))",
                arguments: [IdentifierList.jsonArray(gone.map(\.rawValue))])
        }
        store.diagnostics.resetCounters()
        while let next = iterator.next() { seen.append(next) }
        #expect(seen.count == 1_000)
        #expect(seen[64..<128].allSatisfy { $0 != nil }, "batch 1 was read before the delete and is kept as read")
        for index in 128..<1_000 {
            let id = results.identifier(at: index)
            if gone.contains(id) {
                #expect(seen[index] == nil, "row \(index)")
            } else {
                #expect(seen[index]?.id == id && seen[index]?.score == 999 - index, "row \(index)")
            }
        }
        #expect(store.diagnostics.counters.batchesLoaded == 14, "batches 2…15 (batch 1 was loaded first)")
        #expect(store.diagnostics.counters.recordsMaterialized == (128..<1_000).count - gone.count)
        #expect(results.lastError == nil)
    }

    @Test(arguments: [1, 2, 5])
    func theCacheStaysWithinMaxBatchesInMemoryWhileIterating(maxBatches: Int) throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 1_005)
        let results = try results(store, batchSize: 50, maxBatches: maxBatches)
        store.diagnostics.resetCounters()
        var count = 0
        for article in results {
            #expect(article?.score == 1_004 - count)
            count += 1
            #expect(results.loadedBatchCount <= maxBatches)
        }
        #expect(count == 1_005)
        #expect(store.diagnostics.counters.batchesLoaded == 21)
        // The last batches read are the ones kept: reading them again loads nothing.
        store.diagnostics.resetCounters()
        let keptFrom = Swift.max(0, 21 - maxBatches) * 50
        #expect(results[keptFrom..<1_005].compactMap { $0?.score } == (0..<(1_005 - keptFrom)).reversed().map { $0 })
        #expect(store.diagnostics.counters.batchesLoaded == 0)
        // Two iterators at once each read every batch, and the cache stays bounded.
        store.diagnostics.resetCounters()
        var first = results.makeIterator(), second = results.makeIterator()
        var pairs = 0
        while let a = first.next(), let b = second.next() {
            #expect(a == b)
            pairs += 1
            #expect(results.loadedBatchCount <= maxBatches)
        }
        #expect(pairs == 1_005)
        #expect(store.diagnostics.counters.batchesLoaded <= 21, "the second iterator finds each batch in the cache")
    }

    @Test func aRowThatCannotBeDecodedIsNilForTheIteratorToo() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 20)
        try store.write { tx in try tx.database.execute(sql: "UPDATE article SET score = 'bad' WHERE score = 13") }
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.published)])
        request.batchSize = 5
        let results = try store.fetch(request)
        let iterated = Array(results)
        #expect(iterated.count == 20)
        #expect(iterated[13] == nil)
        #expect(iterated.enumerated().allSatisfy { $0.offset == 13 || $0.element?.score == $0.offset })
        #expect(results.lastError == FolioError.decoding(column: "score", reason: #"expected an integer, found "bad""#))
        #expect(store.diagnostics.counters.batchesLoaded >= 4)
    }

    @Test func iteratingInsideAWriteSeesItsChangesAndKeepsNoBatch() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 25)
        let results = try results(store, batchSize: 10)
        let scores = try store.write { tx in
            try tx.database.execute(sql: "UPDATE article SET score = -1 WHERE score = 2")
            return results.map { $0?.score }
        }
        #expect(scores.count == 25)
        #expect(scores[22] == -1, "the uncommitted change is seen inside the write")
        #expect(results.loadedBatchCount == 0, "batches read inside the write are not kept")
        #expect(results.lastError == nil)
        #expect(results[22]?.score == -1, "committed since")
    }

    @Test func identifierArraysAreExactJSONAtTheExtremes() throws {
        let cases: [[Int64]] = [[], [0], [-1, 1], [Int64.max, Int64.min, 10, 9, 100], Array(1...150)]
        let store = try Store.inMemory(records: [Article.self])
        for ids in cases {
            let json = IdentifierList.jsonArray(ids)
            #expect(json == "[" + ids.map(String.init).joined(separator: ",") + "]")
            let back = try store.read { db in try Int64.fetchAll(db, sql: "SELECT value FROM json_each(?)", arguments: [json]) }
            #expect(back == ids)
        }
    }
}
