import Foundation
import GRDB

/// A run of consecutive results with the same section value.
struct SectionRun: Sendable, Equatable {
    /// The section's identity: the section expression's value, compared as SQLite does.
    var value: SQLiteValue
    var count: Int

    init(value: SQLiteValue, count: Int) {
        self.value = value
        self.count = count
    }

    init(value: DatabaseValue, count: Int) {
        self.init(value: SQLiteValue(value), count: count)
    }
}

/// Identifiers in order and how they fall into sections.
///
/// Unsectioned results always have exactly one section (as `NSFetchedResultsController`
/// reports), even when empty; sectioned results have one run per section value, none
/// empty, no value twice. ``_checkInvariants()`` checks this whenever a state is made,
/// when internal checks are compiled in.
struct ResultsState: Sendable, Equatable {
    private(set) var ids: IdentifierList
    private(set) var runs: [SectionRun]
    let sectioned: Bool

    static func empty(sectioned: Bool) -> ResultsState {
        ResultsState(ids: IdentifierList(), runs: [], sectioned: sectioned)
    }

    /// A state whose runs are known to be consistent with `ids` (the invariants are checked
    /// when internal checks are compiled in). Unsectioned results get their single run here.
    init(ids: IdentifierList, runs: [SectionRun], sectioned: Bool) {
        self.ids = ids
        self.sectioned = sectioned
        self.runs = sectioned ? runs : [SectionRun(value: SQLiteValue.null, count: ids.count)]
        _checkInvariants()
    }

    /// A state that breaks the invariants on purpose, without checking them: only for tests
    /// of code that must reject an inconsistent data source.
    init(_uncheckedIDs ids: IdentifierList, runs: [SectionRun], sectioned: Bool) {
        self.ids = ids
        self.runs = runs
        self.sectioned = sectioned
    }

    /// A state from runs that may be inconsistent (read from a file, or assembled by the
    /// incremental path): `nil` unless they add up to the identifiers, none is empty, and
    /// no section value appears twice.
    init?(validating ids: IdentifierList, runs: [SectionRun], sectioned: Bool) {
        guard !sectioned || Self.problem(ids: ids, runs: runs) == nil else { return nil }
        self.init(ids: ids, runs: runs, sectioned: sectioned)
    }

    /// What is wrong with sectioned runs for `ids`, or `nil`.
    private static func problem(ids: IdentifierList, runs: [SectionRun]) -> String? {
        var total = 0
        for (i, run) in runs.enumerated() {
            if run.count <= 0 { return "section \(i) has \(run.count) rows" }
            let (sum, overflow) = total.addingReportingOverflow(run.count)
            if overflow { return "section counts overflow" }
            total = sum
        }
        if total != ids.count { return "section counts add up to \(total), not \(ids.count)" }
        if Set(runs.map(\.value)).count != runs.count { return "a section value appears twice" }
        return nil
    }

    /// Section start offsets.
    var offsets: [Int] { Self.offsets(of: runs) }

    /// The start offsets of `runs`. O(runs).
    static func offsets(of runs: [SectionRun]) -> [Int] {
        [Int](unsafeUninitializedCapacity: runs.count) { offsets, initialized in
            // The counts only: a run's value is not copied.
            runs.withUnsafeBufferPointer { runs in
                var start = 0
                for i in runs.indices {
                    offsets[i] = start
                    start += runs[i].count
                }
            }
            initialized = runs.count
        }
    }

    /// The state of rows `offset ..< offset + limit` (a request's window), clamped to the
    /// rows there are; no arithmetic overflows, whatever the offset and limit.
    func window(offset: Int, limit: Int?) -> ResultsState {
        let lower = Swift.min(Swift.max(0, offset), ids.count)
        let available = ids.count - lower
        let upper = lower + Swift.min(available, Swift.max(0, limit ?? available))
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
}

extension ResultsState {
    #if FOLIO_INTERNAL_CHECKS
    /// Checks the identifier list and that the runs describe it: counts that add up, no
    /// empty section and no section value twice (sectioned), exactly one run (unsectioned).
    /// O(sections + chunks).
    @inline(never)
    func _checkInvariants() {
        ids._checkInvariants()
        if sectioned {
            if let problem = Self.problem(ids: ids, runs: runs) { preconditionFailure("results state: \(problem)") }
        } else {
            precondition(runs.count == 1, "unsectioned results have one section, not \(runs.count)")
            precondition(runs[0].count == ids.count, "the single section counts \(runs[0].count) of \(ids.count) rows")
        }
    }
    #else
    @inline(__always)
    func _checkInvariants() {}
    #endif
}
