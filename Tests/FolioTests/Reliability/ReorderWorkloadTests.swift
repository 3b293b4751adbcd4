import Foundation
import GRDB
import Observation
import Testing
@testable import Folio

/// A to-do ordered by hand whose position another program may leave `NULL`.
struct Errand: PersistentRecord, Equatable {
    var id: RecordID?
    var title = ""
    var list = ""
    var position: Int?

    static let entity = EntityDescription<Errand>(
        "errand",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.list, indexed: true),
            AttributeDescription(\.position, indexed: true),
        ])
}

/// Randomized workloads of user moves (issue 23) mixed with other writes: from the store
/// itself, from a second connection, from the `sqlite3` shell (another process), some of
/// them landing between a delivery and the next drag (the controller then rebases), with
/// duplicate, `NULL` and extreme positions, and moves that fail (a trigger refuses them).
///
/// Each seed drives one screen: a controller and the strict table it drives (the user's
/// move applied to the table first, then every change set as the delegate gets it), or a
/// `FetchedResultsModel` moved as SwiftUI's `onMove` moves it. After every step the screen
/// must equal a fresh fetch, every cell must show its row's current title (a cell is drawn
/// again only when a change set says so), and the model must have notified once per move
/// and not at all for the move's own commit.
///
/// Default: 20 seeds × 40 steps. `FOLIO_SEED=n` replays one seed; `FOLIO_SEEDS=k` runs k
/// seeds from `FOLIO_FIRST_SEED` (0 by default); `FOLIO_TRANSACTIONS=n` sets the steps;
/// `FOLIO_SOAK=1` runs 200 seeds × 200 steps.
@Suite("Reordering by hand under randomized workloads", .tags(Testing.Tag.longTier))
@MainActor
struct ReorderWorkloadTests {
    nonisolated static var seeds: [UInt64] { workloadSeeds(defaultCount: isSoak ? 200 : 20, quick: 4) }

    nonisolated static var steps: Int { environmentInt("FOLIO_TRANSACTIONS") ?? (isSoak ? 200 : 40) }

    @Test(arguments: seeds)
    func workload(seed: UInt64) async throws {
        let mode = ErrandScreen.Mode.allCases[Int(seed % UInt64(ErrandScreen.Mode.allCases.count))]
        let store = try Store.temporary(records: [Errand.self])
        defer { try? store.close() }
        var random = SeededRandom(seed: seed &* 0x9E37_79B9 &+ 7)
        let lists = mode.sectioned ? ["a", "b", "c"] : ["a"]
        try writeSync(store) { tx in
            for i in 0..<Int.random(in: 8...30, using: &random) {
                var errand = Errand(
                    title: "t\(i)", list: lists.randomElement(using: &random)!, position: i * Int(OrderKeys.spacing))
                try tx.insert(&errand)
            }
        }
        let screen = try await ErrandScreen(store, mode: mode)
        var runner = ReorderWorkload(screen: screen, random: random, seed: seed)
        try await runner.run(steps: Self.steps)
        print("reorder workload seed \(seed) (\(mode)): \(runner.summary)")
        #expect(runner.moves > 0, "seed \(seed) made no user move")
    }
}

/// `NULL` and duplicate positions written by another program: ordered by identifier (`NULL`
/// first), and spread into distinct values by the next move that needs room there.
@Suite("Reordering by hand: NULL and duplicate positions")
@MainActor
struct ReorderNullPositionTests {
    @Test func nullAndDuplicatePositionsAreOrderedByIdentifierThenRepaired() async throws {
        let store = try Store.temporary(records: [Errand.self])
        try writeSync(store) { tx in
            for i in 0..<6 {
                var errand = Errand(title: "e\(i)", list: "a", position: i * 10)
                try tx.insert(&errand)
            }
        }
        try Shell.sqlite3(
            store.path!, "UPDATE errand SET position = NULL WHERE id IN (5, 2); UPDATE errand SET position = 7 WHERE id IN (6, 3)"
        )
        // Followed before the screen opens (the store may not have been woken for it yet):
        // a list that subscribes before the store follows a commit it already shows gets
        // that commit's rows as updates.
        try store.synchronize()
        let screen = try await ErrandScreen(store, mode: .controller)
        #expect(screen.shown.flatMap { $0 }.map(\.rawValue) == [2, 5, 1, 3, 6, 4])
        // Between the two NULLs: no room there, so the rows around are spread.
        #expect(try screen.userMove(from: IndexPath(item: 5, section: 0), to: IndexPath(item: 1, section: 0)))
        try await screen.settle(onlyMoves: true, context: "NULL")
        let positions = try readNow(store) { db in try Int64?.fetchAll(db, sql: "SELECT position FROM errand ORDER BY id") }
        #expect(!positions.contains(nil), "\(positions)")
        #expect(screen.shown.flatMap { $0 }.map(\.rawValue) == [2, 4, 5, 1, 3, 6])
        // Between the duplicates (3 and 6, both 7): no room there either.
        #expect(try screen.userMove(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 4, section: 0)))
        try await screen.settle(onlyMoves: true, context: "duplicates")
        let shown = screen.shown.flatMap { $0 }.map(\.rawValue)
        let ordered = try readNow(store) { db in try Int64.fetchAll(db, sql: "SELECT id FROM errand ORDER BY position, id") }
        #expect(shown == ordered)
        let distinct = try readNow(store) { db in try Int.fetchOne(db, sql: "SELECT count(DISTINCT position) FROM errand") }
        #expect(distinct == 6)
    }
}

