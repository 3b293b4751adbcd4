import Foundation
import GRDB

extension FetchedResultsController {
    // MARK: Reordering by hand

    /// Shows a move the user already made on screen — a table view's
    /// `tableView(_:moveRowAt:to:)` — at once, and writes it in the background, so that it is
    /// never reported back.
    ///
    /// The request must be ordered by hand: sorted by an `Int` or `Int64` attribute (whose
    /// values can be any 64-bit integer), ascending, after
    /// the section attribute when there are sections (`[SortDescriptor(\.list),
    /// SortDescriptor(\.position)]` with `.attribute(\.list)`). Folio writes the moved row's
    /// order value — the middle of the gap between its new neighbours, so no other row is
    /// written, or, when the gap is used up, new values spread over the few rows around it —
    /// and, for a move across sections, its section attribute, in one transaction.
    ///
    /// From this call on, ``snapshot``, ``sections`` and `object(at:)` show the move; the
    /// main actor does not wait for the write. The change set of the commit that wrote it
    /// does not contain it (nor updates of the rows it renumbered), and does contain every
    /// other change. A move that empties its section deletes that section at once: the
    /// delegate and ``changes`` get a change set deleting it (a table view still shows it,
    /// empty). If the write fails, a change set moves the row back, ``lastError`` is set and
    /// the error goes to the delegate and ``updates``. ``waitForChanges()`` waits for the
    /// writes of the moves made so far.
    ///
    /// ```swift
    /// func tableView(_ tableView: UITableView, moveRowAt from: IndexPath, to: IndexPath) {
    ///     try? controller.moveObject(at: from, to: to)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - from: where the row was, in the results as shown before the move.
    ///   - to: where the row is now, in the results as shown after it (every section the
    ///     table still shows counted, an emptied one included).
    /// - Throws: ``FolioError/invalidArgument(_:)`` before ``performFetch()-68xbj``, while
    ///   the results are completed in the background, for a windowed request, or for a
    ///   request not ordered by hand (the message says what is missing). Errors of the write
    ///   itself are reported as described above.
    /// - Precondition: both index paths are in the results (as for `object(at:)`).
    /// - Complexity: O(1) on the main actor, plus O(chunk) to move the identifier; in the
    ///   background, one transaction writing one row, or O(log n) rows amortized when a gap
    ///   is used up.
    public func moveObject(at from: IndexPath, to: IndexPath) throws {
        let (old, order) = try preparedForMoves("moveObject(at:to:)")
        precondition(
            from.count == 2 && from.section >= 0 && from.section < old.runs.count && from.item >= 0
                && from.item < old.runs[from.section].count,
            "moveObject(at:to:): \(from) is not in the results")
        let room = old.runs.indices.contains(to.section) ? old.runs[to.section].count - (from.section == to.section ? 1 : 0) : -1
        precondition(
            to.count == 2 && to.item >= 0 && to.item <= room, "moveObject(at:to:): \(to) is not a place in the results")
        guard from != to else { return }
        if from.section != to.section, !order.movesAcrossSections {
            throw FolioError.invalidArgument(
                "moveObject(at:to:) across sections needs sections by an attribute (.attribute), which Folio can set")
        }
        let id = old.ids[old.offsets[from.section] + from.item]
        let move = UserMove(id: id, from: from, to: to)
        let (moved, emptied) = old.applying(move)
        let sectionValue = from.section == to.section ? nil : old.runs[to.section].value.databaseValue
        // The screen already shows the move: the results do too, at once.
        if let emptied {
            var change = ChangeSet()
            change.deletedSections = [emptied]
            deliver(change, newState: moved, changed: [id])
        } else {
            show(moved, moving: [id])
        }
        writeInBackground([move], sectionValues: [sectionValue], from: old, order)
    }

