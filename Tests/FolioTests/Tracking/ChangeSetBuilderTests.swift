import Foundation
import Testing
@testable import Folio

/// The change-set builder against the move rules, on random small states,
/// with minimality checked by brute force over every subset of the touched rows:
/// - a row the change did not touch is never a move (nor an update);
/// - a touched row whose section changed is a move, or a delete and an insert when its old
///   section is deleted or its new one inserted;
/// - within a section, the touched rows reported as moves form a minimum set.
@Suite("Change-set builder rules")
struct ChangeSetBuilderTests {
    struct Row {
        var id: Int64
        var section: Int64
        var key: Int
    }

    /// The state of `rows`, its sections in `order` of their values (by default ascending):
    /// a `.computed` section key need not follow the sort, so a section can move past
    /// another when its rows' values change without changing their section.
    static func state(_ rows: [Row], order: [Int64] = [0, 1, 2, 3]) -> ResultsState {
        func rank(_ section: Int64) -> Int { order.firstIndex(of: section) ?? Int(section) }
        let sorted = rows.sorted { (rank($0.section), $0.key, $0.id) < (rank($1.section), $1.key, $1.id) }
        var runs: [SectionRun] = []
        for row in sorted {
            if let last = runs.last, last.value == .integer(row.section) {
                runs[runs.count - 1].count += 1
            } else {
                runs.append(SectionRun(value: .integer(row.section), count: 1))
            }
        }
        return ResultsState(ids: IdentifierList(sorted.map(\.id)), runs: runs, sectioned: true)
    }

    static func snapshot(_ state: ResultsState) -> Snapshot {
        var offset = 0
        let infos = state.runs.map { run in
            defer { offset += run.count }
            return SectionInfo(name: "\(run.value)", indexTitle: nil, numberOfObjects: run.count, offset: offset, isNil: false)
        }
        return Snapshot(state: state, sections: infos)
    }

    /// Section index of each identifier.
    static func sections(_ state: ResultsState) -> [Int64: (section: SQLiteValue, index: Int)] {
        var result: [Int64: (SQLiteValue, Int)] = [:]
        var start = 0
        for run in state.runs {
            for i in start..<(start + run.count) { result[state.ids[i]] = (run.value, i) }
            start += run.count
        }
        return result
    }

    /// The largest number of `candidates` that can stay (keep their order relative to each
    /// other and to every anchor), by trying every subset.
    static func maximumStaying(_ candidates: [Int64], anchors: [Int64], old: [Int64: Int], new: [Int64: Int]) -> Int {
        var best = 0
        for mask in 0..<(1 << candidates.count) {
            let chosen = candidates.indices.filter { mask & (1 << $0) != 0 }.map { candidates[$0] }
            guard chosen.count > best else { continue }
            let kept = chosen + anchors
            var consistent = true
            outer: for a in kept {
                for b in kept where a != b && (old[a]! < old[b]!) != (new[a]! < new[b]!) {
                    consistent = false
                    break outer
                }
            }
            if consistent { best = chosen.count }
        }
        return best
    }

