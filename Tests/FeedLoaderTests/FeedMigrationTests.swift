import Foundation
import Folio
import GRDB
import Testing
@testable import FeedLoader

/// FeedLoader's model evolves: a `feeds.sqlite` written by FeedLoader at f4075a8 (frozen
/// in Fixtures/, with rows the `sqlite3` shell wrote) opens, is migrated to model version
/// 5 (`starred`, then `title` and `source` searchable, then `guid` and `undated`, then
/// sources, then the starred order), and
/// keeps every item, its identifier and the AUTOINCREMENT counter; its items are found by
/// the `/` filter's search.
@Suite("FeedLoader's migration")
struct FeedMigrationTests {
    static func copyFixture() throws -> (directory: URL, path: String) {
        let directory = try App.makeDirectory()
        let path = directory.appendingPathComponent("feeds.sqlite").path
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent("f4075a8-feeds.sqlite3-fixture")
        try FileManager.default.copyItem(at: fixture, to: URL(fileURLWithPath: path))
        return (directory, path)
    }

    /// Every item as the file holds it, read on a plain connection (no store open).
    static func rows(_ path: String, _ columns: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try String.fetchAll(db, sql: "SELECT \(columns) FROM feed ORDER BY id")
        }
    }

    static let itemColumns =
        "id || '|' || hex(title) || '|' || url || '|' || quote(published) || '|' || hex(summary) || '|' || source || '|' || ifnull(imageURL, '-')"

    @Test func aFeedsFileOfF4075a8IsMigratedAndKeepsItsItems() throws {
        let (directory, path) = try Self.copyFixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try Self.rows(path, Self.itemColumns)
        #expect(before.count == 119)

        let store = try Feed.openStore(at: path)
        #expect(store.modelVersion == Feed.model.version)
        let items = try store.fetch(RecordRequest<Feed>(sortBy: [SortDescriptor(\.id)])).map { $0! }
        let ids: [Int64] = items.map { $0.id!.rawValue }
        let expected: [Int64] = (1...121).filter { $0 != 5 && $0 != 120 }
        #expect(ids == expected)
        #expect(items.allSatisfy { !$0.starred })
        // Version 3: every item stored before it has a web address and a date.
        #expect(items.allSatisfy { $0.guid == nil && !$0.undated && $0.link == $0.url })
        // Version 4: every item points to the source of its name.
        let sources = try store.fetch(RecordRequest<Source>()).compactMap { $0 }
        let byID = Dictionary(uniqueKeysWithValues: sources.map { ($0.id!, $0) })
        #expect(items.allSatisfy { $0.source.id.flatMap { byID[$0]?.feedName } == $0.sourceName })
        #expect(sources.count == Set(items.map(\.sourceName)).count)
        let shell = try #require(items.last)
        #expect(shell.title == "Written by the sqlite3 shell — ß K")
        #expect(shell.summary == "shell\nrow")
        #expect(shell.published == Date(timeIntervalSince1970: 1_748_779_200.5))
        #expect(try store.count(RecordRequest<FeedEndpoint>()) == 0, "the table of a later model was added")
        // Version 2: the shell's row is found by the words of its title, folded.
        let found = try store.fetch(RecordRequest<Feed>.feedList(filter: "SHELL ss k", newestFirst: true, batchSize: 0))
        #expect(found.map { $0!.id } == [shell.id])
        #expect(try store.count(RecordRequest<Feed>.feedList(filter: "written", newestFirst: true, batchSize: 0)) >= 1)

        // A new item does not take a deleted one's identifier.
        var item = Feed()
        item.url = "https://example.com/after-the-migration"
        try store.write { tx in try tx.insert(&item) }
        #expect(item.id == RecordID(123))
        try store.write { tx in _ = try tx.delete(item) }
        try store.close()
        #expect(try Self.rows(path, Self.itemColumns) == before, "every item, as it was")
        #expect(
            try Self.rows(path, "folio_title_folded") == (try Self.rows(path, "title")).map { $0.folded },
            "the titles' folded keys were computed")
        #expect(try Self.rows(path, "starred") == Array(repeating: "0", count: 119))
        #expect(try Self.rows(path, "isRead") == Array(repeating: "0", count: 119), "version 6: every item unread")
        let queue = try DatabaseQueue(path: path)
        #expect(
            try queue.read { db in try Int.fetchOne(db, sql: "SELECT value FROM folio_metadata WHERE key = 'model_version'") }
                == Feed.model.version)
        try queue.close()

        // Opened again: nothing to migrate.
        let again = try Feed.openStore(at: path)
        #expect(try again.count(RecordRequest<Feed>()) == 119)
    }

    /// Version 5: a version-3 file whose reader starred items keeps every item, and the
    /// starred ones take places newest first, 2²⁰ apart (the others 0); a new star goes last.
    @Test func version5OrdersTheStarredItemsAndKeepsEveryItem() throws {
        let (directory, path) = try FeedSourceTests.copyVersion3()
        defer { try? FileManager.default.removeItem(at: directory) }
        let queue = try DatabaseQueue(path: path)
        let count = try queue.write { db in
            try db.execute(sql: "UPDATE feed SET starred = 1 WHERE id % 5 = 0")
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM feed WHERE starred = 1") ?? 0
        }
        try queue.close()
        #expect(count >= 8)
        let before = try Self.rows(path, Self.itemColumns + " || '|' || starred || '|' || undated")

        let store = try Feed.openStore(at: path)
        #expect(store.modelVersion == Feed.model.version)
        let starred = try store.fetch(
            RecordRequest<Feed>.feedList(filter: "", newestFirst: true, batchSize: 0, grouping: .starred)
        )
        .map { $0! }
        #expect(starred.count == count)
        #expect(starred.map(\.starOrder) == (1...count).map { $0 * Feed.starOrderSpacing })
        #expect(starred.map(\.published) == starred.map(\.published).sorted(by: >), "newest first")
        #expect(
            try store.count(RecordRequest<Feed>(predicate: #Predicate { $0.starred == false && $0.starOrder == 0 })) == before
                .count - count)
        // A new star goes after the last.
        try store.write { tx in
            let next = try Feed.nextStarOrder(tx)
            #expect(next == (count + 1) * Feed.starOrderSpacing)
        }
        try store.close()
        #expect(try Self.rows(path, Self.itemColumns + " || '|' || starred || '|' || undated") == before, "every item, as it was")
    }

    @Test func aStarSurvivesReimportsAndUpdates() throws {
        let (directory, path) = try Self.copyFixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Feed.openStore(at: path)
        let first = try #require(try store.fetch(RecordRequest<Feed>(sortBy: [SortDescriptor(\.id)], limit: 2)).map { $0! }.first)
        let url = first.url
        try store.write { tx in
            try tx.updateAll(Feed.self, where: #Predicate { $0.url == url }, set: [.set(\.starred, to: true)])
        }
        // The same item again, unchanged, then changed: the star stays either way.
        var item = first.item
        var report = try FeedImporter(store: store).storeNow(FeedImporterTests.feed([item]), source: "again")
        #expect(report.unchanged == 1)
        item.title += " (updated)"
        report = try FeedImporter(store: store).storeNow(FeedImporterTests.feed([item]), source: "changed")
        #expect(report.updated == 1)
        let stored = try #require(try store.fetch(RecordRequest<Feed>(predicate: #Predicate { $0.url == url })).first ?? nil)
        #expect(stored.title == item.title)
        #expect(stored.starred)
    }

    @Test func anOlderFeedLoaderModelIsRefusedByTheMigratedFile() throws {
        let (directory, path) = try Self.copyFixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Feed.openStore(at: path).close()
        // FeedLoader before version 1 declared no model (version 0): it would not know
        // `starred`, so it is refused, and the file stays as it is.
        let error = #expect(throws: FolioError.self) { try Store(path: path, records: Feed.recordTypes) }
        #expect(error == .newerModelVersion(path: path, version: Feed.model.version, declared: 0))
        // Nor is FeedLoader's version 1, which has no search.
        let older = #expect(throws: FolioError.self) {
            try Store(path: path, model: StoreModel(version: 1, records: Feed.recordTypes))
        }
        #expect(older == .newerModelVersion(path: path, version: Feed.model.version, declared: 1))
    }
}
