import Foundation
import Testing

@testable import Folio

/// A shelf of the macro tests: a unique, folded name, a to-many with a cascade.
@PersistentRecord("macro_shelf")
struct MacroShelf: Equatable {
    var id: RecordID?
    @Stored(.unique, .folded) var name = ""
    @Stored(.indexed, column: "floor_number", defaultValue: 0) var floor = 0
    var opened: Date? = nil
    @ToMany(\MacroVolume.shelf, deleteRule: .cascade) var volumes: RecordRequest<MacroVolume>
    @NotStored var isSelected = false
}

/// A volume on a shelf: every kind of column the macro describes.
@PersistentRecord
struct MacroVolume: Equatable {
    var id: RecordID?
    @Stored(.searchable) var title = ""
    @Stored(renamedFrom: "writer") var author: String?
    var pages = 0
    var price = 0.0
    var isRead = false
    var added = Date(timeIntervalSince1970: 0)
    var cover: Data? = nil
    var isbn = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var serial: Int64 = 0
    @Stored(column: "shelf_id") var shelf = ToOne<MacroShelf>()
    /// Not a column: computed.
    var summary: String { "\(title) (\(pages) pages)" }
    /// Not a column: static.
    static let shelfLife = 10
    @NotStored var scratch = ""

    #CompoundIndex<MacroVolume>(\.isRead, \.added)
    #CompoundIndex<MacroVolume>(.key(\.shelf), .key(\.pages, order: .reverse))
}

/// The same entities, written by hand.
enum HandWritten {
    static let shelf = EntityDescription<MacroShelf>(
        "macro_shelf",
        [
            AttributeDescription(\.name, unique: true, folded: true),
            AttributeDescription(\.floor, column: "floor_number", indexed: true, defaultValue: 0),
            AttributeDescription(\.opened),
        ],
        relationships: [.toMany(\MacroVolume.shelf, deleteRule: .cascade)])

    static let volume = EntityDescription<MacroVolume>(
        "macro_volume",
        [
            AttributeDescription(\.title, searchable: true),
            AttributeDescription(\.author, renamedFrom: "writer"),
            AttributeDescription(\.pages),
            AttributeDescription(\.price),
            AttributeDescription(\.isRead),
            AttributeDescription(\.added),
            AttributeDescription(\.cover),
            AttributeDescription(\.isbn),
            AttributeDescription(\.serial),
        ],
        relationships: [.toOne(\.shelf, column: "shelf_id")],
        indexes: [
            IndexDescription([\.isRead, \.added]),
            IndexDescription([.key(\.shelf), .key(\.pages, order: .reverse)]),
        ])
}

/// A hand-written attribute of a computed property, without `column:`: its key path's text
/// names no property.
struct UnnamedComputed: PersistentRecord {
    var id: RecordID?
    var stored = ""
    var computed: String {
        get { stored }
        set { stored = newValue }
    }
    static let entity = EntityDescription<UnnamedComputed>("unnamed_computed", [AttributeDescription(\.computed)])
    init() {}
}

/// A hand-written attribute through a nested value, without `column:`.
struct UnnamedNested: PersistentRecord {
    struct Inner: Sendable { var value = 0 }
    var id: RecordID?
    var inner = Inner()
    static let entity = EntityDescription<UnnamedNested>("unnamed_nested", [AttributeDescription(\.inner.value)])
    init() {}
}

/// A hand-written attribute of a `Codable` type (stored as JSON) through a nested value,
/// without `column:`: refused like the others.
struct UnnamedCodable: PersistentRecord {
    struct Inner: Sendable { var tags: [String] = [] }
    var id: RecordID?
    var inner = Inner()
    static let entity = EntityDescription<UnnamedCodable>("unnamed_codable", [AttributeDescription(\.inner.tags)])
    init() {}
}

/// The same two, with their column names declared: accepted.
struct NamedComputed: PersistentRecord {
    struct Inner: Sendable { var value = 0 }
    var id: RecordID?
    var stored = ""
    var inner = Inner()
    var computed: String {
        get { stored }
        set { stored = newValue }
    }
    static let entity = EntityDescription<NamedComputed>(
        "named_computed",
        [AttributeDescription(\.computed, column: "computed"), AttributeDescription(\.inner.value, column: "value")])
    init() {}
}

@Suite("@PersistentRecord at run time")
struct MacroRecordTests {
    @Test func theMacroEntitiesAreTheHandWrittenOnes() {
        expectSameEntity(MacroShelf.entity, HandWritten.shelf)
        expectSameEntity(MacroVolume.entity, HandWritten.volume)
        #expect(MacroVolume.entity.attributes.map(\.column).last == "shelf_id")
        #expect(MacroShelf.entity.attributes.map(\.column) == ["name", "floor_number", "opened"])
    }

