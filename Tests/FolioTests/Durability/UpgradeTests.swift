import Foundation
import GRDB
import Testing
@testable import Folio

extension Durability {
    /// Folio's own tables carry a version and are upgraded in place (Fixtures/README.md says
    /// how the file of an older Folio version was made).
    @Suite("Internal schema version and upgrades")
    struct UpgradeTests {
        /// The older version's store file and its section cache "feed", copied into `directory`.
        static func oldStore(in directory: ScratchDirectory) throws -> String {
            let path = directory.path("store.sqlite")
            try FileManager.default.copyItem(at: fixtureURL("f4075a8-store.sqlite3-fixture"), to: URL(fileURLWithPath: path))
            let caches = URL(fileURLWithPath: path + "-folio-cache")
            try FileManager.default.createDirectory(at: caches, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                at: fixtureURL("f4075a8-feed.folio-cache-fixture"), to: caches.appendingPathComponent("feed.folio-cache"))
            return path
        }

        /// Every row of the fixture's three tables and Folio's entity rows, as the shell prints them.
        static func dump(_ path: String) throws -> String {
            try Shell.sqlite3(
                path,
                """
                SELECT * FROM article ORDER BY id;
                SELECT id, name, hex(note), quote(value), quote(taken), count64, flag, hex(payload), hex(token),
                       quote(optionalValue), optionalCount, optionalFlag FROM sample ORDER BY id;
                SELECT * FROM extra ORDER BY id;
                SELECT name, version_hash, change_token FROM folio_entities ORDER BY name;
                """)
        }

        static func metadata(_ path: String) throws -> String {
            try Shell.sqlite3(path, "SELECT key, typeof(value), length(value) FROM folio_metadata ORDER BY key;")
        }

        static func identity(_ path: String) throws -> String {
            try Shell.sqlite3(path, "SELECT hex(value) FROM folio_metadata WHERE key = 'database_identity';")
        }

