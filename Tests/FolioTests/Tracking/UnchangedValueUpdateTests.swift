import Foundation
import GRDB
import Testing
@testable import Folio

/// A row set to the values it already has is not updated: a live list delivers nothing for
/// it, however it was written (Folio's update and upsert, raw SQL, a rewrite of every row),
/// and a real change beside it is reported alone, with the moves it makes and no others.
/// Core Data sends nothing for an unchanged object; neither does Folio — no change set at
/// all, not an empty one.
@Suite("Live lists: an update that changes no stored value")
@MainActor
struct UnchangedValueUpdateTests {
    static func harness(count: Int = 20, cacheName: String? = nil) async throws -> LiveHarness {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: count)
        return try await LiveHarness(
            store, sorted([SortDescriptor(\.category), SortDescriptor(\.score)]), sectionBy: .attribute(\.category),
            cacheName: cacheName)
    }

    @Test func anUpdateThroughFolioToTheSameValuesDeliversNothing() async throws {
        let live = try await Self.harness()
        let all = try await live.store.fetch(RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])).map { $0! }
        #expect(try await live.step { tx in try tx.update(all[3]) } == [])
        #expect(try await live.step { tx in for a in all { try tx.update(a) } } == [])
        var changed = all[3]
        changed.title = "Article 3, renamed"
        let delivered = try await live.step { tx in for a in all { try tx.update(a.id == changed.id ? changed : a) } }
        #expect(delivered.count == 1)
        #expect(delivered.first?.updatedIdentifiers == [changed.id!])
        #expect(delivered.first?.movedItems == [])
    }

    @Test func rawSQLSettingTheSameValuesDeliversNothing() async throws {
        let live = try await Self.harness()
        let steps: [String] = [
            "UPDATE article SET title = 'Article 4' WHERE title = 'Article 4'",
            "UPDATE article SET title = title, score = score, category = category, published = published",
            "UPDATE article SET score = CAST(score AS REAL)",  // stored back as the same integer
            "UPDATE article SET score = CAST(score AS TEXT)",
            "UPDATE article SET published = CAST(published AS TEXT)",
            "UPDATE article SET category = NULL WHERE category IS NULL",
            "UPDATE article SET isRead = 0",
        ]
        for sql in steps {
            #expect(try await live.step { tx in try tx.database.execute(sql: sql) } == [], "\(sql)")
        }
    }

    @Test func anUpsertOfTheSameValuesDeliversNothing() async throws {
        let live = try await Self.harness()
        let all = try await live.store.fetch(RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])).map { $0! }
        let delivered = try await live.step { tx in
            for var a in all {
                a.id = nil
                try tx.upsert(&a, onConflict: \.url)
            }
        }
        #expect(delivered == [])
        let moved = try await live.step { tx in
            for var a in all {
                a.id = nil
                if a.score == 2 { a.score = 100 }
                try tx.upsert(&a, onConflict: \.url)
            }
        }
        #expect(moved.count == 1)
        #expect(moved.first?.movedIdentifiers == [all[2].id!])
        #expect(moved.first?.insertedItems == [] && moved.first?.deletedItems == [])
    }

    @Test(arguments: [nil, "every-row"] as [String?])
    func aRewriteOfEveryRowOfALargeTableDeliversNothing(cacheName: String?) async throws {
        let live = try await Self.harness(count: 5_000, cacheName: cacheName)
        live.store.diagnostics.resetCounters()
        #expect(try await live.step { tx in try tx.database.execute(sql: "UPDATE article SET title = title, url = url") } == [])
        #expect(live.store.diagnostics.counters.changeSets == 0)
        let all = try await live.store.fetch(RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])).map { $0! }
        #expect(try await live.step { tx in for var a in all { a.id = nil; try tx.upsert(&a, onConflict: \.url) } } == [])
    }

    /// Values at the edges of SQLite's comparison, in Article's columns (`score` INTEGER,
    /// `published` REAL, `title` and `category` TEXT).
    struct Edge: Sendable, CustomTestStringConvertible {
        var before: String
        var after: String
        var updated: Bool
        var testDescription: String { "\(before) → \(after)" }
    }

    nonisolated static let edges: [Edge] = [
        Edge(before: "score = 9223372036854775807", after: "score = 9.223372036854776e18", updated: true),
        Edge(before: "score = 9007199254740993", after: "score = 9007199254740993.0", updated: true),
        Edge(before: "score = 9007199254740992", after: "score = 9007199254740992.0", updated: false),
        Edge(before: "published = 0.0", after: "published = -0.0", updated: false),
        Edge(before: "title = 'a' || char(0) || 'b'", after: "title = 'a' || char(0) || 'c'", updated: true),
        Edge(before: "title = 'a' || char(0) || 'b'", after: "title = 'a' || char(0) || 'b'", updated: false),
        Edge(before: "title = 'caf' || char(233)", after: "title = 'cafe' || char(769)", updated: true),
        Edge(before: "title = 'A'", after: "title = 'a'", updated: true),
        Edge(before: "title = 'abc'", after: "title = X'616263'", updated: true),
        Edge(before: "category = NULL", after: "category = NULL", updated: false),
        Edge(before: "category = '1'", after: "category = 1", updated: false),
    ]

    @Test(arguments: edges)
    func anUpdateIsAChangedStoredValueAtTheEdges(_ edge: Edge) async throws {
        // Sorted by the rowid: a changed value is an update in place, never a move.
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 5)
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.id)]))
        try await live.step { tx in try tx.database.execute(sql: "UPDATE article SET \(edge.before)") }
        let delivered = try await live.step { tx in
            try tx.database.execute(sql: "UPDATE article SET \(edge.after) WHERE id = 3")
            try tx.database.execute(sql: "UPDATE article SET \(edge.before) WHERE id <> 3")
        }
        let id = RecordID(3)
        #expect(delivered.map(\.updatedIdentifiers) == (edge.updated ? [[id]] : []))
    }

    @Test func aRealChangeBesideUnchangedRowsIsTheOnlyOneReportedWithMinimalMoves() async throws {
        let live = try await Self.harness()
        let delivered = try await live.step { tx in
            try tx.database.execute(sql: "UPDATE article SET score = CASE WHEN score = 5 THEN 1000 ELSE score END")
        }
        #expect(delivered.count == 1)
        let change = try #require(delivered.first)
        #expect(change.movedIdentifiers.count == 1)
        #expect(change.updatedIdentifiers.count + change.movedIdentifiers.count == 1)
        #expect(change.insertedItems.isEmpty && change.deletedItems.isEmpty)
    }

    @Test func aRowReplacedByItselfIsAtMostAnUpdate() async throws {
        let live = try await Self.harness()
        let delivered = try await live.step { tx in
            try tx.database.execute(
                sql: """
                    INSERT OR REPLACE INTO article (id, title, url, published, score, category, isRead)
                    SELECT id, title, url, published, score, category, isRead FROM article WHERE score = 7
                    """)
        }
        #expect(delivered.count <= 1)
        if let change = delivered.first {
            #expect(change.updatedIdentifiers.count == 1)
            #expect(change.movedItems.isEmpty && change.insertedItems.isEmpty && change.deletedItems.isEmpty)
        }
    }

    @Test func aRowChangedAndChangedBackInOneTransactionIsAnUpdate() async throws {
        let live = try await Self.harness()
        let delivered = try await live.step { tx in
            try tx.database.execute(sql: "UPDATE article SET title = 'x' WHERE score = 4")
            try tx.database.execute(sql: "UPDATE article SET title = 'Article 4' WHERE score = 4")
        }
        #expect(delivered.map(\.updatedIdentifiers.count) == [1])
        #expect(delivered.first?.movedItems == [])
    }

    @Test func aChangedRowidIsStillADeleteAndAnInsert() async throws {
        let live = try await Self.harness()
        let delivered = try await live.step { tx in try tx.database.execute(sql: "UPDATE article SET id = 1000 WHERE score = 4") }
        #expect(delivered.count == 1)
        #expect(delivered.first?.deletedIdentifiers.map(\.rawValue) == [5])
        #expect(delivered.first?.insertedIdentifiers.map(\.rawValue) == [1000])
    }

    @Test func aFoldedTextSetToItsValueDeliversNothingAndAChangedOneAnUpdate() async throws {
        let store = try Store.temporary(records: [Person.self])
        let people = try insertPeople(store, [Person("Arthur", age: 1), Person("Zoë", age: 2), Person("Ärger", age: 3)])
        let controller = FetchedResultsController(
            RecordRequest<Person>(sortBy: [SortDescriptor(\.name.folded)]), store: store)
        let recorder = ChangeRecorder<Person>()
        controller.delegate = recorder
        try await controller.performFetch()
        try writeSync(store) { tx in try tx.database.execute(sql: "UPDATE person SET name = 'Arthur' WHERE name = 'Arthur'") }
        try writeSync(store) { tx in try tx.update(people[1]) }
        try writeSync(store) { tx in try tx.database.execute(sql: "UPDATE person SET name = name, age = age") }
        await controller.waitForChanges()
        #expect(recorder.changeSets == [])
        try writeSync(store) { tx in try tx.database.execute(sql: "UPDATE person SET name = 'arthur' WHERE name = 'Arthur'") }
        await controller.waitForChanges()
        #expect(recorder.changeSets.map(\.updatedIdentifiers) == [[people[0].id!]])
        #expect(recorder.changeSets.first?.movedItems == [])
    }
}

