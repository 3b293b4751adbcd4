import Foundation
import GRDB
import Testing
@testable import Folio

/// Full-text search: how a user's text is read, what it finds, ranking, errors, and the
/// index kept equal to the folded keys whoever writes.
@Suite("Full-text search")
struct TextSearchTests {
    static let notes = [
        "iPad Pro review", "The new iPadOS", "Café crème", "Crème brûlée recipe", "brûlée, then crème", "STRASSE names",
        "Straße in Köln", "mac or ipad", "C'est la vie", "a \"quoted\" word", "Ünal İnce", "ıslak zemin", "日本語のテキスト",
        "emoji 😀 here",
        "x-ray vision",
    ]

    static func store() throws -> (Store, [Person]) {
        let store = try Store.inMemory(records: [Person.self])
        let people = try insertPeople(
            store, notes.enumerated().map { Person("p\($0.offset)", city: $0.offset % 2 == 0 ? "Zürich" : nil, note: $0.element) }
        )
        return (store, people)
    }

    static func notes(_ store: Store, _ search: TextSearch<Person>, predicate: Predicate<Person>? = nil) throws -> Set<String> {
        Set(try store.fetch(RecordRequest(predicate: predicate, search: search)).map { $0!.note })
    }

    @Test func wordsAreCaseAndDiacriticInsensitive() throws {
        let (store, _) = try Self.store()
        #expect(try Self.notes(store, TextSearch("ipad")) == ["iPad Pro review", "mac or ipad"])
        #expect(try Self.notes(store, TextSearch("IPAD PRO")) == ["iPad Pro review"])
        #expect(try Self.notes(store, TextSearch("cafe")) == ["Café crème"])
        #expect(try Self.notes(store, TextSearch("CREME")) == ["Café crème", "Crème brûlée recipe", "brûlée, then crème"])
        #expect(try Self.notes(store, TextSearch("strasse")) == ["STRASSE names", "Straße in Köln"])
        #expect(try Self.notes(store, TextSearch("koln")) == ["Straße in Köln"])
        #expect(try Self.notes(store, TextSearch("unal INCE")) == ["Ünal İnce"])
        #expect(try Self.notes(store, TextSearch("islak")) == ["ıslak zemin"])
        #expect(try Self.notes(store, TextSearch("ipa")).isEmpty)
    }

