import Foundation
import GRDB
import Testing
@testable import Folio

/// The fixture's article, at model version 1 of an app that evolved it: the entity renamed
/// `post`, `title` renamed `headline`, `category` made required, `score`'s index dropped,
/// `starred` added and filled from `isRead` by a step; `extra` removed (the opt-in says so).
struct FixturePost: PersistentRecord, Equatable {
    var id: RecordID?
    var headline = ""
    var url = ""
    var published = Date(timeIntervalSince1970: 0)
    var score = 0
    var category = ""
    var isRead = false
    var starred = false

    static let entity = EntityDescription<FixturePost>(
        "post",
        [
            AttributeDescription(\.headline, renamedFrom: "title"),
            AttributeDescription(\.url, unique: true),
            AttributeDescription(\.published, indexed: true),
            AttributeDescription(\.score),
            AttributeDescription(\.category, defaultValue: "uncategorized"),
            AttributeDescription(\.isRead),
            AttributeDescription(\.starred, defaultValue: false),
        ], renamedFrom: "article")

    static func model(steps: [MigrationStep] = [starredFromRead]) -> StoreModel {
        StoreModel(version: 1, records: [FixturePost.self, Sample.self], discarding: [.entity("extra")], steps: steps)
    }

    static let starredFromRead = MigrationStep("starred from isRead") { db in
        try db.execute(sql: "UPDATE post SET starred = isRead")
    }
}

/// A frozen file written by an older Folio version (Tests/FolioTests/Fixtures/README.md) is opened
/// by a versioned model and migrated: Folio's own tables are upgraded and the model's
/// changes made in the same transaction, every row kept. Add one such fixture per release.
@Suite("Migrating a store written by an older Folio version")
struct FixtureMigrationTests {
    /// The fixture and its section cache "feed", copied into `directory`.
    static func copyFixture(to directory: ScratchDirectory) throws -> String {
        let path = directory.path("store.sqlite")
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures")
        try FileManager.default.copyItem(
            at: fixtures.appendingPathComponent("f4075a8-store.sqlite3-fixture"), to: URL(fileURLWithPath: path))
        let caches = URL(fileURLWithPath: path + "-folio-cache")
        try FileManager.default.createDirectory(at: caches, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: fixtures.appendingPathComponent("f4075a8-feed.folio-cache-fixture"),
            to: caches.appendingPathComponent("feed.folio-cache"))
        return path
    }

    /// The sample table, every value with its storage class and bytes.
    static let samples = """
        SELECT group_concat(line, '|') FROM (SELECT id || typeof(value) || hex(value) || quote(taken) || count64 || flag \
        || hex(payload) || hex(token) || hex(CAST(note AS BLOB)) || quote(optionalValue) || ifnull(optionalCount, '-') \
        || ifnull(optionalFlag, '-') AS line FROM sample ORDER BY id)
        """

    @Test @MainActor func theFixtureIsMigratedWithEveryRow() async throws {
        let directory = try ScratchDirectory()
        let path = try Self.copyFixture(to: directory)
        #expect(
            try fileValue(path, "SELECT count(*) FROM sqlite_master WHERE name = 'folio_metadata'") == 0,
            "a file of the earliest Folio, before its internal tables")
        let samplesBefore: String? = try fileValue(path, Self.samples)
        let articles = try sqlite3Shell(
            path, "SELECT id, title, url, published, score, category, isRead FROM article ORDER BY id;")
        #expect(articles.split(separator: "\n").count == 59)

