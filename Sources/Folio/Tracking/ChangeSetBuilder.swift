import Foundation
import GRDB

/// Builds batch-update change sets: the one place where Folio decides which rows move.
///
/// It is a pure function of positions: the old and new states, the rows that left and
/// came, and where each *touched* row that stayed was and is. Every path goes through
/// ``build(old:new:deleted:inserted:touched:)`` — the incremental path of one commit, a
/// rescan, a request change, a window — and only ``diff(old:new:changed:)`` works the
/// positions out itself, in O(n log n), when the caller has whole states.
///
/// The rules:
/// - A row the commit did not touch (an *anchor*) is never a move, nor an update.
/// - A touched row whose section changed is a move, or a delete plus an insert when its
///   old section is deleted or its new one inserted (batch updates cannot move a row out
///   of a deleted section or into an inserted one).
/// - Within a section, the touched rows reported as moves are a minimum set: every other
///   touched row keeps its order relative to the anchors and to the other rows that do
///   not move. A touched row that does not move is an update.
///
/// Why this is minimal: anchors never move, so a touched row whose count of anchors before
/// it changed must move; the remaining rows of one section with the same count of anchors
/// before them can only be reordered among themselves, and the largest subset that kept
/// its order there is a longest increasing subsequence of their old positions.
enum ChangeSetBuilder {
    /// A row present before and after that the change touched (or, for a request change or
    /// a snapshot difference, any row: there is nothing known to be untouched).
    struct TouchedRow: Equatable {
        var oldIndex: Int
        var newIndex: Int
        /// How many anchors (untouched rows present before and after) precede it, before
        /// and after the change.
        var oldAnchors: Int
        var newAnchors: Int
        /// The record itself changed (an update, or a move flagged ``ChangeSet/Move/isUpdated``).
        var updated: Bool
    }

    /// The change set from positions (flat indexes into `old` and `new`).
    ///
    /// - Parameters:
    ///   - deleted: old indexes of the rows that left.
    ///   - inserted: new indexes of the rows that came.
    ///   - touched: the touched rows present in both. Rows in neither list are anchors.
    /// - Complexity: O(k log k + sections) for k listed rows; it reads only their identifiers.
    ///   - oldOffsets, newOffsets: the states' section offsets, when the caller has them.
    ///   - sectionsKept: the caller knows the new sections are the old ones, in order (no
    ///     section emptied or made): each maps to itself, and no value is compared.
    static func build(
        old: ResultsState, new: ResultsState, deleted: [Int], inserted: [Int], touched: [TouchedRow],
        oldOffsets: [Int]? = nil, newOffsets: [Int]? = nil, sectionsKept: Bool = false
    ) -> ChangeSet {
        let (oldToNew, newToOld) =
            sectionsKept && old.runs.count == new.runs.count
            ? (old.runs.indices.map { Optional($0) }, new.runs.indices.map { Optional($0) })
            : mapSections(old: old, new: new)
        let oldOffsets = oldOffsets ?? old.offsets, newOffsets = newOffsets ?? new.offsets
        var change = ChangeSet()
        change.deletedSections = oldToNew.indices.filter { oldToNew[$0] == nil }
        change.insertedSections = newToOld.indices.filter { newToOld[$0] == nil }
        var deletedRows: [(IndexPath, RecordID)] = []
        var insertedRows: [(IndexPath, RecordID)] = []
        var updatedRows: [(IndexPath, RecordID)] = []
        var movedRows: [(ChangeSet.Move, RecordID)] = []

        for index in deleted {
            let path = ResultsState.path(of: index, offsets: oldOffsets)
            if oldToNew[path.section] != nil { deletedRows.append((path, RecordID(old.ids[index]))) }
        }
        for index in inserted {
            let path = ResultsState.path(of: index, offsets: newOffsets)
            if newToOld[path.section] != nil { insertedRows.append((path, RecordID(new.ids[index]))) }
        }
        // Anchors before each section's first row, where a section value can come back
        // elsewhere: a section deleted and one inserted. A kept section moves past such a
        // section (its value left and came back on its other side: a `.computed` key that
        // names NULL and text alike, for one), and the anchors of that section then stand
        // before a row of the kept section on one side only. A row is a move when the
        // anchors of its own section before it changed.
        let (oldSectionAnchors, newSectionAnchors) =
            change.deletedSections.isEmpty || change.insertedSections.isEmpty
            ? (nil, nil)
            : (
                anchorsBefore(oldOffsets, nonAnchors: deleted + touched.map(\.oldIndex)),
                anchorsBefore(newOffsets, nonAnchors: inserted + touched.map(\.newIndex))
            )
        // Rows that may stay, by (new section, anchors before them).
        struct Group: Hashable {
            var section: Int
            var anchors: Int
        }
        var groups: [Group: [TouchedRow]] = [:]
        for row in touched {
            let from = ResultsState.path(of: row.oldIndex, offsets: oldOffsets)
            let to = ResultsState.path(of: row.newIndex, offsets: newOffsets)
            let mapped = oldToNew[from.section]
            let toKept = newToOld[to.section] != nil
            if mapped == nil || !toKept {
                let id = RecordID(new.ids[row.newIndex])
                if mapped != nil { deletedRows.append((from, id)) }
                if toKept { insertedRows.append((to, id)) }
            } else if mapped != to.section
                || row.oldAnchors - (oldSectionAnchors?[from.section] ?? 0)
                    != row.newAnchors - (newSectionAnchors?[to.section] ?? 0)
            {
                movedRows.append((ChangeSet.Move(from: from, to: to, isUpdated: row.updated), RecordID(new.ids[row.newIndex])))
            } else {
                groups[Group(section: to.section, anchors: row.newAnchors), default: []].append(row)
            }
        }
        for var rows in groups.values {
            rows.sort { $0.newIndex < $1.newIndex }
            let staying = Set(longestIncreasing(rows.map(\.oldIndex)))
            for (k, row) in rows.enumerated() {
                let from = ResultsState.path(of: row.oldIndex, offsets: oldOffsets)
                let id = RecordID(new.ids[row.newIndex])
                if staying.contains(k) {
                    if row.updated { updatedRows.append((from, id)) }
                } else {
                    let to = ResultsState.path(of: row.newIndex, offsets: newOffsets)
                    movedRows.append((ChangeSet.Move(from: from, to: to, isUpdated: row.updated), id))
                }
            }
        }
        deletedRows.sort { lexicographic($0.0, $1.0) }
        updatedRows.sort { lexicographic($0.0, $1.0) }
        insertedRows.sort { lexicographic($0.0, $1.0) }
        movedRows.sort { lexicographic($0.0.from, $1.0.from) }
        change.deletedItems = deletedRows.map(\.0)
        change.deletedIdentifiers = deletedRows.map(\.1)
        change.insertedItems = insertedRows.map(\.0)
        change.insertedIdentifiers = insertedRows.map(\.1)
        change.updatedItems = updatedRows.map(\.0)
        change.updatedIdentifiers = updatedRows.map(\.1)
        change.movedItems = movedRows.map(\.0)
        change.movedIdentifiers = movedRows.map(\.1)
        return change
    }

