import Foundation
import GRDB
import Testing
@testable import Folio

/// A to-do ordered by hand within its list.
struct Chore: PersistentRecord, Equatable {
    var id: RecordID?
    var title = ""
    var list = ""
    var position = 0

    static let entity = EntityDescription<Chore>(
        "chore",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.list, indexed: true),
            AttributeDescription(\.position, indexed: true),
        ])
}

/// A controller over chores and the table it drives: the user's moves are applied to the
/// table first, then every change set the controller delivers; the table must equal a fresh
/// fetch after each step.
@MainActor
final class ChoreTable: LiveTable<Chore> {
    init(_ store: Store, sectioned: Bool) async throws {
        let request =
            sectioned
            ? RecordRequest<Chore>(sortBy: [SortDescriptor(\.list), SortDescriptor(\.position)], batchSize: 20)
            : RecordRequest<Chore>(sortBy: [SortDescriptor(\.position)], batchSize: 20)
        try await super.init(store, request, sectionBy: sectioned ? .attribute(\.list) : nil)
    }

    /// The user drags a row: the table moves it, then the controller is told.
    func drag(from: IndexPath, to: IndexPath) throws {
        try model.applyUserMove(from: from, to: to)
        try controller.moveObject(at: from, to: to)
    }

    /// The identifiers shown, by section.
    var shown: [[Int64]] {
        let snapshot = controller.snapshot
        return (0..<snapshot.numberOfSections).map { snapshot.identifiers(inSection: $0).map(\.rawValue) }
    }
}

@Suite("Reordering by hand: the user's move is never echoed")
@MainActor
struct ReorderTests {
    static func store(lists: [String] = ["a"], per: Int = 5) throws -> Store {
        let store = try Store.temporary(records: [Chore.self])
        try writeSync(store) { tx in
            for list in lists {
                for i in 0..<per {
                    var chore = Chore(title: "\(list)\(i)", list: list, position: i * 1_000)
                    try tx.insert(&chore)
                }
            }
        }
        return store
    }

