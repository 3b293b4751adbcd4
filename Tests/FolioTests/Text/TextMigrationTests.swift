import Foundation
import GRDB
import Testing
@testable import Folio

/// ``Person`` without folding: the version of the model before it.
struct PersonPlain: PersistentRecord {
    var id: RecordID?
    var name = ""
    var city: String? = nil
    var note = ""
    var code = ""
    var age = 0
    static let entity = EntityDescription<PersonPlain>(
        "person",
        [
            AttributeDescription(\.name), AttributeDescription(\.city), AttributeDescription(\.note),
            AttributeDescription(\.code),
            AttributeDescription(\.age, indexed: true),
        ])
}

/// ``Person`` with `name` renamed `fullName` (still folded), and `code` removed (the table is rebuilt).
struct PersonRenamed: PersistentRecord {
    var id: RecordID?
    var fullName = ""
    var city: String? = nil
    var note = ""
    var age = 0
    static let entity = EntityDescription<PersonRenamed>(
        "person",
        [
            AttributeDescription(\.fullName, folded: true, renamedFrom: "name"), AttributeDescription(\.city, searchable: true),
            AttributeDescription(\.note, searchable: true), AttributeDescription(\.age, indexed: true),
        ])
}

/// The entity renamed `people`, with `name` searchable too.
struct People: PersistentRecord {
    var id: RecordID?
    var name = ""
    var city: String? = nil
    var note = ""
    var code = ""
    var age = 0
    static let entity = EntityDescription<People>(
        "people",
        [
            AttributeDescription(\.name, searchable: true), AttributeDescription(\.city, searchable: true),
            AttributeDescription(\.note, searchable: true), AttributeDescription(\.code),
            AttributeDescription(\.age, indexed: true),
        ], renamedFrom: "person")
}