    /// For each section (its first row at `offsets[s]`), how many anchors come before it:
    /// the rows before it that are not among `nonAnchors` (indexes, any order).
    /// O(k log k + sections).
    private static func anchorsBefore(_ offsets: [Int], nonAnchors: [Int]) -> [Int] {
        let sorted = nonAnchors.sorted()
        var result: [Int] = []
        result.reserveCapacity(offsets.count)
        var k = 0
        for start in offsets {
            while k < sorted.count && sorted[k] < start { k += 1 }
            result.append(start - k)
        }
        return result
    }

    /// The change set between two whole states. `changed` are the rows the change touched
    /// (`nil`: unknown, as for a request change — then every row that stayed is a candidate
    /// and none is reported updated).
    ///
    /// Untouched rows are anchors only if they really kept their order and their section;
    /// if the caller's `changed` missed some (it cannot, for Folio's own commits), the
    /// largest consistent set of them is kept as anchors and the others are treated as
    /// touched, so the result is still a valid change set.
    ///
    /// - Complexity: O(n log n) in the number of identifiers.
    static func diff(old: ResultsState, new: ResultsState, changed: Set<Int64>?) -> ChangeSet {
        var newIndex: [Int64: Int] = [:]
        newIndex.reserveCapacity(new.ids.count)
        for (j, id) in new.ids.enumerated() { newIndex[id] = j }
        var deleted: [Int] = []
        var survivors: [(old: Int, new: Int, id: Int64)] = []
        var stayed = [Bool](repeating: false, count: new.ids.count)
        for (i, id) in old.ids.enumerated() {
            if let j = newIndex[id] {
                survivors.append((i, j, id))
                stayed[j] = true
            } else {
                deleted.append(i)
            }
        }
        let inserted = stayed.indices.filter { !stayed[$0] }

        // Anchors: untouched survivors that stayed in their (mapped) section, in order.
        var isAnchor = [Bool](repeating: false, count: survivors.count)
        if let changed {
            let (oldToNew, _) = mapSections(old: old, new: new)
            let oldOffsets = old.offsets, newOffsets = new.offsets
            var candidates: [Int] = []  // survivor indexes
            for (k, s) in survivors.enumerated() where !changed.contains(s.id) {
                let from = ResultsState.path(of: s.old, offsets: oldOffsets).section
                let to = ResultsState.path(of: s.new, offsets: newOffsets).section
                if oldToNew[from] == to { candidates.append(k) }
            }
            var ordered = true
            for c in candidates.indices.dropFirst() where survivors[candidates[c - 1]].new > survivors[candidates[c]].new {
                ordered = false
                break
            }
            let kept = ordered ? Array(candidates.indices) : longestIncreasing(candidates.map { survivors[$0].new })
            for c in kept { isAnchor[candidates[c]] = true }
        }
        var anchorAtNew = [Bool](repeating: false, count: new.ids.count)
        for (k, s) in survivors.enumerated() where isAnchor[k] { anchorAtNew[s.new] = true }
        var anchorsBeforeNew = [Int](repeating: 0, count: new.ids.count)
        var running = 0
        for j in anchorAtNew.indices {
            anchorsBeforeNew[j] = running
            if anchorAtNew[j] { running += 1 }
        }
        var touched: [TouchedRow] = []
        var anchorsBeforeOld = 0
        for (k, s) in survivors.enumerated() {
            if isAnchor[k] {
                anchorsBeforeOld += 1
                continue
            }
            touched.append(
                TouchedRow(
                    oldIndex: s.old, newIndex: s.new, oldAnchors: anchorsBeforeOld, newAnchors: anchorsBeforeNew[s.new],
                    updated: changed?.contains(s.id) ?? false))
        }
        return build(old: old, new: new, deleted: deleted, inserted: inserted, touched: touched)
    }

