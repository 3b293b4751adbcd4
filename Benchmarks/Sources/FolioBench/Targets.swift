import Foundation

/// One row of the design's "Performance targets" table: its "what" and "target" cells, verbatim.
struct Target: Sendable {
    /// The "what" cell.
    let what: String
    /// The "target" cell.
    let text: String

    init(_ what: String, _ text: String) {
        self.what = what
        self.text = text
    }

    /// One of the clauses of the target (the cell split at "; "), for a row of the report
    /// that checks only that clause.
    func clause(_ index: Int) -> String {
        text.components(separatedBy: "; ")[index]
    }
}

/// The performance targets: the only place in the benchmark where they are written.
///
/// This table mirrors the "Performance targets" table of the design document, DESIGN.md,
/// which lives beside the repository rather than in it (`../shared/DESIGN.md` relative to
/// the repository's root), and MUST BE KEPT IDENTICAL to it: the same rows in the same order,
/// the same words, the same numbers. folio-bench cannot read that file at run time (it is not
/// in the repository), so after changing either, run
/// `folio-bench --check-targets ../shared/DESIGN.md` from the repository's root, which compares
/// the two and fails on any difference. The thresholds each check uses sit beside the text
/// they come from.
enum Targets {
    static let performFetch = Target("performFetch, no sections", "≤ 1.1 × limit; ≤ 24 bytes per row")
    static let performFetchRatio = 1.1
    static let performFetchBytesPerRow = 24.0

    static let sections = Target("performFetch, ~1,000 sections", "≤ 1.3 × limit; zero records loaded")
    static let sectionsRatio = 1.3

    static let filteredList = Target(
        "filtered performFetch with a compound index (filter columns, then sort keys)", "≤ 1.5 × the unfiltered one")
    static let filteredListRatio = 1.5

    static let firstScreen = Target(
        "first screen (first rows + their section headers), any indexed sort, filtered or not",
        "≤ 20 ms at 1M and 10M rows (or ≤ 1.5 × SQLite's own LIMIT query for very selective filters)")
    static let firstScreenMilliseconds = 20.0
    static let firstScreenRatio = 1.5

    static let searchAsYouType = Target(
        "search as you type: a keystroke's first screen", "≤ 50 ms full-text, ≤ 20 ms folded prefix, at 10M rows")
    /// The two clauses of ``searchAsYouType``, one for each kind of search.
    static let searchAsYouTypeFullText = Target(searchAsYouType.what, "≤ 50 ms full-text")
    static let searchAsYouTypeFolded = Target(searchAsYouType.what, "≤ 20 ms folded prefix")
    static let searchAsYouTypeFullTextMilliseconds = 50.0
    static let searchAsYouTypeFoldedMilliseconds = 20.0

    static let firstBatch = Target("first batch of 50 after performFetch", "≤ 3 ms")
    static let firstBatchMilliseconds = 3.0

    static let scroll = Target("full sequential scroll, batch 100", "≤ 1.2 × naive fetchAll; memory bounded")
    static let scrollRatio = 1.2
    /// "Memory bounded": the peak growth of the resident set while scrolling every row stays
    /// under this, whatever the number of rows (at most `maxBatchesInMemory` batches are kept).
    static let scrollPeakBytes = 64 * 1_048_576

    static let oneRowChange = Target("one-row insert, update or delete → change set", "median ≤ 1 ms, p99 ≤ 5 ms")
    static let oneRowChangeMedian = 1.0
    static let oneRowChangeP99 = 5.0

    static let liveControllers = Target(
        "20 live controllers, one-row moving update → all delivered", "≤ 3 ms (100 controllers ≤ 15 ms)")
    static let liveControllersCount = 20
    static let liveControllersMilliseconds = 3.0
    /// The clause of ``liveControllers`` in parentheses, which the 100-controller row checks.
    static let manyLiveControllers = Target(liveControllers.what, "100 controllers ≤ 15 ms")
    static let manyLiveControllersCount = 100
    static let manyLiveControllersMilliseconds = 15.0

    static let transaction = Target("1,000-row transaction → change set", "≤ 1.10 × commit")
    static let transactionRatio = 1.10

    static let parentRename = Target(
        "renaming a parent with 10,000 children, list sectioned by parent name", "≤ 100 ms; ≥ 20 × faster than naive")
    static let parentRenameMilliseconds = 100.0
    static let parentRenameSpeedup = 20.0

    static let derivedCount = Target(
        "one child's change → lists of parents sorted by a derived count delivered",
        "median ≤ 1 ms; the child's write ≤ 1.10 × without the derived attribute")
    static let derivedDeliveryMedian = 1.0
    static let derivedWriteRatio = 1.10

