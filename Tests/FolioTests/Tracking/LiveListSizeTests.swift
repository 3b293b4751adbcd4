import Foundation
import GRDB
import Testing
@testable import Folio

/// Live lists of every size and window: growth across the identifier list's chunks (4,096
/// identifiers each), windows and batch sizes near `Int.max`, and a window that shows nothing.
@Suite("Live lists of every size and window")
@MainActor
struct LiveListSizeTests {
    /// A list of 4,090 rows, sorted ascending; one transaction appends 10 → `Index out of
    /// range` in `IdentifierList.subscript`: a single chunk over capacity kept the "uniform"
    /// flag, so index arithmetic pointed past the last chunk. Also 200 rows inserted in the
    /// middle of 4,000, and growth across the next boundaries.
    @Test(
        .tags(Testing.Tag.threadSanitized),
        arguments: [(4_090, 10, "end"), (4_000, 200, "middle"), (8_180, 30, "end"), (4_096, 1, "start")] as [(Int, Int, String)])
    func aLiveListGrowsAndShrinksAcrossChunkBoundaries(rows: Int, added: Int, place: String) async throws {
        let store = try Store.inMemory(records: [Article.self])
        try execute(
            store,
            """
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows - 1))
            INSERT INTO article (title, url, published, score, category, isRead)
            SELECT 'T' || i, 'u' || i, i, i * 10, NULL, 0 FROM n
            """)
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.score)], batchSize: 50))
        let base = place == "end" ? rows * 10 : (place == "start" ? -10 * added : rows * 5)
        let changes = try await live.step { tx in
            for i in 0..<added {
                var a = Article(title: "new \(i)", score: base + i * (place == "middle" ? 1 : 10) + 1)
                try tx.insert(&a)
            }
        }
        #expect(changes.count == 1)
        #expect(changes.first?.insertedItems.count == added)
        #expect(live.controller.snapshot.numberOfItems == rows + added)
        // Every row can be read where it is, across every chunk boundary.
        let last = IndexPath(item: rows + added - 1, section: 0)
        #expect(live.controller.object(at: last) != nil)
        #expect(live.controller.identifier(at: IndexPath(item: 4_096, section: 0)) == live.controller.snapshot.identifiers[4_096])
        // And shrinking back below it.
        try await live.step { tx in try tx.deleteAll(Article.self, where: #Predicate { $0.title.starts(with: "new") }) }
        #expect(live.controller.snapshot.numberOfItems == rows)
    }

    /// An `INSERT … SELECT` of about 2,100 rows, a controller, then another `INSERT … SELECT` of
    /// 2,048 rows and one of 3,000: the list grows past the chunk boundary (this once trapped with
    /// `Index out of range` in the identifier list).
    @Test func bulkInsertsGrowAListPastTwoChunks() async throws {
        let store = try Store.inMemory(records: [Article.self])
        func grow(_ from: Int, _ count: Int) throws {
            try execute(
                store,
                """
                WITH RECURSIVE n(i) AS (SELECT \(from) UNION ALL SELECT i + 1 FROM n WHERE i < \(from + count - 1))
                INSERT INTO article (title, url, published, score, category, isRead)
                SELECT 'T' || i, 'u' || i, i * 7 % 1000, (i * 7919) % 5000, NULL, 0 FROM n
                """)
        }
        try grow(0, 2_100)
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.score), SortDescriptor(\.published, order: .reverse)]))
        let changes = try await live.step { tx in
            try tx.database.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 2100 UNION ALL SELECT i + 1 FROM n WHERE i < 4147)
                    INSERT INTO article (title, url, published, score, category, isRead)
                    SELECT 'T' || i, 'u' || i, i * 7 % 1000, (i * 7919) % 5000, NULL, 0 FROM n
                    """)
        }
        #expect(changes.first?.insertedItems.count == 2_048)
        #expect(live.controller.snapshot.numberOfItems == 4_148)
        try grow(4_148, 3_000)
        try await live.settle()
        #expect(live.controller.snapshot.numberOfItems == 7_148)
    }

    /// `limit` near `Int.max` with an offset: `lower + limit` overflowed in
    /// `ResultsState.window(offset:limit:)`. `Store.fetch` handled the same request.
    @Test(
        .tags(Testing.Tag.threadSanitized),
        arguments: [(Int.max, 3), (Int.max - 1, 1), (Int.max / 2 + 1, Int.max / 2 + 1), (5, Int.max)] as [(Int, Int)])
    func aWindowNearIntMaxDoesNotOverflow(limit: Int, offset: Int) async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 10)
        let request = sorted([SortDescriptor(\.score)], limit: limit, offset: offset)
        let live = try await LiveHarness(store, request)
        #expect(Array(live.controller.snapshot.identifiers) == Array(try store.fetchIdentifiers(request)))
        try await live.step { tx in
            var a = Article(title: "new", score: -1)
            try tx.insert(&a)
        }
        #expect(Array(live.controller.snapshot.identifiers) == Array(try store.fetchIdentifiers(request)))
        let state = ResultsState(ids: IdentifierList(Int64(1)...10), runs: [], sectioned: false)
        #expect(
            state.window(offset: offset, limit: limit).ids.count == Swift.max(0, Swift.min(limit, 10 - Swift.min(offset, 10))))
    }

    /// The same class for the other sizes a request carries: a batch size and a number of
    /// batches kept near `Int.max` on a live controller (records handed from results to
    /// results are bounded by their product).
    @Test(.tags(Testing.Tag.threadSanitized)) func hugeBatchSizesDoNotOverflow() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 10)
        var request = sorted([SortDescriptor(\.score)], batchSize: Int.max)
        request.maxBatchesInMemory = Int.max
        let live = try await LiveHarness(store, request)
        #expect(live.controller.object(at: IndexPath(item: 9, section: 0))?.score == 9)
        try await live.step { tx in
            var a = Article(title: "new", score: 4)
            try tx.insert(&a)
        }
        #expect(live.controller.object(at: IndexPath(item: 10, section: 0))?.score == 9)
    }

    /// Day sections, sort descending, `limit` 9223372036854775802 and offset 10: inserts are
    /// followed (`ResultsState.window(offset:limit:)` once overflowed here).
    @Test func windowFollowsInsertsPastHugeLimit() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 20)
        let request = sorted([SortDescriptor(\.published, order: .reverse)], limit: Int.max - 5, offset: 10)
        let live = try await LiveHarness(store, request, sectionBy: .day(\.published, timeZone: .gmt))
        for count in [2, 4] {
            try await live.step { tx in
                for i in 0..<count {
                    var a = Article(title: "n\(i)", published: Date(timeIntervalSince1970: Double(i) * 50_000))
                    try tx.insert(&a)
                }
            }
        }
        #expect(live.controller.snapshot.numberOfItems == 16)
    }

    /// An empty window (offset Int.max) and `.firstLetter` sections: one-row inserts of "K", the
    /// Kelvin sign and "ss" once got `ChangeSet(reload)`. Nothing is shown, so nothing is delivered.
    @Test func anEmptyWindowGetsNothingForOneRowInserts() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 10)
        let live = try await LiveHarness(
            store, sorted([SortDescriptor(\.title)], offset: Int.max), sectionBy: .firstLetter(\.title))
        let other = try await LiveHarness(store, sorted([SortDescriptor(\.title)]), sectionBy: .firstLetter(\.title))
        for title in ["K", "\u{212A}", "ss"] {
            let changes = try await live.step { tx in
                var a = Article(title: title)
                try tx.insert(&a)
            }
            #expect(changes.isEmpty, "\(changes)")
            let shown = try await other.settle()
            #expect(shown.count == 1 && shown.allSatisfy { !$0.isReload })
        }
        #expect(other.controller.sections.map { Array($0.name.utf8) }.suffix(3) == ["K", "s", "\u{212A}"].map { Array($0.utf8) })
    }
}
