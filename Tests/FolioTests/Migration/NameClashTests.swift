import Foundation
import Testing
@testable import Folio

// Entities whose generated names collide: SQLite's tables and indexes share one namespace,
// triggers have another, and both ignore ASCII case.

struct ClashT: PersistentRecord {
    var id: RecordID?
    var x_y = 0
    static let entity = EntityDescription<ClashT>("t", [AttributeDescription(\.x_y, indexed: true)])
}

struct ClashTX: PersistentRecord {
    var id: RecordID?
    var y = 0
    static let entity = EntityDescription<ClashTX>("t_x", [AttributeDescription(\.y, indexed: true)])
}

/// `ClashTX`, without the index: no clash.
struct ClashTXUnindexed: PersistentRecord {
    var id: RecordID?
    var y = 0
    static let entity = EntityDescription<ClashTXUnindexed>("t_x", [AttributeDescription(\.y)])
}

/// `ClashT` in capitals: `T_x_Y_index` is `t_x_y_index` to SQLite.
struct ClashUpperT: PersistentRecord {
    var id: RecordID?
    var x_Y = 0
    static let entity = EntityDescription<ClashUpperT>("T", [AttributeDescription(\.x_Y, indexed: true)])
}

struct ClashIndexed: PersistentRecord {
    var id: RecordID?
    var x = 0
    static let entity = EntityDescription<ClashIndexed>("t", [AttributeDescription(\.x, unique: true)])
}

/// A table named as `ClashIndexed`'s index.
struct ClashIndexNamedTable: PersistentRecord {
    var id: RecordID?
    var z = 0
    static let entity = EntityDescription<ClashIndexNamedTable>("t_x_index", [AttributeDescription(\.z)])
}

/// A folded attribute: its keys' index is `e_folio_title_folded_index`.
struct ClashFolded: PersistentRecord {
    var id: RecordID?
    var title = ""
    static let entity = EntityDescription<ClashFolded>("e", [AttributeDescription(\.title, folded: true)])
}

struct ClashFolio: PersistentRecord {
    var id: RecordID?
    var title_folded = ""
    static let entity = EntityDescription<ClashFolio>("e_folio", [AttributeDescription(\.title_folded, indexed: true)])
}

/// A searchable attribute: its full-text triggers are `folio_a_fts_ins`, `_del`, `_upd`.
struct ClashSearchable: PersistentRecord {
    var id: RecordID?
    var title = ""
    static let entity = EntityDescription<ClashSearchable>("a", [AttributeDescription(\.title, searchable: true)])
}

/// The same entity, not searchable: no full-text triggers.
struct ClashPlainA: PersistentRecord {
    var id: RecordID?
    var title = ""
    static let entity = EntityDescription<ClashPlainA>("a", [AttributeDescription(\.title)])
}

/// Its change triggers are `folio_a_fts_ins`, `_upd`, `_del`.
struct ClashFTSNamed: PersistentRecord {
    var id: RecordID?
    var title = ""
    static let entity = EntityDescription<ClashFTSNamed>("a_fts", [AttributeDescription(\.title)])
}

/// Its change triggers are `folio_e_fold_ins` and `_upd`, as `ClashFolded`'s folded-key triggers.
struct ClashFoldNamed: PersistentRecord {
    var id: RecordID?
    var title = ""
    static let entity = EntityDescription<ClashFoldNamed>("e_fold", [AttributeDescription(\.title)])
}

/// Two entities whose tables, indexes or triggers would get one name: one named error,
/// thrown before any file is created or touched, for a new file and a migration alike.
/// Before: SQLite's "index t_x_y_index already exists" half-way through creating a new
/// file, and a ``FolioError/migrationRefused(entity:reason:)`` for the same models as a
/// migration.
@Suite("Name clashes")
struct NameClashTests {
    static let clashes: [(records: [any PersistentRecord.Type], error: FolioError)] = [
        (
            [ClashT.self, ClashTX.self],
            .nameClash(name: "t_x_y_index", first: "the index of 't.x_y'", second: "the index of 't_x.y'")
        ),
        (
            [ClashTX.self, ClashUpperT.self],
            .nameClash(name: "t_x_y_index", first: "the index of 'T.x_Y'", second: "the index of 't_x.y'")
        ),
        (
            [ClashIndexed.self, ClashIndexNamedTable.self],
            .nameClash(name: "t_x_index", first: "the index of 't.x'", second: "the table of the entity 't_x_index'")
        ),
        (
            [ClashFolded.self, ClashFolio.self],
            .nameClash(
                name: "e_folio_title_folded_index", first: "the index of the folded keys of 'e.title'",
                second: "the index of 'e_folio.title_folded'")
        ),
        (
            [ClashSearchable.self, ClashFTSNamed.self],
            .nameClash(name: "folio_a_fts_ins", first: "the full-text trigger of 'a'", second: "the change trigger of 'a_fts'")
        ),
        (
            [ClashFolded.self, ClashFoldNamed.self],
            .nameClash(name: "folio_e_fold_ins", first: "the folded-key trigger of 'e'", second: "the change trigger of 'e_fold'")
        ),
    ]

    @Test(arguments: 0..<clashes.count)
    func aClashIsNamedBeforeANewFileIsCreated(_ index: Int) throws {
        let (records, error) = Self.clashes[index]
        let directory = try ScratchDirectory()
        let path = directory.path("new.sqlite")
        expectError(error) { try Store(path: path, model: StoreModel(version: 1, records: records)) }
        expectError(error) { try Store(path: path, records: records) }
        expectError(error) { try Store(path: path, records: records.reversed()) }
        expectError(error) { try Store.inMemory(records: records) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty, "nothing was created")
    }

    @Test(arguments: 0..<clashes.count)
    func aClashIsNamedBeforeAMigrationTouchesTheFile(_ index: Int) throws {
        let (records, error) = Self.clashes[index]
        let directory = try ScratchDirectory()
        let path = directory.path("old.sqlite")
        // Version 1 has the first entity only; version 2 adds the second.
        let first = try Store(path: path, model: StoreModel(version: 1, records: [records[0]]))
        try first.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        expectError(error) { try Store(path: path, model: StoreModel(version: 2, records: records)) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == files)
    }

    /// The same names without the object that would clash open, and create what they declare.
    @Test func namesThatOnlyLookAlikeAreNotAClash() throws {
        let directory = try ScratchDirectory()
        let models: [[any PersistentRecord.Type]] = [
            [ClashT.self, ClashTXUnindexed.self], [ClashPlainA.self, ClashFTSNamed.self], [ClashFolded.self, ClashIndexed.self],
        ]
        for (index, records) in models.enumerated() {
            let path = directory.path("\(index).sqlite")
            let store = try Store(path: path, records: records)
            try store.close()
            let schema = try fileSchema(path)
            for record in records {
                let table = tableName(record)
                #expect(schema.contains { $0.hasPrefix("table \(table) ON") })
            }
        }
    }

    private func tableName<R: PersistentRecord>(_ type: R.Type) -> String { R.entity.name }

    @Test func theDescriptionNamesBothAndTheName() {
        let error = FolioError.nameClash(name: "t_x_y_index", first: "the index of 't.x_y'", second: "the index of 't_x.y'")
        #expect(error.description.contains("the index of 't.x_y' and the index of 't_x.y' would both be named 't_x_y_index'"))
    }
}