    @Test func prefixesAndPhrases() throws {
        let (store, _) = try Self.store()
        #expect(try Self.notes(store, TextSearch("ipa*")) == ["iPad Pro review", "The new iPadOS", "mac or ipad"])
        #expect(
            try Self.notes(store, TextSearch("ipa", matchingPrefixes: true)) == [
                "iPad Pro review", "The new iPadOS", "mac or ipad",
            ])
        #expect(try Self.notes(store, TextSearch("ipa pr", matchingPrefixes: true)) == ["iPad Pro review"])
        #expect(try Self.notes(store, TextSearch("\"creme brulee\"")) == ["Crème brûlée recipe"])
        #expect(try Self.notes(store, TextSearch("\"brulee creme\"")).isEmpty)
        #expect(try Self.notes(store, TextSearch("\"BRULEE, then CREME\"")) == ["brûlée, then crème"])
        #expect(try Self.notes(store, TextSearch("brulee creme")) == ["Crème brûlée recipe", "brûlée, then crème"])
        #expect(try Self.notes(store, TextSearch("\"creme bru\"*")) == ["Crème brûlée recipe"])
        // A word with separators inside is a phrase, as the index splits it.
        #expect(try Self.notes(store, TextSearch("X-RAY")) == ["x-ray vision"])
        #expect(try Self.notes(store, TextSearch("ray-x")).isEmpty)
        #expect(try Self.notes(store, TextSearch("c'est")) == ["C'est la vie"])
    }

    /// No input is an SQL or FTS5 syntax error: operators, quotes, brackets and control
    /// characters are text. Words made only of separators are left out, and a text with no
    /// word matches everything.
    @Test(arguments: [
        "\"", "\"\"", "'", "*", "**", "(", ")", "(ipad", "ipad)", ":", "note:ipad", "{note}: ipad", "^ipad", "+ipad", "-ipad",
        "AND", "OR", "NOT", "NEAR", "NEAR(ipad mac)", "ipad AND", "ipad OR mac", "NOT ipad", ";", "'; DROP TABLE person; --",
        "\u{0}", "ipad\u{0}pro", "😀", "🇫🇷", "\\", "\"ipad", "ipad\"", "\"\"ipad\"\"", "* ipad", "ipad **", "%", "_",
        "\u{301}", "\u{FFFD}", String(repeating: "a", count: 10_000), String(repeating: "ipad ", count: 500),
    ])
    func anyTextIsAQueryNeverASyntaxError(_ text: String) throws {
        let (store, _) = try Self.store()
        for prefixes in [false, true] {
            _ = try Self.notes(store, TextSearch(text, matchingPrefixes: prefixes))
            _ = try store.count(RecordRequest<Person>(search: TextSearch(text, in: [\Person.note], matchingPrefixes: prefixes)))
        }
    }

    @Test func operatorsAreSearchedAsWords() throws {
        let (store, _) = try Self.store()
        #expect(try Self.notes(store, TextSearch("mac OR ipad")) == ["mac or ipad"])
        #expect(try Self.notes(store, TextSearch("NOT ipad")).isEmpty)
        #expect(try Self.notes(store, TextSearch("ipad)")) == ["iPad Pro review", "mac or ipad"])
        #expect(try Self.notes(store, TextSearch("note:ipad")).isEmpty)  // "note" is a word here, not a column
        #expect(try Self.notes(store, TextSearch("\"quoted\"")) == ["a \"quoted\" word"])
        #expect(try Self.notes(store, TextSearch("😀 here")) == ["emoji 😀 here"])
    }

    @Test func aTextWithNoWordMatchesEverything() throws {
        let (store, people) = try Self.store()
        for text in ["", "   ", "😀", "\"\"", "*", "-", "\u{0}"] {
            #expect(try store.count(RecordRequest<Person>(search: TextSearch(text))) == people.count, "\(text.debugDescription)")
        }
    }

    @Test func restrictedToSomeAttributesAndCombinedWithThePredicate() throws {
        let (store, _) = try Self.store()
        #expect(try Self.notes(store, TextSearch("zurich")).count == (Self.notes.count + 1) / 2)
        #expect(try Self.notes(store, TextSearch("zurich", in: [\Person.note])).isEmpty)
        #expect(try Self.notes(store, TextSearch("zurich ipad", in: [\Person.note, \Person.city])) == ["iPad Pro review"])
        #expect(try Self.notes(store, TextSearch("zurich"), predicate: #Predicate { $0.name == "p2" }) == ["Café crème"])
        #expect(try Self.notes(store, TextSearch("ipad"), predicate: #Predicate { $0.city == nil }) == ["mac or ipad"])
        #expect(
            throws: FolioError.attributeNotSearchable(entity: "person", attribute: "name"),
            performing: { try store.fetch(RecordRequest<Person>(search: TextSearch("x", in: [\Person.name]))) })
        let plain = try Store.inMemory(records: [Article.self])
        #expect(
            throws: FolioError.attributeNotSearchable(entity: "article", attribute: nil),
            performing: { try plain.fetch(RecordRequest<Article>(search: TextSearch("x"))) })
    }

    @Test func rankedByRelevanceForOneShotFetches() async throws {
        let store = try Store.inMemory(records: [Person.self])
        try insertPeople(
            store,
            [
                Person("once", note: "ipad and many other words that dilute the match a lot here"),
                Person("thrice", note: "ipad ipad ipad"),
                Person("none", note: "mac"), Person("twice", note: "ipad mac ipad"),
            ])
        let ranked = RecordRequest<Person>(
            search: TextSearch("ipad", rankedByRelevance: true), sortBy: [SortDescriptor(\.name)], batchSize: 2)
        #expect(try await store.fetch(ranked).map { $0!.name } == ["thrice", "twice", "once"])
        #expect(try store.fetchIdentifiers(ranked).count == 3)
        var unbatched = ranked
        unbatched.batchSize = 0
        #expect(try await store.fetch(unbatched).map { $0!.name } == ["thrice", "twice", "once"])
        let background = try await store.fetchInBackground(ranked).value
        #expect(background.map { $0!.name } == ["thrice", "twice", "once"])
        let controller = await FetchedResultsController(ranked, store: store)
        await #expect(throws: FolioError.self) { try await controller.performFetch() }
    }

    @Test @MainActor func liveControllersFollowSearches() async throws {
        let store = try Store.inMemory(records: [Person.self])
        let people = try insertPeople(
            store, (0..<50).map { Person("n\($0)", note: $0 % 5 == 0 ? "Café \($0)" : "tea \($0)", age: $0) })
        let harness = try await PersonHarness(
            store, RecordRequest(search: TextSearch("CAFE", matchingPrefixes: true), sortBy: [SortDescriptor(\.age)]))
        #expect(harness.controller.fetchedObjects?.count == 10)
        // Comes to match.
        var changes = try await harness.settle()
        try writeSync(store) { tx in
            var person = people[1]
            person.note = "café au lait"
            try tx.update(person)
        }
        changes = try await harness.settle()
        #expect(changes.map(\.insertedItems) == [[IndexPath(item: 1, section: 0)]])
        // Stops matching.
        try writeSync(store) { tx in
            var person = people[0]
            person.note = "tea"
            try tx.update(person)
        }
        changes = try await harness.settle()
        #expect(changes.map(\.deletedItems) == [[IndexPath(item: 0, section: 0)]])
        // Edited, still matching: an update.
        try writeSync(store) { tx in
            var person = people[5]
            person.note = "CAFÉ noir"
            try tx.update(person)
        }
        changes = try await harness.settle()
        #expect(changes.map(\.updatedItems) == [[IndexPath(item: 1, section: 0)]])
        // Inserted, deleted, and raw SQL in a transaction.
        try writeSync(store) { tx in
            var person = Person("new", note: "cafeteria", age: 100)
            try tx.insert(&person)
            try tx.delete(people[10])
            try tx.database.execute(sql: "UPDATE person SET note = 'Cafés' WHERE age = 2")
        }
        changes = try await harness.settle()
        #expect(changes.count == 1)
        #expect(harness.controller.fetchedObjects?.compactMap { $0?.age } == [1, 2, 5, 15, 20, 25, 30, 35, 40, 45, 100])
    }

    /// A model's `search`, set as a search field would, is one change each time.
    @Test @MainActor func aModelsSearchIsOneChange() throws {
        let (store, _) = try Self.store()
        let model = FetchedResultsModel(RecordRequest<Person>(sortBy: [SortDescriptor(\.name)]), store: store)
        try model.performFetch()
        let changes = ObservationCounter { _ = model.items.count }
        for (text, count) in [("c", 4), ("cr", 3), ("cre", 3), ("crem", 3), ("creme", 3), ("creme b", 2), ("", 15)] {
            model.search = text.isEmpty ? nil : TextSearch(text, matchingPrefixes: true)
            #expect(model.items.count == count, "\(text)")
            #expect(changes.take() == 1)
            #expect(model.lastError == nil)
        }
    }

    /// The index follows every writer, including `INSERT OR REPLACE` from a connection without
    /// recursive triggers (whose implicit delete fires no trigger), rowid changes, and rows
    /// written by another program whose keys Folio fixes up later.
    @Test func theIndexFollowsOtherWriters() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-fts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let store = try Store(path: path, records: [Person.self])
        let people = try insertPeople(store, [Person("a", note: "alpha words"), Person("b", note: "beta words")])
        try sqlite3Shell(
            path,
            """
            PRAGMA recursive_triggers = OFF;
            INSERT OR REPLACE INTO person (id, name, note, code, age) VALUES (\(people[0].id!.rawValue), 'a2', 'Gamma Ünïcode', '', 0);
            UPDATE person SET id = 1000 WHERE id = \(people[1].id!.rawValue);
            INSERT INTO person (name, note, code, age) VALUES ('c', 'DELTA wörds', '', 0);
            """)
        try store.synchronize()
        func search(_ text: String) throws -> Set<String> {
            Set(try store.fetch(RecordRequest<Person>(search: TextSearch(text))).map { $0!.name })
        }
        #expect(try search("alpha").isEmpty, "the replaced row's old words are gone")
        #expect(try search("gamma unicode") == ["a2"])
        #expect(try search("beta") == ["b"])
        #expect(try search("delta words") == ["c"])
        #expect(try search("words") == ["b", "c"])
        let check = try store.read { db in try String.fetchAll(db, sql: "SELECT rowid FROM folio_person_fts ORDER BY rowid") }
        let ids = try store.read { db in try String.fetchAll(db, sql: "SELECT id FROM person ORDER BY id") }
        #expect(check == ids)
        try store.write { tx in
            try tx.database.execute(sql: "INSERT INTO folio_person_fts(folio_person_fts) VALUES('integrity-check')")
        }
    }
}
