import Foundation

/// A change set and the snapshot it leads to, or an error the controller met while
/// following the store (see ``FetchedResultsController/updates``).
///
/// ```swift
/// for await update in controller.updates {
///     if let error = update.error { showBanner(error); continue }
///     dataSource.apply(update.snapshot)
/// }
/// ```
public struct ControllerUpdate: Sendable {
    /// What changed; empty when ``error`` is set.
    public let changes: ChangeSet
    /// The sections and identifiers after the change (unchanged when ``error`` is set).
    public let snapshot: Snapshot
    /// Why the controller could not follow a commit, or `nil` for a change. The results stay
    /// as they were; the controller tries again, from scratch, at the next commit to its
    /// table, and then delivers ``ChangeSet/reload``. The sequence goes on after an error.
    public let error: FolioError?

    init(changes: ChangeSet, snapshot: Snapshot, error: FolioError? = nil) {
        self.changes = changes
        self.snapshot = snapshot
        self.error = error
    }
}
