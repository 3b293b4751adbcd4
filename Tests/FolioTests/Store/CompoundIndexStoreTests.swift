import Foundation
import GRDB
import Testing
@testable import Folio

/// Compound indexes in a store file: made with the table in the declared order, used by the
/// plans of the requests they serve (read with `Store.explain`), shown in the SQL log, and
/// checked at every open.
@Suite("Compound indexes in a store")
struct CompoundIndexStoreTests {
    let directory: ScratchDirectory
    let path: String

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("items.sqlite")
    }

    func open<I: ListItemIndexes>(_ type: I.Type, count: Int = 0) throws -> Store {
        let store = try Store(path: path, records: [ListItem<I>.self, ListSource.self])
        if count > 0 {
            try store.write { tx in
                var sources: [ListSource] = []
                for i in 0..<3 {
                    var source = ListSource(name: "source \(i)")
                    try tx.insert(&source)
                    sources.append(source)
                }
                for i in 0..<count {
                    var item = ListItem<I>.make(i)
                    item.source = ToOne(sources[i % 3])
                    try tx.insert(&item)
                }
            }
        }
        return store
    }

    func indexSQL(_ name: String) throws -> String? {
        try fileValue(path, "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = '\(name)'")
    }

    @Test func theIndexIsMadeWithTheTableInTheDeclaredOrder() throws {
        try open(UnreadNewest.self).close()
        #expect(
            try indexSQL("folio_item_isRead_published_desc_index")
                == #"CREATE INDEX "folio_item_isRead_published_desc_index" ON "item"("isRead" ASC, "published" DESC)"#)
        try FileManager.default.removeItem(atPath: path)
        try open(UnreadOldestAndBySource.self).close()
        #expect(
            try indexSQL("folio_item_isRead_published_index")
                == #"CREATE INDEX "folio_item_isRead_published_index" ON "item"("isRead" ASC, "published" ASC)"#)
        #expect(
            try indexSQL("folio_item_source_folio_title_folded_desc_title_desc_index")
                == #"CREATE INDEX "folio_item_source_folio_title_folded_desc_title_desc_index" ON "item"("source" ASC, "folio_title_folded" DESC, "title" DESC)"#
        )
        #expect(try indexSQL("folio_item_isRead_published_desc_index") == nil)
    }

    @Test func aFilteredListReadsTheIndexInsteadOfEveryRow() throws {
        let unread = RecordRequest<ListItem<UnreadOldestAndBySource>>(
            predicate: #Predicate { $0.isRead == false }, sortBy: [SortDescriptor(\.published, order: .reverse)])
        let store = try open(UnreadOldestAndBySource.self, count: 300)
        let plan = try store.explain(unread)
        #expect(plan.indexes == ["folio_item_isRead_published_index"], "\(plan)")
        #expect(!plan.readsEveryRow && !plan.scansTable && !plan.sortsResults, "\(plan)")
        #expect(plan.steps.first?.detail.hasPrefix("SEARCH item USING COVERING INDEX") == true, "\(plan)")
        #expect(plan.sql == SQLBuilder.identifiers(try unread.compile(), windowed: false).sql)
        #expect(plan.description.hasPrefix(plan.sql + "\n"))
        // The list it explains is the right one.
        let ids = try store.fetchIdentifiers(unread).map(\.rawValue)
        let expected = try store.fetch(RecordRequest<ListItem<UnreadOldestAndBySource>>(sortBy: [SortDescriptor(\.id)]))
            .compactMap { $0 }.filter { !$0.isRead }
            .sorted { ($0.published, $0.id!.rawValue) > ($1.published, $1.id!.rawValue) }.map { $0.id!.rawValue }
        #expect(ids == expected)
        try store.close()
    }

    @Test func withoutTheIndexThePlanSaysItReadsEveryRow() throws {
        let store = try open(NoIndexes.self, count: 300)
        let plan = try store.explain(
            RecordRequest<ListItem<NoIndexes>>(
                predicate: #Predicate { $0.isRead == false }, sortBy: [SortDescriptor(\.published, order: .reverse)]))
        #expect(plan.readsEveryRow, "\(plan)")
        #expect(plan.indexes == ["item_published_index"], "through the sort's index: \(plan)")
        let byRank = try store.explain(RecordRequest<ListItem<NoIndexes>>(sortBy: [SortDescriptor(\.rank)]))
        #expect(byRank.scansTable && byRank.sortsResults && byRank.indexes.isEmpty, "\(byRank)")
        try store.close()
    }

    /// Plans are read with a prepared `EXPLAIN` statement kept for the next fetch: an index
    /// another process makes or drops changes the next plan read, on every connection.
    @Test func aPlanFollowsAnIndexTheShellMakesAndDrops() throws {
        let store = try open(NoIndexes.self, count: 300)
        let byRank = RecordRequest<ListItem<NoIndexes>>(sortBy: [SortDescriptor(\.rank)])
        for _ in 0..<4 {
            let plan = try store.explain(byRank)
            #expect(plan.scansTable && plan.sortsResults && plan.indexes.isEmpty, "\(plan)")
        }
        try sqliteShell(path, "CREATE INDEX shell_rank ON item(rank);")
        for _ in 0..<4 {
            let plan = try store.explain(byRank)
            #expect(plan.indexes == ["shell_rank"], "\(plan.steps.map(\.detail))")
            #expect(!plan.sortsResults)
        }
        try sqliteShell(path, "DROP INDEX shell_rank;")
        for _ in 0..<4 {
            let plan = try store.explain(byRank)
            #expect(plan.scansTable && plan.sortsResults && plan.indexes.isEmpty, "\(plan)")
        }
        try store.close()
    }

    @Test func folderAndReferenceKeysServeTheirRequests() throws {
        let store = try open(UnreadOldestAndBySource.self, count: 90)
        let source = try #require(try store.fetch(RecordRequest<ListSource>(sortBy: [SortDescriptor(\.id)])).first ?? nil)
        let sourceID = source.id
        let request = RecordRequest<ListItem<UnreadOldestAndBySource>>(
            predicate: #Predicate { $0.source.id == sourceID }, sortBy: [SortDescriptor(\.title.folded, order: .reverse)])
        let plan = try store.explain(request)
        #expect(plan.indexes == ["folio_item_source_folio_title_folded_desc_title_desc_index"], "\(plan)")
        #expect(!plan.readsEveryRow, "\(plan)")
        #expect(try store.fetchIdentifiers(request).count == 30)
        try store.close()
    }

    @Test func theSQLLogShowsAFetchsPlanOnlyWhenAsked() async throws {
        let store = try open(UnreadOldestAndBySource.self, count: 30)
        let lines = Locked<[String]>([])
        store.diagnostics.logSQL { line in lines.withLock { $0.append(line) } }
        let unread = RecordRequest<ListItem<UnreadOldestAndBySource>>(
            predicate: #Predicate { $0.isRead == false }, sortBy: [SortDescriptor(\.published, order: .reverse)],
            batchSize: 10)
        _ = try await store.fetch(unread)
        #expect(!lines.withLock { $0 }.contains { $0.hasPrefix("QUERY PLAN") })
        store.diagnostics.logSQL(queryPlans: true) { line in lines.withLock { $0.append(line) } }
        _ = try await store.fetch(unread)
        let controller = await FetchedResultsController(
            RecordRequest<ListItem<UnreadOldestAndBySource>>(sortBy: [SortDescriptor(\.rank)]), store: store)
        try await controller.performFetch()
        let plans = lines.withLock { $0 }.filter { $0.hasPrefix("QUERY PLAN") }
        #expect(plans.count == 2, "\(plans)")
        #expect(plans.first == "QUERY PLAN: SEARCH item USING COVERING INDEX folio_item_isRead_published_index (isRead=?)")
        #expect(plans.last?.hasPrefix("QUERY PLAN: SCAN item") == true, "\(plans)")
        #expect(plans.last?.hasSuffix("(reads every row)") == true, "\(plans)")
        store.diagnostics.logSQL(nil)
        try store.close()
    }

    @Test func anIndexDroppedByTheShellIsReported() throws {
        try open(UnreadNewest.self, count: 10).close()
        try sqliteShell(path, "DROP INDEX folio_item_isRead_published_desc_index;")
        let error = folioError { try open(UnreadNewest.self) }
        guard case .schemaMismatch("item", let differences)? = error else {
            Issue.record("expected schemaMismatch, got \(String(describing: error))")
            return
        }
        #expect(differences == ["missing index 'folio_item_isRead_published_desc_index' on (isRead, published DESC)"])
    }

    @Test func anIndexChangedByTheShellIsReported() throws {
        try open(UnreadNewest.self, count: 10).close()
        try sqliteShell(
            path,
            """
            DROP INDEX folio_item_isRead_published_desc_index;
            CREATE INDEX folio_item_isRead_published_desc_index ON item(isRead, published);
            """)
        guard case .schemaMismatch("item", let differences)? = folioError({ try open(UnreadNewest.self) }) else {
            Issue.record("expected schemaMismatch")
            return
        }
        #expect(
            differences == [
                "index 'folio_item_isRead_published_desc_index' is on (isRead, published), declared on (isRead, published DESC)"
            ])
    }

    @Test func anUndeclaredFolioIndexIsReported() throws {
        try open(UnreadNewest.self, count: 10).close()
        // The same version (0) declaring no compound index: the file's is unexpected.
        guard case .schemaMismatch("item", let differences)? = folioError({ try open(NoIndexes.self) }) else {
            Issue.record("expected schemaMismatch")
            return
        }
        #expect(differences.contains("index 'folio_item_isRead_published_desc_index' is not declared"))
        // And the other way: a file without it, opened declaring it.
        try FileManager.default.removeItem(atPath: path)
        try open(NoIndexes.self).close()
        guard case .schemaMismatch("item", let missing)? = folioError({ try open(UnreadNewest.self) }) else {
            Issue.record("expected schemaMismatch")
            return
        }
        #expect(missing.contains("missing index 'folio_item_isRead_published_desc_index' on (isRead, published DESC)"))
    }
}

/// Runs `sql` in the `sqlite3` shell on `path`, as another program would (no busy
/// timeout, unlike ``Shell/sqlite3(_:_:)``); fails when it exits with an error.
func sqliteShell(_ path: String, _ sql: String) throws {
    try Shell.sqlite3(path, sql)
}
