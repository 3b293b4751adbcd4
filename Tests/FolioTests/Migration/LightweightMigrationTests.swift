import Foundation
import GRDB
import Testing
@testable import Folio

/// Each kind of change Folio infers, on a file of model version 1 opened with version 2:
/// the data that must stay stays (rowids included), the result is exactly the schema a
/// fresh file of version 2 gets, and every refusal leaves the file as it was.
@Suite("Lightweight migration")
struct LightweightMigrationTests {
    let directory: ScratchDirectory
    let path: String

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("notes.sqlite")
    }

    func open(_ version: Int, _ records: [any PersistentRecord.Type], discarding: [StoreModel.DiscardedData] = []) throws -> Store
    {
        try Store(path: path, model: StoreModel(version: version, records: records, discarding: discarding))
    }

    /// The schema of a new file of the model.
    func freshSchema(_ version: Int, _ records: [any PersistentRecord.Type]) throws -> [String] {
        let fresh = directory.path("fresh-\(UUID().uuidString).sqlite")
        try Store(path: fresh, model: StoreModel(version: version, records: records)).close()
        return try fileSchema(fresh)
    }

    /// The table's root page: a rebuilt table has a new one.
    func rootPage(_ table: String) throws -> Int? {
        try fileValue(path, "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = '\(table)'")
    }

    /// Expects opening with the model to throw `expected` and to leave every table, row and
    /// schema object of the file as it was.
    func expectRefusal(
        _ expected: FolioError, _ version: Int, _ records: [any PersistentRecord.Type],
        discarding: [StoreModel.DiscardedData] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = try fileContents(path)
        expectError(expected, sourceLocation: sourceLocation) { try open(version, records, discarding: discarding) }
        #expect(try fileContents(path) == before, "the file changed", sourceLocation: sourceLocation)
    }

    // MARK: Attributes added

    @Test func anOptionalAttributeAddedIsAColumnAddedInPlace() throws {
        try makeNotes(path, count: 30)
        let root = try rootPage("note")
        let store = try open(2, [NoteWithTag.self])
        let notes = try store.fetch(RecordRequest<NoteWithTag>(sortBy: [SortDescriptor(\.score)])).map { $0! }
        #expect(notes.map(\.title) == (0..<30).map { "note \($0)" })
        #expect(notes.map(\.id) == (1...30).map { RecordID(Int64($0)) })
        #expect(notes.allSatisfy { $0.tag == nil })
        try store.write { tx in
            var note = notes[0]
            note.tag = "tagged"
            try tx.update(note)
        }
        #expect(try store.fetch(RecordRequest<NoteWithTag>(predicate: #Predicate { $0.tag != nil })).count == 1)
        try store.close()
        #expect(try rootPage("note") == root, "an added optional column needs no rebuild")
        #expect(try fileSchema(path) == freshSchema(2, [NoteWithTag.self]))
        #expect(try fileValue(path, "SELECT value FROM folio_metadata WHERE key = 'model_version'") == 2)
        #expect(
            try fileValue(path, "SELECT version_hash FROM folio_entities WHERE name = 'note'")
                == NoteWithTag.entity.versionHash)
    }

    @Test func aRequiredAttributeAddedGetsItsDefaultInEveryRow() throws {
        try makeNotes(path, count: 30)
        let root = try rootPage("note")
        let store = try open(2, [NoteWithRank.self])
        let notes = try store.fetch(RecordRequest<NoteWithRank>(sortBy: [SortDescriptor(\.score)])).map { $0! }
        #expect(notes.count == 30)
        #expect(notes.allSatisfy { $0.rank == 7 })
        #expect(notes.map(\.body) == (0..<30).map { $0 % 3 == 0 ? nil : "body \($0)" })
        try store.close()
        #expect(try rootPage("note") == root, "added NOT NULL DEFAULT 7: no rebuild, no row written")
        let fresh = try freshSchema(2, [NoteWithRank.self]).map {
            $0.replacingOccurrences(of: "\"rank\" INTEGER NOT NULL)", with: "\"rank\" INTEGER NOT NULL DEFAULT 7)")
        }
        #expect(try fileSchema(path) == fresh)
        // Another program inserting without the column gets the default, not an error.
        _ = try sqlite3Shell(path, "INSERT INTO note (title, body, score) VALUES ('shell', NULL, 99);")
        #expect(try fileValue(path, "SELECT rank FROM note WHERE title = 'shell'") == 7)
    }

    @Test func aRequiredAttributeAddedWithoutADefaultIsRefusedWhenRowsExist() throws {
        try makeNotes(path, count: 30)
        try expectRefusal(.missingDefaultValue(entity: "note", attribute: "rank", rows: 30), 2, [NoteWithRankNoDefault.self])
        // Still version 1, still usable by version 1.
        let old = try open(1, [NoteV1.self])
        #expect(try old.count(RecordRequest<NoteV1>()) == 30)
        try old.close()
    }

    @Test func aRequiredAttributeAddedWithoutADefaultToAnEmptyTableIsFine() throws {
        try makeNotes(path, count: 0)
        let store = try open(2, [NoteWithRankNoDefault.self])
        try store.write { tx in
            var note = NoteWithRankNoDefault()
            note.rank = 3
            try tx.insert(&note)
        }
        #expect(try store.fetch(RecordRequest<NoteWithRankNoDefault>()).map { $0!.rank } == [3])
    }

    // MARK: Attributes removed

    @Test func anAttributeRemovedThatHoldsDataNeedsTheOptIn() throws {
        try makeNotes(path, count: 30)
        try expectRefusal(
            .migrationDiscardsData(entity: "note", attribute: "body", rows: 20), 2, [NoteWithoutBody.self])
        // Another attribute's opt-in, or another entity's, is not this one's.
        try expectRefusal(
            .migrationDiscardsData(entity: "note", attribute: "body", rows: 20), 2, [NoteWithoutBody.self],
            discarding: [.attribute("title", of: "note"), .attribute("body", of: "tag"), .entity("note")])
        let store = try open(2, [NoteWithoutBody.self], discarding: [.attribute("body", of: "note")])
        #expect(
            try store.fetch(RecordRequest<NoteWithoutBody>(sortBy: [SortDescriptor(\.score)])).map { $0!.title }
                == (0..<30).map { "note \($0)" })
        try store.close()
        #expect(try fileSchema(path) == freshSchema(2, [NoteWithoutBody.self]))
    }

    @Test func anAttributeRemovedThatHoldsOnlyNullsGoesWithoutTheOptIn() throws {
        try makeNotes(path, count: 30)
        let store = try open(1, [NoteV1.self])
        try store.write { tx in try tx.database.execute(sql: "UPDATE note SET body = NULL") }
        try store.close()
        let migrated = try open(2, [NoteWithoutBody.self])
        #expect(try migrated.count(RecordRequest<NoteWithoutBody>()) == 30)
    }

    // MARK: Optional and required

    @Test func anAttributeMadeRequiredGetsItsDefaultWhereItWasNull() throws {
        try makeNotes(path, count: 30)
        try expectRefusal(
            .missingDefaultValue(entity: "note", attribute: "body", rows: 10), 2, [NoteBodyRequiredNoDefault.self])
        let store = try open(2, [NoteBodyRequired.self])
        let bodies = try store.fetch(RecordRequest<NoteBodyRequired>(sortBy: [SortDescriptor(\.score)])).map { $0!.body }
        #expect(bodies == (0..<30).map { $0 % 3 == 0 ? "(empty)" : "body \($0)" })
        try store.close()
        #expect(try fileSchema(path) == freshSchema(2, [NoteBodyRequired.self]))
    }

    @Test func anAttributeMadeOptionalKeepsItsValuesAndAcceptsNil() throws {
        try makeNotes(path, count: 30)
        let store = try open(2, [NoteTitleOptional.self])
        try store.write { tx in
            var note = NoteTitleOptional()
            note.score = 100
            try tx.insert(&note)
        }
        let titles = try store.fetch(RecordRequest<NoteTitleOptional>(sortBy: [SortDescriptor(\.score)])).map { $0!.title }
        #expect(titles == (0..<30).map { "note \($0)" } + [nil])
        try store.close()
        #expect(try fileSchema(path) == freshSchema(2, [NoteTitleOptional.self]))
    }

    // MARK: Indexes

    @Test func indexesAddedRemovedAndMadeUnique() throws {
        try makeNotes(path, count: 30)
        let root = try rootPage("note")
        var store = try open(2, [NoteTitleUnique.self])
        try store.close()
        #expect(try rootPage("note") == root, "indexes change without a rebuild")
        #expect(try fileSchema(path) == freshSchema(2, [NoteTitleUnique.self]))
        let duplicate = folioError {
            try open(2, [NoteTitleUnique.self]).write { tx in
                try tx.database.execute(sql: "INSERT INTO note (title, score) VALUES ('note 1', 1)")
            }
        }
        guard case .sqlite(2067, let message, _, _)? = duplicate else {
            Issue.record("expected a unique constraint failure, got \(String(describing: duplicate))")
            return
        }
        #expect(message.contains("UNIQUE constraint failed: note.title"))
        // Back: the unique index removed, the score index again, and then unique.
        store = try open(3, [NoteV1.self])
        try store.close()
        #expect(try fileSchema(path) == freshSchema(3, [NoteV1.self]))
        store = try open(4, [NoteScoreUnique.self])
        try store.close()
        #expect(try fileSchema(path) == freshSchema(4, [NoteScoreUnique.self]))
    }

    @Test func aUniqueIndexOverDuplicatesIsRefused() throws {
        try makeNotes(path, count: 30)
        let store = try open(1, [NoteV1.self])
        try store.write { tx in try tx.database.execute(sql: "UPDATE note SET title = 'same' WHERE score IN (3, 4, 5)") }
        try store.close()
        let before = try fileContents(path)
        let error = folioError { try open(2, [NoteTitleUnique.self]) }
        guard case .migrationRefused(let entity, let reason)? = error else {
            Issue.record("expected migrationRefused, got \(String(describing: error))")
            return
        }
        #expect(entity == "note")
        #expect(reason.contains("'title' is declared unique, but 1 of its values appear in more than one row"))
        #expect(try fileContents(path) == before)
    }

    // MARK: Entities

    @Test func anEntityAddedLeavesTheOthersAndTheirCachesAlone() throws {
        try makeNotes(path, count: 30)
        let root = try rootPage("note")
        var store = try open(1, [NoteV1.self])
        let token = try store.changeToken(for: NoteV1.self)
        try store.close()
        store = try open(2, [NoteV1.self, NoteTag.self])
        #expect(try store.changeToken(for: NoteV1.self) == token, "an unchanged entity keeps its change token")
        try store.write { tx in
            var tag = NoteTag()
            tag.name = "swift"
            try tx.insert(&tag)
        }
        #expect(try store.fetch(RecordRequest<NoteTag>()).map { $0!.name } == ["swift"])
        try store.close()
        #expect(try rootPage("note") == root)
        #expect(try fileSchema(path) == freshSchema(2, [NoteV1.self, NoteTag.self]))
    }

    @Test func anEntityRemovedThatHoldsRowsNeedsTheOptIn() throws {
        try makeNotes(path, count: 30, extra: [NoteTag.self])
        var store = try open(1, [NoteV1.self, NoteTag.self])
        try store.write { tx in
            for name in ["a", "b"] {
                var tag = NoteTag()
                tag.name = name
                try tx.insert(&tag)
            }
        }
        try store.close()
        try expectRefusal(.migrationDiscardsData(entity: "tag", attribute: nil, rows: 2), 2, [NoteV1.self])
        try expectRefusal(
            .migrationDiscardsData(entity: "tag", attribute: nil, rows: 2), 2, [NoteV1.self],
            discarding: [.attribute("name", of: "tag")])
        store = try open(2, [NoteV1.self], discarding: [.entity("tag")])
        #expect(try store.count(RecordRequest<NoteV1>()) == 30)
        try store.close()
        let schema = try fileSchema(path)
        #expect(!schema.contains { $0.contains("tag") }, "table, index and triggers are gone: \(schema)")
        #expect(try fileValue(path, "SELECT count(*) FROM folio_entities WHERE name = 'tag'") == 0)
        #expect(try fileValue(path, "SELECT count(*) FROM sqlite_sequence WHERE name = 'tag'") == 0)
        #expect(try fileSchema(path) == freshSchema(2, [NoteV1.self]))
    }

    @Test func anEmptyEntityRemovedGoesWithoutTheOptIn() throws {
        try makeNotes(path, count: 3, extra: [NoteTag.self])
        let store = try open(2, [NoteV1.self])
        try store.close()
        #expect(try fileSchema(path) == freshSchema(2, [NoteV1.self]))
    }

    @Test func aStoreOfTheSameVersionMayDeclareFewerEntities() throws {
        try makeNotes(path, count: 3, extra: [NoteTag.self])
        let store = try open(1, [NoteV1.self])
        try store.close()
        #expect(try fileValue(path, "SELECT count(*) FROM sqlite_master WHERE name = 'tag'") == 1)
    }

    // MARK: Renames

    @Test func renamedAttributesKeepTheirDataAndTheirIndex() throws {
        try makeNotes(path, count: 30)
        let root = try rootPage("note")
        let store = try open(2, [NoteRenamedAttributes.self])
        let notes = try store.fetch(RecordRequest<NoteRenamedAttributes>(sortBy: [SortDescriptor(\.points)])).map { $0! }
        #expect(notes.map(\.headline) == (0..<30).map { "note \($0)" })
        #expect(notes.map(\.points) == Array(0..<30))
        #expect(notes.map(\.body) == (0..<30).map { $0 % 3 == 0 ? nil : "body \($0)" })
        try store.close()
        #expect(try rootPage("note") == root, "a rename needs no rebuild")
        #expect(try fileSchema(path) == freshSchema(2, [NoteRenamedAttributes.self]))
    }

    @Test func aRenamedEntityKeepsItsRowsItsCounterAndItsTriggers() throws {
        try makeNotes(path, count: 10)
        var store = try open(1, [NoteV1.self])
        try store.write { tx in _ = try tx.delete(NoteV1.self, id: RecordID(10)) }
        try store.close()
        store = try open(2, [RenamedNote.self])
        #expect(
            try store.fetch(RecordRequest<RenamedNote>(sortBy: [SortDescriptor(\.score)])).map { $0!.id!.rawValue }
                == Array(1...9))
        let token = try store.changeToken(for: RenamedNote.self)
        var memo = RenamedNote()
        try store.write { tx in try tx.insert(&memo) }
        #expect(memo.id == RecordID(11), "the counter came along: a deleted record's id is not reused")
        #expect(try store.changeToken(for: RenamedNote.self) != token, "the renamed table's triggers renew its token")
        try store.close()
        #expect(try fileValue(path, "SELECT group_concat(name) FROM folio_entities") == "memo")
        #expect(try fileSchema(path) == freshSchema(2, [RenamedNote.self]))
    }

    @Test func aRenameWithoutANewVersionIsAMismatch() throws {
        try makeNotes(path, count: 3)
        try expectRefusal(
            .schemaMismatch(
                entity: "memo",
                differences: [
                    "missing table 'memo'; the table 'note' it is renamed from is there (a rename needs a new model version)"
                ]), 1, [RenamedNote.self])
    }

    @Test func renamesFromANameTheFileDoesNotHaveAreAdditions() throws {
        // The file skipped the version that had `title`: `headline` is added, and `title`
        // removed (it holds data: the opt-in is needed).
        try makeNotes(path, count: 3)
        let store = try open(1, [NoteV1.self])
        try store.write { tx in try tx.database.execute(sql: "ALTER TABLE note RENAME COLUMN title TO caption") }
        try store.close()
        #expect(throws: FolioError.self) { try open(2, [NoteRenamedAttributes.self]) }
    }

    // MARK: Rebuilds

    @Test func aRebuildKeepsRowidsAndTheAutoincrementCounter() throws {
        try makeNotes(path, count: 10)
        var store = try open(1, [NoteV1.self])
        try store.write { tx in
            for id in [10, 9, 4] { _ = try tx.delete(NoteV1.self, id: RecordID(Int64(id))) }
        }
        try store.close()
        #expect(try sequence(path, "note") == 10)
        let root = try rootPage("note")
        store = try open(2, [NoteWithoutBody.self], discarding: [.attribute("body", of: "note")])
        #expect(try rootPage("note") != root, "the table was rebuilt")
        #expect(
            try store.fetch(RecordRequest<NoteWithoutBody>(sortBy: [SortDescriptor(\.score)])).map { $0!.id!.rawValue }
                == [1, 2, 3, 5, 6, 7, 8])
        #expect(try sequence(path, "note") == 10, "copying rows set it to 8; it is raised back")
        var note = NoteWithoutBody()
        try store.write { tx in try tx.insert(&note) }
        #expect(note.id == RecordID(11))
        try store.close()
    }

    @Test func aRebuildOfAnEmptyTableKeepsItsCounter() throws {
        try makeNotes(path, count: 5)
        var store = try open(1, [NoteV1.self])
        try store.write { tx in _ = try tx.deleteAll(NoteV1.self) }
        try store.close()
        store = try open(2, [NoteWithRankNoDefault.self])
        var note = NoteWithRankNoDefault()
        try store.write { tx in try tx.insert(&note) }
        #expect(note.id == RecordID(6))
    }

    @Test func aTableMadeElsewhereWithoutAutoincrementGetsIt() throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE note (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT, score INTEGER NOT NULL)")
            try db.execute(sql: "INSERT INTO note (id, title, score) VALUES (5, 'five', 5), (9, 'nine', 9)")
        }
        try queue.close()
        // At its own version it is refused (ids could be reused)…
        expectError(
            .schemaMismatch(
                entity: "note",
                differences: [
                    "column 'id' is not AUTOINCREMENT (rowids of deleted records could be reused)", "missing index on 'score'",
                ])
        ) { try open(1, [NoteV1.self]) }
        // …but Folio never recorded it, so it is not a migration either: a file Folio never
        // opened is taken as created at the model's version.
        expectError(
            .schemaMismatch(
                entity: "note",
                differences: [
                    "column 'id' is not AUTOINCREMENT (rowids of deleted records could be reused)", "missing index on 'score'",
                ])
        ) { try open(2, [NoteV1.self]) }
    }

    @Test func anAdoptedTableIsRebuiltWithAutoincrementAtTheNextVersion() throws {
        // Folio recorded the file (another entity), and the table was made by hand since.
        try makeNotes(path, count: 0)
        try sqlite3Shell(
            path,
            """
            DROP TABLE note;
            CREATE TABLE note (title TEXT NOT NULL, body TEXT, score INTEGER NOT NULL);
            INSERT INTO note (rowid, title, score) VALUES (5, 'five', 5), (9, 'nine', 9);
            """)
        let store = try open(2, [NoteV1.self])
        #expect(try store.fetch(RecordRequest<NoteV1>(sortBy: [SortDescriptor(\.score)])).map { $0!.id!.rawValue } == [5, 9])
        var note = NoteV1()
        try store.write { tx in try tx.insert(&note) }
        #expect(note.id == RecordID(10))
        try store.close()
        #expect(try fileSchema(path) == freshSchema(2, [NoteV1.self]))
    }

    // MARK: Versions

    @Test func aNewerFileIsRefusedByteForByte() throws {
        try makeNotes(path, count: 5, version: 3)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        expectError(.newerModelVersion(path: path, version: 3, declared: 2)) { try open(2, [NoteV1.self]) }
        expectError(.newerModelVersion(path: path, version: 3, declared: 0)) { try Store(path: path, records: [NoteV1.self]) }
        // Even a model that would drop everything never gets to.
        expectError(.newerModelVersion(path: path, version: 3, declared: 2)) {
            try open(2, [NoteTag.self], discarding: [.entity("note")])
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == files)
        #expect(try open(3, [NoteV1.self]).count(RecordRequest<NoteV1>()) == 5)
    }

    @Test func theSameVersionWithAnotherSchemaIsAMismatchNotAMigration() throws {
        try makeNotes(path, count: 5)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        expectError(.schemaMismatch(entity: "note", differences: ["missing column 'tag' (TEXT)"])) {
            try open(1, [NoteWithTag.self])
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func anUnversionedFileMigratesToTheFirstVersion() throws {
        do {
            let store = try Store(path: path, records: [NoteV1.self])
            var note = NoteV1(title: "unversioned", body: nil, score: 1)
            try store.write { tx in try tx.insert(&note) }
            try store.close()
        }
        #expect(try fileValue(path, "SELECT value FROM folio_metadata WHERE key = 'model_version'") == 0)
        let store = try open(1, [NoteWithTag.self])
        #expect(try store.fetch(RecordRequest<NoteWithTag>()).map { $0!.title } == ["unversioned"])
    }

    @Test func theModelVersionIsNotUserVersion() throws {
        try makeNotes(path, count: 1)
        try sqlite3Shell(path, "PRAGMA user_version = 42;")
        try open(2, [NoteWithTag.self]).close()
        #expect(try sqlite3Shell(path, "PRAGMA user_version;") == "42")
    }

    @Test func aTypeChangeIsRefused() throws {
        try makeNotes(path, count: 5)
        let before = try fileContents(path)
        let error = folioError { try open(2, [NoteScoreDouble.self]) }
        guard case .migrationRefused(let entity, let reason)? = error else {
            Issue.record("expected migrationRefused, got \(String(describing: error))")
            return
        }
        #expect(entity == "note")
        #expect(reason.contains("'score' is stored as integer (INTEGER) and declared double (REAL)"))
        #expect(try fileContents(path) == before)
    }

    // MARK: Data that must come through a rebuild exactly

    @Test func extremeValuesComeThroughARebuildBitForBit() throws {
        let nul = "NUL\u{0}inside ß K \u{212A} e\u{301} \u{E9}"
        let rows: [Extreme] = [
            Extreme(integer: Int(Int64.min), double: -0.0, text: nul, data: Data([0, 1, 0xFF]), optional: nil),
            Extreme(integer: Int(Int64.max), double: .infinity, text: "", data: Data(), optional: Int64.max),
            Extreme(integer: 9_007_199_254_740_993, double: 9_007_199_254_740_992, text: "\u{0}", data: Data([0]), optional: 0),
            Extreme(integer: 0, double: -.infinity, text: "K", data: Data(repeating: 0xAB, count: 70_000), optional: nil),
            Extreme(
                integer: -1, double: .leastNonzeroMagnitude, text: String(repeating: "x", count: 100_000), data: Data(),
                optional: -1),
        ]
        var store = try Store(path: path, model: StoreModel(version: 1, records: [Extreme.self]))
        try store.write { tx in
            for var row in rows { try tx.insert(&row) }
        }
        try store.close()
        let stored = try Store(path: path, model: StoreModel(version: 1, records: [Extreme.self]))
            .fetch(RecordRequest<Extreme>(sortBy: [SortDescriptor(\.integer)])).map { $0! }
        // SQLite keeps -0.0 as 0 (it stores integral reals as integers): the rebuild must
        // keep what was stored, whatever that is.
        #expect(stored.first { $0.text == nul }?.double.sign == .plus)
        let columns = "id, integer, double, text, data"
        let dump = """
            SELECT group_concat(typeof(id) || hex(id) || typeof(integer) || hex(integer) || typeof(double) || hex(double) \
            || printf('%!.17g', double) || typeof(text) || hex(text) || typeof(data) || hex(data), '|') FROM (SELECT \(columns) FROM extreme ORDER BY id)
            """
        let before: String? = try fileValue(path, dump)
        store = try Store(path: path, model: StoreModel(version: 2, records: [ExtremeV2.self]))
        let migrated = try store.fetch(RecordRequest<ExtremeV2>(sortBy: [SortDescriptor(\.integer)])).map { $0! }
        try store.close()
        #expect(try fileValue(path, dump) == before)
        let byID = Dictionary(uniqueKeysWithValues: migrated.map { ($0.id!.rawValue, $0) })
        for row in stored {
            let found = try #require(byID[row.id!.rawValue])
            #expect(found.integer == row.integer)
            #expect(found.double.bitPattern == row.double.bitPattern)
            #expect(Array(found.text.utf8) == Array(row.text.utf8))
            #expect(found.data == row.data)
            #expect(found.optional == (row.optional ?? Int64.min))
            #expect(found.added == nil)
        }
    }

    // MARK: Another program's rows, objects and foreign keys

    @Test func rowsTheShellWroteBeforeAreMigratedAndTheShellWritesAfter() throws {
        try makeNotes(path, count: 5)
        try sqlite3Shell(
            path,
            """
            INSERT INTO note (title, body, score) VALUES ('shell ' || char(0) || 'nul', NULL, 9223372036854775807);
            INSERT INTO note (title, body, score) VALUES ('gone', 'x', 7);
            DELETE FROM note WHERE title = 'gone';
            DELETE FROM note WHERE id = 2;
            """)
        let store = try open(2, [NoteWithRank.self])
        let notes = try store.fetch(RecordRequest<NoteWithRank>(sortBy: [SortDescriptor(\.id)])).map { $0! }
        #expect(notes.map(\.id!.rawValue) == [1, 3, 4, 5, 6])
        #expect(notes.last?.score == Int.max)
        #expect(Array(notes.last!.title.utf8) == Array("shell \u{0}nul".utf8))
        #expect(notes.allSatisfy { $0.rank == 7 })
        let token = try store.changeToken(for: NoteWithRank.self)
        try store.close()
        #expect(try sequence(path, "note") == 7)
        // The shell can still write every entity (the triggers use SQLite built-ins only).
        try sqlite3Shell(path, "INSERT INTO note (title, score, rank) VALUES ('after', 1, 1);")
        let reopened = try open(2, [NoteWithRank.self])
        #expect(try reopened.changeToken(for: NoteWithRank.self) != token)
        #expect(
            try reopened.fetch(RecordRequest<NoteWithRank>(predicate: #Predicate { $0.title == "after" })).first??.id
                == RecordID(8))
    }

    @Test func anotherProgramsIndexesTriggersViewsAndChildTablesSurviveARebuild() throws {
        try makeNotes(path, count: 6)
        try sqlite3Shell(
            path,
            """
            CREATE INDEX note_title_score ON note (title, score);
            CREATE TABLE audit (note INTEGER, what TEXT);
            CREATE TRIGGER note_audit AFTER INSERT ON note BEGIN INSERT INTO audit VALUES (NEW.id, NEW.title); END;
            CREATE VIEW note_titles AS SELECT id, title FROM note;
            CREATE TABLE comment (id INTEGER PRIMARY KEY, note INTEGER REFERENCES note (id) ON DELETE CASCADE, text TEXT);
            INSERT INTO comment (note, text) VALUES (1, 'first'), (2, 'second'), (6, 'sixth');
            """)
        let store = try open(2, [NoteBodyRequired.self])
        var note = NoteBodyRequired()
        note.title = "seventh"
        try store.write { tx in try tx.insert(&note) }
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM comment") } == 3, "no cascade")
        #expect(try store.read { db in try String.fetchAll(db, sql: "SELECT what FROM audit") } == ["seventh"])
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM note_titles") } == 7)
        #expect(
            try store.read { db in
                try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'note_title_score'")
            } == true)
        #expect(try store.read { db in try Row.fetchAll(db, sql: "PRAGMA foreign_key_check") }.isEmpty)
        try store.close()
    }

    @Test func anotherProgramsTriggerOnARemovedColumnRefusesTheMigration() throws {
        try makeNotes(path, count: 6)
        try sqlite3Shell(
            path,
            """
            CREATE INDEX note_body ON note (body);
            CREATE TABLE audit (what TEXT);
            CREATE TRIGGER note_body_audit AFTER INSERT ON note BEGIN INSERT INTO audit VALUES (NEW.body); END;
            """)
        let before = try fileContents(path)
        let error = folioError { try open(2, [NoteWithoutBody.self], discarding: [.attribute("body", of: "note")]) }
        guard case .migrationRefused("note", let reason)? = error else {
            Issue.record("expected migrationRefused, got \(String(describing: error))")
            return
        }
        #expect(
            reason.contains("the table 'note' or one of its triggers no longer compiles (no such column: NEW.body)"), "\(reason)")
        #expect(try fileContents(path) == before)
        // Without the trigger, the index on the removed column goes with it.
        try sqlite3Shell(path, "DROP TRIGGER note_body_audit;")
        try open(2, [NoteWithoutBody.self], discarding: [.attribute("body", of: "note")]).close()
        #expect(try fileValue(path, "SELECT count(*) FROM sqlite_master WHERE name = 'note_body'") == 0)
    }

    @Test func aMigrationThatBreaksForeignKeysIsRefused() throws {
        try makeNotes(path, count: 3)
        try sqlite3Shell(
            path,
            """
            CREATE TABLE comment (id INTEGER PRIMARY KEY, note INTEGER REFERENCES note (id), text TEXT);
            INSERT INTO comment (note, text) VALUES (1, 'first');
            """)
        try expectRefusal(
            .migrationRefused(
                entity: "comment",
                reason:
                    "1 row would violate foreign keys after the migration (the first: rowid 1 of 'comment', referencing 'note')"),
            2, [NoteTag.self], discarding: [.entity("note")])
    }

    // MARK: The model itself

    @Test func invalidModels() throws {
        expectError(.invalidStoreModel(reason: "the version is -1; versions start at 0")) {
            try Store.temporaryModel(StoreModel(version: -1, records: [NoteV1.self]))
        }
        expectError(.invalidStoreModel(reason: "two migration steps are named 'a'")) {
            try Store.temporaryModel(
                StoreModel(version: 1, records: [NoteV1.self], steps: [MigrationStep("a") { _ in }, MigrationStep("a") { _ in }]))
        }
        expectError(
            .invalidSchema(
                entity: "note", reason: "the attribute 'headline' is renamed from 'body', which the entity still declares")
        ) {
            try Store.temporaryModel(StoreModel(version: 1, records: [NoteRenamedFromDeclared.self]))
        }
        expectError(.invalidSchema(entity: "memo", reason: "renamedFrom 'note' names an entity the model still declares")) {
            try Store.temporaryModel(StoreModel(version: 1, records: [RenamedNote.self, NoteV1.self]))
        }
    }
}

/// A rename from a column the entity still declares.
struct NoteRenamedFromDeclared: PersistentRecord {
    var id: RecordID?
    var headline = ""
    var body: String? = nil
    static let entity = EntityDescription<NoteRenamedFromDeclared>(
        "note", [AttributeDescription(\.headline, renamedFrom: "body"), AttributeDescription(\.body)])
}

extension Store {
    /// A store of `model` in a new temporary file.
    static func temporaryModel(_ model: StoreModel) throws -> Store {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-model-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try Store(path: directory.appendingPathComponent("store.sqlite").path, model: model)
    }
}
