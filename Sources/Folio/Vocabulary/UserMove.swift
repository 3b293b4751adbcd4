import Foundation

/// A move the user already made on screen (a table view's `moveRowAt`, SwiftUI's `onMove`):
/// the row at `from` is now at `to`, both index paths of the list as shown — `to` in the
/// list after the move, with every section the table still shows (a section the move
/// emptied included).
struct UserMove: Sendable, Equatable {
    var id: Int64
    var from: IndexPath
    var to: IndexPath
}

extension ResultsState {
    /// The state after `move`, and the index of the section it emptied (which the table
    /// still shows, empty, and the controller then deletes), if any.
    ///
    /// - Precondition: both index paths are valid for this state (`to` after removing the row).
    func applying(_ move: UserMove) -> (state: ResultsState, emptiedSection: Int?) {
        var ids = self.ids
        var runs = self.runs
        let offsets = self.offsets
        let from = offsets[move.from.section] + move.from.item
        let id = ids.remove(at: from)
        runs[move.from.section].count -= 1
        // Offsets after the removal, the emptied section still counted.
        var start = 0
        var target = 0
        for (index, run) in runs.enumerated() {
            if index == move.to.section {
                target = start + move.to.item
                break
            }
            start += run.count
        }
        ids.insert(id, at: target)
        runs[move.to.section].count += 1
        let emptied = runs[move.from.section].count == 0 ? move.from.section : nil
        if emptied != nil { runs.remove(at: move.from.section) }
        return (ResultsState(ids: ids, runs: runs, sectioned: sectioned), emptied)
    }
}

extension ResultsState {
    /// The state after each of `moves` in turn (each in the coordinates the one before left).
    func applying(_ moves: [UserMove]) -> ResultsState {
        moves.reduce(self) { $0.applying($1).state }
    }
}

extension ChangeSet {
    /// The change set without the updates of `rows` that stayed where they were: the
    /// user's own move (and the rows it renumbered) echoed by the commit that wrote it. A
    /// move of one of them — the commit placed it elsewhere than the user did — stays.
    func removingUpdates(of rows: Set<Int64>) -> ChangeSet {
        guard !rows.isEmpty, !isReload, updatedIdentifiers.contains(where: { rows.contains($0.rawValue) }) else {
            return self
        }
        var change = self
        let kept = zip(updatedItems, updatedIdentifiers).filter { !rows.contains($0.1.rawValue) }
        change.updatedItems = kept.map(\.0)
        change.updatedIdentifiers = kept.map(\.1)
        return change
    }
}
