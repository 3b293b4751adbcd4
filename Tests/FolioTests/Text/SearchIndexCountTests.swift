import Foundation
import GRDB
import Testing

@testable import Folio

/// The full-text index's row count at opening: a table whose rowids span more than
/// `FoldedKeys.countedSpan` is not counted in the opening transaction (O(log n) bounds
/// only); the store counts it in the background, and a search waits for that count. Every
/// damage the count found at opening — rows deleted or inserted in the middle, where the
/// bounds stay — is still found before a search answers, and the index made again.
@Suite("A large full-text index is counted after the opening, before its first search")
struct SearchIndexCountTests {
    static let notes = ["alpha one", "beta two", "gamma three", "delta four", "epsilon five", "zeta six"]

    /// A file of six people; with `spread`, ids 1, 2, 3, 4,000,000, 5,000,000, 6,000,000
    /// (a span that defers the count). Returns the file, closed.
    static func makeFile(spread: Bool) throws -> StaleKeyTests.FileStore {
        let file = try StaleKeyTests.FileStore()
        try insertPeople(
            file.store, notes.map { Person(String($0.split(separator: " ")[0]), city: "Zürich", note: $0) })
        if spread {
            try file.store.write { tx in
                try tx.database.execute(sql: "UPDATE person SET id = id * 1000000 WHERE id > 3")
            }
        }
        try file.store.close()
        return file
    }

    /// The statements of an opening transaction run on a plain connection, and what it found.
    static func openingStatements(_ path: String) throws -> (statements: [String], uncounted: [String]) {
        let statements = Locked<[String]>([])
        let queue = try DatabaseQueue(path: path)
        let opened = try queue.writeWithoutTransaction { db in
            db.trace { event in statements.withLock { $0.append("\(event)") } }
            return try Migrator.open(db, DeclaredModel(StoreModel(unversioned: [Person.self])), path: path) { false }
        }
        try queue.close()
        return (statements.current, opened.uncountedSearchIndexes)
    }

    static func counts(_ text: String) -> Bool {
        text.lowercased().contains("count(*) from \"folio_person_fts_docsize\"")
    }

    @Test func aLargeTableIsNotCountedInTheOpeningTransaction() throws {
        let spread = try Self.makeFile(spread: true)
        let large = try Self.openingStatements(spread.path)
        #expect(large.uncounted == ["person"])
        #expect(!large.statements.contains(where: Self.counts))
        // The bounds are read (O(log n)).
        #expect(large.statements.contains { $0.contains("min(\"id\") FROM \"folio_person_fts_docsize\"") })
        // A small table is counted there, as before.
        let dense = try Self.makeFile(spread: false)
        let small = try Self.openingStatements(dense.path)
        #expect(small.uncounted.isEmpty)
        #expect(small.statements.contains(where: Self.counts))
    }

