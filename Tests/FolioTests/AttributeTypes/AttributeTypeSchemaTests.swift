import Foundation
import GRDB
import Testing

@testable import Folio

// One table, "swap", declared three ways: with the standard types, with new types that store
// as they do, and with a Codable value where text was.

struct SwapPlain: PersistentRecord {
    var id: RecordID?
    var status = "draft"
    var count = 0
    var ratio = 0.0
    var link = "https://example.com/"
    var note = ""
    static let entity = EntityDescription<SwapPlain>(
        "swap",
        [
            AttributeDescription(\.status, column: "status", indexed: true),
            AttributeDescription(\.count, column: "count"),
            AttributeDescription(\.ratio, column: "ratio"),
            AttributeDescription(\.link, column: "link"),
            AttributeDescription(\.note, column: "note"),
        ])
}

struct SwapTyped: PersistentRecord {
    var id: RecordID?
    var status = GadgetStatus.draft
    var count: Int16 = 0
    var ratio: Float = 0
    var link = URL(string: "https://example.com/")!
    var note = ""
    static let entity = EntityDescription<SwapTyped>(
        "swap",
        [
            AttributeDescription(\.status, column: "status", indexed: true),
            AttributeDescription(\.count, column: "count"),
            AttributeDescription(\.ratio, column: "ratio"),
            AttributeDescription(\.link, column: "link"),
            AttributeDescription(\.note, column: "note"),
        ])
}

struct SwapJSON: PersistentRecord {
    var id: RecordID?
    var status = GadgetStatus.draft
    var count: Int16 = 0
    var ratio: Float = 0
    var link = URL(string: "https://example.com/")!
    var note: [String] = []
    static let entity = EntityDescription<SwapJSON>(
        "swap",
        [
            AttributeDescription(\.status, column: "status", indexed: true),
            AttributeDescription(\.count, column: "count"),
            AttributeDescription(\.ratio, column: "ratio"),
            AttributeDescription(\.link, column: "link"),
            AttributeDescription(\.note, column: "note"),
        ])
}

/// The version hash depends on the storage alone: types that store alike keep the hash, so a
/// file made before them opens unchanged; a Codable value is a storage of its own.
@Suite("Attribute types: schema and version hash")
struct AttributeTypeSchemaTests {
    let directory: ScratchDirectory
    let path: String

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("swap.sqlite")
    }

    @Test func typesThatStoreAlikeShareTheVersionHash() {
        #expect(SwapTyped.entity.versionHash == SwapPlain.entity.versionHash)
        #expect(SwapJSON.entity.versionHash != SwapPlain.entity.versionHash)
        #expect(
            SwapPlain.entity.schema.canonicalText
                == "folio-entity-1;swap;status:string:!:i:-;count:integer:!:-:-;ratio:double:!:-:-;link:string:!:-:-;note:string:!:-:-"
        )
        #expect(SwapJSON.entity.schema.canonicalText.hasSuffix(";note:json:!:-:-"))
        // The storage of each new type.
        let types = Dictionary(uniqueKeysWithValues: Gadget.entity.attributes.map { ($0.column, $0.type) })
        for column in ["i8", "i16", "i32", "u8", "u16", "u32", "u64", "word", "priority", "optionalI32", "optionalU64"] {
            #expect(types[column] == .integer, "\(column)")
        }
        for column in ["link", "status", "optionalLink", "optionalStatus"] { #expect(types[column] == .string, "\(column)") }
        for column in ["ratio", "optionalRatio"] { #expect(types[column] == .double, "\(column)") }
        for column in ["size", "tags", "spec", "shape", "optionalSize", "optionalTags"] {
            #expect(types[column] == .json, "\(column)")
        }
        #expect(AttributeType.json.sqlType == "TEXT")
        // A schema recorded with a JSON column reads back.
        let json = try? JSONEncoder().encode(SwapJSON.entity.schema)
        #expect(json.flatMap { try? JSONDecoder().decode(EntitySchema.self, from: $0) } == SwapJSON.entity.schema)
    }

    @Test func aFileOfTheStandardTypesOpensWithTypesThatStoreAlike() throws {
        try Store(path: path, records: [SwapPlain.self]).write { tx in
            for (status, count, link) in [("live", 7, "https://a.example/x"), ("draft", -3, "docs/b.html")] {
                var plain = SwapPlain(status: status, count: count, ratio: 0.5, link: link, note: "n")
                try tx.insert(&plain)
            }
            var unknown = SwapPlain(status: "deleted", count: 70_000, ratio: 0.25, link: "", note: "")
            try tx.insert(&unknown)
        }
        let schemaBefore = try fileSchema(path)
        let store = try Store(path: path, records: [SwapTyped.self])
        #expect(try fileSchema(path) == schemaBefore, "no migration, nothing rewritten")
        let live = GadgetStatus.live
        let rows = try store.fetch(RecordRequest<SwapTyped>(predicate: #Predicate { $0.status == live })).map { $0! }
        #expect(rows.map(\.count) == [7] && rows.map(\.link) == [URL(string: "https://a.example/x")!])
        #expect(rows.map(\.ratio) == [0.5])
        var request = RecordRequest<SwapTyped>(sortBy: [SortDescriptor(\.status)])
        request.batchSize = 10
        let all = try store.fetch(request)
        #expect(all.count == 3)
        #expect(try all.record(at: 1)?.status == .draft)
        #expect(try all.record(at: 2)?.status == .live)
        // The row the new types cannot read ("deleted" sorts first) is a named error, naming
        // its first such column.
        #expect {
            try all.record(at: 0)
        } throws: { error in
            guard case FolioError.decoding(let column, _) = error else { return false }
            return column == "status"
        }
    }

    @Test func changingTextToACodableValueIsATypeChangeAMigrationRefuses() throws {
        try Store(path: path, model: StoreModel(version: 1, records: [SwapTyped.self])).write { tx in
            var row = SwapTyped()
            row.note = "plain text, not JSON"
            try tx.insert(&row)
        }
        #expect {
            try Store(path: path, model: StoreModel(version: 2, records: [SwapJSON.self]))
        } throws: { error in
            guard case FolioError.migrationRefused(let entity, let reason) = error else { return false }
            return entity == "swap" && reason.contains("'note'") && reason.contains("json")
        }
        // Opened without a new version, the difference is reported and the file left as it was.
        #expect(throws: FolioError.self) { try Store(path: path, model: StoreModel(version: 1, records: [SwapJSON.self])) }
        #expect(
            try Store(path: path, model: StoreModel(version: 1, records: [SwapTyped.self])).count(RecordRequest<SwapTyped>()) == 1
        )
    }
}
