import Foundation
import GRDB
import Testing
@testable import Folio

/// Declaring compound indexes: what the schema records, what it leaves as it was, and
/// every declaration the store refuses, by name.
@Suite("Compound index declarations")
struct CompoundIndexDeclarationTests {
    let directory: ScratchDirectory

    init() throws { directory = try ScratchDirectory() }

    @Test func theSchemaResolvesKeysToColumnsInOrder() {
        #expect(
            ListItem<UnreadNewest>.entity.schema.indexes == [
                IndexSchema(columns: [.init(name: "isRead", isDescending: false), .init(name: "published", isDescending: true)])
            ])
        // A folded key is its folded column then the text, as a folded sort orders them; a
        // to-one is its reference column.
        #expect(
            ListItem<UnreadOldestAndBySource>.entity.schema.indexes.last
                == IndexSchema(columns: [
                    .init(name: "source", isDescending: false),
                    .init(name: "folio_title_folded", isDescending: true),
                    .init(name: "title", isDescending: true),
                ]))
    }

    @Test func anEntityWithoutIndexesKeepsItsHashAndRecord() throws {
        let schema = ListItem<NoIndexes>.entity.schema
        #expect(!schema.canonicalText.contains("index"))
        let json = String(decoding: try JSONEncoder().encode(schema), as: UTF8.self)
        #expect(!json.contains("indexes"))
        // What an older Folio recorded (no `indexes` key) decodes to the same schema.
        #expect(try JSONDecoder().decode(EntitySchema.self, from: Data(json.utf8)) == schema)
        #expect(schema.versionHash == EntitySchema(name: schema.name, columns: schema.columns).versionHash)
    }

    @Test func indexesChangeTheHashAndRoundTrip() throws {
        let plain = ListItem<NoIndexes>.entity.schema
        let newest = ListItem<UnreadNewest>.entity.schema
        let both = ListItem<UnreadOldestAndBySource>.entity.schema
        #expect(Set([plain.versionHash, newest.versionHash, both.versionHash]).count == 3)
        // The order of a key counts.
        var ascending = newest
        ascending.indexes[0].columns[1].isDescending = false
        #expect(ascending.versionHash != newest.versionHash)
        let decoded = try JSONDecoder().decode(EntitySchema.self, from: JSONEncoder().encode(both))
        #expect(decoded == both)
        #expect(decoded.versionHash == both.versionHash)
    }

    @Test func theIndexNameFollowsFoliosConventions() {
        let index = ListItem<UnreadNewest>.entity.schema.indexes[0]
        #expect(SQLBuilder.indexName("item", index) == "folio_item_isRead_published_desc_index")
        #expect(SQLBuilder.isCompoundIndexName("folio_item_isRead_published_desc_index", table: "item"))
        #expect(!SQLBuilder.isCompoundIndexName("item_published_index", table: "item"))
        #expect(!SQLBuilder.isCompoundIndexName("folio_items_x_index", table: "item"))
    }

    func refusal<I: ListItemIndexes>(_ type: I.Type) -> FolioError? {
        folioError { try Store(path: directory.path("\(I.self).sqlite"), records: [ListItem<I>.self, ListSource.self]) }
    }

    @Test func anIndexWithoutKeysIsRefused() {
        guard case .invalidSchema("item", let reason)? = refusal(EmptyIndex.self) else {
            Issue.record("expected invalidSchema for item")
            return
        }
        #expect(reason.contains("has no key"))
    }

    @Test func aKeyPathThatIsNoAttributeIsRefused() {
        guard case .unknownKeyPath("item", let keyPath)? = refusal(UnknownKey.self) else {
            Issue.record("expected unknownKeyPath for item")
            return
        }
        #expect(keyPath.contains("key 2 of index 1"), "\(keyPath)")
    }

    @Test func aKeyTwiceIsRefused() {
        guard case .invalidSchema("item", let reason)? = refusal(KeyTwice.self) else {
            Issue.record("expected invalidSchema for item")
            return
        }
        #expect(reason.contains("names 'rank' twice"))
    }

    @Test func anIndexDeclaredTwiceIsRefused() {
        guard case .invalidSchema("item", let reason)? = refusal(IndexTwice.self) else {
            Issue.record("expected invalidSchema for item")
            return
        }
        #expect(reason.contains("(isRead, rank) is declared twice"))
    }

    @Test func anotherEntitysAttributeIsRefused() {
        guard case .invalidSchema("item", let reason)? = refusal(TargetAttribute.self) else {
            Issue.record("expected invalidSchema for item")
            return
        }
        #expect(reason.contains("an attribute of 'listsource'"))
        #expect(reason.contains("\\.source"))
    }

    @Test func theFoldedTextOfAnUnfoldedAttributeIsRefused() {
        guard case .attributeNotFolded("listsource", "name")? = refusal(UnfoldedText.self) else {
            Issue.record("expected attributeNotFolded")
            return
        }
    }

    @Test func twoIndexesOfOneNameAreRefused() {
        let error = folioError { try Store(path: directory.path("clash.sqlite"), records: [ClashingIndexes.self]) }
        guard case .nameClash("folio_clash_a_b_index", let first, let second)? = error else {
            Issue.record("expected nameClash, got \(String(describing: error))")
            return
        }
        #expect(first == "the index (a_b) of 'clash'")
        #expect(second == "the index (a, b) of 'clash'")
    }

    @Test func theSchemaLeavesARefusedIndexOut() {
        // (The store throws at open; the schema alone, a property, leaves the index out.)
        #expect(ListItem<KeyTwice>.entity.schema.indexes.isEmpty)
        #expect(ListItem<KeyTwice>.entity.versionHash == ListItem<NoIndexes>.entity.versionHash)
    }
}

/// Two compound indexes whose names would be one: `(a_b)` and `(a, b)`.
struct ClashingIndexes: PersistentRecord {
    var id: RecordID?
    var a = 0
    var b = 0
    var a_b = 0
    static let entity = EntityDescription<ClashingIndexes>(
        "clash", [AttributeDescription(\.a), AttributeDescription(\.b), AttributeDescription(\.a_b)],
        indexes: [IndexDescription([\.a_b]), IndexDescription([\.a, \.b])])
}
