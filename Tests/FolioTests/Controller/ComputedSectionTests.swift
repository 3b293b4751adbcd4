import Foundation
import GRDB
import Testing

@testable import Folio

/// A `.computed` section key's closure is given the stored value with its storage class, so
/// two values SQLite finds equal (the integer -2⁶³ and the real -2⁶³) may fall in different
/// sections: the identifier scan must not extend a run over them without asking the closure.
@MainActor
@Suite struct ComputedSectionTests {
    /// Sections of a real and an integer that SQLite compares equal, side by side in the sort.
    private static let key = SectionKey<Item>.computed(\.score, name: "sign") { (score: Int?) in
        score.map { $0 < 0 ? "negative" : "positive" }
    }

    private func store(rows: String) async throws -> Store {
        let store = try Store.temporary(records: [Item.self])
        try await store.write { tx in
            // An integer column keeps the real -2⁶³ that an overflowing sum leaves: the
            // integer row and the real row compare equal in SQL, and only the stamp orders them.
            try tx.database.execute(sql: "INSERT INTO item (id, name, key, score, stamp, rank, value, flag) VALUES \(rows)")
            try tx.database.execute(sql: "UPDATE item SET score = score + -11 WHERE id = 1")
        }
        return store
    }

    private var request: RecordRequest<Item> {
        RecordRequest<Item>(sortBy: [SortDescriptor(\.score, order: .reverse), SortDescriptor(\.stamp)])
    }

    @Test func aRealAndAnIntegerThatSQLiteFindsEqualAreGivenToTheClosureEach() async throws {
        let store = try await store(
            rows: "(1, 'a', 'k1', -9223372036854775807 - 1, NULL, 0, 0, 0), (2, 'b', 'k2', -9223372036854775807 - 1, 10, 0, 0, 0)"
        )
        let types = try await store.read { db in try String.fetchAll(db, sql: "SELECT typeof(score) FROM item ORDER BY id") }
        #expect(types == ["real", "integer"])
        let controller = FetchedResultsController(request, store: store, sectionBy: Self.key)
        try await controller.performFetch()
        // The real does not decode as an `Int`: the closure sees no value, so its row is in
        // the nil section; the integer's row is "negative". One run of two rows was wrong.
        #expect(controller.sections.map(\.name) == ["", "negative"])
        #expect(controller.sections.map(\.numberOfObjects) == [1, 1])
        #expect(controller.sections.map(\.isNil) == [true, false])
    }

    @Test func theSameValuesAfterANilRowAreNotContiguous() async throws {
        let store = try await store(
            rows:
                "(1, 'a', 'k1', -9223372036854775807 - 1, NULL, 0, 0, 0), (2, 'b', 'k2', -9223372036854775807 - 1, 10, 0, 0, 0), (3, 'c', 'k3', NULL, 20, 0, 0, 0)"
        )
        let controller = FetchedResultsController(request, store: store, sectionBy: Self.key)
        // nil, "negative", nil: the nil section in two places is refused by name.
        await #expect {
            try await controller.performFetch()
        } throws: { error in
            guard case .sectionsNotContiguous? = error as? FolioError else { return false }
            return true
        }
    }

    @Test func aLiveInsertBesideTheRealRowIsFollowedExactly() async throws {
        let store = try await store(
            rows: "(1, 'a', 'k1', -9223372036854775807 - 1, NULL, 0, 0, 0), (4, 'd', 'k4', 5, 0, 0, 0, 0)")
        let controller = FetchedResultsController(request, store: store, sectionBy: Self.key)
        let changes = controller.changes
        _ = changes
        try await controller.performFetch()
        #expect(controller.sections.map(\.name) == ["positive", ""])
        try await store.write { tx in
            try tx.database.execute(
                sql:
                    "INSERT INTO item (id, name, key, score, stamp, rank, value, flag) VALUES (2, 'b', 'k2', -9223372036854775807 - 1, 10, 0, 0, 0)"
            )
        }
        await controller.waitForChanges()
        #expect(controller.lastError == nil)
        #expect(controller.sections.map(\.name) == ["positive", "", "negative"])
        let fresh = FetchedResultsController(request, store: store, sectionBy: Self.key)
        try await fresh.performFetch()
        #expect(fresh.sections.map(\.name) == controller.sections.map(\.name))
        #expect(Array(fresh.snapshot.identifiers) == Array(controller.snapshot.identifiers))
    }
}