/// What a seed does, step by step.
@MainActor
struct ReorderWorkload {
    let screen: ErrandScreen
    var random: SeededRandom
    let seed: UInt64
    var step = 0
    var moves = 0
    var failedMoves = 0
    var rebases = 0
    var counts: [String: Int] = [:]
    private var titles = 1_000
    private var connection: DatabaseQueue?

    init(screen: ErrandScreen, random: SeededRandom, seed: UInt64) {
        self.screen = screen
        self.random = random
        self.seed = seed
    }

    var summary: String {
        "\(moves) moves (\(failedMoves) refused), steps \(counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
    }

    /// Who writes a step's other change.
    enum Writer: CaseIterable { case store, connection, shell }

    mutating func run(steps: Int) async throws {
        connection = try DatabaseQueue(path: screen.store.path!)
        defer { connection = nil }
        for index in 0..<steps {
            step = index
            let roll = Int.random(in: 0..<100, using: &random)
            switch roll {
            case 0..<22:
                counts["drag", default: 0] += 1
                try drag()
                try await settle(onlyMoves: true)
            case 22..<32:
                counts["drops into one gap", default: 0] += 1
                try dropsIntoOneGap(Int.random(in: 5...40, using: &random))
                try await settle(onlyMoves: true)
            case 32..<50:
                // A write whose change set is on its way when the user drags: no await between.
                counts["write then drag", default: 0] += 1
                try write(by: .store)
                screen.othersPending = true
                try drag()
                try await settle(onlyMoves: false)
            case 50..<60:
                // Another connection's commit the store has not noticed: the drag's own write does.
                let writer: Writer = Bool.random(using: &random) ? .connection : .shell
                counts["\(writer) write then drag", default: 0] += 1
                try write(by: writer)
                if Bool.random(using: &random) { try screen.store.synchronize() }
                screen.othersPending = true
                try drag()
                try await settle(onlyMoves: false)
            case 60..<70:
                counts["drag then write", default: 0] += 1
                try drag()
                try write(by: .store)
                try await settle(onlyMoves: false)
            case 70..<92:
                let writer = Writer.allCases.randomElement(using: &random)!
                counts["\(writer) writes", default: 0] += 1
                for _ in 0..<Int.random(in: 1...3, using: &random) { try write(by: writer) }
                try await settle(onlyMoves: false)
            case 92..<96:
                counts["spoiled positions", default: 0] += 1
                try spoilPositions()
                try await settle(onlyMoves: false)
            default:
                counts["refusal toggled", default: 0] += 1
                try toggleRefusal()
                try await settle(onlyMoves: false)
            }
        }
    }

    // MARK: User moves

    /// One user move: within a section or across, often to an end.
    mutating func drag() throws {
        let shown = screen.shown
        let filled = shown.indices.filter { !shown[$0].isEmpty }
        guard let fromSection = filled.randomElement(using: &random) else { return }
        let from = IndexPath(item: Int.random(in: 0..<shown[fromSection].count, using: &random), section: fromSection)
        var toSection = fromSection
        if screen.mode.acrossSections, shown.count > 1, Int.random(in: 0..<3, using: &random) == 0 {
            toSection = shown.indices.filter { $0 != fromSection }.randomElement(using: &random)!
        }
        let room = shown[toSection].count - (toSection == fromSection ? 1 : 0)
        let item: Int
        switch Int.random(in: 0..<4, using: &random) {
        case 0: item = 0
        case 1: item = room
        default: item = Int.random(in: 0...room, using: &random)
        }
        try move(from: from, to: IndexPath(item: item, section: toSection))
    }