        @Test @MainActor func aFileOfAnOlderVersionIsUpgradedInPlaceKeepsEveryRowAndItsCachesAreNotTrusted() async throws {
            let directory = try ScratchDirectory()
            let path = try Self.oldStore(in: directory)
            let before = try Self.dump(path)
            #expect(before.contains("article|a62f2ca18ff930e1|73"), "the fixture is the earliest version's file")
            let schemas = "SELECT schema FROM folio_entities ORDER BY name;"
            let schemasBefore = try Shell.sqlite3(path, schemas)
            #expect(try Shell.sqlite3(path, "SELECT count(*) FROM sqlite_master WHERE name = 'folio_metadata';") == "0")

            let store = try Store(path: path, records: [Article.self])
            #expect(try Self.dump(path) == before, "every row is kept")
            // The schema descriptions are rewritten with sorted keys, and say the same.
            let decode = { (text: String) in
                try text.split(separator: "\n").map { try JSONDecoder().decode(EntitySchema.self, from: Data($0.utf8)) }
            }
            #expect(try decode(Shell.sqlite3(path, schemas)) == (try decode(schemasBefore)))
            #expect(
                try Self.metadata(path) == "database_identity|blob|16\ninternal_schema_version|integer|1",
                "the key/value table holds the version and a 16-byte identity")
            #expect(try Shell.sqlite3(path, "SELECT value FROM folio_metadata WHERE key = 'internal_schema_version';") == "4")
            #expect(
                try Shell.sqlite3(path, "SELECT name, length(change_id) FROM folio_entities ORDER BY name;")
                    == "article|16\nextra|16\nsample|16")
            // The triggers of every entity of the file — declared by this store or not — renew the token
            // (and log the rows); the declared entity also gets the change log's update trigger.
            let triggers = try Shell.sqlite3(path, "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name;")
            // The declared entity's unique attribute gets the conflict triggers (two note the rows
            // a REPLACE may delete, two log those it did).
            let all = triggers.split(separator: "\n")
            let conflict = all.filter { $0.hasPrefix("folio_article_conflict_") || $0.hasPrefix("folio_article_replaced_") }
            #expect(conflict.count == 4)
            let lines = all.filter { line in !conflict.contains(line) }
            #expect(lines.count == 10)
            #expect(
                lines.filter { !$0.hasPrefix("folio_article_changed|") }.allSatisfy { $0.contains("change_id = randomblob(16)") })
            #expect(lines.filter { $0.contains("INSERT INTO folio_changes") }.count == 7)
            #expect(try Shell.sqlite3(path, "PRAGMA integrity_check;") == "ok")

            // The cache the older version wrote for exactly these rows is not trusted, then rebuilt.
            #expect(try await cachedFetch(store) == .rebuilt("written by another version of Folio (cache format 1)"))
            #expect(try await cachedFetch(store) == .reused)
            let controller = FetchedResultsController(newestFirst(), store: store, sectionBy: .day(\.published, timeZone: .gmt))
            try await controller.performFetch()
            #expect(controller.sections.map(\.numberOfObjects) == [12, 12, 12, 12, 11])

            // Another process writes the entity this store does not declare: its token renews.
            let extra = "SELECT hex(change_id) FROM folio_entities WHERE name = 'extra';"
            let extraToken = try Shell.sqlite3(path, extra)
            try Shell.sqlite3(path, "INSERT INTO extra (label) VALUES ('shell');")
            #expect(try Shell.sqlite3(path, extra) != extraToken)

            // Folio's tables in the upgraded file are those of a new file.
            let fresh = try Store.temporary(records: [Article.self])
            let folioSchema = """
                SELECT type, name, sql FROM sqlite_master
                WHERE name LIKE 'folio\\_%' ESCAPE '\\' AND (type = 'table' OR name LIKE 'folio\\_article\\_%' ESCAPE '\\')
                ORDER BY name;
                """
            #expect(try Shell.sqlite3(path, folioSchema) == (try Shell.sqlite3(fresh.path!, folioSchema)))

            // Opening again upgrades nothing: the identity stays, every record decodes.
            let identity = try Self.identity(path)
            try store.close()
            let again = try Store(path: path, records: [Article.self, Sample.self])
            #expect(try Self.identity(path) == identity)
            let samples = try await again.fetch(RecordRequest<Sample>(sortBy: [SortDescriptor(\.name)])).map { $0! }
            #expect(samples.map(\.name) == ["big", "extremes"])
            #expect(samples[0].count64 == .max && samples[1].count64 == .min)
            #expect(samples[1].note == "NUL\u{0}inside ß K" && samples[1].optionalCount == .max)
            #expect(samples[1].optionalValue == .infinity && samples[1].payload == Data([0, 1, 2, 255]))
            #expect(try await cachedFetch(again) == .reused)
        }

        /// Two stores opening the same old file at once: one upgrades, the other finds it done.
        @Test func twoStoresOpeningAnOldFileAtOnceUpgradeItOnce() async throws {
            let directory = try ScratchDirectory()
            let path = try Self.oldStore(in: directory)
            let stores = try await withThrowingTaskGroup(of: Store.self) { group in
                for _ in 0..<4 { group.addTask { try Store(path: path, records: [Article.self]) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(stores.count == 4)
            #expect(try Self.metadata(path) == "database_identity|blob|16\ninternal_schema_version|integer|1")
            let tokens = try Set(stores.map { "\(try $0.changeToken(for: Article.self))" })
            #expect(tokens.count == 1)
            #expect(try Shell.sqlite3(path, "SELECT count(*) FROM article;") == "59")
        }

        /// An upgrade is one transaction: one that fails halfway (here, at the last entity of
        /// the file, a virtual table no trigger can be put on) leaves the file at version 1.
        @Test func anUpgradeThatFailsLeavesTheFileAsItWas() throws {
            let directory = try ScratchDirectory()
            let path = try Self.oldStore(in: directory)
            try Shell.sqlite3(
                path,
                """
                CREATE VIRTUAL TABLE zz USING fts5(x);
                INSERT INTO folio_entities (name, version_hash, schema) VALUES ('zz', '-', '{}');
                """)
            let before = try Self.dump(path)
            let schema = "SELECT type, name, sql FROM sqlite_master ORDER BY name;"
            let schemaBefore = try Shell.sqlite3(path, schema)
            expectError(
                .sqlite(
                    code: 1, message: "cannot create triggers on virtual tables",
                    sql: SQLBuilder.changeTriggers(table: "zz")[0].sql, arguments: nil)
            ) {
                try Store(path: path, records: [Article.self])
            }
            #expect(try Shell.sqlite3(path, schema) == schemaBefore, "the upgrade was rolled back whole")
            #expect(try Self.dump(path) == before)
            #expect(try Shell.sqlite3(path, "PRAGMA integrity_check;") == "ok")
        }

        /// A file of a newer internal version is refused before anything is written to it.
        @Test func aFileOfANewerFolioIsRefusedAndLeftUnchanged() throws {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            do {
                let store = try Store(path: path, records: [Article.self])
                try seedHours(store, 0..<10)
                try store.close()
            }
            try Shell.sqlite3(path, "UPDATE folio_metadata SET value = 5 WHERE key = 'internal_schema_version';")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            expectError(.newerStoreFormat(path: path, version: 5, newestSupported: 4)) {
                try Store(path: path, records: [Article.self])
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }

        /// Folio's tables damaged by hand: an unreadable version is refused by name; a lost
        /// identity or token is made again, and no cache written before is trusted.
        @Test @MainActor func damagedMetadata() async throws {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            do {
                let store = try Store(path: path, records: [Article.self])
                try seedHours(store, 0..<30)
                #expect(try await cachedFetch(store) == .rebuilt("no cache file"))
                try store.close()
            }
            try Shell.sqlite3(path, "UPDATE folio_metadata SET value = 'two' WHERE key = 'internal_schema_version';")
            expectError(.invalidStoreMetadata(path: path, reason: "the internal schema version is \"two\"")) {
                try Store(path: path, records: [Article.self])
            }
            try Shell.sqlite3(path, "UPDATE folio_metadata SET value = 2 WHERE key = 'internal_schema_version';")
            let identity = try Self.identity(path)
            try Shell.sqlite3(path, "UPDATE folio_metadata SET value = x'0102' WHERE key = 'database_identity';")
            let store = try Store(path: path, records: [Article.self])
            #expect(try Self.identity(path) != identity && (try Self.identity(path)).count == 32)
            #expect(try await cachedFetch(store) == .rebuilt("the cache belongs to another database"))
            // The token removed while the store is open: unknown, so nothing is trusted or written.
            try Shell.sqlite3(path, "UPDATE folio_entities SET change_id = NULL WHERE name = 'article';")
            #expect(try await cachedFetch(store) == .rebuilt("the store has no change token"))
            #expect(try await cachedFetch(store) == .rebuilt("the store has no change token"))
            // The next write makes a new one.
            try seedHours(store, 30..<31)
            #expect(try await cachedFetch(store) == .rebuilt("the store changed since the cache was written"))
            #expect(try await cachedFetch(store) == .reused)
            // A version-1 trigger put back by hand (say, by an old Folio) is replaced at the next open.
            try Shell.sqlite3(
                path,
                """
                DROP TRIGGER folio_article_upd;
                CREATE TRIGGER "folio_article_upd" AFTER UPDATE ON "article" BEGIN UPDATE folio_entities SET change_token = change_token + 1 WHERE name = 'article'; END;
                """)
            try store.close()
            _ = try Store(path: path, records: [Article.self])
            #expect(
                try Shell.sqlite3(path, "SELECT sql FROM sqlite_master WHERE name = 'folio_article_upd';").contains(
                    "randomblob(16)"))
        }
    }
}