    @Test func aMoveWithinTheListIsWrittenAndNotEchoed() async throws {
        let store = try Self.store()
        let table = try await ChoreTable(store, sectioned: false)
        let before = table.shown
        try table.drag(from: IndexPath(item: 4, section: 0), to: IndexPath(item: 1, section: 0))
        let changes = try await table.settle()
        #expect(changes.allSatisfy { $0.isEmpty }, "the move was echoed: \(changes)")
        #expect(table.shown == [[before[0][0], before[0][4], before[0][1], before[0][2], before[0][3]]])
        // To both ends.
        try table.drag(from: IndexPath(item: 2, section: 0), to: IndexPath(item: 0, section: 0))
        try table.drag(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 4, section: 0))
        let echoed = try await table.settle()
        #expect(echoed.allSatisfy { $0.isEmpty })
    }

    @Test func aMoveAcrossSectionsSetsTheSectionAttribute() async throws {
        let store = try Self.store(lists: ["a", "b"], per: 3)
        let table = try await ChoreTable(store, sectioned: true)
        try table.drag(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 3, section: 1))
        let echoed = try await table.settle()
        #expect(echoed.allSatisfy { $0.isEmpty })
        let moved = try readNow(store) { db in try String.fetchOne(db, sql: "SELECT list FROM chore WHERE title = 'a0'") }
        #expect(moved == "b")
        // Emptying a section deletes it at once.
        try table.drag(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 0, section: 1))
        try table.drag(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 0, section: 1))
        let changes = try await table.settle()
        #expect(changes.map(\.deletedSections) == [[0]])
        #expect(table.controller.sections.map(\.name) == ["b"])
    }

    @Test func otherWritesOfTheSameMomentAreDelivered() async throws {
        let store = try Self.store(per: 6)
        let table = try await ChoreTable(store, sectioned: false)
        // Another connection commits: its change set is on its way when the user drags.
        try writeSync(store) { tx in
            var chore = Chore(title: "new", list: "a", position: 2_500)
            try tx.insert(&chore)
        }
        try table.drag(from: IndexPath(item: 5, section: 0), to: IndexPath(item: 0, section: 0))
        try await table.settle()
        try writeSync(store) { tx in
            try tx.database.execute(sql: "UPDATE chore SET position = -5 WHERE title = 'a3'")
        }
        try table.drag(from: IndexPath(item: 1, section: 0), to: IndexPath(item: 3, section: 0))
        try await table.settle()
    }

    /// 10,000 drops into the same gap: the values stay 8-byte integers, and a drop writes
    /// few rows on average (the gap is spread again about every 20 drops, over a window that
    /// grows only as it must).
    /// (3,000 drops here; `FOLIO_SOAK=1` runs 10,000, as folio-bench does.)
    @Test func thousandsOfDropsIntoOneGap() async throws {
        let store = try Self.store(per: 200)
        let table = try await ChoreTable(store, sectioned: false)
        let drops = ProcessInfo.processInfo.environment["FOLIO_SOAK"] == nil ? 3_000 : 10_000
        let before = try readNow(store) { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM chore") }
        var written = 0
        for _ in 0..<drops {
            // The last row, dropped between the first two rows.
            let start = try writeSync(store) { tx in tx.database.totalChangesCount }
            try table.drag(from: IndexPath(item: 199, section: 0), to: IndexPath(item: 1, section: 0))
            await table.controller.waitForChanges()
            written += try writeSync(store) { tx in tx.database.totalChangesCount } - start
        }
        try await table.settle()
        #expect(before == 200)
        let widest = try readNow(store) { db in
            try Int64.fetchOne(db, sql: "SELECT max(abs(position)) FROM chore") ?? 0
        }
        #expect(widest < Int64(1) << 40, "the values stay small: \(widest)")
        let types = try readNow(store) { db in try String.fetchAll(db, sql: "SELECT DISTINCT typeof(position) FROM chore") }
        #expect(types == ["integer"])
        #expect(Double(written) / Double(drops) < 4, "rows written per drop: \(Double(written) / Double(drops))")
    }

    @Test func duplicatesAndNullsFromOtherProgramsAreRepaired() async throws {
        let store = try Self.store(per: 6)
        try execute(store, "UPDATE chore SET position = 7")
        // Another program stores what a non-optional Int attribute cannot hold: a text.
        try execute(store, "UPDATE chore SET position = 'x' WHERE title = 'a5'")
        let table = try await ChoreTable(store, sectioned: false)
        try table.drag(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 3, section: 0))
        try await table.settle()
        try table.drag(from: IndexPath(item: 5, section: 0), to: IndexPath(item: 2, section: 0))
        try await table.settle()
        let distinct = try readNow(store) { db in try Int.fetchOne(db, sql: "SELECT count(DISTINCT position) FROM chore") }
        #expect(distinct == 6)
    }

    @Test func aFailedWriteMovesTheRowBack() async throws {
        let store = try Self.store()
        let table = try await ChoreTable(store, sectioned: false)
        try execute(
            store,
            "CREATE TRIGGER refuse BEFORE UPDATE OF position ON chore WHEN NEW.title = 'a4' BEGIN SELECT RAISE(ABORT, 'no'); END")
        let before = table.shown
        // The move is shown at once; its write fails later.
        try table.drag(from: IndexPath(item: 4, section: 0), to: IndexPath(item: 0, section: 0))
        #expect(table.shown != before)
        let changes = try await table.settle()
        #expect(changes.count == 1 && changes[0].movedItems.count == 1, "\(changes)")
        #expect(table.shown == before)
        #expect(table.controller.lastError != nil)
    }

    /// A commit on its way when the user drags: the controller rebases on it, and the rows
    /// it changed are reported (a title changed in place is an update), not only the order.
    @Test func aRebaseReportsTheRowsOtherCommitsChanged() async throws {
        let store = try Self.store(per: 6)
        let table = try await ChoreTable(store, sectioned: false)
        // Moves whose commits were not echoed: their rows are not reported by the rebase either.
        try table.drag(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 4, section: 0))
        try table.drag(from: IndexPath(item: 1, section: 0), to: IndexPath(item: 5, section: 0))
        try await table.settle()
        try execute(store, "UPDATE chore SET title = 'renamed' WHERE title = 'a2'")
        try table.drag(from: IndexPath(item: 5, section: 0), to: IndexPath(item: 0, section: 0))
        let changes = try await table.settle()
        let renamed = try readNow(store) { db in try Int64.fetchOne(db, sql: "SELECT id FROM chore WHERE title = 'renamed'") }
        #expect(changes.flatMap(\.updatedIdentifiers).map(\.rawValue) == [renamed], "\(changes)")
        #expect(changes.allSatisfy { $0.movedItems.isEmpty && $0.insertedItems.isEmpty })
    }

    /// Another connection's commit, followed (woken, or by the move's own write) through the
    /// change log: the row it changed is reported, the move is not echoed.
    @Test func anotherConnectionsCommitBesideAMoveIsReportedRowByRow() async throws {
        let store = try Self.store(per: 6)
        let table = try await ChoreTable(store, sectioned: false)
        let other = try DatabaseQueueFactory.open(store.path!)
        try writeSync(other) { db in try db.execute(sql: "UPDATE chore SET title = 'elsewhere' WHERE title = 'a3'") }
        try table.drag(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 5, section: 0))
        let changes = try await table.settle()
        let changed = try readNow(store) { db in try Int64.fetchOne(db, sql: "SELECT id FROM chore WHERE title = 'elsewhere'") }
        #expect(changes.allSatisfy { !$0.isReload }, "\(changes)")
        #expect(changes.flatMap(\.updatedIdentifiers).map(\.rawValue) == [changed], "\(changes)")
        #expect(changes.allSatisfy { $0.insertedItems.isEmpty && $0.deletedItems.isEmpty })
    }

    /// Another connection's commit, noticed by the move's own write, takes a row to another
    /// section and renames it, emptying its section: its own change set has it as an insert
    /// (its section went), yet for the rebase, whose base still shows the row there, it is a
    /// row that moved and changed, and is reported so (the reorder workload's seed 1297: the
    /// cell kept its old title).
    @Test(arguments: [false, true])
    func aRebaseReportsARowWhoseSectionWentElsewhereAsChanged(synchronized: Bool) async throws {
        let store = try Self.store(lists: ["a", "b", "c"], per: 3)
        try execute(store, "DELETE FROM chore WHERE title IN ('a1', 'a2')")
        let table = try await ChoreTable(store, sectioned: true)
        #expect(table.shown.map(\.count) == [1, 3, 3])
        let renamed = try #require(
            try readNow(store) { db in try Int64.fetchOne(db, sql: "SELECT id FROM chore WHERE title = 'a0'") })
        let other = try DatabaseQueueFactory.open(store.path!)
        try writeSync(other) { db in
            try db.execute(sql: "UPDATE chore SET list = 'c', position = 1500, title = 'elsewhere' WHERE title = 'a0'")
        }
        if synchronized { try store.synchronize() }
        // b0 dropped into "a", after the row that is no longer there.
        try table.drag(from: IndexPath(item: 0, section: 1), to: IndexPath(item: 1, section: 0))
        let changes = try await table.settle()
        #expect(changes.allSatisfy { !$0.isReload }, "\(changes)")
        let told = Set(
            changes.flatMap { change in
                change.updatedIdentifiers + zip(change.movedItems, change.movedIdentifiers).filter(\.0.isUpdated).map(\.1)
                    + change.insertedIdentifiers
            })
        #expect(told.contains(RecordID(renamed)), "the renamed row is redrawn: \(changes)")
        let moved = try readNow(store) { db in try Int64.fetchOne(db, sql: "SELECT id FROM chore WHERE title = 'b0'") }
        #expect(!changes.flatMap(\.updatedIdentifiers).map(\.rawValue).contains(moved), "the move is not echoed: \(changes)")
    }

    /// Another connection's commit whose rows the change log no longer holds (trimmed past
    /// the store's progress), noticed by the move's own write: which rows it changed is
    /// unknown, so the rebase is a reload (as the commit alone would have been).
    @Test func aRebaseOnACommitTheLogNoLongerHoldsIsAReload() async throws {
        let store = try Self.store(per: 6)
        let table = try await ChoreTable(store, sectioned: false)
        let other = try DatabaseQueueFactory.open(store.path!)
        try writeSync(other) { db in
            try db.execute(sql: "UPDATE chore SET title = 'elsewhere' WHERE title = 'a3'")
            try db.execute(sql: "UPDATE chore SET title = 'again' WHERE title = 'a4'")
            try db.execute(sql: "DELETE FROM folio_changes WHERE seq < (SELECT max(seq) FROM folio_changes)")
        }
        try table.drag(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 5, section: 0))
        let changes = try await table.settle()
        #expect(changes.map(\.isReload) == [true], "\(changes)")
        #expect(store.diagnostics.lastReloadReason?.contains("trimmed") == true)
    }

    /// SwiftUI's onMove of one row down writes that row only; with a commit on its way that
    /// deletes a row, it still moves the right row (it used to move the rows in between,
    /// one at a time, by offsets the rebase had made wrong).
    @Test func aModelMoveWritesOnlyTheMovedRows() async throws {
        let store = try Self.store(per: 6)
        let model = FetchedResultsModel(RecordRequest<Chore>(sortBy: [SortDescriptor(\.position)]), store: store)
        try performFetchSync(model)
        let ids = model.items.map(\.id.rawValue)
        let positions = { try readNow(store) { db in try Int.fetchAll(db, sql: "SELECT position FROM chore ORDER BY id") } }
        let before = try positions()
        try model.move(fromOffsets: IndexSet(integer: 0), toOffset: 4)
        await model.waitForChanges()
        #expect(zip(before, try positions()).filter { $0 != $1 }.count == 1, "one row written")
        #expect(model.items.map(\.id.rawValue) == [ids[1], ids[2], ids[3], ids[0], ids[4], ids[5]])
        try execute(store, "DELETE FROM chore WHERE id = ?", [ids[5]])
        try model.move(fromOffsets: IndexSet([0, 1]), toOffset: 5)
        await model.waitForChanges()
        #expect(model.items.map(\.id.rawValue) == [ids[3], ids[0], ids[4], ids[1], ids[2]])
        try expectSameAsFresh(model, store)
    }

    private func expectSameAsFresh(_ model: FetchedResultsModel<Chore>, _ store: Store) throws {
        let fresh = FetchedResultsController(model.fetchRequest, store: store)
        try ChoreTable.fetchNow(fresh)
        #expect(model.items.map(\.id) == Array(fresh.snapshot.identifiers))
    }

    /// The article's new row: the last value of its list plus 2²⁰, found by one indexed read.
    @Test func aNewRowGoesAfterTheLast() async throws {
        let store = try Self.store(lists: ["Home", "Work"], per: 3)
        try writeSync(store) { tx in
            let last = try tx.fetchAll(
                RecordRequest<Chore>(
                    predicate: #Predicate { $0.list == "Home" },
                    sortBy: [SortDescriptor(\.position, order: .reverse)], limit: 1)
            ).first
            var chore = Chore(title: "Water the plants", list: "Home", position: (last?.position ?? 0) + (1 << 20))
            try tx.insert(&chore)
        }
        let table = try await ChoreTable(store, sectioned: true)
        #expect(table.shown[0].count == 4)
        let lastTitle = table.controller.object(at: IndexPath(item: 3, section: 0))?.title
        #expect(lastTitle == "Water the plants")
        // The spacing the article states is Folio's.
        #expect(OrderKeys.spacing == 1 << 20)
    }

    @Test func aRequestNotOrderedByHandIsRefused() async throws {
        let store = try Self.store()
        let controller = FetchedResultsController(RecordRequest<Chore>(sortBy: [SortDescriptor(\.title)]), store: store)
        try ChoreTable.fetchNow(controller)
        #expect(throws: FolioError.self) {
            try controller.moveObject(at: IndexPath(item: 0, section: 0), to: IndexPath(item: 1, section: 0))
        }
    }
}