    /// `count` rows dropped, one after the other, into the same gap (between the rows at
    /// `gap - 1` and `gap` of a section), with no await in between.
    mutating func dropsIntoOneGap(_ count: Int) throws {
        let shown = screen.shown
        guard let section = shown.indices.filter({ shown[$0].count >= 3 }).randomElement(using: &random) else {
            return try drag()
        }
        let gap = Int.random(in: 1..<shown[section].count, using: &random)
        for k in 0..<count {
            let rows = screen.shown[section].count
            guard rows >= 3 else { return }
            // Alternately the last row and the first, dropped before the row that was at `gap`.
            let fromItem = k % 2 == 0 ? rows - 1 : 0
            let target = Swift.min(fromItem == 0 ? gap - 1 : gap, rows - 1)
            try move(from: IndexPath(item: fromItem, section: section), to: IndexPath(item: target, section: section))
        }
    }

    mutating func move(from: IndexPath, to: IndexPath) throws {
        moves += 1
        if try !screen.userMove(from: from, to: to) { failedMoves += 1 }
    }

    // MARK: Other writes

    /// A random title for a row no one else writes.
    mutating func nextTitle() -> String {
        titles += 1
        return "w\(titles)"
    }

    /// A position another program might write: a duplicate of a row's, `NULL`, any value,
    /// or one near the ends of the 64-bit range.
    mutating func position(_ existing: [Int64?]) -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1: return "NULL"
        case 2, 3, 4: return existing.randomElement(using: &random).flatMap { $0.map(String.init) } ?? "NULL"
        case 5: return String(Int64.max - Int64.random(in: 0..<3, using: &random))
        case 6: return String(Int64.min + Int64.random(in: 0..<3, using: &random))
        default: return String(Int64.random(in: -(1 << 40)...(1 << 40), using: &random))
        }
    }

    /// One insert, delete or update of a row, as SQL, by `writer`.
    mutating func write(by writer: Writer) throws {
        let rows = try readNow(screen.store) { db in
            try Row.fetchAll(db, sql: "SELECT id, position FROM errand").map { ($0[0] as Int64, $0[1] as Int64?) }
        }
        let positions = rows.map(\.1)
        let id = rows.randomElement(using: &random)?.0
        let list = screen.lists.randomElement(using: &random)!
        var sql: String
        switch (Int.random(in: 0..<6, using: &random), id) {
        case (0, _), (_, nil):
            sql = "INSERT INTO errand (title, list, position) VALUES ('\(nextTitle())', '\(list)', \(position(positions)))"
        case (1, let id?):
            sql = "DELETE FROM errand WHERE id = \(id)"
        case (2, let id?):
            sql = "UPDATE errand SET title = '\(nextTitle())' WHERE id = \(id)"
        case (3, let id?):
            sql = "UPDATE errand SET position = \(position(positions)) WHERE id = \(id)"
        case (4, let id?):
            sql = "UPDATE errand SET list = '\(list)', title = '\(nextTitle())' WHERE id = \(id)"
        case (_, let id?):
            // Several rows at once: a title and a duplicate position.
            let other = rows.randomElement(using: &random)!.0
            sql =
                "UPDATE errand SET title = '\(nextTitle())' WHERE id = \(id); "
                + "UPDATE errand SET position = (SELECT position FROM errand WHERE id = \(id)) WHERE id = \(other)"
        }
        if !screen.mode.sectioned { sql = sql.replacingOccurrences(of: "'\(list)'", with: "'a'") }
        try run(sql, by: writer)
    }

    /// Runs `sql`; a write the refusing trigger stops is rolled back, as any program's.
    mutating func run(_ sql: String, by writer: Writer) throws {
        do {
            switch writer {
            case .store: try writeSync(screen.store) { tx in try tx.database.execute(sql: sql) }
            case .connection: try connection!.write { db in try db.execute(sql: sql) }
            case .shell: try Shell.sqlite3(screen.store.path!, sql)
            }
        } catch  where "\(error)".contains("refused") {
            counts["other writes refused", default: 0] += 1
        }
    }

    /// Another program sets many positions to one value, or to `NULL`.
    mutating func spoilPositions() throws {
        let value = Bool.random(using: &random) ? "NULL" : "42"
        let writer = Writer.allCases.randomElement(using: &random)!
        try run("UPDATE errand SET position = \(value) WHERE id % 3 = \(Int.random(in: 0..<3, using: &random))", by: writer)
    }

    /// A trigger refuses writes of the position of some rows (a move that writes them fails),
    /// or is dropped.
    mutating func toggleRefusal() throws {
        let exists = try readNow(screen.store) { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'refuse'") ?? 0
        }
        let sql =
            exists > 0
            ? "DROP TRIGGER refuse"
            : "CREATE TRIGGER refuse BEFORE UPDATE OF position ON errand WHEN OLD.id % 7 = \(Int.random(in: 0..<7, using: &random)) "
                + "BEGIN SELECT RAISE(ABORT, 'refused'); END"
        try run(sql, by: .store)
    }

    // MARK: Checking

    /// Lets every commit reach the screen, then checks it against a fresh fetch.
    mutating func settle(onlyMoves: Bool) async throws {
        try screen.store.synchronize()
        screen.othersPending = false
        try await screen.settle(onlyMoves: onlyMoves, context: "seed \(seed) step \(step)")
    }
}