    /// Maps sections by value; sections whose relative order changed count as deleted and
    /// inserted (there are no section moves).
    ///
    /// Sections equal at the start and at the end of both lists are paired directly (a
    /// commit usually adds or removes a section or two, if any); only the sections in
    /// between go through the general matching. Values are unique within each list, so
    /// pairing the common ends keeps the matching maximal.
    static func mapSections(old: ResultsState, new: ResultsState) -> (oldToNew: [Int?], newToOld: [Int?]) {
        guard old.sectioned else { return ([0], [0]) }
        let oldRuns = old.runs, newRuns = new.runs
        var oldToNew = [Int?](repeating: nil, count: oldRuns.count)
        var newToOld = [Int?](repeating: nil, count: newRuns.count)
        var head = 0
        while head < oldRuns.count && head < newRuns.count && oldRuns[head].value == newRuns[head].value {
            oldToNew[head] = head
            newToOld[head] = head
            head += 1
        }
        var oldEnd = oldRuns.count, newEnd = newRuns.count
        while oldEnd > head && newEnd > head && oldRuns[oldEnd - 1].value == newRuns[newEnd - 1].value {
            oldEnd -= 1
            newEnd -= 1
            oldToNew[oldEnd] = newEnd
            newToOld[newEnd] = oldEnd
        }
        guard head < oldEnd && head < newEnd else { return (oldToNew, newToOld) }
        var newByValue: [SQLiteValue: Int] = [:]
        for j in head..<newEnd { newByValue[newRuns[j].value] = j }
        var pairs: [(old: Int, new: Int)] = []
        for i in head..<oldEnd {
            if let j = newByValue[oldRuns[i].value] { pairs.append((i, j)) }
        }
        pairs.sort { $0.new < $1.new }
        for k in longestIncreasing(pairs.map(\.old)) {
            oldToNew[pairs[k].old] = pairs[k].new
            newToOld[pairs[k].new] = pairs[k].old
        }
        return (oldToNew, newToOld)
    }

    static func lexicographic(_ a: IndexPath, _ b: IndexPath) -> Bool {
        a.section != b.section ? a.section < b.section : a.item < b.item
    }

    /// Indexes (into `keys`) of a longest strictly increasing subsequence, ascending.
    /// O(n log n) (patience sorting with back links).
    static func longestIncreasing(_ keys: [Int]) -> [Int] {
        guard !keys.isEmpty else { return [] }
        var tails: [Int] = []  // tails[l]: index of the smallest tail of an increasing run of length l + 1
        var previous = [Int](repeating: -1, count: keys.count)
        for (i, key) in keys.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if keys[tails[mid]] < key { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[i] = tails[low - 1] }
            if low == tails.count { tails.append(i) } else { tails[low] = i }
        }
        var result: [Int] = []
        var i = tails[tails.count - 1]
        while i >= 0 {
            result.append(i)
            i = previous[i]
        }
        return result.reversed()
    }
}
