import Foundation
import GRDB

/// Identifiers in order and how they fall into sections.
///
/// Unsectioned results always have exactly one section (as `NSFetchedResultsController`
/// reports), even when empty; sectioned results have one run per section value.
struct ResultsState: Sendable, Equatable {
    var ids: IdentifierList
    var runs: [SectionRun]
    var sectioned: Bool

    static func empty(sectioned: Bool) -> ResultsState {
        ResultsState(ids: IdentifierList(), runs: sectioned ? [] : [SectionRun(value: .null, count: 0)], sectioned: sectioned)
    }

    init(ids: IdentifierList, runs: [SectionRun], sectioned: Bool) {
        self.ids = ids
        self.sectioned = sectioned
        self.runs = sectioned ? runs : [SectionRun(value: .null, count: ids.count)]
    }

    /// Section start offsets.
    var offsets: [Int] {
        var result: [Int] = []
        result.reserveCapacity(runs.count)
        var start = 0
        for run in runs {
            result.append(start)
            start += run.count
        }
        return result
    }

    /// The state of rows `offset ..< offset + limit` (a request's window).
    func window(offset: Int, limit: Int?) -> ResultsState {
        let lower = Swift.min(offset, ids.count)
        let upper = limit.map { Swift.min(ids.count, lower + $0) } ?? ids.count
        if lower == 0 && upper == ids.count { return self }
        let windowIDs = IdentifierList(ids.slice(lower..<upper))
        guard sectioned else { return ResultsState(ids: windowIDs, runs: [], sectioned: false) }
        var runs: [SectionRun] = []
        var start = 0
        for run in self.runs {
            let a = Swift.max(start, lower), b = Swift.min(start + run.count, upper)
            if a < b { runs.append(SectionRun(value: run.value, count: b - a)) }
            start += run.count
        }
        return ResultsState(ids: windowIDs, runs: runs, sectioned: true)
    }

    /// Section index and item of a flat index, given `offsets`.
    static func path(of index: Int, offsets: [Int]) -> IndexPath {
        var low = 0, high = offsets.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if offsets[mid] <= index { low = mid } else { high = mid - 1 }
        }
        return IndexPath(item: index - offsets[low], section: low)
    }

    func _checkInvariants() {
        ids._checkInvariants()
        precondition(runs.reduce(0) { $0 + $1.count } == ids.count, "section counts do not add up")
        if sectioned {
            precondition(runs.allSatisfy { $0.count > 0 }, "empty section")
            precondition(Set(runs.map(\.value)).count == runs.count, "a section value appears twice")
        } else {
            precondition(runs.count == 1, "unsectioned results have one section")
        }
    }
}
