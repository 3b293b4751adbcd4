import Foundation
import GRDB
import Testing

@testable import Folio

/// The full-text index keeps a prefix index of 1, 2 and 3 characters (FTS5's `prefix`): new
/// stores make it, and a store made before it (an index without one) is rebuilt with one at
/// its next opening, once. Searches give what brute force gives before and after, for
/// prefixes of every length, whole words, NFD and NFC, case pairs, NUL and emoji.
@Suite("The full-text index's prefix index")
@MainActor
struct SearchPrefixIndexTests {
    static let searches = [
        "c", "ca", "caf", "cafe", "café", "CAFÉ", "cafe\u{301}", "Ç", "ça", "ÇA", "cr", "cre", "crème", "creme", "str",
        "stra", "strasse", "STRASSE", "straße", "i", "ip", "ipa", "ipad", "iPad mini", "n", "na", "nai", "naive", "naïve",
        "x", "x\u{0}", "x\u{0}c", "🙂", "🙂c", "🙂cafe", "zo", "zoë", "co", "coö", "coop", "cafe c", "c 3", "p", "pl",
        "plain words", "w", "wo", "wor", "word", "words", "q", "qu",
    ]

    /// A file store of the search-walk items, and those items.
    static func makeStore() throws -> (StaleKeyTests.FileStore, [FtsWalkItem]) {
        let file = try StaleKeyTests.FileStore(records: [FtsWalkItem.self])
        let all = try SearchWalkTests.insert(file.store, SearchWalkTests.items(600))
        return (file, all)
    }

    static func indexSQL(_ path: String) throws -> (sql: String, docsizeRoot: Int) {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            (
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'folio_fts_walk_item_fts'") ?? "",
                try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'folio_fts_walk_item_fts_docsize'")
                    ?? 0
            )
        }
    }

    static func expectSearchesAreBruteForce(_ store: Store, _ all: [FtsWalkItem], _ label: String) throws {
        for search in searches where !SearchWalkTests.words(search).isEmpty {
            let expected = Set(all.filter { SearchWalkTests.matches($0.title, search) }.map(\.id!))
            var request = RecordRequest<FtsWalkItem>(sortBy: [SortDescriptor(\.published, order: .reverse)])
            request.search = TextSearch(search, matchingPrefixes: true)
            let found = try store.fetchIdentifiers(request).map { $0 }
            #expect(Set(found) == expected, "\(label): “\(search.debugDescription)”")
            #expect(found.count == expected.count, "\(label): “\(search.debugDescription)” found a row twice")
            // The whole word, not as a prefix.
            let exact = Set(
                all.filter { item in
                    let words = SearchWalkTests.words(item.title ?? "")
                    return item.title != nil && SearchWalkTests.words(search).allSatisfy { words.contains($0) }
                }.map(\.id!))
            request.search = TextSearch(search)
            #expect(Set(try store.fetchIdentifiers(request)) == exact, "\(label): whole words “\(search.debugDescription)”")
        }
    }

    @Test func aNewStoreHasThePrefixIndex() throws {
        let (file, all) = try Self.makeStore()
        #expect(try Self.indexSQL(file.path).sql.contains("prefix = '1 2 3'"))
        try Self.expectSearchesAreBruteForce(file.store, all, "new store")
    }

    /// A file whose index was made by an older Folio (no prefix index): the opening rebuilds
    /// it with one, searches are exact before and after, and a second opening keeps it.
    @Test func anOlderIndexIsRebuiltOnceWithThePrefixIndex() throws {
        let (file, all) = try Self.makeStore()
        try file.store.close()
        let made = try Self.indexSQL(file.path).sql
        let old = made.replacingOccurrences(of: ", prefix = '1 2 3'", with: "")
        #expect(old != made)
        // The older Folio's index: the same table without `prefix`, filled from the keys.
        try sqlite3Shell(
            file.path,
            """
            DROP TABLE folio_fts_walk_item_fts;
            \(old);
            INSERT INTO folio_fts_walk_item_fts (rowid, folio_title_folded) SELECT id, folio_title_folded FROM fts_walk_item;
            """)
        #expect(try Self.indexSQL(file.path).sql == old)
        // The older index answers the same (checked on a plain connection: no store opens it).
        let queue = try DatabaseQueue(path: file.path)
        let oldCount = try queue.read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM folio_fts_walk_item_fts WHERE folio_fts_walk_item_fts MATCH '\"c\" *'")
        }
        try queue.close()
        #expect(oldCount == all.filter { SearchWalkTests.matches($0.title, "c") }.count)

        let store = try Store(path: file.path, records: [FtsWalkItem.self])
        let migrated = try Self.indexSQL(file.path)
        #expect(migrated.sql == made)
        try Self.expectSearchesAreBruteForce(store, all, "migrated")
        try store.write { tx in
            try tx.database.execute(sql: "INSERT INTO folio_fts_walk_item_fts(folio_fts_walk_item_fts) VALUES('integrity-check')")
        }
        try store.close()
        // A second opening finds the index as it wants it: not rebuilt.
        let again = try Store(path: file.path, records: [FtsWalkItem.self])
        #expect(try Self.indexSQL(file.path) == migrated)
        try Self.expectSearchesAreBruteForce(again, all, "second opening")
        // Folio's writes after the migration are found through the prefix index too.
        let more = try SearchWalkTests.insert(again, SearchWalkTests.items(80, seed: 11))
        try Self.expectSearchesAreBruteForce(again, all + more, "after writes")
    }
}
