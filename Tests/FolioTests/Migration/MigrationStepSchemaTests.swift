import Foundation
import GRDB
import Testing
@testable import Folio

/// Custom steps that change the schema themselves: the contract phase starts from the
/// tables the steps left, never from the plan made before them.
@Suite("Migration steps that change the schema")
struct MigrationStepSchemaTests {
    let directory: ScratchDirectory
    let path: String

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("notes.sqlite")
    }

    /// `id | title | score` of every note, by rowid, read on a connection of its own.
    func notes() throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try String.fetchAll(db, sql: "SELECT id || '|' || title || '|' || score FROM note ORDER BY id")
        }
    }

    /// The `CREATE TABLE` text of `table` in `file`.
    func tableSQL(_ table: String, in file: String) throws -> String? {
        try fileValue(file, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '\(table)'")
    }

    @Test func aStepThatDropsTheRemovedColumnItselfMigrates() throws {
        try makeNotes(path, count: 9)
        let before = try notes()
        let bodies: [String] = try fileValue(path, "SELECT group_concat(ifnull(body, '-'), ',') FROM note").map { [$0] } ?? []
        let move = MigrationStep("move body out, then drop it") { db in
            try db.execute(sql: "CREATE TABLE body_archive AS SELECT id, body FROM note")
            try db.execute(sql: "ALTER TABLE note DROP COLUMN body")
        }
        // Before the fix: SQLite error "no such column: body" from the contract phase.
        let store = try Store(path: path, model: StoreModel(version: 2, records: [NoteWithoutBody.self], steps: [move]))
        let fetched = try store.fetch(RecordRequest<NoteWithoutBody>(sortBy: [SortDescriptor(\.id)])).map { $0! }
        #expect(fetched.map { "\($0.id!.rawValue)|\($0.title)|\($0.score)" } == before)
        try store.close()
        #expect(try notes() == before)
        let archived: String? = try fileValue(path, "SELECT group_concat(ifnull(body, '-'), ',') FROM body_archive")
        #expect([archived ?? ""] == bodies)
        #expect(try fileValue(path, "PRAGMA integrity_check") == "ok")
        let fresh = directory.path("fresh.sqlite")
        try Store(path: fresh, model: StoreModel(version: 2, records: [NoteWithoutBody.self])).close()
        #expect(try tableSQL("note", in: path) == tableSQL("note", in: fresh))
        try Store(path: path, model: StoreModel(version: 2, records: [NoteWithoutBody.self], steps: [move])).close()
    }

    @Test func aStepThatDropsTheRemovedEntityItselfMigrates() throws {
        try makeNotes(path, count: 4, extra: [NoteTag.self])
        try sqlite3Shell(path, "INSERT INTO tag (name) VALUES ('red'), ('blue');")
        let move = MigrationStep("tags into titles, then drop tag") { db in
            try db.execute(sql: "UPDATE note SET title = title || ' ' || (SELECT group_concat(name, '+') FROM tag)")
            try db.execute(sql: "DROP TABLE tag")
        }
        // Before the fix: SQLite error "no such table: tag"; no opt-in is needed, the step
        // moved the rows out.
        let store = try Store(path: path, model: StoreModel(version: 2, records: [NoteV1.self], steps: [move]))
        #expect(
            try store.fetch(RecordRequest<NoteV1>(sortBy: [SortDescriptor(\.id)])).map { $0!.title }
                == (0..<4).map { "note \($0) red+blue" })
        try store.close()
        #expect(try fileValue(path, "SELECT count(*) FROM folio_entities WHERE name = 'tag'") == 0)
        #expect(try fileValue(path, "SELECT count(*) FROM sqlite_master WHERE tbl_name = 'tag'") == 0)
    }

    @Test(arguments: [false, true])
    func aColumnAStepAddedIsNeverDroppedSilently(rebuilt: Bool) throws {
        try makeNotes(path, count: 6)
        let before = try fileContents(path)
        let add = MigrationStep("add extra") { db in
            try db.execute(sql: "ALTER TABLE note ADD COLUMN extra TEXT")
            try db.execute(sql: "UPDATE note SET extra = 'keep ' || id")
        }
        // NoteBodyRequired rebuilds the table (which copied only declared columns: the six
        // values were lost without a word); NoteWithTag does not (a schema mismatch).
        let records: [any PersistentRecord.Type] = rebuilt ? [NoteBodyRequired.self] : [NoteWithTag.self]
        expectError(.migrationDiscardsData(entity: "note", attribute: "extra", rows: 6)) {
            try Store(path: path, model: StoreModel(version: 2, records: records, steps: [add]))
        }
        #expect(try fileContents(path) == before, "the file changed")
        // With the opt-in, dropped like any other removed attribute.
        let store = try Store(
            path: path,
            model: StoreModel(version: 2, records: records, discarding: [.attribute("extra", of: "note")], steps: [add]))
        try store.close()
        #expect(try fileValue(path, "SELECT count(*) FROM pragma_table_info('note') WHERE name = 'extra'") == 0)
        #expect(try notes() == (0..<6).map { "\($0 + 1)|note \($0)|\($0)" })
    }

    @Test func aStepThatDropsADeclaredColumnIsRefused() throws {
        try makeNotes(path, count: 3)
        let before = try fileContents(path)
        let drop = MigrationStep("drop title") { db in try db.execute(sql: "ALTER TABLE note DROP COLUMN title") }
        expectError(
            .migrationRefused(
                entity: "note",
                reason:
                    "a migration step removed or renamed the column 'title', which the entity declares; its values would be lost")
        ) {
            try Store(path: path, model: StoreModel(version: 2, records: [NoteWithTag.self], steps: [drop]))
        }
        #expect(try fileContents(path) == before)
        let dropTable = MigrationStep("drop note") { db in try db.execute(sql: "DROP TABLE note") }
        expectError(
            .migrationRefused(
                entity: "note",
                reason: "a migration step dropped its table 'note', which the model declares; its rows would be lost")
        ) {
            try Store(path: path, model: StoreModel(version: 2, records: [NoteWithTag.self], steps: [dropTable]))
        }
        #expect(try fileContents(path) == before)
    }

    @Test func aStepThatRebuildsADeclaredTableByHandIsFollowed() throws {
        try makeNotes(path, count: 5)
        let before = try notes()
        // The 12-step procedure by hand: `body` dropped and `score` made nullable again.
        let rebuild = MigrationStep("rebuild note by hand") { db in
            try db.execute(
                sql: """
                    CREATE TABLE note_new (id INTEGER PRIMARY KEY, title TEXT NOT NULL, score INTEGER, body TEXT, kept TEXT);
                    INSERT INTO note_new (id, title, score, body) SELECT id, title, score, body FROM note;
                    DROP TABLE note;
                    ALTER TABLE note_new RENAME TO note;
                    """)
        }
        let store = try Store(
            path: path,
            model: StoreModel(
                version: 2, records: [NoteWithoutBody.self], discarding: [.attribute("body", of: "note")], steps: [rebuild]))
        var note = NoteWithoutBody()
        note.title = "after"
        try store.write { tx in try tx.insert(&note) }
        try store.close()
        #expect(try notes() == before + ["6|after|0"])
        #expect(try tableSQL("note", in: path)?.contains("AUTOINCREMENT") == true)
        #expect(try fileValue(path, "PRAGMA integrity_check") == "ok")
    }
}
