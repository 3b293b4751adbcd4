import Foundation
import GRDB
import Testing
@testable import Folio

/// Another program's foreign keys into an entity's table, across a migration.
@Suite("Foreign keys of other programs")
struct ForeignKeyMigrationTests {
    @Test func aForeignKeyWhoseParentColumnIsRemovedIsARefusalByName() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("notes.sqlite")
        try makeNotes(path, count: 3)
        try sqlite3Shell(
            path,
            """
            CREATE UNIQUE INDEX note_body_unique ON note (body);
            CREATE TABLE comment (id INTEGER PRIMARY KEY, note_body TEXT REFERENCES note (body));
            INSERT INTO comment (note_body) VALUES ('body 1');
            """)
        let before = try fileContents(path)
        // Before: SQLite error 1 "foreign key mismatch" from PRAGMA foreign_key_check.
        expectError(
            .migrationRefused(
                entity: "comment",
                reason:
                    "after the migration, a foreign key of 'comment' no longer matches its parent 'note' (SQLite: foreign key mismatch - \"comment\" referencing \"note\"): the columns it references must exist and be unique; change it in a MigrationStep"
            )
        ) {
            try Store(
                path: path,
                model: StoreModel(version: 2, records: [NoteWithoutBody.self], discarding: [.attribute("body", of: "note")]))
        }
        #expect(try fileContents(path) == before)
        // A step that takes the foreign key away lets it run.
        let unlink = MigrationStep("comment without its foreign key") { db in
            try db.execute(
                sql: """
                    CREATE TABLE comment_new (id INTEGER PRIMARY KEY, note_body TEXT);
                    INSERT INTO comment_new SELECT id, note_body FROM comment;
                    DROP TABLE comment;
                    ALTER TABLE comment_new RENAME TO comment;
                    """)
        }
        try Store(
            path: path,
            model: StoreModel(
                version: 2, records: [NoteWithoutBody.self], discarding: [.attribute("body", of: "note")], steps: [unlink])
        ).close()
        #expect(try fileValue(path, "SELECT note_body FROM comment") == "body 1")
        #expect(try fileValue(path, "PRAGMA integrity_check") == "ok")
    }
}