    @Test(arguments: 0..<8, [false, true])
    func randomChangesFollowTheRules(seed: Int, sectionsMove: Bool) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 7919 &+ 17 &+ (sectionsMove ? 1 : 0))
        var checked = 0, moves = 0, sectionMoves = 0
        for round in 0..<400 {
            let count = Int.random(in: 0...9, using: &rng)
            var next: Int64 = 1
            var oldRows: [Row] = []
            for _ in 0..<count {
                oldRows.append(
                    Row(id: next, section: Int64.random(in: 0...3, using: &rng), key: Int.random(in: 0..<20, using: &rng)))
                next += 1
            }
            var newRows: [Row] = []
            var touched = Set<Int64>()
            var changed = Set<Int64>()
            for var row in oldRows {
                let roll = Int.random(in: 0..<10, using: &rng)
                if roll < 2 {
                    changed.insert(row.id)  // deleted
                    continue
                }
                if roll < 6 {
                    touched.insert(row.id)
                    changed.insert(row.id)
                    if Bool.random(using: &rng) { row.section = Int64.random(in: 0...3, using: &rng) }
                    row.key = Int.random(in: 0..<20, using: &rng)
                }
                newRows.append(row)
            }
            for _ in 0..<Int.random(in: 0...2, using: &rng) {
                newRows.append(
                    Row(id: next, section: Int64.random(in: 0...3, using: &rng), key: Int.random(in: 0..<20, using: &rng)))
                changed.insert(next)
                next += 1
            }
            // Sections that move: the old and new states order them differently.
            let oldOrder = sectionsMove ? [Int64](0...3).shuffled(using: &rng) : [0, 1, 2, 3]
            let newOrder = sectionsMove ? [Int64](0...3).shuffled(using: &rng) : [0, 1, 2, 3]
            let old = Self.state(oldRows, order: oldOrder), new = Self.state(newRows, order: newOrder)
            // The diff with the changed rows known and unknown, and the incremental path's
            // own input (every untouched row an anchor, counted by the caller) where the
            // untouched rows kept their order, as they always do after a commit.
            for (known, incremental) in [(true, false), (false, false), (true, true)] {
                let built = incremental ? Self.incrementalChange(old: old, new: new, changed: changed) : nil
                if incremental && built == nil { continue }
                let change = built ?? ChangeSetBuilder.diff(old: old, new: new, changed: known ? changed : nil)
                // Valid for a strict table view, and leads to the new state.
                var model = TableViewModel(Self.snapshot(old))
                try model.apply(change, dataSource: Self.snapshot(new))
                #expect(model == TableViewModel(Self.snapshot(new)), "seed \(seed) round \(round)")
                let oldAt = Self.sections(old), newAt = Self.sections(new)
                let survivors = oldRows.map(\.id).filter { newAt[$0] != nil }
                let candidates = known ? survivors.filter { touched.contains($0) } : survivors
                let anchors = known ? survivors.filter { !touched.contains($0) } : []
                let moved = Set(change.movedIdentifiers.map(\.rawValue))
                // Anchors are never moves nor updates.
                for id in anchors {
                    #expect(!moved.contains(id), "untouched row \(id) moved: \(change), seed \(seed) round \(round)")
                    #expect(!change.updatedIdentifiers.contains(RecordID(id)))
                }
                if !known { #expect(change.updatedItems.isEmpty, "no updates when changes are unknown") }
                // A row whose section changed (between surviving sections) is a move.
                let deletedSections = Set(change.deletedSections.map { old.runs[$0].value })
                let insertedSections = Set(change.insertedSections.map { new.runs[$0].value })
                var sameSection: [Int64] = []
                for id in candidates {
                    let from = oldAt[id]!.section, to = newAt[id]!.section
                    if deletedSections.contains(from) || insertedSections.contains(to) {
                        #expect(!moved.contains(id), "a move out of a deleted or into an inserted section")
                    } else if from != to {
                        #expect(moved.contains(id), "row \(id) changed section without a move")
                    } else {
                        sameSection.append(id)
                    }
                }
                // Minimum: as many rows stay as any consistent choice allows, section by section.
                let bySection = Dictionary(grouping: sameSection) { newAt[$0]!.section }
                for (section, rows) in bySection {
                    let sectionAnchors = anchors.filter { newAt[$0]!.section == section }
                    let best = Self.maximumStaying(
                        rows, anchors: sectionAnchors, old: oldAt.mapValues(\.index), new: newAt.mapValues(\.index))
                    let staying = rows.filter { !moved.contains($0) }.count
                    #expect(
                        staying == best,
                        "section \(section): \(staying) rows stay, \(best) could; \(change), seed \(seed) round \(round)")
                }
                moves += change.movedItems.count
                if Set(oldRows.map(\.section)).intersection(newRows.map(\.section)).count > 1
                    && old.runs.map(\.value).filter({ new.runs.map(\.value).contains($0) })
                        != new.runs.map(\.value).filter({ old.runs.map(\.value).contains($0) })
                {
                    sectionMoves += 1
                }
                checked += 1
            }
        }
        #expect(checked >= 800 + (sectionsMove ? 100 : 350), "\(checked) checked")
        #expect(moves > 50, "the rounds exercise moves")
        if sectionsMove { #expect(sectionMoves > 20, "the rounds move sections (\(sectionMoves))") }
    }

    /// What the incremental path hands the builder after a commit that changed `changed`:
    /// every untouched survivor is an anchor, and the anchors before each touched row are
    /// counted on both sides (`nil` where the untouched rows did not keep their order, which
    /// no commit can do).
    static func incrementalChange(old: ResultsState, new: ResultsState, changed: Set<Int64>) -> ChangeSet? {
        let newIndex = Dictionary(uniqueKeysWithValues: new.ids.enumerated().map { ($1, $0) })
        let oldIDs = Array(old.ids), newIDs = Array(new.ids)
        let untouchedOld = oldIDs.filter { !changed.contains($0) && newIndex[$0] != nil }
        let survivingUntouched = Set(untouchedOld)
        let untouchedNew = newIDs.filter { survivingUntouched.contains($0) }
        guard untouchedOld == untouchedNew else { return nil }
        var deleted: [Int] = [], touched: [ChangeSetBuilder.TouchedRow] = []
        var oldAnchors = 0
        for (i, id) in oldIDs.enumerated() {
            guard changed.contains(id) else {
                if newIndex[id] != nil { oldAnchors += 1 }
                continue
            }
            guard let j = newIndex[id] else {
                deleted.append(i)
                continue
            }
            let newAnchors = newIDs[..<j].filter { !changed.contains($0) }.count
            touched.append(.init(oldIndex: i, newIndex: j, oldAnchors: oldAnchors, newAnchors: newAnchors, updated: true))
        }
        let oldSet = Set(oldIDs)
        let inserted = newIDs.indices.filter { !oldSet.contains(newIDs[$0]) }
        return ChangeSetBuilder.build(old: old, new: new, deleted: deleted, inserted: inserted, touched: touched)
    }

    /// A section moves past another with a row that changed without changing its section
    /// (a `.computed` key that names text and NULL alike: the row's text sorted first, NULL
    /// sorts last). One of the two sections is deleted and inserted again; the row stays in
    /// the other, and is an update, not a move.
    @Test func aRowThatCarriesItsSectionPastAnotherIsNotAMove() throws {
        let old = Self.state([Row(id: 1, section: 0, key: 0), Row(id: 2, section: 1, key: 5)], order: [0, 1])
        let new = Self.state([Row(id: 1, section: 0, key: 9), Row(id: 2, section: 1, key: 5)], order: [1, 0])
        let change = ChangeSetBuilder.diff(old: old, new: new, changed: [1])
        #expect(change.movedItems.isEmpty, "\(change)")
        #expect(change.deletedSections.count == 1 && change.insertedSections.count == 1)
        var model = TableViewModel(Self.snapshot(old))
        try model.apply(change, dataSource: Self.snapshot(new))
        #expect(model == TableViewModel(Self.snapshot(new)))
        // The incremental path's own input gives the same.
        let built = ChangeSetBuilder.build(
            old: old, new: new, deleted: [], inserted: [],
            touched: [.init(oldIndex: 0, newIndex: 1, oldAnchors: 0, newAnchors: 1, updated: true)])
        #expect(built == change)
    }

    /// The exact change set of two small cases from the rules.
    @Test func anEmptiedSectionIsADeleteAndTheRowAnInsert() throws {
        // Two rows in two sections; the second moves into the first's section, before it.
        let old = Self.state([Row(id: 1, section: 0, key: 5), Row(id: 2, section: 1, key: 5)])
        let new = Self.state([Row(id: 1, section: 0, key: 5), Row(id: 2, section: 0, key: 1)])
        let change = ChangeSetBuilder.diff(old: old, new: new, changed: [2])
        #expect(change.deletedSections == [1])
        #expect(change.insertedItems == [IndexPath(item: 0, section: 0)])
        #expect(change.movedItems.isEmpty && change.updatedItems.isEmpty && change.deletedItems.isEmpty)
        // The incremental path's own input (anchors counted by the caller) gives the same.
        let built = ChangeSetBuilder.build(
            old: old, new: new, deleted: [], inserted: [],
            touched: [.init(oldIndex: 1, newIndex: 0, oldAnchors: 1, newAnchors: 0, updated: true)])
        #expect(built == change)
    }

    @Test func aTouchedRowThatKeptItsPlaceIsAnUpdateAndTheOthersMoveMinimally() throws {
        // 1 2 3 4 5 (one section); 2 and 4 touched; 4 goes before 2: one move, one update.
        let rows = (1...5).map { Row(id: Int64($0), section: 0, key: $0 * 10) }
        var moved = rows
        moved[3].key = 15
        let change = ChangeSetBuilder.diff(old: Self.state(rows), new: Self.state(moved), changed: [2, 4])
        #expect(change.movedItems.count == 1)
        #expect(change.updatedItems.count == 1)
        #expect(Set(change.movedIdentifiers + change.updatedIdentifiers) == [RecordID(2), RecordID(4)])
    }
}