extension UnchangedValueUpdateTests {
    /// A full-text index writes rows 1 and 10 of its `%_data` table at every indexed write,
    /// in the same statement: they are not rows 1 and 10 of the entity.
    @Test func aWriteToASearchableAttributeReportsOnlyItsRow() async throws {
        let store = try Store.temporary(records: [Person.self])
        let people = try insertPeople(store, (0..<12).map { Person("p\($0)", note: "note \($0)", age: $0) })
        let controller = FetchedResultsController(RecordRequest<Person>(sortBy: [SortDescriptor(\.age)]), store: store)
        let recorder = ChangeRecorder<Person>()
        controller.delegate = recorder
        try await controller.performFetch()
        var changed = people[4]
        changed.note = "a new note"
        try writeSync(store) { tx in try tx.update(changed) }
        try writeSync(store) { tx in try tx.database.execute(sql: "UPDATE person SET city = 'Paris' WHERE age = 5") }
        var inserted = Person("p12", note: "indexed", age: 12)
        try writeSync(store) { tx in try tx.insert(&inserted) }
        await controller.waitForChanges()
        #expect(recorder.changeSets.map(\.updatedIdentifiers) == [[people[4].id!], [people[5].id!], []])
        #expect(recorder.changeSets.last?.insertedIdentifiers == [inserted.id!])
    }
}

/// Records the change sets any controller delivers.
@MainActor
final class ChangeRecorder<R: PersistentRecord>: FetchedResultsControllerDelegate {
    var changeSets: [ChangeSet] = []
    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
    }
}