    @Test func aMacroRecordRoundTripsThroughAStore() throws {
        let store = try Store.temporary(records: [MacroShelf.self, MacroVolume.self])
        var shelf = MacroShelf(name: "Poetry", floor: 2, opened: Date(timeIntervalSince1970: 86_400))
        shelf.isSelected = true
        var volume = MacroVolume()
        volume.title = "Leaves of Grass"
        volume.author = "Whitman"
        volume.pages = 145
        volume.price = 12.5
        volume.isRead = true
        volume.added = Date(timeIntervalSince1970: 3_600)
        volume.cover = Data([1, 2, 3])
        volume.isbn = UUID()
        volume.serial = Int64.max
        volume.scratch = "not stored"
        try store.write { tx in
            try tx.insert(&shelf)
            volume.shelf = ToOne(shelf)
            try tx.insert(&volume)
        }
        let shelfID = try #require(shelf.id)
        let volumeID = try #require(volume.id)
        let readShelf = try #require(try store.fetchOne(MacroShelf.self, id: shelfID))
        var expectedShelf = shelf
        expectedShelf.isSelected = false
        #expect(readShelf == expectedShelf)
        let readVolume = try #require(try store.fetchOne(MacroVolume.self, id: volumeID))
        var expectedVolume = volume
        expectedVolume.scratch = ""
        #expect(readVolume == expectedVolume)
        #expect(try store.fetchOne(readVolume.shelf)?.name == "Poetry")
    }

    @Test func theToManyIsARequestAndItsDeleteRuleHolds() throws {
        let store = try Store.temporary(records: [MacroShelf.self, MacroVolume.self])
        let (poetry, prose) = try store.write { tx -> (MacroShelf, MacroShelf) in
            var poetry = MacroShelf(name: "Poetry")
            var prose = MacroShelf(name: "Prose", floor: 1)
            try tx.insert(&poetry)
            try tx.insert(&prose)
            for (number, shelf) in [poetry, poetry, prose].enumerated() {
                var volume = MacroVolume()
                volume.title = "Volume \(number)"
                volume.shelf = ToOne(shelf)
                try tx.insert(&volume)
            }
            return (poetry, prose)
        }
        #expect(try store.count(poetry.volumes) == 2)
        #expect(try store.count(prose.volumes) == 1)
        try store.write { tx in try tx.delete(poetry) }
        #expect(try store.count(RecordRequest<MacroVolume>()) == 1)
    }

    @Test func theMacroIndexesAreInTheFile() throws {
        let store = try Store.temporary(records: [MacroShelf.self, MacroVolume.self])
        let plan = try store.explain(
            RecordRequest<MacroVolume>(predicate: #Predicate { $0.isRead == false }, sortBy: [SortDescriptor(\.added)]))
        #expect(plan.description.contains("folio_macro_volume_isRead_added_index"), "\(plan)")
    }

    @Test(arguments: [
        (UnnamedComputed.self as any PersistentRecord.Type, "unnamed_computed", "<computed"),
        (UnnamedNested.self, "unnamed_nested", "\\UnnamedNested.inner.value"),
        (UnnamedCodable.self, "unnamed_codable", "\\UnnamedCodable.inner.tags"),
    ])
    func aHandWrittenKeyPathWithoutANameIsRefusedAtOpen(
        _ type: any PersistentRecord.Type, _ entity: String, _ text: String
    ) throws {
        let error = folioError { try Store.inMemory(records: [type]) }
        guard case .unnamedKeyPath(let name, let keyPath)? = error else {
            Issue.record("expected unnamedKeyPath, got \(String(describing: error))")
            return
        }
        #expect(name == entity)
        #expect(keyPath.contains(text), "\(keyPath)")
        #expect(error?.description.contains("declare the column name explicitly (column:) or use the macro") == true)
    }

    @Test func theSameKeyPathsWithTheirColumnNamesAreAccepted() throws {
        let store = try Store.inMemory(records: [NamedComputed.self])
        var record = NamedComputed()
        record.computed = "x"
        record.inner.value = 7
        try store.write { tx in try tx.insert(&record) }
        let id = try #require(record.id)
        let read = try store.fetchOne(NamedComputed.self, id: id)
        #expect(read?.stored == "x" && read?.inner.value == 7)
    }

    @Test func aPlainKeyPathNamesItsProperty() {
        #expect(AttributeDescription<Article>.propertyName(of: \Article.title) == "title")
        #expect(AttributeDescription<UnnamedNested>.propertyName(of: \UnnamedNested.inner.value) == nil)
        #expect(KeyPathName.isIdentifier("café_2"))
        #expect(!KeyPathName.isIdentifier("<offset 16 (String)>"))
        #expect(!KeyPathName.isIdentifier("inner.value"))
        #expect(KeyPathName.namesAvailable(in: Article.self))
    }
}