/// Lightweight migration adds, removes, renames and rebuilds what folding derives: key
/// columns, their indexes, the triggers, the full-text index; and a change of the folding
/// version rebuilds the keys at open.
@Suite("Text migrations")
struct TextMigrationTests {
    let directory: ScratchDirectory
    let path: String
    static let names = ["Émile", "EMILE", "Straße", "ZOË", "Zebra", "ábaco", "İnce", "a\u{0}b", "😀", ""]

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("people.sqlite")
    }

    func makePlain() throws {
        let store = try Store(path: path, model: StoreModel(version: 1, records: [PersonPlain.self]))
        try store.write { tx in
            for (index, name) in Self.names.enumerated() {
                var person = PersonPlain()
                person.name = name
                person.note = "note of \(name)"
                person.city = index % 2 == 0 ? "Köln" : nil
                person.age = index
                try tx.insert(&person)
            }
        }
        try store.close()
    }

    func objects() throws -> Set<String> {
        Set(
            try fileSchema(path).filter { $0.contains("folio_") || $0.contains("_fts") }.map {
                $0.components(separatedBy: ":").first!
            })
    }

    func freshObjects(_ records: [any PersistentRecord.Type]) throws -> Set<String> {
        let fresh = directory.path("fresh-\(UUID().uuidString).sqlite")
        try Store(path: fresh, model: StoreModel(version: 9, records: records)).close()
        return Set(
            try fileSchema(fresh).filter { $0.contains("folio_") || $0.contains("_fts") }.map {
                $0.components(separatedBy: ":").first!
            })
    }

    @Test func foldingAddedComputesEveryKeyAndFillsTheIndex() throws {
        try makePlain()
        let store = try Store(path: path, model: StoreModel(version: 2, records: [Person.self]))
        try expectKeysCurrent(store)
        #expect(
            try store.fetchIdentifiers(RecordRequest<Person>(sortBy: [SortDescriptor(\.name.folded)])).map(\.rawValue)
                == (try expectedFoldedOrder(store)))
        #expect(try fetchedNames(store, RecordRequest(search: TextSearch("koln strasse"))) == ["Straße"])
        let emile = "emile"
        #expect(
            Set(try fetchedNames(store, RecordRequest(predicate: #Predicate { $0.name.folded == emile }))) == ["Émile", "EMILE"])
        #expect(try objects() == (try freshObjects([Person.self])))
        try store.write { tx in
            try tx.database.execute(sql: "INSERT INTO folio_person_fts(folio_person_fts) VALUES('integrity-check')")
        }
    }

    @Test func foldingRemovedDropsWhatItDerivedWithoutAskingToDiscard() throws {
        try makePlain()
        try Store(path: path, model: StoreModel(version: 2, records: [Person.self])).close()
        let store = try Store(path: path, model: StoreModel(version: 3, records: [PersonPlain.self]))
        let columns = try store.read { db in try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('person')") }
        #expect(columns == ["id", "name", "city", "note", "code", "age"])
        #expect(try objects().filter { !$0.contains("folio_stale_keys") } == (try freshObjects([PersonPlain.self])))
        #expect(try store.fetch(RecordRequest<PersonPlain>(sortBy: [SortDescriptor(\.age)])).map { $0!.name } == Self.names)
        // The shell writes freely afterwards: nothing left references the dropped columns.
        try sqlite3Shell(
            path, "INSERT INTO person (name, note, code, age) VALUES ('x', '', '', 99); UPDATE person SET name = 'y';")
    }

    @Test func aRenamedFoldedAttributeKeepsItsKeysAndARebuiltTableItsIndex() throws {
        try makePlain()
        try Store(path: path, model: StoreModel(version: 2, records: [Person.self])).close()
        let store = try Store(
            path: path,
            model: StoreModel(version: 3, records: [PersonRenamed.self], discarding: [.attribute("code", of: "person")]))
        let columns = try store.read { db in try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('person')") }
        #expect(columns.contains("folio_fullName_folded") && !columns.contains("folio_name_folded"))
        let emile = "emile"
        #expect(
            Set(
                try store.fetch(RecordRequest<PersonRenamed>(predicate: #Predicate { $0.fullName.folded == emile })).map {
                    $0!.fullName
                })
                == ["Émile", "EMILE"])
        #expect(
            try store.fetch(RecordRequest<PersonRenamed>(search: TextSearch("koln strasse"))).map { $0!.fullName } == ["Straße"])
        #expect(try objects() == (try freshObjects([PersonRenamed.self])))
        try store.write { tx in
            try tx.database.execute(sql: "INSERT INTO folio_person_fts(folio_person_fts) VALUES('integrity-check')")
        }
    }

    @Test func aRenamedEntityGetsItsIndexUnderItsNewName() throws {
        try makePlain()
        try Store(path: path, model: StoreModel(version: 2, records: [Person.self])).close()
        let store = try Store(path: path, model: StoreModel(version: 3, records: [People.self]))
        #expect(try objects() == (try freshObjects([People.self])))
        #expect(try store.fetch(RecordRequest<People>(search: TextSearch("ZOE"))).map { $0!.name } == ["ZOË"])
        try sqlite3Shell(path, "INSERT INTO people (name, note, code, age) VALUES ('Zoé', '', '', 99);")
        #expect(
            try sqlite3Shell(path, "SELECT key FROM folio_metadata WHERE key LIKE 'folding_version:%' ORDER BY key")
                == "folding_version:people")
        #expect(Set(try store.fetch(RecordRequest<People>(search: TextSearch("zoe"))).map { $0!.name }) == ["ZOË", "Zoé"])
    }

    @Test func rowsAMigrationStepWritesGetTheirKeys() throws {
        try makePlain()
        let step = MigrationStep("rename people") { db in
            try db.execute(sql: "UPDATE person SET name = 'Ä' || name, note = 'STEP ' || note")
        }
        let store = try Store(path: path, model: StoreModel(version: 2, records: [Person.self], steps: [step]))
        try expectKeysCurrent(store)
        #expect(try store.count(RecordRequest<Person>(search: TextSearch("step"))) == Self.names.count)
    }

    @Test func foldingDeclaredWithoutANewVersionIsASchemaMismatch() throws {
        try makePlain()
        let before = try fileContents(path)
        do {
            _ = try Store(path: path, model: StoreModel(version: 1, records: [Person.self]))
            Issue.record("opened")
        } catch let error as FolioError {
            guard case .schemaMismatch(let entity, let differences) = error else { Issue.record("\(error)"); return }
            #expect(entity == "person")
            #expect(differences.contains { $0.contains("folio_name_folded") }, "\(differences)")
        }
        #expect(try fileContents(path) == before)
    }

    /// Keys recorded under another folding version are all computed again at open, and the
    /// full-text index rebuilt from them.
    @Test func anotherFoldingVersionRebuildsTheKeys() throws {
        do {
            let store = try Store(path: path, records: [Person.self])
            try insertPeople(store, Self.names.map { Person($0, note: "Note \($0)") })
            try store.close()
        }
        try sqlite3Shell(
            path,
            """
            UPDATE folio_metadata SET value = 'folio-fold-0' WHERE key = 'folding_version:person';
            UPDATE person SET folio_name_folded = 'wrong', folio_note_folded = 'wrong words';
            """)
        #expect(
            try sqlite3Shell(path, "SELECT count(*) FROM folio_person_fts WHERE folio_person_fts MATCH 'wrong'")
                == "\(Self.names.count)")
        let store = try Store(path: path, records: [Person.self])
        try expectKeysCurrent(store)
        #expect(try store.count(RecordRequest<Person>(search: TextSearch("wrong"))) == 0)
        #expect(try store.count(RecordRequest<Person>(search: TextSearch("note"))) == Self.names.count)
        #expect(try fileValue(path, "SELECT value FROM folio_metadata WHERE key = 'folding_version:person'") == "folio-fold-2")
    }
}