    /// What the opening reads of a large table reads the ends of its b-trees: SQLite's plan
    /// searches, and scans no table (`max(id) - min(id)` in one query would scan every row).
    @Test func theOpeningsBoundsReadTheEndsOfTheTrees() throws {
        let file = try Self.makeFile(spread: true)
        let queue = try DatabaseQueue(path: file.path)
        defer { try? queue.close() }
        for sql in [SQLBuilder.rowIDSpan("person"), SQLBuilder.searchIndexHasTableBounds("person")] {
            let plan = try queue.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String? ?? "" }
            }
            #expect(!plan.contains { $0.hasPrefix("SCAN") && $0 != "SCAN CONSTANT ROW" }, "\(sql): \(plan)")
            #expect(plan.filter { $0.hasPrefix("SEARCH") }.count >= 2, "\(sql): \(plan)")
        }
    }

    /// A healthy large index is counted once, in the background, and not made again.
    @Test func aHealthyIndexIsCountedInTheBackgroundAndKept() async throws {
        let file = try Self.makeFile(spread: true)
        let rootBefore = try Self.docsizeRoot(file.path)
        let store = try Store(path: file.path, records: [Person.self])
        let deadline = Date().addingTimeInterval(60)
        while !store.uncountedSearchIndexes.current.isEmpty, Date() < deadline {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(store.uncountedSearchIndexes.current.isEmpty)
        #expect(try fetchedNames(store, RecordRequest(search: TextSearch("three"))) == ["gamma"])
        try store.close()
        #expect(try Self.docsizeRoot(file.path) == rootBefore)
    }

    /// A search right after the opening, before the background count, counts first.
    @Test func aSearchCountsAnUncountedIndexFirst() throws {
        let file = try Self.makeFile(spread: true)
        try sqlite3Shell(file.path, "DELETE FROM folio_person_fts_docsize WHERE id = 2;")
        let store = try Store(path: file.path, records: [Person.self])
        store.uncountedSearchIndexes.withLock { $0 = ["person"] }  // as if the background had not run yet
        #expect(try fetchedNames(store, RecordRequest(search: TextSearch("TWO"))) == ["beta"])
        #expect(store.uncountedSearchIndexes.current.isEmpty)
        try Self.expectIndexHasTheTableRows(store)
        try expectSearchAndKeysFollowTheText(store)
    }

    /// What another program does to a closed file that leaves the index's smallest and
    /// largest rowid as they were: only a count finds it.
    static func damages(_ triggers: [String]) -> [String] {
        [
            // A row deleted from the index's row sizes, in the middle.
            "DELETE FROM folio_person_fts_docsize WHERE id = 2;",
            // A row inserted into the index directly, in the middle.
            "INSERT INTO folio_person_fts (rowid, folio_city_folded, folio_note_folded) VALUES (2500000, 'ghost', 'ghost');",
            // A row deleted from the index directly, in the middle.
            "DELETE FROM folio_person_fts WHERE rowid = 3;",
            // A row inserted into the table with the index's triggers dropped, and the
            // triggers made again exactly (keys written right, so nothing is noted stale).
            "DROP TRIGGER folio_person_fts_ins;"
                + " INSERT INTO person (id, name, folio_name_folded, city, note, folio_note_folded, code, age) VALUES (2500000, 'ghost', 'ghost', NULL, 'ghost town', 'ghost town', '', 9); "
                + triggers[0] + ";",
            // A row deleted from the table so.
            "DROP TRIGGER folio_person_fts_del; DELETE FROM person WHERE id = 2; " + triggers[1] + ";",
        ]
    }

    @Test(arguments: 0..<5, [true, false])
    func aDamageTheBoundsMissIsFoundBeforeASearch(_ index: Int, spread: Bool) async throws {
        let file = try Self.makeFile(spread: spread)
        let triggers = try Self.searchTriggerSQL(file.path)
        try sqlite3Shell(file.path, Self.damages(triggers)[index])
        let store = try Store(path: file.path, records: [Person.self])
        // At once: the search itself counts when the background has not yet.
        try expectSearchAndKeysFollowTheText(store)
        try Self.expectIndexHasTheTableRows(store)
        #expect(try fetchedNames(store, RecordRequest(search: TextSearch("ghost"))) == (index == 3 ? ["ghost"] : []))
        let async = try await store.fetch(RecordRequest<Person>(search: TextSearch("zurich"))).count
        #expect(async == (index == 4 ? 5 : 6))
    }

    /// The same through the async paths (`fetch` and `performFetch` in the background) on a
    /// store whose background count is taken to be still pending.
    @MainActor
    @Test func theAsyncPathsCountFirst() async throws {
        let file = try Self.makeFile(spread: true)
        try sqlite3Shell(file.path, "DELETE FROM folio_person_fts WHERE rowid = 3;")
        let store = try Store(path: file.path, records: [Person.self])
        store.uncountedSearchIndexes.withLock { $0 = ["person"] }
        #expect(try await store.fetch(RecordRequest<Person>(search: TextSearch("three"))).map { $0!.name } == ["gamma"])
        try Self.expectIndexHasTheTableRows(store)
        try sqlite3Shell(file.path, "DELETE FROM folio_person_fts_docsize WHERE id = 2;")
        store.uncountedSearchIndexes.withLock { $0 = ["person"] }
        let controller = FetchedResultsController(
            RecordRequest<Person>(search: TextSearch("two"), sortBy: [SortDescriptor(\.age)]), store: store)
        try await controller.performFetch()
        #expect(controller.fetchedObjects?.map { $0?.name } == ["beta"])
        try Self.expectIndexHasTheTableRows(store)
    }

    static func expectIndexHasTheTableRows(_ store: Store, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (sizes, indexed, rows, orphans) = try store.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_person_fts_docsize") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_person_fts") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM person") ?? -2,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_person_fts WHERE rowid NOT IN (SELECT id FROM person)")
                    ?? -1
            )
        }
        #expect(sizes == rows, sourceLocation: sourceLocation)
        #expect(indexed == rows, sourceLocation: sourceLocation)
        #expect(orphans == 0, sourceLocation: sourceLocation)
    }

    static func searchTriggerSQL(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try String.fetchAll(
                db,
                sql:
                    "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN ('folio_person_fts_ins', 'folio_person_fts_del') ORDER BY name DESC"
            )
        }
    }

    static func docsizeRoot(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'folio_person_fts_docsize'") ?? 0
        }
    }
}
