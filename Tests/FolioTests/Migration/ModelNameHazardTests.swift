import Foundation
import Testing
@testable import Folio

struct CaseTwins: PersistentRecord {
    var id: RecordID?
    var Title = ""
    var title = ""
    static let entity = EntityDescription<CaseTwins>("twins", [AttributeDescription(\.Title), AttributeDescription(\.title)])
}

struct RenameChain: PersistentRecord {
    var id: RecordID?
    var b = ""
    var c = ""
    static let entity = EntityDescription<RenameChain>(
        "note", [AttributeDescription(\.b, renamedFrom: "a"), AttributeDescription(\.c, renamedFrom: "b")])
}

struct TwoFromOne: PersistentRecord {
    var id: RecordID?
    var first = ""
    var second = ""
    static let entity = EntityDescription<TwoFromOne>(
        "note", [AttributeDescription(\.first, renamedFrom: "title"), AttributeDescription(\.second, renamedFrom: "TITLE")])
}

struct RenamedFromID: PersistentRecord {
    var id: RecordID?
    var key = 0
    static let entity = EntityDescription<RenamedFromID>("note", [AttributeDescription(\.key, renamedFrom: "ID")])
}

struct RenamedFromReserved: PersistentRecord {
    var id: RecordID?
    var key = 0
    static let entity = EntityDescription<RenamedFromReserved>(
        "note", [AttributeDescription(\.key, renamedFrom: "folio_key_folded")])
}

struct UpperNote: PersistentRecord {
    var id: RecordID?
    var title = ""
    static let entity = EntityDescription<UpperNote>("NOTE", [AttributeDescription(\.title)])
}

struct MemoFromNote: PersistentRecord {
    var id: RecordID?
    var title = ""
    static let entity = EntityDescription<MemoFromNote>("memo", [AttributeDescription(\.title)], renamedFrom: "note")
}

struct JotFromNote: PersistentRecord {
    var id: RecordID?
    var title = ""
    static let entity = EntityDescription<JotFromNote>("jot", [AttributeDescription(\.title)], renamedFrom: "NOTE")
}

/// Models whose names cannot all hold at once: each is a thrown error naming the problem,
/// before the file is touched.
@Suite("Model name hazards")
struct ModelNameHazardTests {
    @Test func impossibleNamesAreClearErrorsAndTheFileIsUntouched() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("notes.sqlite")
        try makeNotes(path, count: 3)
        let before = try fileContents(path)
        // Each with the errors it may throw (two record types are checked in either order).
        let cases: [([any PersistentRecord.Type], [FolioError])] = [
            ([CaseTwins.self], [.invalidSchema(entity: "twins", reason: "the column 'title' is declared twice (or is 'id')")]),
            (
                [RenameChain.self],
                [.invalidSchema(entity: "note", reason: "the attribute 'c' is renamed from 'b', which the entity still declares")]
            ),
            ([TwoFromOne.self], [.invalidSchema(entity: "note", reason: "two attributes are renamed from 'TITLE'")]),
            (
                [RenamedFromID.self],
                [
                    .invalidSchema(
                        entity: "note", reason: "the attribute 'key' is renamed from 'ID', which the entity still declares")
                ]
            ),
            (
                [RenamedFromReserved.self],
                [.invalidSchema(entity: "note", reason: "'folio_key_folded' uses a reserved prefix (sqlite_ or folio_)")]
            ),
            ([NoteV1.self, UpperNote.self], [.invalidSchema(entity: "NOTE", reason: "two record types use the table name")]),
            (
                [MemoFromNote.self, JotFromNote.self],
                [
                    .invalidSchema(entity: "memo", reason: "'jot' is renamed from 'note' too"),
                    .invalidSchema(entity: "jot", reason: "'memo' is renamed from 'NOTE' too"),
                ]
            ),
        ]
        for (records, expected) in cases {
            let error = folioError { try Store(path: path, model: StoreModel(version: 2, records: records)) }
            #expect(error.map { expected.contains($0) } == true, "\(records): \(String(describing: error))")
            #expect(try fileContents(path) == before)
        }
    }
}
