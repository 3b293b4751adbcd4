import Foundation
import GRDB
import Testing
@testable import Folio

extension Durability {
    /// A section cache belongs to one database and one state of it. Each case below gave a
    /// wrong answer when a cache had only a change counter and no database identity.
    @Suite("Section cache identity")
    @MainActor
    struct CacheIdentityTests {
        /// A file deleted and created again at the same path, with as many writes, is another
        /// database: its caches are not the old file's.
        @Test func aFileCreatedAgainAtTheSamePathDoesNotReuseTheOldCache() async throws {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            do {
                let store = try Store(path: path, records: [Article.self])
                try seedHours(store, 0..<30)
                #expect(try await cachedFetch(store) == .rebuilt("no cache file"))
                #expect(try await cachedFetch(store) == .reused)
                try store.close()
            }
            removeDatabase(path)
            let store = try Store(path: path, records: [Article.self])
            try seedHours(store, 100..<130)
            #expect(try await cachedFetch(store) == .rebuilt("the cache belongs to another database"))
            #expect(try await cachedFetch(store) == .reused)
        }

        /// Two store files that share one cache directory never read each other's caches.
        @Test func twoFilesSharingACacheDirectoryDoNotReadEachOthersCaches() async throws {
            let directory = try ScratchDirectory()
            let caches = directory.url.appendingPathComponent("caches")
            let one = try Store(path: directory.path("one.sqlite"), records: [Article.self], cacheDirectory: caches)
            let two = try Store(path: directory.path("two.sqlite"), records: [Article.self], cacheDirectory: caches)
            try seedHours(one, 0..<30)
            try seedHours(two, 100..<130)
            #expect(try await cachedFetch(one) == .rebuilt("no cache file"))
            #expect(try await cachedFetch(two) == .rebuilt("the cache belongs to another database"))
            #expect(try await cachedFetch(one) == .rebuilt("the cache belongs to another database"))
            #expect(try await cachedFetch(one) == .reused)
        }

        enum Rollback: String, CaseIterable { case backupRestored, walLost }

        /// The file goes back to an earlier state — a backup restored, or the file copied
        /// without its WAL (what a copy, a restore or a power loss leaves) — and then as many
        /// commits as were lost are made: a counter would be back at the value the cache was
        /// written with. The random change token is not.
        @Test(arguments: Rollback.allCases)
        func aRolledBackFileDoesNotReuseACacheOfALaterState(_ rollback: Rollback) async throws {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite"), backup = directory.path("backup.sqlite")
            let walLess = directory.path("wal-less.sqlite")
            do {
                let store = try Store(path: path, records: [Article.self])
                try commitOneByOne(store, 0..<40)
                try store.close()  // the last connection checkpoints: the file holds the 40 commits
            }
            try Shell.copy(path, to: backup)
            let stale = directory.path("stale.folio-cache")
            do {
                let store = try Store(path: path, records: [Article.self])
                try commitOneByOne(store, 40..<70)
                #expect(try await cachedFetch(store) == .rebuilt("no cache file"))  // written for 70 rows
                #expect(try await cachedFetch(store) == .reused)
                try FileManager.default.copyItem(atPath: try SectionCache.url(forName: "feed", in: store).path, toPath: stale)
                // The main file alone, while the 30 commits are still in the WAL.
                try Shell.copy(path, to: walLess)
                try store.close()
            }
            removeDatabase(path)
            try Shell.copy(rollback == .backupRestored ? backup : walLess, to: path)
            let store = try Store(path: path, records: [Article.self])
            let cacheFile = try SectionCache.url(forName: "feed", in: store).path
            #expect(try store.count(RecordRequest<Article>()) == 40)
            // The cache of the later state is not used for the earlier one…
            #expect(try await cachedFetch(store) == .rebuilt("the store changed since the cache was written"))
            #expect(try await cachedFetch(store) == .reused)
            // …nor after as many commits as were lost, which bring a counter back to the value
            // the cache was written with: 28 inserts, one delete and one update (68 rows where
            // the cache has 70).
            try FileManager.default.removeItem(atPath: cacheFile)
            try FileManager.default.copyItem(atPath: stale, toPath: cacheFile)
            try commitOneByOne(store, 200..<228)
            try writeSync(store) { tx in _ = try tx.delete(Article.self, id: RecordID(1)) }
            try writeSync(store) { tx in
                _ = try tx.updateAll(Article.self, where: #Predicate { $0.score == 2 }, set: [.set(\.title, to: "x")])
            }
            #expect(try store.count(RecordRequest<Article>()) == 67)
            #expect(try await cachedFetch(store) == .rebuilt("the store changed since the cache was written"))
        }

        /// The `sqlite3` shell inserts, updates and deletes rows of every entity (Folio's
        /// triggers use SQLite built-ins only), and each of its writes renews the entity's
        /// change token: a cache written before is rebuilt.
        @Test func theShellWritesEveryEntityAndRenewsItsToken() async throws {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            let store = try Store(path: path, records: [Article.self, Sample.self, Bare.self])
            try seedHours(store, 0..<30)
            try writeSync(store) { tx in
                var sample = Sample(name: "one", value: 1)
                try tx.insert(&sample)
                var bare = Bare()
                try tx.insert(&bare)
            }
            let statements: [(table: String, sql: String)] = [
                (
                    "article",
                    "INSERT INTO article (title, url, published, score, isRead) VALUES ('shell', 'shell:1', 1e6, 99, 0);"
                ),
                ("article", "UPDATE article SET published = 2e6 WHERE score = 3;"),
                ("article", "DELETE FROM article WHERE score = 4;"),
                (
                    "sample",
                    "INSERT INTO sample (name, value, taken, count64, flag, payload, token) VALUES ('two', 2, 0, 0, 0, x'', x'00');"
                ),
                ("sample", "UPDATE sample SET value = 3 WHERE name = 'one';"),
                ("sample", "DELETE FROM sample WHERE name = 'two';"),
                ("bare", "INSERT INTO bare DEFAULT VALUES;"),
                ("bare", "UPDATE bare SET id = 10 WHERE id = 2;"),
                ("bare", "DELETE FROM bare WHERE id = 1;"),
            ]
            for (table, sql) in statements {
                let before = try tokens(store)
                if table == "article" { #expect(try await cachedFetch(store) != .notUsed) }
                try Shell.sqlite3(path, sql)
                let after = try tokens(store)
                #expect(after[table] != before[table], "\(sql) did not renew the token of \(table)")
                for other in before.keys where other != table {
                    #expect(after[other] == before[other], "\(sql) renewed the token of \(other)")
                }
                if table == "article" {
                    #expect(try await cachedFetch(store) == .rebuilt("the store changed since the cache was written"))
                }
            }
            #expect(try store.count(RecordRequest<Article>()) == 30)
            #expect(try await store.fetch(RecordRequest<Bare>(sortBy: [SortDescriptor(\.id)])).map { $0?.id } == [RecordID(10)])
        }

        private func tokens(_ store: Store) throws -> [String: String] {
            [
                "article": "\(try store.changeToken(for: Article.self))",
                "sample": "\(try store.changeToken(for: Sample.self))",
                "bare": "\(try store.changeToken(for: Bare.self))",
            ]
        }
    }
}
