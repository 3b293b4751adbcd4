import Foundation
import GRDB
import Testing
@testable import Folio

/// A generated column another program added to an entity's table: `pragma_table_info`
/// does not list it, so a rebuild (which copies the declared columns) dropped it, silently.
@Suite("Generated columns of other programs")
struct GeneratedColumnTests {
    @Test func aRebuildThatWouldDropAGeneratedColumnIsRefusedOtherwiseItStays() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("notes.sqlite")
        try makeNotes(path, count: 4)
        try sqlite3Shell(
            path,
            """
            ALTER TABLE note ADD COLUMN double_score INTEGER GENERATED ALWAYS AS (score * 2) VIRTUAL;
            CREATE VIEW doubled AS SELECT id, double_score FROM note;
            """)
        let before = try fileContents(path)
        expectError(
            .migrationRefused(
                entity: "note",
                reason:
                    "the table 'note' must be rebuilt, which would drop its generated column 'double_score' (no attribute declares it); drop it first, or declare what it holds"
            )
        ) {
            try Store(path: path, model: StoreModel(version: 2, records: [NoteBodyRequired.self]))
        }
        #expect(try fileContents(path) == before)
        // A migration without a rebuild keeps it.
        let store = try Store(path: path, model: StoreModel(version: 2, records: [NoteWithTag.self]))
        var note = NoteWithTag()
        note.score = 21
        try store.write { tx in try tx.insert(&note) }
        try store.close()
        #expect(try fileValue(path, "SELECT group_concat(double_score) FROM doubled") == "0,2,4,6,42")
    }
}
