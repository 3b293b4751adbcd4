import Foundation
import GRDB

/// Builds batch-update change sets from what moved where.
enum ChangeSetBuilder {
    /// A row present before and after.
    struct Survivor {
        var oldIndex: Int
        var newIndex: Int
        /// Kept its place among the rows that stayed (no move needed).
        var stationary: Bool
        /// The record itself changed.
        var updated: Bool
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
        var newByValue: [DatabaseValue: Int] = [:]
        for j in head..<newEnd { newByValue[newRuns[j].value] = j }
        var pairs: [(old: Int, new: Int)] = []
        for i in head..<oldEnd {
            if let j = newByValue[oldRuns[i].value] { pairs.append((i, j)) }
        }
        pairs.sort { $0.new < $1.new }
        let keep = longestIncreasing(pairs.map { ($0.old, 1) })
        for k in keep {
            oldToNew[pairs[k].old] = pairs[k].new
            newToOld[pairs[k].new] = pairs[k].old
        }
        return (oldToNew, newToOld)
    }

    /// Turns row-level facts into a change set obeying the batch-update rules.
    static func assemble(
        old: ResultsState, new: ResultsState,
        deletions: [Int], insertions: [(index: Int, id: Int64)], survivors: [Survivor]
    ) -> ChangeSet {
        let (oldToNew, newToOld) = mapSections(old: old, new: new)
        let oldOffsets = old.offsets, newOffsets = new.offsets
        var change = ChangeSet()
        change.deletedSections = oldToNew.indices.filter { oldToNew[$0] == nil }
        change.insertedSections = newToOld.indices.filter { newToOld[$0] == nil }
        var inserted: [(IndexPath, RecordID)] = []
        var deleted: [(IndexPath, RecordID)] = []
        var updated: [(IndexPath, RecordID)] = []
        var moved: [(ChangeSet.Move, RecordID)] = []

        for index in deletions {
            let path = ResultsState.path(of: index, offsets: oldOffsets)
            if oldToNew[path.section] != nil { deleted.append((path, RecordID(old.ids[index]))) }
        }
        for (index, id) in insertions {
            let path = ResultsState.path(of: index, offsets: newOffsets)
            if newToOld[path.section] != nil { inserted.append((path, RecordID(id))) }
        }
        for s in survivors {
            let from = ResultsState.path(of: s.oldIndex, offsets: oldOffsets)
            let to = ResultsState.path(of: s.newIndex, offsets: newOffsets)
            let id = RecordID(new.ids[s.newIndex])
            let fromKept = oldToNew[from.section]
            let toKept = newToOld[to.section] != nil
            if fromKept == nil || !toKept {
                if fromKept != nil { deleted.append((from, id)) }
                if toKept { inserted.append((to, id)) }
            } else if s.stationary && fromKept == to.section {
                if s.updated { updated.append((from, id)) }
            } else {
                moved.append((ChangeSet.Move(from: from, to: to, isUpdated: s.updated), id))
            }
        }
        deleted.sort { lexicographic($0.0, $1.0) }
        updated.sort { lexicographic($0.0, $1.0) }
        inserted.sort { lexicographic($0.0, $1.0) }
        moved.sort { lexicographic($0.0.from, $1.0.from) }
        change.deletedItems = deleted.map(\.0)
        change.deletedIdentifiers = deleted.map(\.1)
        change.insertedItems = inserted.map(\.0)
        change.insertedIdentifiers = inserted.map(\.1)
        change.updatedItems = updated.map(\.0)
        change.updatedIdentifiers = updated.map(\.1)
        change.movedItems = moved.map(\.0)
        change.movedIdentifiers = moved.map(\.1)
        return change
    }

    static func lexicographic(_ a: IndexPath, _ b: IndexPath) -> Bool {
        a.section != b.section ? a.section < b.section : a.item < b.item
    }

    /// The general difference between two states, O(n log n). `changed` are the rows whose
    /// records changed (`nil`: unknown — then only moves are reported, by a minimal set).
    static func diff(old: ResultsState, new: ResultsState, changed: Set<Int64>?) -> ChangeSet {
        var newIndex: [Int64: Int] = [:]
        newIndex.reserveCapacity(new.ids.count)
        for (i, id) in new.ids.enumerated() { newIndex[id] = i }
        var deletions: [Int] = []
        var common: [(old: Int, new: Int, id: Int64)] = []
        var present = Set<Int64>()
        present.reserveCapacity(old.ids.count)
        for (i, id) in old.ids.enumerated() {
            present.insert(id)
            if let j = newIndex[id] { common.append((i, j, id)) } else { deletions.append(i) }
        }
        var insertions: [(index: Int, id: Int64)] = []
        for (j, id) in new.ids.enumerated() where !present.contains(id) { insertions.append((j, id)) }
        common.sort { $0.new < $1.new }
        // Rows known unchanged weigh more than all changed rows together, so they are never
        // the ones reported as moved.
        let heavy = common.count + 1
        let keep = Set(
            longestIncreasing(
                common.map { c in
                    (c.old, changed.map { $0.contains(c.id) ? 1 : heavy } ?? 1)
                }))
        var survivors: [Survivor] = []
        for (k, c) in common.enumerated() {
            let updated = changed?.contains(c.id) ?? false
            let stationary = keep.contains(k)
            survivors.append(Survivor(oldIndex: c.old, newIndex: c.new, stationary: stationary, updated: updated))
        }
        return assemble(old: old, new: new, deletions: deletions, insertions: insertions, survivors: survivors)
    }

    /// Indexes (into `items`) of a maximum-weight subsequence strictly increasing in `key`.
    /// O(n log n) with a Fenwick tree of prefix maxima.
    static func longestIncreasing(_ items: [(key: Int, weight: Int)]) -> [Int] {
        guard !items.isEmpty else { return [] }
        // Compress keys.
        let sortedKeys = Array(Set(items.map(\.key))).sorted()
        var rank: [Int: Int] = [:]
        for (i, k) in sortedKeys.enumerated() { rank[k] = i + 1 }
        let size = sortedKeys.count
        var treeWeight = [Int](repeating: 0, count: size + 1)
        var treeItem = [Int](repeating: -1, count: size + 1)
        var best = [Int](repeating: 0, count: items.count)
        var previous = [Int](repeating: -1, count: items.count)
        for (i, item) in items.enumerated() {
            let r = rank[item.key]!
            var q = r - 1, bw = 0, bi = -1
            while q > 0 {
                if treeWeight[q] > bw { bw = treeWeight[q]; bi = treeItem[q] }
                q -= q & -q
            }
            best[i] = bw + item.weight
            previous[i] = bi
            var u = r
            while u <= size {
                if best[i] > treeWeight[u] { treeWeight[u] = best[i]; treeItem[u] = i }
                u += u & -u
            }
        }
        var end = 0
        for i in 1..<items.count where best[i] > best[end] { end = i }
        var result: [Int] = []
        var i = end
        while i >= 0 { result.append(i); i = previous[i] }
        return result.reversed()
    }
}
