import Foundation
import Folio
import GRDB

/// A row of a list ordered by hand: its `position` is Folio's order value.
@PersistentRecord
struct HandOrdered {
    var id: RecordID?
    var title = ""
    @Stored(.indexed) var position = 0

    init() {}
}

/// Notes every change set a controller of ``HandOrdered`` delivers (a user's move must send none).
@MainActor
final class HandOrderedRecorder: FetchedResultsControllerDelegate {
    private(set) var received: [(change: ChangeSet, at: UInt64)] = []

    func controller(_ controller: FetchedResultsController<HandOrdered>, didChangeContentWith changes: ChangeSet) {
        received.append((changes, now()))
    }

    func takeAll() -> [(change: ChangeSet, at: UInt64)] {
        defer { received = [] }
        return received
    }
}

extension Bench {
    /// The gap Folio leaves between neighbours in a list ordered by hand (`OrderKeys.spacing`).
    static let orderSpacing = 1 << 20

    /// Issue 23: a user's move in a list of `rows` rows ordered by hand — `moveObject(at:to:)`
    /// returning (the move written and committed, the tracker past its commit) and
    /// `waitForChanges()` — against a one-row update that moves a row of the same list,
    /// measured in the same run; then 10,000 drags into one gap, and the same user moves
    /// again.
    func reorder() async throws {
        log("reorder: generating \(Report.count(rows)) rows ordered by hand (a fourth store)")
        let start = now()
        let store = try Store.temporary(records: [HandOrdered.self])
        let count = rows, spacing = Self.orderSpacing
        try Self.writeNow(store) { tx in
            try tx.database.execute(
                sql: """
                    WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
                    INSERT INTO hand_ordered (title, position) SELECT 'Chore ' || i, i * ? FROM seq
                    """,
                arguments: [count - 1, spacing])
        }
        let seconds = Double(now() - start) / 1e9
        let recorder = HandOrderedRecorder()
        let controller = FetchedResultsController(
            RecordRequest<HandOrdered>(sortBy: [SortDescriptor(\.position)], batchSize: 50), store: store)
        controller.delegate = recorder
        try performFetch(controller)
        let n = options.changes

        // The baseline: a one-row update that moves a row of the same list → change set delivered.
        log("reorder: \(n) one-row updates that move, as the baseline")
        var update = Samples()
        for _ in 0..<n {
            let id = Int64.random(in: 1...Int64(rows), using: &random)
            let position = Int.random(in: 0..<(rows * Self.orderSpacing), using: &random)
            let watch = Stopwatch()
            try Self.writeNow(store) { tx in
                try tx.database.execute(sql: "UPDATE hand_ordered SET position = ? WHERE id = ?", arguments: [position, id])
            }
            await controller.waitForChanges()
            update.add(watch.lap())
        }
        _ = recorder.takeAll()
        addBaseline(
            "reorder.update", "one-row update that moves a row of the same list ordered by hand → change set delivered",
            update, withP99: true)

        let before = try await userMoves(controller, recorder, store, count: n)
        let rowFactor = try changesPerRow(store)
        await controller.waitForChanges()
        _ = recorder.takeAll()  // the update changesPerRow made
        report.results.append(
            ResultRow(
                id: "reorder.move",
                what: "one user move in a \(Report.count(rows))-row list ordered by hand → committed and delivered",
                samples: before.samples, withP99: true, baseline: ("reorder.update", update),
                target: Targets.userMove, check: { $0.median <= Targets.userMoveMedian },
                detail: before.detail))

        // 10,000 drags into one gap: the last row dropped between the first two, each time.
        let drags = 10_000
        log("reorder: \(Report.count(drags)) drags into one gap")
        var dragSamples = Samples()
        var written: [Int] = []
        var echoes = 0
        for _ in 0..<drags {
            let changesBefore = try totalChanges(store)
            let watch = Stopwatch()
            try controller.moveObject(at: IndexPath(item: rows - 1, section: 0), to: IndexPath(item: 1, section: 0))
            await controller.waitForChanges()
            dragSamples.add(watch.lap())
            written.append((try totalChanges(store) - changesBefore) / rowFactor)
            echoes += recorder.takeAll().count
        }
        let (types, widest) = try Self.readNow(store) { db in
            (
                try String.fetchAll(db, sql: "SELECT DISTINCT typeof(position) FROM hand_ordered"),
                try Int64.fetchOne(db, sql: "SELECT max(max(position), -min(position)) FROM hand_ordered") ?? 0
            )
        }
        let bits = 64 - widest.leadingZeroBitCount
        let perDrag = Double(written.reduce(0, +)) / Double(drags)
        let keys =
            "every key is a 64-bit integer (typeof \(types.joined(separator: ", "))): 8 bytes, the largest using \(bits) bits"
        report.results.append(
            ResultRow(
                id: "reorder.drags", what: "10,000 drags into one gap (each: user move → committed and delivered)",
                samples: dragSamples, withP99: true, baseline: ("reorder.update", update),
                target: Targets.userMove, check: { $0.median <= Targets.userMoveMedian },
                detail: String(
                    format: "rows written per drag: %.2f on average, at most %d; %@; %d change sets delivered (echoes)",
                    perDrag, written.max() ?? 0, keys, echoes)))

        let after = try await userMoves(controller, recorder, store, count: n)
        report.results.append(
            ResultRow(
                id: "reorder.moveAfterDrags",
                what: "one user move after 10,000 drags into one gap → committed and delivered",
                samples: after.samples, withP99: true, baseline: ("reorder.update", update),
                target: Targets.userMove, check: { $0.median <= Targets.userMoveMedian },
                detail: after.detail + "; " + keys))
        try verify(controller, store)
        report.notes.append(
            "Reordering by hand: a fourth store of \(Report.count(rows)) rows (title, position indexed; positions 2²⁰ apart), "
                + "generated in \(String(format: "%.1f s", seconds)); one controller sorted by position, batch 50. A user move is "
                + "`moveObject(at:to:)` (the move shown, the order value written in one transaction, the tracker past the "
                + "commit) then `waitForChanges()`; its commit delivers no change set (no echo). Rows written are counted from "
                + "SQLite's total changes (\(rowFactor) per row written: the row and its table's change token).")
        controller.delegate = nil
        withExtendedLifetime(recorder) {}
    }

