import Foundation
import GRDB
import Testing
@testable import Folio

/// Files whose folded-key triggers, full-text index or its triggers another program
/// dropped, replaced or emptied, and then wrote while they were so: a store opening the
/// file repairs what is derived and finds and sorts every row as the text says.
@Suite("Damaged text files are repaired at opening")
struct DamagedTextFileTests {
    static let writes = """
        INSERT INTO person (name, city, note, code, age) VALUES ('Zoë', 'Köln', 'Brûlée maison', '', 3);
        UPDATE person SET name = 'Émile', note = 'Crème fraîche' WHERE id = 1;
        DELETE FROM person WHERE id = 2;
        UPDATE person SET note = 'Straße ohne Ende' WHERE id = 3;
        """

    /// (what another program does, and whether it can still write afterwards)
    static let damages: [(String, Bool)] = [
        (
            "DROP TRIGGER folio_person_fold_ins; DROP TRIGGER folio_person_fold_upd; DROP TRIGGER folio_person_fts_ins; DROP TRIGGER folio_person_fts_upd; DROP TRIGGER folio_person_fts_del;",
            true
        ),
        ("DROP TRIGGER folio_person_fold_upd;", true),
        ("DROP TRIGGER folio_person_fold_ins;", true),
        ("DROP TRIGGER folio_person_fts_upd;", true),
        (
            "DROP TRIGGER folio_person_fold_upd; CREATE TRIGGER folio_person_fold_upd AFTER UPDATE ON person BEGIN SELECT 1; END;",
            true
        ),
        (
            "DROP TRIGGER folio_person_fts_ins; CREATE TRIGGER folio_person_fts_ins AFTER INSERT ON person BEGIN SELECT 1; END;",
            true
        ),
        ("DELETE FROM folio_person_fts;", true),
        ("DELETE FROM folio_person_fts WHERE rowid > 2;", true),
        (
            "DELETE FROM folio_person_fts WHERE rowid = 4; INSERT INTO folio_person_fts(rowid, folio_note_folded) VALUES (99, 'ghost');",
            true
        ),
        ("UPDATE folio_person_fts SET rowid = 1000 WHERE rowid = 5;", true),
        ("DROP TABLE folio_person_fts;", false),
        ("DROP TABLE folio_person_fts; CREATE TABLE folio_person_fts (rowid, folio_city_folded, folio_note_folded);", true),
        ("DROP TABLE folio_person_fts_docsize;", false),
        ("DROP TABLE folio_person_fts_data;", false),
        ("DROP TABLE folio_person_fts_config;", false),
        ("DROP TABLE folio_person_fts_content;", false),
        ("DROP TABLE folio_person_fts_idx;", false),
        ("UPDATE folio_person_fts_config SET v = 3 WHERE k = 'version';", false),
        ("DELETE FROM folio_person_fts_data;", false),
        ("DELETE FROM folio_person_fts_config;", false),
        ("DROP TABLE folio_stale_keys;", false),
        ("DROP INDEX person_folio_name_folded_index; DROP INDEX person_folio_note_folded_index;", true),
        (
            "DROP INDEX person_folio_note_folded_index; DROP TRIGGER folio_person_fold_upd; DROP TRIGGER folio_person_fold_ins; DROP TRIGGER folio_person_fts_upd; DROP TRIGGER folio_person_fts_ins; DROP TRIGGER folio_person_changed; ALTER TABLE person DROP COLUMN folio_note_folded;",
            false
        ),
        ("DELETE FROM folio_stale_keys; DROP TRIGGER folio_person_fold_upd;", true),
    ]

    /// An index whose internals another program replaced by tables of another shape cannot
    /// be opened, dropped or repaired by SQLite: opening throws a clear error that names it.
    @Test func anIndexBeyondRepairIsAClearError() throws {
        let file = try StaleKeyTests.FileStore()
        try insertPeople(file.store, [Person("a", note: "x")])
        try file.store.close()
        try sqlite3Shell(file.path, "DROP TABLE folio_person_fts_data; CREATE TABLE folio_person_fts_data (x);")
        #expect {
            try Store(path: file.path, records: [Person.self])
        } throws: { error in
            guard case .invalidStoreMetadata(let path, let reason) = error as? FolioError else { return false }
            return path == file.path && reason.contains("'folio_person_fts'")
        }
    }

    @Test(arguments: damages.indices)
    func openingRepairsWhatIsDerived(_ index: Int) throws {
        let (damage, canWrite) = Self.damages[index]
        let file = try StaleKeyTests.FileStore()
        try insertPeople(
            file.store,
            ["alpha one", "beta two", "gamma three", "delta four", "epsilon five", "zeta six"].map {
                Person(String($0.split(separator: " ")[0]), city: "Zürich", note: $0)
            })
        try file.store.close()
        try sqlite3Shell(file.path, damage + (canWrite ? "\n" + Self.writes : ""))
        let store = try Store(path: file.path, records: [Person.self])
        try expectSearchAndKeysFollowTheText(store)
        // Folio's own writes after the repair are indexed and keyed too.
        try store.write { tx in
            var person = Person("Ärger", city: "Genève", note: "nouvelle entrée", age: 10)
            try tx.insert(&person)
            try tx.database.execute(sql: "UPDATE person SET note = 'Œuvre complète' WHERE id = 1")
        }
        try expectSearchAndKeysFollowTheText(store)
    }
}

