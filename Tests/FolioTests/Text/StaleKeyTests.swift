import Foundation
import GRDB
import Testing
@testable import Folio

/// Rows whose folded keys Folio did not write — raw SQL, the `sqlite3` shell, a second
/// store — are noticed by built-in triggers and fixed up at Folio's next access, so they
/// are found and sorted correctly, and live controllers see the fix-up as a change.
@Suite("Stale folded keys")
struct StaleKeyTests {
    /// A temporary file store, removed when the test ends.
    final class FileStore {
        let directory: URL
        let path: String
        var store: Store
        init(records: [any PersistentRecord.Type] = [Person.self]) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-stale-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            path = directory.appendingPathComponent("store.sqlite").path
            store = try Store(path: path, records: records)
        }
        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    static func staleCount(_ store: Store) throws -> Int {
        try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_stale_keys") ?? 0 }
    }

    /// The shell inserts rows without keys, edits names, sets a key NULL, stores invalid
    /// UTF-8 and NULs: a fetch finds and sorts every row by its folded name, after one fix-up.
    @Test func rowsWrittenByTheShellAreFoundAndSortedAfterOneFixUp() throws {
        let file = try FileStore()
        let store = file.store
        // Not woken by the shell's commits (a woken store fixes the keys up at once): the
        // fetch is what finds them stale here.
        store.stopWatching()
        let people = try insertPeople(store, ["Zebra", "apple", "Émile"].map { Person($0, note: $0) })
        try sqlite3Shell(
            file.path,
            """
            INSERT INTO person (name, note, code, age) VALUES ('ÉCOLE', 'shell', '', 1), ('ecole', 'shell', '', 2), ('Ωmega', 'shell', '', 3);
            INSERT INTO person (name, note, code, age) VALUES (CAST(x'ff45434f4c45' AS TEXT), 'invalid', '', 4);
            INSERT INTO person (name, note, code, age) VALUES (CAST(x'45004f' AS TEXT), 'nul', '', 5);
            UPDATE person SET name = 'ZÈBRE' WHERE id = \(people[0].id!.rawValue);
            UPDATE person SET folio_name_folded = NULL WHERE id = \(people[1].id!.rawValue);
            UPDATE person SET name = 'EMILE' WHERE id = \(people[2].id!.rawValue);
            """)
        #expect(try Self.staleCount(store) == 8)
        let recorder = SQLRecorder(store)
        let request = RecordRequest<Person>(sortBy: [SortDescriptor(\.name.folded)])
        let ids = try store.fetchIdentifiers(request).map(\.rawValue)
        #expect(ids == (try expectedFoldedOrder(store)))
        #expect(try Self.staleCount(store) == 0)
        // One fix-up: the fetch found stale rows, fixed them in one write, and read again.
        #expect(recorder.statements.filter { $0.hasPrefix("UPDATE \"person\" SET \"folio_name_folded\"") }.count == 7)
        #expect(recorder.statements.filter { $0.contains("FROM folio_stale_keys WHERE entity") }.count >= 2)
        try expectKeysCurrent(store)
        let ecole = "ecole"
        #expect(
            Set(try fetchedNames(store, RecordRequest(predicate: #Predicate { $0.name.folded == ecole }))) == ["ÉCOLE", "ecole"])
        let invalid = "\u{FFFD}ecole"
        #expect(try fetchedNames(store, RecordRequest(predicate: #Predicate { $0.name.folded == invalid })).count == 1)
        let nul = "e\u{0}o"
        #expect(try fetchedNames(store, RecordRequest(predicate: #Predicate { $0.name.folded == nul })) == ["E\u{0}O"])
        #expect(Set(try fetchedNames(store, RecordRequest(search: TextSearch("shell")))) == ["ÉCOLE", "ecole", "Ωmega"])
        // A second fetch runs no fix-up.
        recorder.reset()
        _ = try store.fetchIdentifiers(request)
        #expect(!recorder.statements.contains { $0.hasPrefix("UPDATE") }, "\(recorder.statements)")
    }

    /// The shell can still write to every table (no custom function, collation or tokenizer
    /// in the schema), and its writes go through every trigger.
    @Test func theShellWritesEverything() throws {
        let file = try FileStore()
        try insertPeople(file.store, [Person("a", city: "x", note: "y")])
        let output = try sqlite3Shell(
            file.path,
            """
            INSERT INTO person (name, city, note, code, age) VALUES ('Ünal', 'Köln', 'Ça va', '', 9);
            UPDATE person SET city = 'Zürich', note = 'Straße';
            DELETE FROM person WHERE name = 'a';
            INSERT OR REPLACE INTO person (id, name, note, code, age) SELECT id, 'Replaced', 'Nouveau', '', 1 FROM person;
            SELECT count(*) FROM person;
            """)
        #expect(output == "1")
        #expect(try fetchedNames(file.store, RecordRequest(search: TextSearch("nouveau"))) == ["Replaced"])
        #expect(try fetchedNames(file.store, RecordRequest(search: TextSearch("strasse"))).isEmpty)
        try expectKeysCurrent(file.store)
    }

    /// Raw SQL inside a write: the keys are fixed before the commit, so the transaction's
    /// change set already has the rows in their folded places.
    @Test @MainActor func rawSQLInAWriteIsFixedBeforeItsCommit() async throws {
        let store = try Store.inMemory(records: [Person.self])
        try insertPeople(store, ["b", "d", "f"].map { Person($0) })
        let harness = try await PersonHarness(store, RecordRequest(sortBy: [SortDescriptor(\.name.folded)]))
        try writeSync(store) { tx in
            try tx.database.execute(sql: "INSERT INTO person (name, note, code, age) VALUES ('Ç', '', '', 0), ('E', '', '', 0)")
            try tx.database.execute(sql: "UPDATE person SET name = 'A' WHERE name = 'f'")
            // Inside the write, a fetch already sees the keys fixed.
            #expect(
                try tx.fetchAll(RecordRequest<Person>(sortBy: [SortDescriptor(\.name.folded)])).map(\.name) == [
                    "A", "b", "Ç", "d", "E",
                ])
        }
        let changes = try await harness.settle()
        #expect(changes.count == 1)
        #expect(harness.controller.fetchedObjects?.map { $0!.name } == ["A", "b", "Ç", "d", "E"])
        #expect(try Self.staleCount(store) == 0)
    }

    /// A change of case alone keeps the key: the trigger notes the row, the fix-up writes
    /// nothing, and the controller reports one update, not a move.
    @Test @MainActor func aChangeOfCaseAloneIsAnUpdate() async throws {
        let store = try Store.inMemory(records: [Person.self])
        let people = try insertPeople(store, ["alpha", "beta", "gamma"].map { Person($0) })
        let harness = try await PersonHarness(store, RecordRequest(sortBy: [SortDescriptor(\.name.folded)]))
        let recorder = SQLRecorder(store)
        try writeSync(store) { tx in
            var person = people[1]
            person.name = "BETA"
            try tx.update(person)
        }
        let changes = try await harness.settle()
        #expect(changes.map(\.updatedItems) == [[IndexPath(item: 1, section: 0)]])
        #expect(changes.map(\.movedItems.count) == [0])
        #expect(!recorder.statements.contains { $0.hasPrefix("UPDATE \"person\" SET \"folio_name_folded\"") })
        #expect(try Self.staleCount(store) == 0)
    }

    /// Another process's writes reach a live controller sorted by a folded key as one
    /// reload at `synchronize()`, after the fix-up, with every row in its folded place.
    @Test @MainActor func anotherProcessesRowsReachLiveControllers() async throws {
        let file = try FileStore()
        let store = file.store
        try insertPeople(store, (0..<4_200).map { Person("name \($0 % 97) \($0)", note: "n\($0)", age: $0) })
        let name = "name 1"
        let harness = try await PersonHarness(
            store,
            RecordRequest(predicate: #Predicate { $0.name.folded.starts(with: name) }, sortBy: [SortDescriptor(\.name.folded)]),
            sectionBy: .firstLetter(\.name))
        try sqlite3Shell(
            file.path,
            "INSERT INTO person (name, note, code, age) VALUES ('NAME 1 ÉTÉ', 'x', '', -1), ('Name 1 été', 'y', '', -2); UPDATE person SET name = 'Ñame 10' WHERE age = 10;"
        )
        try store.synchronize()
        let changes = try await harness.settle()
        #expect(!changes.isEmpty)
        let shown = harness.controller.fetchedObjects?.map { $0!.name } ?? []
        #expect(shown.contains("NAME 1 ÉTÉ") && shown.contains("Name 1 été") && shown.contains("Ñame 10"))
        #expect(harness.controller.sections.map(\.name) == ["n"])
        #expect(try Self.staleCount(store) == 0)
    }

    /// A second store on the same file, declaring the same entity, writes raw SQL; the
    /// first store's fetch fixes the keys (the fix-up is per entity, whoever runs it).
    @Test func aSecondStoreOnTheFile() throws {
        let file = try FileStore()
        let other = try Store(path: file.path, records: [Person.self])
        try other.write { tx in
            try tx.database.execute(sql: "INSERT INTO person (name, note, code, age) VALUES ('Ärger', '', '', 0)")
        }
        #expect(try Self.staleCount(file.store) == 0, "the writing store fixed it before its commit")
        let arger = "ARGER"
        #expect(try fetchedNames(file.store, RecordRequest(predicate: #Predicate { $0.name.folded == arger })) == ["Ärger"])
    }

    /// Every key of every row stays right through random raw writes, shell writes and
    /// Folio writes mixed, with extreme texts.
    @Test func randomWritersKeepKeysCurrent() throws {
        let file = try FileStore()
        let store = file.store
        var rng = SplitMix64(seed: 42)
        var text = FoldingText(rng: SplitMix64(seed: 43))
        for round in 0..<30 {
            var shell: [String] = []
            for _ in 0..<5 {
                let bytes = Array(text.next(length: round % 10 == 0 ? 200 : 8).utf8)
                let hex = bytes.map { String(format: "%02x", $0) }.joined()
                switch Int.random(in: 0..<4, using: &rng) {
                case 0:
                    shell.append(
                        "INSERT INTO person (name, note, code, age) VALUES (CAST(x'\(hex)' AS TEXT), CAST(x'\(hex)' AS TEXT), '', 0);"
                    )
                case 1:
                    shell.append(
                        "UPDATE person SET name = CAST(x'\(hex)' AS TEXT) WHERE id IN (SELECT id FROM person ORDER BY random() LIMIT 2);"
                    )
                case 2:
                    shell.append(
                        "UPDATE person SET city = CAST(x'\(hex)ff' AS TEXT) WHERE id IN (SELECT id FROM person ORDER BY random() LIMIT 1);"
                    )
                default: shell.append("DELETE FROM person WHERE id IN (SELECT id FROM person ORDER BY random() LIMIT 1);")
                }
            }
            try sqlite3Shell(file.path, shell.joined(separator: "\n"))
            try store.write { tx in
                var person = Person(text.next(), city: rng.chance(0.5) ? text.next() : nil, note: text.next())
                try tx.insert(&person)
                try tx.database.execute(
                    sql: "UPDATE person SET note = CAST(? AS TEXT) WHERE id = (SELECT max(id) FROM person)",
                    arguments: [Data(text.next().utf8)])
            }
            _ = try store.fetchIdentifiers(RecordRequest<Person>(sortBy: [SortDescriptor(\.name.folded)]))
            try expectKeysCurrent(store)
        }
        #expect(
            try store.fetchIdentifiers(RecordRequest<Person>(sortBy: [SortDescriptor(\.name.folded)])).map(\.rawValue)
                == (try expectedFoldedOrder(store)))
        try store.write { tx in
            try tx.database.execute(sql: "INSERT INTO folio_person_fts(folio_person_fts) VALUES('integrity-check')")
        }
    }
}

extension StaleKeyTests {
    /// Raw SQL, in a transaction or in the shell, that edits a row's text and then changes
    /// its id (by `id` or by `rowid`): the row was noted stale under its old id, which the
    /// fix-up no longer found, and its keys and words stayed behind its text for good.
    @Test(arguments: ["id", "rowid"])
    func aRowEditedThenMovedGetsItsKeys(_ column: String) throws {
        let file = try StaleKeyTests.FileStore()
        let store = file.store
        let people = try insertPeople(store, [Person("alpha", note: "one"), Person("beta", note: "two"), Person("gamma")])
        try store.write { tx in
            try tx.database.execute(
                sql: "UPDATE person SET name = 'Émile', note = 'Crème' WHERE id = ?", arguments: [people[0].id!.rawValue])
            try tx.database.execute(sql: "UPDATE person SET \(column) = 1000 WHERE id = ?", arguments: [people[0].id!.rawValue])
        }
        try expectSearchAndKeysFollowTheText(store)
        try sqlite3Shell(
            file.path,
            """
            UPDATE person SET name = 'Zoë', note = 'Brûlée' WHERE id = \(people[1].id!.rawValue);
            UPDATE person SET \(column) = 2000 WHERE id = \(people[1].id!.rawValue);
            UPDATE person SET \(column) = 3000, name = 'Ærø' WHERE id = \(people[2].id!.rawValue);
            """)
        try store.synchronize()
        try expectSearchAndKeysFollowTheText(store)
        let emile = "EMILE", zoe = "zoe", aero = "ÆRØ"
        #expect(
            try store.fetch(RecordRequest<Person>(predicate: #Predicate { $0.name.folded == emile })).map { $0!.id } == [
                RecordID(1000)
            ])
        #expect(
            try store.fetch(RecordRequest<Person>(predicate: #Predicate { $0.name.folded == zoe })).map { $0!.id } == [
                RecordID(2000)
            ])
        #expect(
            try store.fetch(RecordRequest<Person>(predicate: #Predicate { $0.name.folded == aero })).map { $0!.id } == [
                RecordID(3000)
            ])
    }

    /// Another program that writes a folded key itself — alone, or of another storage class
    /// than its text — leaves it noted, and Folio fixes it: before, a key changed alone or an
    /// integer key inserted beside a text was kept, and the row was not found or missorted.
    @Test func keysWrittenByAnotherProgramAreFixed() throws {
        let file = try StaleKeyTests.FileStore()
        let store = file.store
        let people = try insertPeople(
            store, ["alpha", "beta", "gamma", "delta", "epsilon"].map { Person($0, city: "Zürich", note: "\($0) words") })
        try sqlite3Shell(
            file.path,
            """
            UPDATE person SET folio_name_folded = 'zzz' WHERE id = \(people[0].id!.rawValue);
            UPDATE person SET folio_name_folded = 42, folio_note_folded = x'00' WHERE id = \(people[1].id!.rawValue);
            UPDATE person SET folio_city_folded = 'bern', folio_note_folded = 'ghost words' WHERE id = \(people[2].id!.rawValue);
            INSERT INTO person (name, city, note, code, age, folio_name_folded, folio_city_folded, folio_note_folded)
                VALUES ('Émile', 'Köln', 'crème', '', 5, 7, x'6b6f6c6e', 1.5);
            UPDATE person SET folio_name_folded = NULL WHERE id = \(people[3].id!.rawValue);
            """)
        try expectSearchAndKeysFollowTheText(store)
        #expect(try store.count(RecordRequest<Person>(search: TextSearch("ghost"))) == 0)
        #expect(try store.count(RecordRequest<Person>(search: TextSearch("bern"))) == 0)
        #expect(try store.count(RecordRequest<Person>(search: TextSearch("koln creme"))) == 1)
        let alpha = "ALPHA"
        #expect(try fetchedNames(store, RecordRequest(predicate: #Predicate { $0.name.folded == alpha })) == ["alpha"])
    }
}
