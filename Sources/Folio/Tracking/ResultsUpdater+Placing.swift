import Foundation

// Where a commit's rows go in the list it follows: their gaps among the untouched rows
// (found by probing sort keys), and their sections.
extension ResultsUpdater {
    /// For each of `rows` (sorted), how many of `ids` (sorted, none of them in `rows`)
    /// come before it; `nil` if a row of `ids` is gone (the database changed behind Folio's
    /// back: the caller rescans), or when it would take more than `budget` probes (a scan
    /// is then cheaper).
    ///
    /// The rows are searched middle first, then each half within the range the middle one
    /// left it: about k·log₂(n/k) probes for k rows among n. Each probe is one indexed
    /// lookup of a row's sort keys. When the first sort key is a number, a search guesses
    /// by interpolation between the keys that bracket its range (dates and scores are
    /// often spread evenly, and then a few probes do), falling back to bisection after
    /// any guess that did not halve the range — never more than twice the probes of
    /// plain bisection.
    ///
    /// Rows whose range has closed (`low == high`: their neighbours were placed in the same
    /// gap) cost no probe, so a block of rows that move together — the children of a
    /// renamed parent — costs about log₂(k)·log₂(n) probes, not k·log₂(n/k).
    func findGaps(of rows: [RowKey], among ids: IdentifierList, probe: KeyProbe, budget: Int = .max) throws -> [Int]? {
        var probes = 0
        struct Range {
            var rows: Swift.Range<Int>
            /// The rows' gaps are in `low...high`.
            var low: Int, high: Int
            /// The keys of `ids[low - 1]` and `ids[high]`, when known.
            var lowKey: RowKey?, highKey: RowKey?
        }
        var gaps = [Int](repeating: 0, count: rows.count)
        var pending = rows.isEmpty ? [] : [Range(rows: 0..<rows.count, low: 0, high: ids.count)]
        while let range = pending.popLast() {
            let middle = (range.rows.lowerBound + range.rows.upperBound) / 2
            let target = rows[middle]
            var low = range.low, high = range.high
            var lowKey = range.lowKey, highKey = range.highKey
            var interpolate = true
            while low < high {
                var mid = (low + high) / 2
                if interpolate, let lowKey, let highKey, let f = order.fraction(of: target, between: lowKey, and: highKey) {
                    // ids[low - 1] and ids[high] bracket the target: place it in proportion.
                    mid = Swift.min(high - 1, Swift.max(low, low - 1 + Int((f * Double(high - low + 1)).rounded())))
                }
                let width = high - low
                probes += 1
                if probes > budget { return nil }
                guard let k = try probe.key(ids[mid]) else { return nil }
                if order.precedes(k, target) {
                    low = mid + 1
                    lowKey = k
                } else {
                    high = mid
                    highKey = k
                }
                interpolate = (high - low) * 2 <= width
            }
            gaps[middle] = low
            if range.rows.lowerBound < middle {
                pending.append(
                    Range(rows: range.rows.lowerBound..<middle, low: range.low, high: low, lowKey: range.lowKey, highKey: highKey)
                )
            }
            if middle + 1 < range.rows.upperBound {
                pending.append(
                    Range(
                        rows: (middle + 1)..<range.rows.upperBound, low: low, high: range.high, lowKey: lowKey,
                        highKey: range.highKey))
            }
        }
        return gaps
    }

    /// Where a walk of the runs may start: run `run` starts at row `start`. Placing rows in
    /// ascending positions, each placement leaves it at the run before its row, which no
    /// later placement moves: the walks of a commit's rows cost O(rows + runs) together.
    struct RunHint {
        var run = 0
        var start = 0
    }

    /// Adds one row with section value `value` at `position` of the runs; false when the
    /// position is inside another section, or when the row would open a second section of a
    /// value that has one elsewhere (the sort does not follow the section key: the caller
    /// rescans). Empty runs (emptied by removals) are skipped, and removed by the caller.
    ///
    /// The walk starts at `hint` (which must start at or before `position - 1`, or be the
    /// first run: `RunHint()`), and leaves `hint` at the run before the row.
    static func place(_ value: SQLiteValue, at position: Int, in runs: inout [SectionRun], hint: inout RunHint) -> Bool {
        var before: Int? = nil, after: Int? = nil
        var beforeStart = 0
        var start = hint.start
        // The counts only: a run's value is not copied to walk past it.
        runs.withUnsafeBufferPointer { runs in
            for i in hint.run..<runs.count {
                let count = runs[i].count
                guard count > 0 else { continue }
                if position - 1 >= start && position - 1 < start + count {
                    before = i
                    beforeStart = start
                }
                if position >= start && position < start + count {
                    after = i
                    break
                }
                start += count
            }
        }
        // The run before the row keeps its index and its start whatever this placement
        // does (it grows at its end, or a run is inserted after it).
        if let before { hint = RunHint(run: before, start: beforeStart) }
        if let before, runs[before].value == value {
            runs[before].count += 1
            return true
        }
        if let after, runs[after].value == value {
            runs[after].count += 1
            return true
        }
        if let before, let after, before == after { return false }
        if runs.contains(where: { $0.count > 0 && $0.value == value }) { return false }
        let index = before.map { $0 + 1 } ?? after ?? runs.count
        runs.insert(SectionRun(value: value, count: 1), at: index)
        return true
    }
}
