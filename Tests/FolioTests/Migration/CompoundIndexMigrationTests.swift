import Foundation
import GRDB
import Testing
@testable import Folio

/// Migrations add, drop and change compound indexes like any index: every row stays, the
/// file ends exactly as a fresh file of the new version, and a rebuild keeps the index.
@Suite("Compound index migration")
struct CompoundIndexMigrationTests {
    let directory: ScratchDirectory
    let path: String

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("items.sqlite")
    }

    func open<I: ListItemIndexes>(_ version: Int, _ type: I.Type) throws -> Store {
        try Store(path: path, model: StoreModel(version: version, records: [ListItem<I>.self, ListSource.self]))
    }

    func freshSchema<I: ListItemIndexes>(_ version: Int, _ type: I.Type) throws -> [String] {
        let fresh = directory.path("fresh-\(UUID().uuidString).sqlite")
        try Store(path: fresh, model: StoreModel(version: version, records: [ListItem<I>.self, ListSource.self])).close()
        return try fileSchema(fresh)
    }

    /// Every row as text, rowid first, read with SQL (whatever the declared model).
    func rows() throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try String.fetchAll(
                db,
                sql:
                    "SELECT id || '|' || title || '|' || isRead || '|' || published || '|' || rank || '|' || ifnull(source, '-') FROM item ORDER BY id"
            )
        }
    }

    func makeItems<I: ListItemIndexes>(_ type: I.Type, count: Int) throws {
        let store = try open(1, type)
        try store.write { tx in
            var source = ListSource(name: "only")
            try tx.insert(&source)
            for i in 0..<count {
                var item = ListItem<I>.make(i)
                if i % 2 == 0 { item.source = ToOne(source) }
                try tx.insert(&item)
            }
            // A gap in the rowids, which every migration keeps.
            try tx.database.execute(sql: "DELETE FROM item WHERE id % 7 = 0")
        }
        try store.close()
    }

    @Test func addingDroppingAndChangingKeepEveryRow() throws {
        try makeItems(NoIndexes.self, count: 200)
        let before = try rows()
        #expect(before.count == 200 - 28)
        // Added.
        try open(2, UnreadNewest.self).close()
        #expect(try rows() == before)
        #expect(try fileSchema(path) == freshSchema(2, UnreadNewest.self))
        // Changed: one index replaced by two others (an order and a key changed).
        try open(3, UnreadOldestAndBySource.self).close()
        #expect(try rows() == before)
        #expect(try fileSchema(path) == freshSchema(3, UnreadOldestAndBySource.self))
        // Dropped.
        try open(4, NoIndexes.self).close()
        #expect(try rows() == before)
        #expect(try fileSchema(path) == freshSchema(4, NoIndexes.self))
        #expect(try fileSchema(path).allSatisfy { !$0.hasPrefix("index folio_item_") })
    }

    @Test func onlyTheOrderOfAKeyChanging() throws {
        try makeItems(UnreadNewest.self, count: 40)
        let before = try rows()
        try open(2, UnreadNewestAscending.self).close()
        #expect(try rows() == before)
        let schema = try fileSchema(path)
        #expect(schema == (try freshSchema(2, UnreadNewestAscending.self)))
        #expect(schema.contains { $0.contains(#"ON "item"("isRead" ASC, "published" ASC)"#) }, "\(schema)")
        #expect(!schema.contains { $0.contains("DESC") }, "\(schema)")
        // And the store reopens it at the same version with no difference.
        let store = try open(2, UnreadNewestAscending.self)
        #expect(try store.fetchIdentifiers(RecordRequest<ListItem<UnreadNewestAscending>>()).count == before.count)
        try store.close()
    }

    @Test func aRebuildKeepsTheIndex() throws {
        try makeItems(UnreadNewest.self, count: 60)
        let before = try rows()
        // Removing an attribute rebuilds the table; the compound index is made again.
        let model = StoreModel(
            version: 2, records: [ItemWithoutRank.self, ListSource.self], discarding: [.attribute("rank", of: "item")])
        try Store(path: path, model: model).close()
        let fresh = directory.path("fresh.sqlite")
        try Store(path: fresh, model: model).close()
        let after = try fileSchema(path)
        #expect(after == (try fileSchema(fresh)))
        #expect(after.contains { $0.contains("folio_item_isRead_published_desc_index") })
        let withoutRank = before.map { row in
            row.split(separator: "|", omittingEmptySubsequences: false).enumerated().filter { $0.offset != 4 }.map(\.element)
                .joined(separator: "|")
        }
        #expect(try rows(withoutRank: true) == withoutRank)
    }

    @Test func aMigrationRepairsAnIndexTheShellDropped() throws {
        try makeItems(UnreadNewest.self, count: 20)
        try sqliteShell(path, "DROP INDEX folio_item_isRead_published_desc_index;")
        // Same version: reported (see CompoundIndexStoreTests); a new version makes it again.
        try open(2, UnreadNewest.self).close()
        #expect(try fileSchema(path) == freshSchema(2, UnreadNewest.self))
    }

    func rows(withoutRank: Bool) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try String.fetchAll(
                db,
                sql:
                    "SELECT id || '|' || title || '|' || isRead || '|' || published || '|' || ifnull(source, '-') FROM item ORDER BY id"
            )
        }
    }
}

/// `(isRead, published)`, both ascending: `UnreadNewest` with one order changed.
enum UnreadNewestAscending: ListItemIndexes {
    static var indexes: [IndexDescription<ListItem<Self>>] { [IndexDescription([\.isRead, \.published])] }
}

/// The item of ``UnreadNewest`` without its `rank` attribute (a rebuild).
struct ItemWithoutRank: PersistentRecord {
    var id: RecordID?
    var title = ""
    var isRead = false
    var published = 0.0
    var source = ToOne<ListSource>()
    static let entity = EntityDescription<ItemWithoutRank>(
        "item",
        [
            AttributeDescription(\.title, folded: true),
            AttributeDescription(\.isRead),
            AttributeDescription(\.published, indexed: true),
        ],
        relationships: [.toOne(\.source)],
        indexes: [IndexDescription([.key(\.isRead), .key(\.published, order: .reverse)])])
}