/// A screen over errands: a controller with the strict table it drives, or a model.
@MainActor
final class ErrandScreen: FetchedResultsControllerDelegate {
    enum Mode: CaseIterable {
        case controller, controllerSectioned, model, modelSectioned
        var sectioned: Bool { self == .controllerSectioned || self == .modelSectioned }
        var usesModel: Bool { self == .model || self == .modelSectioned }
        var acrossSections: Bool { self == .controllerSectioned }
    }

    let store: Store
    let mode: Mode
    let controller: FetchedResultsController<Errand>
    let model: FetchedResultsModel<Errand>?
    /// The model's own delegate on its controller, which this screen stands in front of.
    private var relay: (any FetchedResultsControllerDelegate<Errand>)?
    /// What the table shows: rows, and the title drawn in each cell.
    var table: TableViewModel
    var drawn: [RecordID: String] = [:]
    private var counter: ObservationCounter?
    /// Change sets delivered since the last settle.
    var delivered: [ChangeSet] = []
    var problems: [String] = []
    /// Whether other commits may reach the screen with the next move (a rebase).
    var othersPending = false

    var lists: [String] { mode.sectioned ? ["a", "b", "c", "d"] : ["a"] }

    init(_ store: Store, mode: Mode) async throws {
        self.store = store
        self.mode = mode
        var request =
            mode.sectioned
            ? RecordRequest<Errand>(sortBy: [SortDescriptor(\.list), SortDescriptor(\.position)])
            : RecordRequest<Errand>(sortBy: [SortDescriptor(\.position)])
        request.batchSize = 7
        let sectionBy: SectionKey<Errand>? = mode.sectioned ? .attribute(\.list) : nil
        if mode.usesModel {
            let model = FetchedResultsModel(request, store: store, sectionBy: sectionBy)
            try performFetchSync(model)
            self.model = model
            controller = model.controller
        } else {
            model = nil
            controller = FetchedResultsController(request, store: store, sectionBy: sectionBy)
            try Self.fetchNow(controller)
        }
        table = TableViewModel(controller.snapshot)
        relay = controller.delegate
        controller.delegate = self
        if let model {
            counter = ObservationCounter {
                for section in model.sections { for item in section.items { _ = item.id } }
                for item in model.items { _ = item.id }
            }
        }
        drawAll()
        await controller.waitForChanges()
    }

    /// The synchronous `performFetch()`, from async code.
    static func fetchNow(_ controller: FetchedResultsController<Errand>) throws { try controller.performFetch() }

    /// The rows shown, by section (the table's; the model's in model mode).
    var shown: [[RecordID]] {
        if let model { return model.sections.map { $0.items.map(\.id) } }
        return table.sections
    }

    // MARK: The user

