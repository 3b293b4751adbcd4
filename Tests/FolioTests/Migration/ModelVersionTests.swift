import Foundation
import GRDB
import Testing
@testable import Folio

/// The model version: what a model may declare, and what a file may say.
@Suite("Model versions")
struct ModelVersionTests {
    let directory: ScratchDirectory

    init() throws {
        directory = try ScratchDirectory()
    }

    @Test func aVersionTheFileCannotKeepIsRefusedByTheModel() throws {
        let path = directory.path("big.sqlite")
        // Before: the file was created at version 2^31 and could never be opened again
        // ("Folio's own tables are damaged: the model version is 2147483648").
        for version in [Int(Int32.max) + 1, Int.max] {
            expectError(.invalidStoreModel(reason: "the version is \(version); versions go up to 2147483647")) {
                try Store(path: path, model: StoreModel(version: version, records: [NoteV1.self]))
            }
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        // The largest one works, and opens again.
        try makeNotes(path, count: 2, version: Int(Int32.max))
        let store = try Store(path: path, model: StoreModel(version: Int(Int32.max), records: [NoteV1.self]))
        #expect(try store.count(RecordRequest<NoteV1>()) == 2)
        try store.close()
    }

    @Test(arguments: ["'2'", "-1", "9223372036854775807", "2147483648", "2.0", "x'02'"])
    func aFileWhoseModelVersionIsNotOneIsRefusedUnchanged(value: String) throws {
        let path = directory.path("file.sqlite")
        try makeNotes(path, count: 2)
        try sqlite3Shell(path, "UPDATE folio_metadata SET value = \(value) WHERE key = 'model_version';")
        let before = try fileContents(path)
        for model in [StoreModel(version: 1, records: [NoteV1.self]), StoreModel(version: 2, records: [NoteWithTag.self])] {
            let error = folioError { try Store(path: path, model: model) }
            guard case .invalidStoreMetadata(path, let reason)? = error else {
                Issue.record("expected invalidStoreMetadata, got \(String(describing: error))")
                continue
            }
            #expect(reason.hasPrefix("the model version is "))
            #expect(try fileContents(path) == before)
        }
    }

    @Test func aFileWithoutAModelVersionIsVersion0() throws {
        let path = directory.path("file.sqlite")
        try makeNotes(path, count: 3)
        try sqlite3Shell(path, "DELETE FROM folio_metadata WHERE key = 'model_version';")
        let store = try Store(path: path, model: StoreModel(version: 2, records: [NoteWithTag.self]))
        #expect(try store.count(RecordRequest<NoteWithTag>()) == 3)
        try store.close()
        #expect(try fileValue(path, "SELECT value FROM folio_metadata WHERE key = 'model_version'") == 2)
    }
}

extension ModelVersionTests {
    @Test func aStepNameWithANulIsRefused() throws {
        let path = directory.path("steps.sqlite")
        try makeNotes(path, count: 2)
        let before = try fileContents(path)
        let runs = StepCounter()
        // Before: both ran, recorded under one key ("migration_step:a"); a later step "a\0z"
        // (or "a") was then taken for run, and never ran.
        let steps = [MigrationStep("a\u{0}x") { _ in runs.tick() }, MigrationStep("a\u{0}y") { _ in runs.tick() }]
        expectError(.invalidStoreModel(reason: "the migration step name \"a\\0x\" contains a NUL character")) {
            try Store(path: path, model: StoreModel(version: 2, records: [NoteV1.self], steps: steps))
        }
        #expect(runs.value == 0)
        #expect(try fileContents(path) == before)
    }
}
