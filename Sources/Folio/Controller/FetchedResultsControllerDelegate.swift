import Foundation

/// The kind of a change reported to a delegate.
public enum FetchedResultsChangeType: Sendable, Hashable {
    /// A row or section was inserted (new coordinates).
    case insert
    /// A row or section was deleted (old coordinates).
    case delete
    /// A row moved from old to new coordinates.
    case move
    /// A row's record changed in place (old coordinates).
    case update
}

/// How a controller follows the store (`NSFetchedResultsController`'s three modes).
public enum TrackingMode: Sendable, Hashable {
    /// No delegate, no ``FetchedResultsController/changes`` subscriber and no
    /// ``FetchedResultsController/updates`` subscriber: the results stay as they were when
    /// fetched.
    case none
    /// Changes are tracked in memory.
    case memory
    /// Changes are tracked and the section cache is kept on disk.
    case persistent
}

/// Receives a controller's changes, one transaction at a time, on the main actor.
///
/// The callbacks of one commit come in this order: ``controllerWillChangeContent(_:)``;
/// section changes (deletions, then insertions); object changes (deletions, insertions,
/// moves, updates); ``controllerDidChangeContent(_:)``; then the change set and the
/// snapshot variants. ``controller(_:didFailWith:)`` comes alone, when a commit could not
/// be followed. Every method has an empty default implementation.
@MainActor
public protocol FetchedResultsControllerDelegate<ResultType>: AnyObject {
    /// The record type of the controller.
    associatedtype ResultType: PersistentRecord

    /// A commit changed the results; changes follow.
    func controllerWillChangeContent(_ controller: FetchedResultsController<ResultType>)
    /// A section was inserted (new index) or deleted (old index).
    func controller(
        _ controller: FetchedResultsController<ResultType>, didChange section: SectionInfo,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)
    /// A row changed: deletions and updates at `indexPath` (old), insertions at
    /// `newIndexPath`, moves from one to the other.
    func controller(
        _ controller: FetchedResultsController<ResultType>, didChangeObject id: RecordID,
        at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    /// The changes of the commit have all been reported.
    func controllerDidChangeContent(_ controller: FetchedResultsController<ResultType>)
    /// The whole change of the commit, for `performBatchUpdates`.
    func controller(_ controller: FetchedResultsController<ResultType>, didChangeContentWith changes: ChangeSet)
    /// The new snapshot (identifiers only), for a diffable data source.
    func controller(_ controller: FetchedResultsController<ResultType>, didChangeContentWith snapshot: Snapshot)
    /// The controller could not follow a commit (see ``FetchedResultsController/lastError``):
    /// its results stay as they were until a later commit, after which it delivers
    /// ``ChangeSet/reload``. No other callback comes with this one.
    func controller(_ controller: FetchedResultsController<ResultType>, didFailWith error: FolioError)
}

extension FetchedResultsControllerDelegate {
    /// Does nothing by default.
    public func controllerWillChangeContent(_ controller: FetchedResultsController<ResultType>) {}
    /// Does nothing by default.
    public func controller(
        _ controller: FetchedResultsController<ResultType>, didChange section: SectionInfo,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType
    ) {}
    /// Does nothing by default.
    public func controller(
        _ controller: FetchedResultsController<ResultType>, didChangeObject id: RecordID,
        at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {}
    /// Does nothing by default.
    public func controllerDidChangeContent(_ controller: FetchedResultsController<ResultType>) {}
    /// Does nothing by default.
    public func controller(_ controller: FetchedResultsController<ResultType>, didChangeContentWith changes: ChangeSet) {}
    /// Does nothing by default.
    public func controller(_ controller: FetchedResultsController<ResultType>, didChangeContentWith snapshot: Snapshot) {}
    /// Does nothing by default.
    public func controller(_ controller: FetchedResultsController<ResultType>, didFailWith error: FolioError) {}
}
