import Foundation
import GRDB
import Testing
@testable import Folio

/// SwiftUI's `onMove` of several rows is one transaction; the main actor shows a move at once
/// and does not wait for its write; a failed write moves every row back and is reported.
@Suite("Reordering by hand: moves as SwiftUI makes them")
@MainActor
struct MovesAsSwiftUIMakesThemTests {
    @Test func singleMovesAreArrayMoveAndMoveOnlyTheMovedRows() {
        var random = SeededRandom(seed: 11)
        for _ in 0..<2_000 {
            let count = Int.random(in: 1...12, using: &random)
            let rows = (0..<count).map { Int64($0 * 10 + 1) }
            var source = IndexSet()
            for i in 0..<count where Bool.random(using: &random) { source.insert(i) }
            if source.isEmpty { source.insert(Int.random(in: 0..<count, using: &random)) }
            let destination = Int.random(in: 0...count, using: &random)
            let expected = rows.movingElements(fromOffsets: source, toOffset: destination)
            let moves = FetchedResultsController<Chore>.singleMoves(
                rows, fromOffsets: source, toOffset: destination, section: 0)
            let state = ResultsState(ids: IdentifierList(rows), runs: [], sectioned: false)
            #expect(Array(state.applying(moves).ids) == expected, "\(rows) \(Array(source)) → \(destination)")
            let movedIDs = Set(source.map { rows[$0] })
            #expect(moves.allSatisfy { movedIDs.contains($0.id) }, "only the moved rows move")
            #expect(moves.count <= source.count)
        }
    }

    @Test(arguments: [false, true])
    func severalRowsMoveInOneTransaction(throughTheModel: Bool) async throws {
        let store = try ReorderTests.store(per: 8)
        let transactions = SQLRecorder(store)
        if throughTheModel {
            let model = FetchedResultsModel(RecordRequest<Chore>(sortBy: [SortDescriptor(\.position)]), store: store)
            try performFetchSync(model)
            let ids = model.items.map(\.id.rawValue)
            transactions.reset()
            try model.move(fromOffsets: IndexSet([0, 2, 5]), toOffset: 7)
            #expect(model.items.map(\.id.rawValue) == [ids[1], ids[3], ids[4], ids[6], ids[0], ids[2], ids[5], ids[7]])
            await model.waitForChanges()
            #expect(model.items.map(\.id.rawValue) == [ids[1], ids[3], ids[4], ids[6], ids[0], ids[2], ids[5], ids[7]])
        } else {
            let table = try await ChoreTable(store, sectioned: false)
            let ids = table.shown[0]
            transactions.reset()
            try table.controller.moveObjects(fromOffsets: IndexSet([0, 2, 5]), toOffset: 7)
            try table.model.applyUserMoves(fromOffsets: IndexSet([0, 2, 5]), toOffset: 7)
            let echoed = try await table.settle()
            #expect(echoed.allSatisfy { $0.isEmpty }, "not echoed: \(echoed)")
            #expect(table.shown == [[ids[1], ids[3], ids[4], ids[6], ids[0], ids[2], ids[5], ids[7]]])
        }
        let writes = transactions.statements.filter { $0.hasPrefix("BEGIN IMMEDIATE") }
        #expect(
            writes.count == 1,
            "one write transaction: \(transactions.statements.filter { $0.hasPrefix("BEGIN") || $0.hasPrefix("COMMIT") })")
    }

    @Test func theMainActorDoesNotWaitForTheWrite() async throws {
        let store = try ReorderTests.store(per: 5)
        let table = try await ChoreTable(store, sectioned: false)
        let before = table.shown[0]
        // The writer is busy with another transaction until released.
        let gate = WriteGate()
        let busy = Task.detached {
            try await store.write { tx in
                try tx.database.execute(sql: "UPDATE chore SET title = 'busy' WHERE title = 'a2'")
                gate.begin()
                gate.waitForRelease()
            }
        }
        for _ in 0..<5_000 where !gate.hasBegun { try await Task.sleep(for: .milliseconds(1)) }
        let started = ContinuousClock.now
        try table.drag(from: IndexPath(item: 4, section: 0), to: IndexPath(item: 0, section: 0))
        #expect(ContinuousClock.now - started < .seconds(1), "returned while the writer is busy")
        #expect(table.shown == [[before[4], before[0], before[1], before[2], before[3]]], "shown at once")
        gate.open()
        try await busy.value
        let changes = try await table.settle()
        #expect(changes.flatMap(\.movedItems).isEmpty, "not echoed: \(changes)")
        #expect(changes.flatMap(\.updatedIdentifiers).map(\.rawValue) == [before[2]], "the other commit's row: \(changes)")
        let first = try readNow(store) { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM chore ORDER BY position LIMIT 1")
        }
        #expect(first == before[4], "written")
    }

    @Test func aFailedWriteOfSeveralRowsMovesThemAllBackAndIsReported() async throws {
        let store = try ReorderTests.store(per: 6)
        let table = try await ChoreTable(store, sectioned: false)
        let recorder = LiveRecorderOf<Chore>()
        table.controller.delegate = recorder
        let before = table.shown
        try execute(
            store,
            "CREATE TRIGGER refuse BEFORE UPDATE OF position ON chore WHEN NEW.title = 'a3' BEGIN SELECT RAISE(ABORT, 'no'); END"
        )
        try table.controller.moveObjects(fromOffsets: IndexSet([1, 3]), toOffset: 6)
        try table.model.applyUserMoves(fromOffsets: IndexSet([1, 3]), toOffset: 6)
        #expect(table.shown != before, "shown at once")
        // A second move made on top of the failing one is not written either.
        try table.drag(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 5, section: 0))
        let changes = try await table.settle()
        #expect(table.shown == before, "every row back: \(changes)")
        #expect(table.controller.lastError != nil)
        #expect(recorder.errors.count == 1)
        let positions = try readNow(store) { db in try Int.fetchAll(db, sql: "SELECT position FROM chore ORDER BY id") }
        #expect(positions == [0, 1_000, 2_000, 3_000, 4_000, 5_000], "nothing written")
    }
}

/// Records a controller's change sets and errors, for any record type.
@MainActor
final class LiveRecorderOf<R: PersistentRecord>: FetchedResultsControllerDelegate {
    var changeSets: [ChangeSet] = []
    var errors: [FolioError] = []
    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
    }
    func controller(_ controller: FetchedResultsController<R>, didFailWith error: FolioError) { errors.append(error) }
}

extension Array {
    /// SwiftUI's `move(fromOffsets:toOffset:)` (not on Linux), by its definition: the
    /// elements before `destination` that stay, the moved ones in their order, then the
    /// elements from `destination` on that stay.
    func movingElements(fromOffsets source: IndexSet, toOffset destination: Int) -> [Element] {
        indices.filter { $0 < destination && !source.contains($0) }.map { self[$0] }
            + source.map { self[$0] }
            + indices.filter { $0 >= destination && !source.contains($0) }.map { self[$0] }
    }
}

extension TableViewModel {
    /// The user's `onMove` of rows of one section, as `Array.move(fromOffsets:toOffset:)`.
    mutating func applyUserMoves(fromOffsets source: IndexSet, toOffset destination: Int, inSection section: Int = 0) throws {
        sections[section] = sections[section].movingElements(fromOffsets: source, toOffset: destination)
    }
}
