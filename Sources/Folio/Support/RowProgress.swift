/// Counts the rows a long step rewrites — the opening's rebuild of folded keys and full-text
/// indexes — and reports them to a callback as it goes: once when work is known, after each
/// batch, and once at the end. Used on one thread, inside one transaction.
///
/// The work is planned before it starts (``init(planned:report:)``), so the total does not
/// move while it runs; work found only on the way (a trigger another program dropped, an
/// index found damaged) is added to the total when it starts (``include(_:units:)``).
final class RowProgress {
    /// Receives `completed`, `total` and whether the work is finished.
    typealias Report = (_ completed: Int, _ total: Int, _ isFinished: Bool) -> Void

    private let report: Report
    /// Units of work done, and planned or included.
    private(set) var completed = 0
    private(set) var total = 0
    /// The parts of the work counted in ``total`` already, by name.
    private var counted: Set<String>

    /// - Parameter planned: units of work by part (`"keys:article"`), each counted once.
    init(planned: [String: Int], report: @escaping Report) {
        self.report = report
        counted = Set(planned.keys)
        total = planned.values.reduce(0, +)
        if total > 0 { report(0, total, false) }
    }

    /// Counts a part of the work in the total when it was not planned: `units` is asked
    /// only then.
    func include(_ part: String, units: () throws -> Int) rethrows {
        guard !counted.contains(part) else { return }
        counted.insert(part)
        let added = try units()
        guard added > 0 else { return }
        total += added
        report(completed, total, false)
    }

    /// Records `units` more done.
    func advance(by units: Int) {
        guard units > 0 else { return }
        completed = min(total, completed + units)
        report(completed, total, false)
    }

    /// Reports the end, when there was any work: `completed == total`, finished.
    func finish() {
        guard total > 0 else { return }
        completed = total
        report(total, total, true)
    }
}