        let store = try Store(path: path, model: FixturePost.model())
        let posts = try fetchSync(store, RecordRequest<FixturePost>(sortBy: [SortDescriptor(\.id)])).map { $0! }
        #expect(posts.map(\.id!.rawValue) == Array(1...60).filter { $0 != 7 })
        for (post, line) in zip(posts, articles.split(separator: "\n")) {
            let old = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            #expect(post.headline == old[1])
            #expect(post.url == old[2])
            #expect(post.published == Date(timeIntervalSince1970: Double(old[3])!))
            #expect(post.score == Int(old[4])!)
            #expect(post.category == (old[5].isEmpty ? "uncategorized" : old[5]))
            #expect(post.isRead == (old[6] == "1"))
            #expect(post.starred == post.isRead, "filled by the step")
        }
        #expect(posts.filter(\.starred).count == 12)
        #expect(posts.filter { $0.category == "uncategorized" }.count == 15)
        var post = FixturePost()
        post.url = "https://example.com/new"
        try writeSync(store) { tx in try tx.insert(&post) }
        #expect(post.id == RecordID(61), "the counter survived the rename and the rebuild")

        // The sample entity is untouched, bit for bit.
        let samples = try fetchSync(store, RecordRequest<Sample>(sortBy: [SortDescriptor(\.name)])).map { $0! }
        #expect(samples.map(\.name) == ["big", "extremes"])
        #expect(samples[1].note == "NUL\u{0}inside ß K" && samples[1].count64 == .min && samples[0].count64 == .max)

        // The old cache (of `article`, format 1) is never trusted; sections equal a fresh fetch.
        var request = RecordRequest<FixturePost>(sortBy: [SortDescriptor(\.published, order: .reverse)])
        request.batchSize = 10
        let controller = FetchedResultsController(
            request, store: store, sectionBy: .day(\.published, timeZone: .gmt), cacheName: "feed")
        try await controller.performFetch()
        guard case .rebuilt = controller.lastCacheOutcome else {
            Issue.record("the earliest version's cache was trusted: \(controller.lastCacheOutcome)")
            return
        }
        #expect(controller.sections.map(\.numberOfObjects) == [12, 12, 12, 12, 12])
        try store.close()

        #expect(try fileValue(path, Self.samples) == samplesBefore)
        #expect(try sqlite3Shell(path, "PRAGMA integrity_check;") == "ok")
        #expect(
            try sqlite3Shell(path, "SELECT key, value FROM folio_metadata WHERE key <> 'database_identity' ORDER BY key;")
                == "internal_schema_version|4\nmigration_step:starred from isRead|1\nmodel_version|1")
        #expect(try sqlite3Shell(path, "SELECT name, seq FROM sqlite_sequence ORDER BY name;") == "post|61\nsample|2")
        #expect(try sqlite3Shell(path, "SELECT name FROM folio_entities ORDER BY name;") == "post\nsample")
        // Exactly the schema a new file of this model has.
        let fresh = directory.path("fresh.sqlite")
        try Store(path: fresh, model: FixturePost.model()).close()
        #expect(try fileSchema(path) == fileSchema(fresh))
    }

    @Test func aFailedMigrationLeavesTheOlderFileAsItWas() throws {
        let directory = try ScratchDirectory()
        let path = try Self.copyFixture(to: directory)
        let before = try fileContents(path)
        let failing = MigrationStep("fails after writing") { db in
            try db.execute(sql: "UPDATE post SET starred = 1")
            throw StepFailure()
        }
        expectError(.migrationStepFailed(step: "fails after writing", reason: "the step's own error")) {
            try Store(path: path, model: FixturePost.model(steps: [FixturePost.starredFromRead, failing]))
        }
        // Not even Folio's own tables were upgraded: the internal upgrade is part of the
        // same transaction.
        #expect(try fileContents(path) == before)
        expectError(.migrationDiscardsData(entity: "extra", attribute: nil, rows: 1)) {
            try Store(path: path, model: StoreModel(version: 1, records: [FixturePost.self, Sample.self]))
        }
        #expect(try fileContents(path) == before)
        // And the older version's model, unversioned, still opens it.
        let store = try Store(path: path, records: [Article.self])
        #expect(try store.count(RecordRequest<Article>()) == 59)
    }
}

/// The synchronous `fetch`, callable from async tests (where the async overload wins).
func fetchSync<R: PersistentRecord>(_ store: Store, _ request: RecordRequest<R>) throws -> FetchedRecords<R> {
    try store.fetch(request)
}