    static let userMove = Target(
        "one user-driven move → committed and delivered, also after 10,000 drags into one gap", "median ≤ 1 ms")
    static let userMoveMedian = 1.0

    static let externalCommit = Target(
        "another process's one-row commit → change set",
        "median ≤ 50 ms (goal 10 ms), not a reload; local writes ≤ 1.10 × commit for the log")
    /// The first clause of ``externalCommit``, which the delivery rows check.
    static let externalCommitDelivery = Target(externalCommit.what, externalCommit.clause(0))
    static let externalCommitMedian = 50.0
    /// The second clause of ``externalCommit``: the change log's cost to local writes.
    static let changeLogCost = Target(externalCommit.what, externalCommit.clause(1))
    static let changeLogCostRatio = 1.10

    static let snapshot = Target("identifier snapshot of 1M rows", "≤ 20 ms; zero batches loaded")
    static let snapshotMilliseconds = 20.0

    static let reopen = Target("reopen with a valid section cache", "≤ 0.5 × uncached performFetch")
    static let reopenRatio = 0.5

    static let cancel = Target(
        "cancel a background fetch", "returns within 50 ms; the main actor never stalls over 16 ms")
    static let cancelMilliseconds = 50.0
    static let stallMilliseconds = 16.0

    /// Every target, in the design table's order.
    static let all: [Target] = [
        performFetch, sections, filteredList, firstScreen, searchAsYouType, firstBatch, scroll, oneRowChange,
        liveControllers, transaction, parentRename, derivedCount, userMove, externalCommit, snapshot, reopen, cancel,
    ]

    // MARK: Goals of issues, not in the design's table

    /// Issue 22's goal for a to-many, which the design's table does not state: checked by
    /// folio-bench, but not part of ``all`` (which mirrors the design's table).
    static let toMany = Target(
        "to-many count and first batch of a parent with 100,000 children",
        "≤ 1.5 × SQLite's own count(*) and LIMIT query through the index")
    static let toManyRatio = 1.5

    /// Issue 43's goal for opening a list of parents sorted by a derived attribute: checked,
    /// not part of ``all``.
    static let derivedOpen = Target(
        "opening a list of 1,000 parents sorted by a derived count", "≤ 1.1 × SQLite's own indexed query over the derived column")
    static let derivedOpenRatio = 1.1

    /// Issue 24's goal for the rest of a list shown from its first screen: checked, not part
    /// of ``all``.
    static let completion = Target(
        "a list shown from its first screen, completed in the background (first screen, then every row and section)",
        "≤ 1.1 × the whole identifier scan it replaces")
    static let completionRatio = 1.1

    /// Issue 24's goal for typing faster than a keystroke's list completes: the previous
    /// keystroke's background read stops, as a cancelled background fetch returns.
    static let typingCancel = Target(
        "typing faster than a keystroke completes: the previous keystroke's background read stops",
        "within 50 ms, like a cancelled background fetch")
    static let typingCancelMilliseconds = 50.0

    /// The rows of the "Performance targets" table in a copy of DESIGN.md: the "what" and
    /// "target" cells of every row under the heading.
    static func designRows(_ markdown: String) -> [Target] {
        var rows: [Target] = []
        var inSection = false, inTable = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                if inSection { break }
                inSection = line.trimmingCharacters(in: .whitespaces) == "## Performance targets"
                continue
            }
            guard inSection else { continue }
            guard line.hasPrefix("|") else {
                if inTable { break }
                continue
            }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            if !inTable {
                inTable = true  // the header row
                continue
            }
            if cells.allSatisfy({ $0.allSatisfy { $0 == "-" || $0 == ":" } }) { continue }  // the separator row
            guard cells.count >= 2 else { continue }
            rows.append(Target(cells[0], cells[1]))
        }
        return rows
    }

    /// Compares ``all`` with the design's table; returns the differences (none when identical).
    static func differences(fromDesign markdown: String) -> [String] {
        let design = designRows(markdown)
        if design.isEmpty { return ["no \"## Performance targets\" table found"] }
        var differences: [String] = []
        for i in 0..<Swift.max(design.count, all.count) {
            let d = i < design.count ? design[i] : nil
            let b = i < all.count ? all[i] : nil
            if d?.what != b?.what || d?.text != b?.text {
                differences.append(
                    "row \(i + 1): DESIGN.md has \(d.map { "\"\($0.what)\" | \"\($0.text)\"" } ?? "no row"); "
                        + "folio-bench has \(b.map { "\"\($0.what)\" | \"\($0.text)\"" } ?? "no row")")
            }
        }
        return differences
    }
}