/// The same damage done while a store has the file open: its next fetch (or write) notices
/// that the schema changed and repairs as an opening does. Before, a dropped folded-key
/// trigger let another program's rows keep stale keys for good, a dropped stale-row table
/// made every fetch and write of the entity fail, and a damaged full-text index every search.
@Suite("Text damage while open is repaired at the next access")
struct DamageWhileOpenTests {
    /// The damages that change the schema (the others — rows deleted from the index or its
    /// tables directly — are found at the next open only).
    static let schemaDamages = DamagedTextFileTests.damages.indices.filter { index in
        let damage = DamagedTextFileTests.damages[index].0
        return damage.contains("DROP ") || damage.contains("CREATE ")
    }

    /// An index whose data or configuration another program changed (no schema change):
    /// the next search finds it damaged, and it is made again from the keys. Before, every
    /// search failed ("database disk image is malformed", "invalid fts5 file format") until
    /// the store was opened again.
    @Test(arguments: [
        "DELETE FROM folio_person_fts_data;", "DELETE FROM folio_person_fts_config;",
        "UPDATE folio_person_fts_config SET v = 3 WHERE k = 'version';",
    ])
    func aDamagedIndexIsMadeAgainAtTheNextSearch(_ damage: String) async throws {
        let file = try StaleKeyTests.FileStore()
        let store = file.store
        try insertPeople(
            store, ["alpha one", "beta two", "Gamma thrée"].map { Person(String($0.prefix(4)), city: "Zürich", note: $0) })
        _ = try await store.fetch(RecordRequest<Person>(search: TextSearch("one")))
        try sqlite3Shell(file.path, damage)
        #expect(try fetchedNames(store, RecordRequest(search: TextSearch("THREE"))) == ["Gamm"])
        try sqlite3Shell(file.path, damage)
        #expect(try await store.fetch(RecordRequest<Person>(search: TextSearch("zurich"))).count == 3)
        try expectSearchAndKeysFollowTheText(store)
    }

    @Test(arguments: schemaDamages, [false, true])
    func theNextAccessRepairs(_ index: Int, writeFirst: Bool) throws {
        let (damage, canWrite) = DamagedTextFileTests.damages[index]
        let file = try StaleKeyTests.FileStore()
        let store = file.store
        try insertPeople(
            store,
            ["alpha one", "beta two", "gamma three", "delta four", "epsilon five", "zeta six"].map {
                Person(String($0.split(separator: " ")[0]), city: "Zürich", note: $0)
            })
        _ = try store.fetch(RecordRequest<Person>(search: TextSearch("one")))
        // In one transaction, the damage and the rows written while it lasts: the open store,
        // woken by each commit, repairs at once what a damage of several statements has
        // undone so far — and a repair that changes the schema (an index made again) while
        // the shell prepares its next statement can fail that statement with SQLITE_SCHEMA
        // ("no such table"), once every store is woken by inotify.
        try sqlite3Shell(file.path, "BEGIN;\n" + damage + (canWrite ? "\n" + DamagedTextFileTests.writes : "") + "\nCOMMIT;")
        if writeFirst {
            try store.write { tx in
                var person = Person("Ärger", city: "Genève", note: "nouvelle entrée", age: 10)
                try tx.insert(&person)
            }
        }
        try expectSearchAndKeysFollowTheText(store)
        try store.write { tx in
            try tx.database.execute(sql: "UPDATE person SET note = 'Œuvre complète' WHERE id = 1")
        }
        try expectSearchAndKeysFollowTheText(store)
    }
}

/// Every stored key is current, and searches and folded equality give what an oracle
/// computing words and folded names in Swift from the records gives.
func expectSearchAndKeysFollowTheText(_ store: Store, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let people = try store.fetch(RecordRequest<Person>(sortBy: [SortDescriptor(\.age)])).map { $0! }
    try expectKeysCurrent(store, sourceLocation: sourceLocation)
    func words(_ text: String?) -> Set<String> {
        Set((text ?? "").folded.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init))
    }
    var vocabulary = Set(["ghost", "nothing"])
    for person in people { vocabulary.formUnion(words(person.note).union(words(person.city))) }
    for word in vocabulary.sorted() {
        let expected = Set(people.filter { words($0.note).union(words($0.city)).contains(word) }.map(\.id!))
        let found = try store.fetch(RecordRequest<Person>(search: TextSearch(word.uppercased()))).map { $0!.id! }
        #expect(Set(found) == expected, "search \(word)", sourceLocation: sourceLocation)
        #expect(found.count == expected.count, "search \(word) found a record twice", sourceLocation: sourceLocation)
        #expect(
            try store.count(RecordRequest<Person>(search: TextSearch(word))) == expected.count, "count \(word)",
            sourceLocation: sourceLocation)
    }
    for person in people {
        let name = person.name.uppercased()
        let expected = Set(people.filter { $0.name.folded == name.folded }.map(\.id!))
        let found = try store.fetch(RecordRequest<Person>(predicate: #Predicate { $0.name.folded == name })).map { $0!.id! }
        #expect(Set(found) == expected, "name \(name)", sourceLocation: sourceLocation)
    }
    #expect(
        try store.fetchIdentifiers(RecordRequest<Person>(sortBy: [SortDescriptor(\.name.folded)])).map(\.rawValue)
            == (try expectedFoldedOrder(store)), sourceLocation: sourceLocation)
    try store.write { tx in
        try tx.database.execute(sql: "INSERT INTO folio_person_fts(folio_person_fts) VALUES('integrity-check')")
    }
}
