import Foundation
import GRDB

extension FetchedResultsController {
    // MARK: Reordering by hand

    /// Writes a move the user already made on screen — a table view's
    /// `tableView(_:moveRowAt:to:)`, a SwiftUI `onMove` — and makes it part of the results
    /// at once, so that it is never reported back.
    ///
    /// The request must be ordered by hand: sorted by an integer attribute, ascending, after
    /// the section attribute when there are sections (`[SortDescriptor(\.list),
    /// SortDescriptor(\.position)]` with `.attribute(\.list)`). Folio writes the moved row's
    /// order value — the middle of the gap between its new neighbours, so no other row is
    /// written, or, when the gap is used up, new values spread over the few rows around it —
    /// and, for a move across sections, its section attribute, in one transaction.
    ///
    /// From this call on, ``snapshot``, ``sections`` and `object(at:)` show the move. The
    /// change set of the commit that wrote it does not contain it (nor updates of the rows it
    /// renumbered), and does contain every other change. A move that empties its section
    /// deletes that section at once: the delegate and ``changes`` get a change set deleting it
    /// (a table view still shows it, empty). If the write fails, the move is undone on
    /// screen: a change set moves the row back, the error goes to the delegate and
    /// ``updates``, and this throws it.
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
    /// - Throws: ``FolioError/invalidArgument(_:)`` before ``performFetch()-68xbj``, for a
    ///   windowed request, or for a request not ordered by hand (the message says what is
    ///   missing); the write's errors (``FolioError/deleteDenied(entity:relationship:)`` does
    ///   not apply; a constraint, a closed store).
    /// - Precondition: both index paths are in the results (as for `object(at:)`).
    /// - Complexity: one transaction writing one row, or O(log n) rows amortized when a
    ///   gap is used up; O(1) more on the main actor when no commit is on its way to the
    ///   controller, else one comparison of the whole results, O(n).
    public func moveObject(at from: IndexPath, to: IndexPath) throws {
        guard let old = presented else {
            throw FolioError.invalidArgument("moveObject(at:to:) needs the results: call performFetch() first")
        }
        guard isComplete else {
            throw FolioError.invalidArgument(
                "moveObject(at:to:) needs the whole results, and the rows after the first screen are still being read: wait for waitUntilComplete()"
            )
        }
        let order = try ManualOrder(request: fetchRequest, sectionKey: sectionKey)
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
        // The target section in the results after the move (an emptied section is gone).
        let targetSection = emptied.map { $0 < to.section ? to.section - 1 : to.section } ?? to.section
        // The screen already shows the move: the results do too, at once.
        if let emptied {
            var change = ChangeSet()
            change.deletedSections = [emptied]
            deliver(change, newState: moved, changed: [id])
        } else {
            let held = results?.loader.heldRecords(excluding: [id]) ?? inheritedRecords
            setPresented(moved)
            inheritedRecords = held
        }
        let serial = appliedSerial
        let live = self.live
        do {
            let (written, expected) = try store.write { tx -> (Set<Int64>, Bool) in
                let written = try order.write(move, in: moved, section: targetSection, sectionValue: sectionValue, tx)
                return (written, live?.expectUserMove(move, echoes: written, ifSerial: serial) ?? false)
            }
            inheritedRecords = inheritedRecords.filter { !written.contains($0.key) }
            if let live, !expected { rebase(on: live, written: written) }
        } catch {
            let failure = FolioError.converting(error)
            if let presented {
                deliver(ChangeSetBuilder.diff(old: presented, new: old, changed: [id]), newState: old, changed: [id])
            }
            report(failure)
            throw failure
        }
    }

    /// Commits reached the tracker that the controller had not shown when the user moved a
    /// row: their change sets were computed without the move. They are replaced by one
    /// change set from what is shown (the move included) to the tracker's results now, and
    /// skipped when they arrive. The rows they touched are reported as changed (updated
    /// where they stayed), the rows the move `written` are not; when which rows they touched
    /// is unknown (one of them was a reload), the change set is ``ChangeSet/reload``.
    private func rebase(on live: LiveResults, written: Set<Int64>) {
        guard let presented, let (current, serial, touched) = live.current(since: appliedSerial), serial > appliedSerial
        else { return }
        appliedSerial = serial
        if let touched {
            let change = ChangeSetBuilder.diff(old: presented, new: current, changed: touched)
            deliver(change, newState: current, changed: touched.union(written))
        } else {
            deliver(.reload, newState: current, changed: nil)
        }
        resumeWaiters()
    }
}