    /// The user moves a row; returns whether Folio wrote it.
    func userMove(from: IndexPath, to: IndexPath) throws -> Bool {
        if let model {
            let modelRows = TableViewModel(sections: model.sections.map { $0.items.map(\.id) })
            if modelRows != TableViewModel(controller.snapshot) {
                problems.append("the model shows \(modelRows), its controller \(TableViewModel(controller.snapshot))")
                return false
            }
            let before = shown[from.section]
            let destination = to.item > from.item ? to.item + 1 : to.item
            var expected = before
            expected.insert(expected.remove(at: from.item), at: to.item)
            let notified = counter!.take()
            if notified != 0 { problems.append("\(notified) notifications before a move, unaccounted") }
            try table.applyUserMove(from: from, to: to)
            do {
                try model.move(fromOffsets: IndexSet(integer: from.item), toOffset: destination, inSection: from.section)
            } catch {
                _ = counter!.take()
                return false
            }
            // Shown at once, in one notification; rows other commits changed may have come or gone.
            let notifications = counter!.take()
            if notifications != 1 { problems.append("a move notified \(notifications) times") }
            // With no other commit on its way, exactly the move (others may reorder rows too).
            if !othersPending, let after = model.sections.first(where: { $0.items.contains { $0.id == before[from.item] } }) {
                let kept = Set(after.items.map(\.id))
                let expectedHere = expected.filter { kept.contains($0) }
                let shownHere = after.items.map(\.id).filter { expectedHere.contains($0) }
                if shownHere != expectedHere {
                    problems.append("the model does not show the move: \(shownHere) ≠ \(expectedHere)")
                }
            }
            return true
        }
        try table.applyUserMove(from: from, to: to)
        do {
            try controller.moveObject(at: from, to: to)
            return true
        } catch {
            return false
        }
    }

    // MARK: The delegate: the table applies each change set as it comes

    func controller(_ controller: FetchedResultsController<Errand>, didChangeContentWith changes: ChangeSet) {
        relay?.controller(controller, didChangeContentWith: changes)
        delivered.append(changes)
        do {
            let applied = try table.apply(changes, dataSource: controller.snapshot)
            if changes.isReload {
                drawAll()
            } else {
                draw(Set(applied.inserted).union(applied.reconfigured))
            }
        } catch {
            problems.append("the table refused \(changes): \(error)")
            table = TableViewModel(controller.snapshot)
            drawAll()
        }
    }

    func controller(_ controller: FetchedResultsController<Errand>, didChangeContentWith snapshot: Snapshot) {
        relay?.controller(controller, didChangeContentWith: snapshot)
    }

    func controller(_ controller: FetchedResultsController<Errand>, didFailWith error: FolioError) {
        relay?.controller(controller, didFailWith: error)
    }

    /// Draws cells as a table view does: through the controller's records.
    private func draw(_ ids: Set<RecordID>) {
        guard !ids.isEmpty else { return }
        let snapshot = controller.snapshot
        for section in 0..<snapshot.numberOfSections {
            for (item, id) in snapshot.identifiers(inSection: section).enumerated() where ids.contains(id) {
                drawn[id] = controller.object(at: IndexPath(item: item, section: section))?.title ?? "(none)"
            }
        }
    }

    private func drawAll() {
        drawn = [:]
        draw(Set(controller.snapshot.identifiers))
    }

    // MARK: Checking

    func settle(onlyMoves: Bool, context: String) async throws {
        await controller.waitForChanges()
        let fresh = FetchedResultsController(controller.fetchRequest, store: store, sectionBy: controller.sectionKey)
        fresh.firstScreenRule = nil
        try Self.fetchNow(fresh)
        let freshRows = TableViewModel(fresh.snapshot)
        let titles = try readNow(store) { db in
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT id, title FROM errand").map {
                    (RecordID($0[0] as Int64), $0[1] as String)
                })
        }
        for problem in problems { Issue.record(Comment(rawValue: "\(context): \(problem)")) }
        problems = []
        if let model {
            let rows = TableViewModel(sections: model.sections.map { $0.items.map(\.id) })
            #expect(rows == freshRows, "\(context): the model differs from a fresh fetch")
            for item in model.items {
                #expect(item.record?.title == titles[item.id], "\(context): row \(item.id) shows a stale record")
            }
            // The moves' own commits notify no one; what may notify after them is a change
            // set: another program's commit the moves' write noticed, or a refused write's
            // rows moved back (checked below not to echo the moves).
            let notifications = counter!.take()
            let changed = delivered.filter { !$0.isEmpty }.count
            #expect(notifications <= changed, "\(context): \(notifications) notifications for \(changed) change sets")
        } else {
            #expect(table == freshRows, "\(context): the table differs from a fresh fetch:\n  \(table)\n  \(freshRows)")
            for id in table.identifiers where drawn[id] != titles[id] {
                Issue.record(
                    "\(context): row \(id.rawValue) is drawn as \(drawn[id] ?? "nothing"), its title is \(titles[id] ?? "none")")
            }
        }
        if onlyMoves {
            // The moves were not echoed: what came were sections the moves emptied, or rows put back.
            for change in delivered where !change.insertedItems.isEmpty || !change.updatedItems.isEmpty || change.isReload {
                Issue.record("\(context): a move was echoed: \(change)")
            }
        }
        delivered = []
    }
}