    /// Shows the move SwiftUI's `onMove` reports — rows of one section moved as
    /// `Array.move(fromOffsets:toOffset:)` moves them — at once, and writes it in the
    /// background in one transaction, as ``moveObject(at:to:)`` writes one row: only the
    /// moved rows are written (each placed right after the row it follows in the new order),
    /// the commit's change set does not echo them, and a failed write moves them all back
    /// and is reported.
    ///
    /// ```swift
    /// ForEach(items) { item in Row(item) }
    ///     .onMove { source, destination in
    ///         try? controller.moveObjects(fromOffsets: source, toOffset: destination)
    ///     }
    /// ```
    ///
    /// - Parameters:
    ///   - source: the offsets of the moved rows in the section, before the move.
    ///   - destination: the offset, before the move, that the rows are placed before.
    ///   - section: the section's index.
    /// - Throws: ``FolioError/invalidArgument(_:)`` for offsets outside the section, and as
    ///   ``moveObject(at:to:)`` throws.
    /// - Complexity: O(n) for the n rows of the section on the main actor; in the
    ///   background, one transaction writing each moved row (and the few rows around it when
    ///   a gap is used up).
    public func moveObjects(fromOffsets source: IndexSet, toOffset destination: Int, inSection section: Int = 0) throws {
        guard !source.isEmpty else { return }
        let (old, order) = try preparedForMoves("moveObjects(fromOffsets:toOffset:inSection:)")
        let rows =
            old.runs.indices.contains(section)
            ? old.ids.slice(old.offsets[section]..<old.offsets[section] + old.runs[section].count) : []
        guard let last = source.last, last < rows.count, source.first! >= 0, destination >= 0, destination <= rows.count else {
            throw FolioError.invalidArgument(
                "moveObjects(fromOffsets:toOffset:inSection:): offsets \(Array(source)) to \(destination) are not in section \(section)"
            )
        }
        let moves = Self.singleMoves(rows, fromOffsets: source, toOffset: destination, section: section)
        guard !moves.isEmpty else { return }
        show(old.applying(moves), moving: Set(moves.map(\.id)))
        writeInBackground(moves, sectionValues: moves.map { _ in nil }, from: old, order)
    }

    /// `Array.move(fromOffsets:toOffset:)` of `rows` as moves of one row each, in the order
    /// they apply: each moved row, in its new order, taken to the place right after the row
    /// it follows there. Only the moved rows move.
    static func singleMoves(_ rows: [Int64], fromOffsets source: IndexSet, toOffset destination: Int, section: Int)
        -> [UserMove]
    {
        let moved = source.map { rows[$0] }
        var final = rows.enumerated().filter { !source.contains($0.offset) }.map(\.element)
        final.insert(contentsOf: moved, at: destination - source.count(in: 0..<destination))
        var working = rows
        var moves: [UserMove] = []
        for id in moved {
            let index = final.firstIndex(of: id)!
            let from = working.firstIndex(of: id)!
            working.remove(at: from)
            let to = index == 0 ? 0 : working.firstIndex(of: final[index - 1])! + 1
            working.insert(id, at: to)
            if from != to {
                moves.append(
                    UserMove(id: id, from: IndexPath(item: from, section: section), to: IndexPath(item: to, section: section)))
            }
        }
        return moves
    }

    /// The results moves start from, and how the request is ordered by hand.
    private func preparedForMoves(_ name: String) throws -> (ResultsState, ManualOrder<R>) {
        guard let old = presented else {
            throw FolioError.invalidArgument("\(name) needs the results: call performFetch() first")
        }
        guard isComplete else {
            throw FolioError.invalidArgument(
                "\(name) needs the whole results, and the rows after the first screen are still being read: wait for waitUntilComplete()"
            )
        }
        let sectionKeyPath =
            sectionKey.flatMap { key in
                key.kind == .attribute && (try? R.entity.relatedKey(for: key.keyPath)) == nil ? key.keyPath : nil
            }
        return (old, try ManualOrder(request: fetchRequest, sectioned: sectionKey != nil, sectionKeyPath: sectionKeyPath))
    }

    /// Shows `state`, the results with the user's moves of `rows` applied, keeping the
    /// records loaded of the other rows.
    private func show(_ state: ResultsState, moving rows: Set<Int64>) {
        let held = results?.loader.heldRecords(excluding: rows) ?? inheritedRecords
        setPresented(state)
        inheritedRecords = held
    }

    /// Writes `moves` (made on `before`, the results shown before them) after the moves
    /// written before them, off the main actor. Deliveries that arrive meanwhile wait
    /// (``MoveWrites``); when the last write ends, the controller shows the tracker's
    /// results if they differ from what it shows (other commits, a failed write).
    private func writeInBackground(
        _ moves: [UserMove], sectionValues: [DatabaseValue?], from before: ResultsState, _ order: ManualOrder<R>
    ) {
        let live = self.live
        let generation = self.generation
        let store = self.store
        let previous = moveWrites.task
        if moveWrites.pending == 0 { moveWrites.nextSerial = appliedSerial }
        moveWrites.pending += 1
        moveWrites.task = Task { [weak self] in
            await previous?.value
            let failedBefore = self?.moveWrites.failure != nil
            // The tracker's serial when it holds exactly the results these moves were made
            // on: the controller's, or what the write before left (its own moves applied).
            let serial = self?.moveWrites.nextSerial
            var result: Result<(written: Set<Int64>, expected: Bool), any Error>
            if failedBefore {
                // A write before this one failed: these moves, made on top of it, are not written.
                result = .failure(CancellationError())
            } else {
                do {
                    result = .success(
                        try await store.write { tx in
                            let written = try order.write(moves, from: before, sectionValues: sectionValues, tx)
                            let expected = serial.map { live?.expectUserMoves(moves, echoes: written, ifSerial: $0) ?? false }
                            return (written, expected ?? false)
                        })
                } catch {
                    result = .failure(error)
                }
            }
            self?.finishWrite(result, of: moves, before: before, live: live, generation: generation)
        }
    }

