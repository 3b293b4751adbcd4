import Foundation

/// The one place that decides when a change is too large to follow row by row or to
/// animate, and becomes a rescan or a ``ChangeSet/reload`` instead.
///
/// Three thresholds, one per stage:
/// - a commit that touched more than ``isIncremental(changed:total:)`` allows is not
///   followed row by row: the results are scanned again and compared (the change set is
///   still exact);
/// - a request change over more than ``maximumComparedRows`` rows is not compared at all;
/// - a change set that deletes, inserts and moves more than ``maximumAnimatedRows`` rows is
///   delivered as ``ChangeSet/reload``.
///
/// The tracker's bound on the rows it remembers as touched but not yet told to the
/// controller (`ResultsTracker.StateMachine.untoldLimit`) is another concept: past it the
/// controller hands over no loaded record, and the change set is unchanged.
enum ReloadPolicy {
    /// A change set that deletes, inserts and moves more rows than this together is a
    /// reload: a table view reloads faster than it animates that many rows.
    static let maximumAnimatedRows = 50_000

    /// A request change whose old and new results hold more rows than this together is a
    /// reload without a difference: the difference, O(n log n) on the main actor, would take
    /// longer to compute than a table view takes to reload.
    static let maximumComparedRows = 100_000

    /// Whether `changed` rows out of `total` are few enough for the incremental path
    /// (about log₂(n) queries per row); above, a full identifier scan is cheaper.
    static func isIncremental(changed: Int, total: Int) -> Bool {
        changed <= Swift.max(2_048, total / 500)
    }

    /// How many key probes the incremental path may spend on a commit that touched
    /// `changed` of `total` rows, or `nil` when a full scan is surely cheaper.
    ///
    /// Up to ``isIncremental(changed:total:)``'s bound, as many as it needs. Above it and up
    /// to a tenth of the rows, the incremental path is tried with a budget of `total / 64`
    /// probes (a probe is one indexed lookup, a scan about `total` row steps): rows that move
    /// together — the children of a renamed parent, found through the reference index —
    /// place in far fewer probes than rows spread at random, which exceed the budget and
    /// fall back to the scan having spent a fraction of it.
    static func incrementalProbes(changed: Int, total: Int) -> Int? {
        if isIncremental(changed: changed, total: total) { return .max }
        guard changed <= total / 10 else { return nil }
        return total / 64
    }

    /// `change`, or ``ChangeSet/reload`` when it is too large to animate.
    static func limited(_ change: ChangeSet) -> ChangeSet {
        let size = change.deletedItems.count + change.insertedItems.count + change.movedItems.count
        return size > maximumAnimatedRows ? .reload : change
    }

    /// The change set from `old` to `new` presented results after a request change.
    static func requestChange(from old: ResultsState, to new: ResultsState) -> ChangeSet {
        guard old.ids.count + new.ids.count <= maximumComparedRows else { return .reload }
        return limited(ChangeSetBuilder.diff(old: old, new: new, changed: nil))
    }
}