    /// `count` user moves of random rows to random places; the time to committed and delivered.
    private func userMoves(
        _ controller: FetchedResultsController<HandOrdered>, _ recorder: HandOrderedRecorder, _ store: Store, count: Int
    ) async throws -> (samples: Samples, detail: String) {
        log("reorder: \(count) user moves")
        var samples = Samples()
        var echoes = 0
        for _ in 0..<count {
            let from = Int.random(in: 0..<rows, using: &random)
            var to = Int.random(in: 0..<rows, using: &random)
            if to == from { to = (to + 1) % rows }
            let watch = Stopwatch()
            try controller.moveObject(at: IndexPath(item: from, section: 0), to: IndexPath(item: to, section: 0))
            await controller.waitForChanges()
            samples.add(watch.lap())
            echoes += recorder.takeAll().count
        }
        return (samples, "\(echoes) change sets delivered for \(count) moves (echoes)")
    }

    /// SQLite's count of rows changed by a one-row update of the list (the row, and the
    /// trigger's write of the table's change token).
    private func changesPerRow(_ store: Store) throws -> Int {
        let before = try totalChanges(store)
        try Self.writeNow(store) { tx in
            try tx.database.execute(sql: "UPDATE hand_ordered SET title = title || '.' WHERE id = 1")
        }
        return Swift.max(1, try totalChanges(store) - before)
    }

    private func totalChanges(_ store: Store) throws -> Int {
        try Self.writeNow(store) { tx in tx.database.totalChangesCount }
    }

    /// The synchronous write and read (in an async context the async overloads would be chosen).
    private static func writeNow<T>(_ store: Store, _ body: (WriteTransaction) throws -> T) throws -> T {
        try store.write(body)
    }

    private static func readNow<T>(_ store: Store, _ body: (Database) throws -> T) throws -> T {
        try store.read(body)
    }

    private func verify(_ live: FetchedResultsController<HandOrdered>, _ store: Store) throws {
        let fresh = FetchedResultsController(live.fetchRequest, store: store)
        fresh.completesInBackground = false
        try performFetch(fresh)
        guard live.snapshot == fresh.snapshot else {
            throw BenchError.wrongResults("reorder: the live controller's snapshot differs from a fresh fetch's")
        }
        verifiedSnapshots += 1
    }
}
