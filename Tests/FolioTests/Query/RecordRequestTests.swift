import Foundation
import GRDB
import Testing
@testable import Folio

@Suite("Fetch requests: windows, counts, identifiers, order")
struct FetchRequestTests {
    @Test func limitAndOffsetSelectAWindowOfTheSortedResults() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 100)
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score, order: .reverse)], limit: 5, offset: 3)
        let recorder = SQLRecorder(store)
        #expect(try store.fetch(request).map { $0!.score } == [96, 95, 94, 93, 92])
        #expect(try store.count(request) == 5)
        request.batchSize = 2
        let batched = try store.fetch(request)
        #expect(batched.map { $0!.score } == [96, 95, 94, 93, 92])
        #expect(Array(try store.fetchIdentifiers(request)) == Array(batched.identifiers))
        // Every SELECT that reads the table (batches read it through json_each, joined to it).
        let reads = recorder.statements.filter { $0.hasPrefix("SELECT") && $0.contains(#""article""#) }
        #expect(
            reads == [
                #"SELECT "id", "title", "url", "published", "score", "category", "isRead" FROM "article" ORDER BY "score" DESC, "id" DESC LIMIT ? OFFSET ?"#,
                #"SELECT COUNT(*) FROM (SELECT "id" FROM "article" LIMIT ? OFFSET ?)"#,
                #"SELECT "id" FROM "article" ORDER BY "score" DESC, "id" DESC LIMIT ? OFFSET ?"#,
            ]
                + Array(
                    repeating:
                        #"SELECT "r"."id", "r"."title", "r"."url", "r"."published", "r"."score", "r"."category", "r"."isRead", "j"."key" FROM json_each(?) AS "j" CROSS JOIN "article" AS "r" ON "r"."id" = "j"."value""#,
                    count: 3) + [
                    #"SELECT "id" FROM "article" ORDER BY "score" DESC, "id" DESC LIMIT ? OFFSET ?"#
                ])
    }

    @Test func windowEdges() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 20)
        let sort = [SortDescriptor(\Article.score)]
        // Offset without a limit, limit past the end, offset past the end, a zero limit.
        let cases: [(limit: Int?, offset: Int?, scores: [Int])] = [
            (nil, 17, [17, 18, 19]), (50, 15, [15, 16, 17, 18, 19]), (5, 20, []), (5, 1_000, []), (0, nil, []),
            (nil, 0, Array(0..<20)), (3, nil, [0, 1, 2]),
        ]
        for c in cases {
            let request = RecordRequest<Article>(sortBy: sort, limit: c.limit, offset: c.offset)
            #expect(
                try store.fetch(request).map { $0!.score } == c.scores,
                "limit \(String(describing: c.limit)) offset \(String(describing: c.offset))")
            #expect(try store.count(request) == c.scores.count)
            #expect(try store.fetchIdentifiers(request).count == c.scores.count)
        }
        // Offset alone is LIMIT -1 (no limit) in SQLite; the expanded log shows the values.
        let lines = LinesBox()
        store.diagnostics.logSQL(expanded: true) { lines.append($0) }
        _ = try store.fetchIdentifiers(RecordRequest<Article>(sortBy: sort, offset: 17))
        #expect(lines.all.contains(#"SELECT "id" FROM "article" ORDER BY "score", "id" LIMIT -1 OFFSET 17"#), "\(lines.all)")
    }

    @Test func windowAppliesAfterThePredicate() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 100)
        let request = RecordRequest<Article>(
            predicate: #Predicate { $0.category == "b" }, sortBy: [SortDescriptor(\.score)], limit: 3, offset: 2)
        // category "b" is every 4th article from 1: 1, 5, 9, 13, 17, …
        #expect(try store.fetch(request).map { $0!.score } == [9, 13, 17])
        #expect(try store.count(request) == 3)
    }

    @Test func countRunsOneCountQueryAndLoadsNothing() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 250)
        let recorder = SQLRecorder(store)
        store.diagnostics.resetCounters()
        #expect(try store.count(RecordRequest<Article>()) == 250)
        #expect(
            try store.count(RecordRequest<Article>(predicate: #Predicate { $0.score < 10 }, sortBy: [SortDescriptor(\.title)]))
                == 10)
        #expect(store.diagnostics.counters.recordsMaterialized == 0)
        #expect(store.diagnostics.counters.identifierScans == 0)
        #expect(
            queries(recorder) == [
                #"SELECT COUNT(*) FROM "article""#,
                #"SELECT COUNT(*) FROM "article" WHERE ("score" < ?)"#,
            ])
    }

    @Test func fetchIdentifiersRunsOneScanAndLoadsNoRecord() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 300)
        store.diagnostics.resetCounters()
        let recorder = SQLRecorder(store)
        let request = RecordRequest<Article>(
            predicate: #Predicate { $0.score % 1 == 0 || $0.score >= 0 }, sortBy: [SortDescriptor(\.published, order: .reverse)])
        // (an unsupported predicate throws before any statement runs)
        #expect(throws: FolioError.self) { try store.fetchIdentifiers(request) }
        #expect(recorder.statements.isEmpty)
        let ids = try store.fetchIdentifiers(RecordRequest<Article>(sortBy: [SortDescriptor(\.published, order: .reverse)]))
        #expect(ids.count == 300)
        #expect(ids.map(\.rawValue) == Array((1...300).reversed()).map(Int64.init))
        #expect(store.diagnostics.counters.identifierScans == 1)
        #expect(store.diagnostics.counters.recordsMaterialized == 0)
        #expect(store.diagnostics.counters.batchesLoaded == 0)
        #expect(queries(recorder) == [#"SELECT "id" FROM "article" ORDER BY "published" DESC, "id" DESC"#])
    }

    @Test func tiesAreBrokenByRowidInTheDirectionOfTheLastKey() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 40)  // categories a, b, c, nil in turn: ten-way ties
        let all = try store.fetch(RecordRequest<Article>()).map { $0! }
        func rank(_ c: String?) -> Int { c.map { ["a": 1, "b": 2, "c": 3][$0]! } ?? 0 }  // SQLite: NULL first
        let ascending = all.sorted { (rank($0.category), $0.id!) < (rank($1.category), $1.id!) }
        let descending = all.sorted { (rank($0.category), $0.id!) > (rank($1.category), $1.id!) }
        let recorder = SQLRecorder(store)
        for batchSize in [0, 7] {
            var forward = RecordRequest<Article>(sortBy: [SortDescriptor(\.category)])
            forward.batchSize = batchSize
            var reverse = RecordRequest<Article>(sortBy: [SortDescriptor(\.category, order: .reverse)])
            reverse.batchSize = batchSize
            #expect(try store.fetch(forward).map { $0!.id } == ascending.map(\.id))
            #expect(try store.fetch(reverse).map { $0!.id } == descending.map(\.id))
            // Fetching again gives the same order: it is total.
            #expect(try store.fetchIdentifiers(forward) == store.fetchIdentifiers(forward))
        }
        #expect(recorder.statements.contains(#"SELECT "id" FROM "article" ORDER BY "category", "id""#))
        #expect(recorder.statements.contains(#"SELECT "id" FROM "article" ORDER BY "category" DESC, "id" DESC"#))
        // Two keys: category then score descending; the rowid follows the last key.
        let twoKeys = RecordRequest<Article>(sortBy: [SortDescriptor(\.category), SortDescriptor(\.score, order: .reverse)])
        let expected = all.sorted { (rank($0.category), -$0.score) < (rank($1.category), -$1.score) }
        #expect(try store.fetch(twoKeys).map { $0!.id } == expected.map(\.id))
    }

    @Test func sortingByIdentifierAndWithoutSortDescriptors() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 12)
        let recorder = SQLRecorder(store)
        let byID = try store.fetchIdentifiers(RecordRequest<Article>(sortBy: [SortDescriptor(\.id, order: .reverse)]))
        #expect(byID.map(\.rawValue) == Array((1...12).reversed()).map(Int64.init))
        let unsorted = try store.fetchIdentifiers(RecordRequest<Article>())
        #expect(unsorted.map(\.rawValue) == (1...12).map(Int64.init))
        #expect(
            queries(recorder) == [
                #"SELECT "id" FROM "article" ORDER BY "id" DESC"#,
                #"SELECT "id" FROM "article" ORDER BY "id""#,
            ])
    }

    @Test func asyncFetchMatchesSyncFetch() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 120)
        for batchSize in [0, 25] {
            var request = RecordRequest<Article>(predicate: #Predicate { $0.score >= 20 }, sortBy: [SortDescriptor(\.title)])
            request.batchSize = batchSize
            let asyncResults = try await store.fetch(request)
            let syncResults = try { try store.fetch(request) }()
            #expect(asyncResults.identifiers == syncResults.identifiers)
            #expect(asyncResults.map { $0?.title } == syncResults.map { $0?.title })
            #expect(asyncResults.count == 100)
        }
    }
}

/// Lines collected from a logging closure.
final class LinesBox: @unchecked Sendable {
    // @unchecked Sendable: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
}