    /// One background write of moves ended. When it was the last one, shows what the tracker
    /// holds if it differs from what is shown, reports a failure, and applies the deliveries
    /// that waited.
    private func finishWrite(
        _ result: Result<(written: Set<Int64>, expected: Bool), any Error>, of moves: [UserMove], before: ResultsState,
        live: LiveResults?, generation: Int
    ) {
        moveWrites.pending -= 1
        switch result {
        case .success(let (written, expected)):
            inheritedRecords = inheritedRecords.filter { !written.contains($0.key) }
            moveWrites.written.formUnion(written)
            // The tracker applied the moves with their commit: the next write of the chain
            // starts from the state that commit left.
            moveWrites.nextSerial = expected ? live?.serial : nil
            if !expected { moveWrites.rebase = true }
        case .failure(let error):
            moveWrites.unwritten.formUnion(moves.map(\.id))
            if moveWrites.failure == nil, !(error is CancellationError) {
                moveWrites.failure = FolioError.converting(error)
                moveWrites.stateBeforeFailure = before
            }
            moveWrites.rebase = true
        }
        guard moveWrites.pending == 0 else { return }
        let writes = moveWrites
        moveWrites = MoveWrites()
        moveWrites.task = writes.task
        // The results were replaced meanwhile (a fetch, a request change): nothing to show.
        if generation == self.generation, live === self.live, writes.rebase {
            if let live {
                rebase(on: live, written: writes.written, unwritten: writes.unwritten)
            } else if let state = writes.stateBeforeFailure, let presented {
                // Nothing follows the store: the results as they were before the failed write.
                let change = ChangeSetBuilder.diff(old: presented, new: state, changed: writes.unwritten)
                deliver(change.removingUpdates(of: writes.unwritten), newState: state, changed: writes.unwritten)
            }
        }
        if let failure = writes.failure { report(failure) }
        for (delivery, source) in writes.deferred { receive(delivery, from: source) }
        resumeWaiters()
    }

    /// The tracker's results differ from what is shown: commits reached the tracker that the
    /// controller had not shown when the user moved rows (their change sets were computed
    /// without the moves), or a write of moves failed. One change set from what is shown to
    /// the tracker's results now replaces them; the deliveries it covers are skipped when
    /// they arrive. The rows those commits touched and the rows whose moves were not written
    /// (`unwritten`) are moved back (not updated: their values did not change); the rows the moves
    /// wrote (`written`) are not. When which rows they touched is unknown (one of them was a
    /// reload), the change set is ``ChangeSet/reload``.
    private func rebase(on live: LiveResults, written: Set<Int64>, unwritten: Set<Int64>) {
        guard let presented, let (current, serial, touched) = live.current(since: appliedSerial),
            serial > appliedSerial || !unwritten.isEmpty
        else { return }
        appliedSerial = serial
        if let touched {
            let changed = touched.union(unwritten)
            // A row whose move was not written is moved back, not updated: its values did not change.
            let change = ChangeSetBuilder.diff(old: presented, new: current, changed: changed)
                .removingUpdates(of: unwritten.subtracting(touched))
            if !change.isEmpty { deliver(change, newState: current, changed: changed.union(written)) }
        } else {
            deliver(.reload, newState: current, changed: nil)
        }
    }
}

/// The writes of a controller's moves under way (``FetchedResultsController/moveObject(at:to:)``),
/// and what the last one to end does.
struct MoveWrites {
    /// The last write started; each waits for the one before.
    var task: Task<Void, Never>?
    /// Writes started and not ended.
    var pending = 0
    /// Rows the ended writes wrote (the moves' echoes, never reported).
    var written: Set<Int64> = []
    /// Rows whose moves were not written (a write failed, or was not made after one that failed).
    var unwritten: Set<Int64> = []
    /// The first failure, and the results shown before the moves whose write failed.
    var failure: FolioError?
    var stateBeforeFailure: ResultsState?
    /// Whether what is shown must be compared with the tracker's results.
    var rebase = false
    /// The tracker's serial at which the next write's moves apply to its results as they
    /// apply to the controller's (`nil`: they do not; the controller rebases).
    var nextSerial: UInt64?
    /// Deliveries that arrived during the writes, applied after them.
    var deferred: [(LiveResults.Delivery, LiveResults)] = []
}
