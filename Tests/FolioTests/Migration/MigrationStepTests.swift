import Foundation
import GRDB
import Testing
@testable import Folio

/// `title` split into `first` and `last`; `title` removed.
struct NoteSplit: PersistentRecord {
    var id: RecordID?
    var body: String? = nil
    var score = 0
    var first = ""
    var last = ""
    static let entity = EntityDescription<NoteSplit>(
        "note",
        [
            AttributeDescription(\.body),
            AttributeDescription(\.score, indexed: true),
            AttributeDescription(\.first),
            AttributeDescription(\.last),
        ])
}

struct StepFailure: Error, CustomStringConvertible {
    var description: String { "the step's own error" }
}

/// Custom migration steps: run once per file, in order, inside the one transaction, and a
/// failure anywhere leaves the file as it was.
@Suite("Migration steps")
struct MigrationStepTests {
    let directory: ScratchDirectory
    let path: String

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("notes.sqlite")
    }

    func recorded(_ name: String) throws -> Int? {
        try fileValue(path, "SELECT value FROM folio_metadata WHERE key = 'migration_step:\(name)'")
    }

    @Test func aStepSeesTheOldAndTheNewColumnsAndRunsOnce() throws {
        try makeNotes(path, count: 30)
        let runs = StepCounter()
        let split = MigrationStep("split title") { db in
            runs.tick()
            // Both are there: `title` (removed by this version) and `first`/`last` (added).
            try db.execute(
                sql: """
                    UPDATE note SET first = substr(title, 1, instr(title, ' ') - 1),
                                    last = substr(title, instr(title, ' ') + 1)
                    """)
        }
        let model = StoreModel(
            version: 2, records: [NoteSplit.self], discarding: [.attribute("title", of: "note")], steps: [split])
        var store = try Store(path: path, model: model)
        let notes = try store.fetch(RecordRequest<NoteSplit>(sortBy: [SortDescriptor(\.score)])).map { $0! }
        #expect(notes.map(\.first) == Array(repeating: "note", count: 30))
        #expect(notes.map(\.last) == (0..<30).map(String.init))
        #expect(runs.value == 1)
        try store.close()
        #expect(try recorded("split title") == 2)
        store = try Store(path: path, model: model)
        try store.close()
        #expect(runs.value == 1, "recorded: never again on this file")
    }

    @Test func aNewFileRecordsEveryStepWithoutRunningIt() throws {
        let runs = StepCounter()
        let model = StoreModel(
            version: 3, records: [NoteV1.self],
            steps: [MigrationStep("one") { _ in runs.tick() }, MigrationStep("two") { _ in runs.tick() }])
        try Store(path: path, model: model).close()
        #expect(runs.value == 0)
        #expect(try recorded("one") == 3)
        #expect(try recorded("two") == 3)
    }

    @Test func stepsRunInOrderAndOnlyTheNewOnesAtTheNextVersion() throws {
        try makeNotes(path, count: 1)
        func step(_ name: String) -> MigrationStep {
            MigrationStep(name) { db in
                try db.execute(sql: "UPDATE note SET body = ifnull(body, '') || ?", arguments: [name])
            }
        }
        try Store(path: path, model: StoreModel(version: 2, records: [NoteV1.self], steps: [step("a"), step("b")])).close()
        let store = try Store(
            path: path, model: StoreModel(version: 3, records: [NoteV1.self], steps: [step("a"), step("b"), step("c")]))
        #expect(try store.fetch(RecordRequest<NoteV1>()).map { $0!.body } == ["abc"])
    }

    @Test func aFailingStepLeavesTheFileUnchangedAndIsNamed() throws {
        try makeNotes(path, count: 30, extra: [NoteTag.self])
        let before = try fileContents(path)
        let model = StoreModel(
            version: 2, records: [NoteSplit.self], discarding: [.attribute("title", of: "note"), .entity("tag")],
            steps: [
                MigrationStep("rewrite every row") { db in try db.execute(sql: "UPDATE note SET score = score + 1000") },
                MigrationStep("fill the new names") { db in
                    try db.execute(sql: "UPDATE note SET first = 'x', last = 'y'")
                    throw StepFailure()
                },
                MigrationStep("never reached") { _ in Issue.record("a step after a failed one ran") },
            ])
        expectError(.migrationStepFailed(step: "fill the new names", reason: "the step's own error")) {
            try Store(path: path, model: model)
        }
        #expect(try fileContents(path) == before, "same tables, rows and schema")
        // An SQL error in a step is named too, with SQLite's message.
        let sqlError = folioError {
            try Store(
                path: path,
                model: StoreModel(
                    version: 2, records: [NoteV1.self],
                    steps: [MigrationStep("bad sql") { db in try db.execute(sql: "UPDATE note SET missing_column = 1") }]))
        }
        guard case .migrationStepFailed("bad sql", let reason)? = sqlError else {
            Issue.record("expected migrationStepFailed, got \(String(describing: sqlError))")
            return
        }
        #expect(reason.contains("no such column: missing_column"))
        #expect(try fileContents(path) == before)
        // Fixed, the plan runs whole.
        let store = try Store(path: path, model: StoreModel(version: 2, records: [NoteV1.self]))
        #expect(try store.count(RecordRequest<NoteV1>()) == 30)
    }

    @Test func aStepMaySpareTheOptInByMovingTheData() throws {
        try makeNotes(path, count: 30)
        // `body` is removed; a step moves what it held into `title` and clears it.
        let model = StoreModel(
            version: 2, records: [NoteWithoutBodyOptionalTitle.self],
            steps: [
                MigrationStep("body into title") { db in
                    try db.execute(sql: "UPDATE note SET title = title || ' / ' || body, body = NULL WHERE body IS NOT NULL")
                }
            ])
        let store = try Store(path: path, model: model)
        let titles = try store.fetch(RecordRequest<NoteWithoutBodyOptionalTitle>(sortBy: [SortDescriptor(\.score)])).map {
            $0!.title
        }
        #expect(titles[1] == "note 1 / body 1")
        #expect(titles[0] == "note 0")
    }

    @Test func aNewStepWithoutANewVersionIsRefused() throws {
        try makeNotes(path, count: 3, version: 2)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        expectError(
            .invalidStoreModel(
                reason:
                    "the migration step 'late' has not run on this file, which is already at model version 2: a new step needs a new model version"
            )
        ) {
            try Store(path: path, model: StoreModel(version: 2, records: [NoteV1.self], steps: [MigrationStep("late") { _ in }]))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func aStepThatCommitsUndoesTheWholeMigration() throws {
        try makeNotes(path, count: 3)
        let before = try fileContents(path)
        let error = folioError {
            try Store(
                path: path,
                model: StoreModel(
                    version: 2, records: [NoteV1.self],
                    steps: [MigrationStep("commits") { db in try db.execute(sql: "COMMIT; BEGIN IMMEDIATE") }]))
        }
        guard case .migrationStepFailed("commits", let reason)? = error else {
            Issue.record("expected migrationStepFailed, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("COMMIT"), "\(reason)")
        #expect(try fileContents(path) == before, "the commit was turned into a rollback of everything")
    }

    @Test func aStepThatRollsBackAndBeginsAgainFails() throws {
        try makeNotes(path, count: 3)
        let before = try fileContents(path)
        let model = StoreModel(
            version: 2, records: [NoteWithTag.self],
            steps: [MigrationStep("restarts") { db in try db.execute(sql: "ROLLBACK; BEGIN IMMEDIATE") }])
        let error = folioError { try Store(path: path, model: model) }
        guard case .migrationStepFailed("restarts", _)? = error else {
            Issue.record("expected migrationStepFailed, got \(String(describing: error))")
            return
        }
        #expect(try fileContents(path) == before, "the rest of the migration did not commit on its own")
    }
}

/// `body` removed, `title` optional.
struct NoteWithoutBodyOptionalTitle: PersistentRecord {
    var id: RecordID?
    var title: String? = nil
    var score = 0
    static let entity = EntityDescription<NoteWithoutBodyOptionalTitle>(
        "note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.score, indexed: true),
        ])
}