/// How a request ordered by hand is written: its order attribute, and its section attribute.
struct ManualOrder<R: PersistentRecord> {
    /// The order attribute's key path (an integer attribute).
    let keyPath: AnyKeyPath
    let column: String
    /// The section attribute's key path, for sections by attribute.
    let sectionKeyPath: AnyKeyPath?

    var movesAcrossSections: Bool { sectionKeyPath != nil }

    /// Checks that `request` is ordered by hand: sorted, after the section attribute if
    /// any, by an integer attribute of the entity, ascending, with no window.
    init(request: RecordRequest<R>, sectionKey: SectionKey<R>?) throws {
        let query = try request.compile(requireSort: true)
        if query.isWindowed {
            throw FolioError.invalidArgument("moveObject(at:to:) needs a request without a limit or an offset")
        }
        var terms = query.order[...]
        if let sectionKey {
            terms = terms.dropFirst()
            sectionKeyPath =
                sectionKey.kind == .attribute && (try? R.entity.relatedKey(for: sectionKey.keyPath)) == nil
                ? sectionKey.keyPath : nil
        } else {
            sectionKeyPath = nil
        }
        let descriptors = request.sortBy.dropFirst(sectionKey == nil ? 0 : 1)
        guard let term = terms.first, !term.isRowID, term.related == nil, term.type == .integer, !term.descending,
            let keyPath = descriptors.first?.keyPath, let attribute = R.entity.attribute(for: keyPath),
            attribute.reference == nil
        else {
            throw FolioError.invalidArgument(
                "moveObject(at:to:) needs a request ordered by hand: sorted by an integer attribute, ascending"
                    + (sectionKey == nil ? "" : ", right after the section attribute"))
        }
        self.keyPath = keyPath
        self.column = attribute.column
    }

    /// Writes the order value of the moved row (and its section attribute when
    /// `sectionValue` is set), spreading the values of the rows around it when its gap is
    /// used up. `state` is the results with the move applied, where the row is item
    /// `move.to.item` of section `section`. Returns the rows written.
    func write(
        _ move: UserMove, in state: ResultsState, section: Int, sectionValue: DatabaseValue?, _ tx: WriteTransaction
    ) throws -> Set<Int64> {
        let lowest = state.offsets[section]
        let end = lowest + state.runs[section].count
        let target = lowest + move.to.item
        var radius = 0
        while true {
            let start = Swift.max(lowest, target - radius), stop = Swift.min(end, target + radius + 1)
            let lower: Int64?? = start > lowest ? try value(of: state.ids[start - 1], tx) : nil
            let upper: Int64?? = stop < end ? try value(of: state.ids[stop], tx) : nil
            if stop - start == 1, let key = OrderKeys.between(lower, upper) {
                try set(move.id, to: key, sectionValue: sectionValue, tx)
                return [move.id]
            }
            if stop - start > 1, let keys = OrderKeys.spread(stop - start, between: lower, and: upper) {
                for (offset, key) in keys.enumerated() {
                    let id = state.ids[start + offset]
                    try set(id, to: key, sectionValue: id == move.id ? sectionValue : nil, tx)
                }
                return Set((start..<stop).map { state.ids[$0] })
            }
            radius = Swift.max(1, radius * 2)
        }
    }

    /// A row's order value; `.some(nil)` when it is `NULL`, not an integer, or the row is
    /// gone (no room: the window widens, and the spread repairs it).
    private func value(of id: Int64, _ tx: WriteTransaction) throws -> Int64?? {
        let row = try Row.fetchOne(
            tx.database, sql: SQLBuilder.columnValues(table: R.entity.name, column: column),
            arguments: [IdentifierList.jsonArray([id])])
        guard let row else { return .some(nil) }
        if case .int64(let value) = (row[1] as DatabaseValue).storage { return .some(value) }
        return .some(nil)
    }

    private func set(_ id: Int64, to key: Int64, sectionValue: DatabaseValue?, _ tx: WriteTransaction) throws {
        var assignments = [Assignment<R>(keyPath: keyPath, value: key.databaseValue)]
        if let sectionValue, let sectionKeyPath { assignments.append(Assignment(keyPath: sectionKeyPath, value: sectionValue)) }
        try tx.update(R.self, id: id, set: assignments)
    }
}
