import Foundation
import GRDB
import Testing
@testable import Folio

/// Views and triggers of another program that Folio's connection cannot compile even
/// before the migration — they call a function only that program defines, or name a table
/// it has not made yet — are not the migration's doing: they do not refuse it, and stay.
@Suite("Other programs' objects that never compiled here")
struct OtherProgramsObjectsTests {
    @Test func aViewOrTriggerThatDidNotCompileBeforeDoesNotRefuseTheMigration() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("notes.sqlite")
        try makeNotes(path, count: 3)
        try sqlite3Shell(
            path,
            """
            CREATE VIEW shouting AS SELECT app_upper(title) AS loud FROM note;
            CREATE VIEW later AS SELECT * FROM table_made_later;
            CREATE TABLE log (what TEXT);
            CREATE TABLE other (x TEXT);
            CREATE TRIGGER other_log AFTER INSERT ON other BEGIN INSERT INTO log VALUES (app_upper(NEW.x)); END;
            """)
        let objects = { (file: String) in
            try fileSchema(file).filter { $0.contains("shouting") || $0.contains("later") || $0.contains("other_log") }
        }
        let before = try objects(path)
        #expect(before.count == 3)
        // Before: migrationRefused "the view 'later' … no longer compiles (no such table: …)".
        let store = try Store(path: path, model: StoreModel(version: 2, records: [NoteBodyRequired.self]))
        #expect(try store.count(RecordRequest<NoteBodyRequired>()) == 3)
        try store.close()
        #expect(try objects(path) == before)
        // What the migration breaks is still refused, beside them.
        try sqlite3Shell(path, "CREATE VIEW bodies AS SELECT body FROM note;")
        let fileBefore = try fileContents(path)
        let error = folioError {
            try Store(
                path: path,
                model: StoreModel(version: 3, records: [NoteWithoutBody.self], discarding: [.attribute("body", of: "note")]))
        }
        guard case .migrationRefused("bodies", let reason)? = error else {
            Issue.record("expected migrationRefused of 'bodies', got \(String(describing: error))")
            return
        }
        #expect(reason.contains("no such column: body"), "\(reason)")
        #expect(try fileContents(path) == fileBefore)
    }

    /// Folio's own statements of a migration that another program's objects make fail:
    /// refused by name, the file unchanged. Before: SQLite's constraint or schema error.
    @Test func statementsThatOtherProgramsObjectsMakeFailAreRefusalsByName() throws {
        let directory = try ScratchDirectory()
        let cases: [(setup: String, records: [any PersistentRecord.Type], entity: String, reason: String)] = [
            (
                "CREATE UNIQUE INDEX note_body_unique ON note (body);", [NoteBodyRequired.self], "note",
                "filling the NULLs of 'body' with its default value fails (UNIQUE constraint failed: note.body): a unique index (declared or another program's) or a trigger is in the way; give those rows values in a MigrationStep, or change the index or trigger"
            ),
            (
                "CREATE TABLE audit (x NOT NULL); CREATE TRIGGER note_audit AFTER UPDATE ON note BEGIN INSERT INTO audit VALUES (NULL); END;",
                [NoteBodyRequired.self], "note",
                "filling the NULLs of 'body' with its default value fails (NOT NULL constraint failed: audit.x): a unique index (declared or another program's) or a trigger is in the way; give those rows values in a MigrationStep, or change the index or trigger"
            ),
            (
                "CREATE VIEW later AS SELECT * FROM table_made_later;", [NoteRenamedAttributes.self], "note",
                "renaming the column 'title' to 'headline' fails (error in view later: no such table: main.table_made_later): another program's index, trigger or view is in the way; change or drop it first"
            ),
            (
                "CREATE VIEW later AS SELECT * FROM table_made_later;", [RenamedNote.self], "memo",
                "renaming the table 'note' to 'memo' fails (error in view later: no such table: main.table_made_later): another program's index, trigger or view is in the way; change or drop it first"
            ),
        ]
        for (index, item) in cases.enumerated() {
            let path = directory.path("notes-\(index).sqlite")
            try makeNotes(path, count: 9)
            try sqlite3Shell(path, item.setup)
            let before = try fileContents(path)
            expectError(.migrationRefused(entity: item.entity, reason: item.reason)) {
                try Store(path: path, model: StoreModel(version: 2, records: item.records))
            }
            #expect(try fileContents(path) == before)
        }
    }

    @Test func aDeclaredUniqueAttributeMadeRequiredWhoseDefaultWouldRepeatIsRefusedByName() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("unique.sqlite")
        var store = try Store(path: path, model: StoreModel(version: 1, records: [UniqueCodeV1.self]))
        try store.write { tx in
            for _ in 0..<3 {
                var row = UniqueCodeV1()
                try tx.insert(&row)
            }
        }
        try store.close()
        let before = try fileContents(path)
        expectError(
            .migrationRefused(
                entity: "coded",
                reason:
                    "filling the NULLs of 'code' with its default value fails (UNIQUE constraint failed: coded.code): a unique index (declared or another program's) or a trigger is in the way; give those rows values in a MigrationStep, or change the index or trigger"
            )
        ) {
            try Store(path: path, model: StoreModel(version: 2, records: [UniqueCodeV2.self]))
        }
        #expect(try fileContents(path) == before)
        // Given distinct values in a step, it runs.
        let distinct = MigrationStep("distinct codes") { db in try db.execute(sql: "UPDATE coded SET code = 'c' || id") }
        store = try Store(path: path, model: StoreModel(version: 2, records: [UniqueCodeV2.self], steps: [distinct]))
        #expect(
            try store.fetch(RecordRequest<UniqueCodeV2>(sortBy: [SortDescriptor(\.id)])).map { $0!.code } == ["c1", "c2", "c3"])
        try store.close()
    }
}

/// An optional unique code…
struct UniqueCodeV1: PersistentRecord {
    var id: RecordID?
    var code: String? = nil
    static let entity = EntityDescription<UniqueCodeV1>("coded", [AttributeDescription(\.code, unique: true)])
}

/// …made required, with a default that would repeat.
struct UniqueCodeV2: PersistentRecord {
    var id: RecordID?
    var code = ""
    static let entity = EntityDescription<UniqueCodeV2>(
        "coded", [AttributeDescription(\.code, unique: true, defaultValue: "none")])
}
