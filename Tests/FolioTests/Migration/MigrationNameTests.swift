import Foundation
import GRDB
import Testing
@testable import Folio

/// Keyword names: an entity `order` with attributes `select` (indexed) and `group`.
struct KeywordV1: PersistentRecord, Equatable {
    var id: RecordID?
    var select = ""
    var group: String? = nil
    static let entity = EntityDescription<KeywordV1>(
        "order", [AttributeDescription(\.select, indexed: true), AttributeDescription(\.group)])
}

/// `select` renamed `where`, `group` made required with a default, `values` added with an
/// index: every kind of change at once, on keyword names.
struct KeywordV2: PersistentRecord, Equatable {
    var id: RecordID?
    var `where` = ""
    var group = ""
    var values: Int? = nil
    static let entity = EntityDescription<KeywordV2>(
        "order",
        [
            AttributeDescription(\.where, indexed: true, renamedFrom: "select"),
            AttributeDescription(\.group, defaultValue: "none"),
            AttributeDescription(\.values, indexed: true),
        ])
}

/// Names: another program's objects that take a name Folio is about to give, keywords,
/// names that differ only by case.
@Suite("Migration names")
struct MigrationNameTests {
    let directory: ScratchDirectory
    let path: String

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("notes.sqlite")
    }

    /// Expects opening with `model` to throw `expected`, leaving the file as it was.
    func expectRefusal(_ expected: FolioError, _ model: StoreModel, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = try fileContents(path)
        expectError(expected, sourceLocation: sourceLocation) { try Store(path: path, model: model) }
        #expect(try fileContents(path) == before, "the file changed", sourceLocation: sourceLocation)
    }

    @Test func aViewNamedAsANewEntityIsRefusedByName() throws {
        try makeNotes(path, count: 3)
        try sqlite3Shell(path, "CREATE VIEW tag AS SELECT id, title AS name FROM note;")
        // Before: SQLite error 1: view "tag" already exists, from the middle of the migration.
        try expectRefusal(
            .migrationRefused(
                entity: "tag",
                reason:
                    "the name 'tag' of the entity's table is taken by the view 'tag' that Folio did not make; rename or drop it first"
            ),
            StoreModel(version: 2, records: [NoteV1.self, NoteTag.self]))
        // Gone, the migration runs and the other program's objects are kept (a trigger
        // named as the new table is no conflict: triggers have their own names).
        try sqlite3Shell(
            path,
            """
            DROP VIEW tag; CREATE VIEW note_titles AS SELECT title FROM note; CREATE TABLE log (what TEXT);
            CREATE TRIGGER tag AFTER INSERT ON note BEGIN INSERT INTO log VALUES (NEW.title); END;
            CREATE TRIGGER tag_name_index AFTER DELETE ON note BEGIN INSERT INTO log VALUES ('deleted'); END;
            """)
        try Store(path: path, model: StoreModel(version: 2, records: [NoteV1.self, NoteTag.self])).close()
        #expect(try fileValue(path, "SELECT count(*) FROM note_titles") == 3)
        #expect(try fileValue(path, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'tag%'") == 2)
        #expect(try fileValue(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'tag_name_index'") == 1)
    }

    @Test func anIndexOfAnotherTableNamedAsAnEntitysIndexIsRefusedByName() throws {
        try makeNotes(path, count: 3)
        try sqlite3Shell(path, "CREATE TABLE other (x); INSERT INTO other VALUES (1); CREATE INDEX note_rank_index ON other (x);")
        let reason =
            "the name 'note_rank_index' of the entity's index on 'rank' is taken by the index 'note_rank_index' on 'other' that Folio did not make; rename or drop it first"
        // An index an added attribute gets (before: SQLite error "index note_rank_index already exists").
        try expectRefusal(.migrationRefused(entity: "note", reason: reason), StoreModel(version: 2, records: [NoteWithRank.self]))
        // A new entity's index, at a migration and at the same version.
        try sqlite3Shell(path, "DROP INDEX note_rank_index; CREATE INDEX tag_name_index ON other (x);")
        let tagReason =
            "the name 'tag_name_index' of the entity's index on 'name' is taken by the index 'tag_name_index' on 'other' that Folio did not make; rename or drop it first"
        try expectRefusal(
            .migrationRefused(entity: "tag", reason: tagReason), StoreModel(version: 2, records: [NoteV1.self, NoteTag.self]))
        try expectRefusal(
            .schemaMismatch(entity: "tag", differences: [tagReason]),
            StoreModel(version: 1, records: [NoteV1.self, NoteTag.self]))
        // The other program's own index on the entity's table is no conflict.
        try sqlite3Shell(path, "DROP INDEX tag_name_index; CREATE INDEX note_title_score ON note (title, score);")
        try Store(path: path, model: StoreModel(version: 2, records: [NoteWithRank.self])).close()
        #expect(
            try fileValue(path, "SELECT count(*) FROM sqlite_master WHERE name IN ('note_title_score', 'note_rank_index')") == 2)
        #expect(try fileValue(path, "SELECT count(*) FROM other") == 1)
    }

    @Test func keywordNamesThroughEveryChangeAtOnce() throws {
        var store = try Store(path: path, model: StoreModel(version: 1, records: [KeywordV1.self, NoteTag.self]))
        try store.write { tx in
            for i in 0..<5 {
                var row = KeywordV1(select: "s\(i)", group: i % 2 == 0 ? nil : "g\(i)")
                try tx.insert(&row)
            }
            _ = try tx.delete(KeywordV1.self, id: RecordID(5))
        }
        try store.close()
        store = try Store(
            path: path, model: StoreModel(version: 3, records: [KeywordV2.self, NoteV1.self], discarding: [.entity("tag")]))
        let rows = try store.fetch(RecordRequest<KeywordV2>(sortBy: [SortDescriptor(\.id)])).map { $0! }
        #expect(rows.map(\.id!.rawValue) == [1, 2, 3, 4])
        #expect(rows.map(\.where) == ["s0", "s1", "s2", "s3"])
        #expect(rows.map(\.group) == ["none", "g1", "none", "g3"])
        var row = KeywordV2(where: "new", group: "g", values: 1)
        try store.write { tx in try tx.insert(&row) }
        #expect(row.id == RecordID(6), "the AUTOINCREMENT counter came through")
        try store.close()
        let fresh = directory.path("fresh.sqlite")
        try Store(path: fresh, model: StoreModel(version: 3, records: [KeywordV2.self, NoteV1.self])).close()
        let shape = { (file: String) in try fileSchema(file).filter { $0.contains("ON order:") } }
        #expect(try shape(path) == shape(fresh))
        #expect(try fileValue(path, "PRAGMA integrity_check") == "ok")
    }

    @Test func anotherProgramsTriggerThatSpellsTheTableInCapitalsSurvivesARebuild() throws {
        try makeNotes(path, count: 3)
        try sqlite3Shell(
            path,
            """
            CREATE TABLE log (what TEXT);
            CREATE TRIGGER note_log AFTER INSERT ON NOTE BEGIN INSERT INTO log VALUES (NEW.title); END;
            CREATE INDEX note_title_score ON Note (title, score);
            """)
        let objects = { (file: String) in
            try fileSchema(file).filter { $0.contains("note_log") || $0.contains("note_title_score") }
        }
        let before = try objects(path)
        #expect(before.count == 2)
        // Before: the trigger (whose tbl_name is 'NOTE') went with the old table, silently.
        let store = try Store(path: path, model: StoreModel(version: 2, records: [NoteBodyRequired.self]))
        var note = NoteBodyRequired()
        note.title = "after"
        try store.write { tx in try tx.insert(&note) }
        try store.close()
        #expect(try objects(path) == before)
        #expect(try fileValue(path, "SELECT group_concat(what) FROM log") == "after")
    }

    @Test func anEntityWhoseNameChangesCaseOnlyIsRenamed() throws {
        try makeNotes(path, count: 6)
        try sqlite3Shell(path, "DELETE FROM note WHERE id = 6; CREATE VIEW note_titles AS SELECT title FROM note;")
        let before =
            try fileValue(path, "SELECT group_concat(id || title || ifnull(body, '-') || score, ',') FROM note") as String?
        // Before: schemaMismatch "column 'id' is not AUTOINCREMENT", which it was.
        let store = try Store(path: path, model: StoreModel(version: 2, records: [CapitalNote.self]))
        let token = try store.changeToken(for: CapitalNote.self)
        var note = CapitalNote()
        note.title = "after"
        try store.write { tx in try tx.insert(&note) }
        #expect(note.id == RecordID(7), "the AUTOINCREMENT counter came with the table")
        #expect(try store.changeToken(for: CapitalNote.self) != token, "the change triggers follow the new name")
        #expect(try store.count(RecordRequest<CapitalNote>()) == 6)
        try store.close()
        #expect(
            try fileValue(path, "SELECT group_concat(id || title || ifnull(body, '-') || score, ',') FROM Note WHERE id < 7")
                == before)
        #expect(try fileValue(path, "SELECT count(*) FROM note_titles") == 6)
        #expect(try fileValue(path, "SELECT group_concat(name) FROM folio_entities") == "Note")
        let fresh = directory.path("fresh.sqlite")
        try Store(path: fresh, model: StoreModel(version: 2, records: [CapitalNote.self])).close()
        let shape = { (file: String) in try fileSchema(file).filter { $0.contains(" ON Note:") } }
        #expect(try shape(path) == shape(fresh))
        #expect(try !shape(path).isEmpty)
        try Store(path: path, model: StoreModel(version: 2, records: [CapitalNote.self])).close()
    }
}

/// `note` declared `Note`: the entity's name changed case only.
struct CapitalNote: PersistentRecord {
    var id: RecordID?
    var title = ""
    var body: String? = nil
    var score = 0
    static let entity = EntityDescription<CapitalNote>(
        "Note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.body),
            AttributeDescription(\.score, indexed: true),
        ])
}
