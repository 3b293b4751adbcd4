import Foundation
import GRDB
import Testing
@testable import Folio

/// `Article`'s table with `isRead` declared as an Int: the same SQL columns, another schema.
struct ArticleWithIntegerFlag: PersistentRecord {
    var id: RecordID?
    var title = ""
    var url = ""
    var published = Date(timeIntervalSince1970: 0)
    var score = 0
    var category: String? = nil
    var isRead = 0
    static let entity = EntityDescription<ArticleWithIntegerFlag>(
        "article",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.url, unique: true),
            AttributeDescription(\.published, indexed: true),
            AttributeDescription(\.score, indexed: true),
            AttributeDescription(\.category),
            AttributeDescription(\.isRead),
        ])
    init() {}
}

@Suite("Schema")
struct SchemaTests {
    @Test func theStoreCreatesTablesIndexesAndTriggersFromTheEntities() throws {
        let store = try Store.inMemory(records: [Article.self, Sample.self])
        let schema = try rawSchema(store)
        #expect(
            schema.contains(
                #"table article CREATE TABLE "article" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "title" TEXT NOT NULL, "url" TEXT NOT NULL, "published" REAL NOT NULL, "score" INTEGER NOT NULL, "category" TEXT, "isRead" INTEGER NOT NULL)"#
            ))
        #expect(schema.contains(#"index article_url_index CREATE UNIQUE INDEX "article_url_index" ON "article"("url")"#))
        #expect(
            schema.contains(#"index article_published_index CREATE INDEX "article_published_index" ON "article"("published")"#))
        #expect(schema.contains(#"index article_score_index CREATE INDEX "article_score_index" ON "article"("score")"#))
        #expect(schema.filter { $0.hasPrefix("index article_") }.count == 3)
        #expect(
            schema.filter { $0.hasPrefix("trigger folio_article_") }.count == 8,
            "three change triggers, the log's update trigger, and the four conflict triggers of the unique url")
        #expect(
            schema.contains {
                $0.hasPrefix(
                    #"table sample CREATE TABLE "sample" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "name" TEXT NOT NULL, "value" REAL NOT NULL"#
                )
            })
        let metadata = try store.read { db in
            try Row.fetchAll(db, sql: "SELECT name, version_hash FROM folio_entities ORDER BY name")
        }
        #expect(metadata.map { $0[0] as String } == ["article", "sample"])
        #expect(metadata.map { $0[1] as String } == [Article.entity.versionHash, Sample.entity.versionHash])
    }

    @Test func theVersionHashIsStableAndFollowsTheSchema() throws {
        // FNV-1a 64 test vectors, then the hash of Article's schema as every build must compute it.
        #expect(fnv1a64Hex("") == "cbf29ce484222325")
        #expect(fnv1a64Hex("a") == "af63dc4c8601ec8c")
        #expect(fnv1a64Hex("foobar") == "85944171f73967e8")
        #expect(
            Article.entity.schema.canonicalText
                == "folio-entity-1;article;title:string:!:-:-;url:string:!:i:u;published:date:!:i:-;score:integer:!:i:-;category:string:?:-:-;isRead:bool:!:-:-"
        )
        #expect(Article.entity.versionHash == fnv1a64Hex(Article.entity.schema.canonicalText))
        #expect(Article.entity.versionHash == "a62f2ca18ff930e1")  // computed independently
        let again = EntityDescription<Article>("article", Article.entity.attributes)
        #expect(again.versionHash == Article.entity.versionHash)

        let base = Article.entity.schema
        var variants: [EntitySchema] = []
        var renamedTable = base; renamedTable.name = "articles"; variants.append(renamedTable)
        var renamedColumn = base; renamedColumn.columns[0].name = "headline"; variants.append(renamedColumn)
        var retyped = base; retyped.columns[5].type = .integer; variants.append(retyped)
        var optional = base; optional.columns[0].isOptional = true; variants.append(optional)
        var indexed = base; indexed.columns[0].isIndexed = true; variants.append(indexed)
        var unique = base; unique.columns[2].isUnique = true; variants.append(unique)
        var added = base;
        added.columns.append(ColumnSchema(name: "extra", type: .data, isOptional: true, isIndexed: false, isUnique: false));
        variants.append(added)
        var removed = base; removed.columns.removeLast(); variants.append(removed)
        var reordered = base; reordered.columns.swapAt(0, 1); variants.append(reordered)
        let hashes = Set(variants.map(\.versionHash) + [base.versionHash])
        #expect(hashes.count == variants.count + 1, "every schema change changes the hash")
        #expect(ArticleWithIntegerFlag.entity.versionHash != Article.entity.versionHash)
    }

    @Test func reopeningWithTheSameEntitiesKeepsTheData() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("same.sqlite")
        do {
            let store = try Store(path: path, records: [Article.self])
            try seed(store, count: 25)
            try store.close()
        }
        let reopened = try Store(path: path, records: [Article.self])
        #expect(try reopened.count(RecordRequest<Article>()) == 25)
        #expect(try reopened.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
    }

    @Test func reopeningWithADifferentDeclarationThrowsTheDifferencesAndLeavesTheFileAlone() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("mismatch.sqlite")
        do {
            let store = try Store(path: path, records: [Article.self])
            try seed(store, count: 10)
            try store.close()
        }
        let bytesBefore = try Data(contentsOf: URL(fileURLWithPath: path))
        let filesBefore = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()

        let error = folioError { try Store(path: path, records: [ArticleRedeclared.self]) }
        guard case .schemaMismatch(let entity, let differences)? = error else {
            Issue.record("expected schemaMismatch, got \(String(describing: error))")
            return
        }
        #expect(entity == "article")
        #expect(
            differences == [
                "column 'score' is INTEGER, declared REAL (double)",
                "missing column 'summary' (TEXT)",
                "unexpected column 'category'",
                "unexpected column 'isRead'",
                "column 'published' has an index, declared without one",
            ])
        #expect(error!.description.contains("unexpected column 'isRead'"))

        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytesBefore)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == filesBefore)
        let original = try Store(path: path, records: [Article.self])
        #expect(try original.count(RecordRequest<Article>()) == 10)
    }

    @Test func aChangeOnlyTheVersionHashSeesIsAMismatchToo() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("hash.sqlite")
        do {
            let store = try Store(path: path, records: [Article.self])
            try seed(store, count: 3)
            try store.close()
        }
        let bytesBefore = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = folioError { try Store(path: path, records: [ArticleWithIntegerFlag.self]) }
        #expect(
            error
                == .schemaMismatch(
                    entity: "article",
                    differences: [
                        "version hash \(Article.entity.versionHash) stored, \(ArticleWithIntegerFlag.entity.versionHash) declared"
                    ]))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytesBefore)
    }

    @Test func aMatchingTableMadeElsewhereIsAdopted() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("adopt.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                for sql in SQLBuilder.createTable(Article.entity.schema) where !sql.hasPrefix("CREATE TRIGGER") {
                    try db.execute(sql: sql)
                }
                try db.execute(
                    sql: "INSERT INTO article (title, url, published, score, isRead) VALUES ('made elsewhere', 'x', 0, 1, 0)")
            }
        }
        let store = try Store(path: path, records: [Article.self])
        #expect(try store.fetch(RecordRequest<Article>()).map { $0?.title } == ["made elsewhere"])
        #expect(try rawSchema(store).filter { $0.hasPrefix("trigger folio_article_") }.count == 8)
        let token = try store.changeToken(for: Article.self)
        try store.write { tx in
            var a = Article(title: "new"); try tx.insert(&a)
        }
        #expect(try store.changeToken(for: Article.self) != token)
    }

    @Test func temporaryStoreIsAWALFileRemovedWithTheStore() throws {
        var directory: URL?
        do {
            let store = try Store.temporary(records: [Article.self])
            let path = try #require(store.path)
            directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            #expect(FileManager.default.fileExists(atPath: path))
            #expect(try store.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
            try seed(store, count: 30)
            #expect(try store.count(RecordRequest<Article>()) == 30)
            var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
            request.batchSize = 7
            #expect(try store.fetch(request).map { $0!.score } == Array(0..<30))
            // A second connection to the same file sees the committed rows.
            let other = try DatabaseQueue(path: path)
            #expect(try other.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM article") } == 30)
            try other.close()
        }
        // The store goes when its last reference does: work it handed to other threads (its
        // change watcher's queue, a reader) may hold it a moment past this scope on a starved
        // machine, so the removal is awaited, within a bound, rather than expected at once.
        let deadline = Date().addingTimeInterval(30)
        while let directory, FileManager.default.fileExists(atPath: directory.path), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(directory.map { FileManager.default.fileExists(atPath: $0.path) } == false)
        // Each temporary store is its own.
        let a = try Store.temporary(records: [Article.self]), b = try Store.temporary(records: [Article.self])
        #expect(a.path != b.path)
    }

    @Test func inMemoryStoresAreIndependent() throws {
        let a = try Store.inMemory(records: [Article.self]), b = try Store.inMemory(records: [Article.self])
        try seed(a, count: 3)
        #expect(try b.count(RecordRequest<Article>()) == 0)
        #expect(a.path == nil)
    }
}
