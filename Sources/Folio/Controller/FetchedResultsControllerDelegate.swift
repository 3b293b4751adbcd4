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
///
/// ## What the controller shows during each callback
///
/// As in Core Data, the "will" callback comes before the controller processes the change,
/// and every later callback comes after it:
///
/// | callback | `sections`, `fetchedObjects`, `object(at:)`, `identifier(at:)`, `indexPath(for:)`, `snapshot` |
/// |---|---|
/// | ``controllerWillChangeContent(_:)`` | the state before the commit |
/// | section changes, object changes | the state after the commit |
/// | ``controllerDidChangeContent(_:)`` | the state after the commit |
/// | change set and snapshot variants, ``FetchedResultsController/changes``, ``FetchedResultsController/updates`` | the state after the commit |
///
/// The new state is installed at one point: right after ``controllerWillChangeContent(_:)``
/// returns. The index paths of the per-change callbacks are UIKit's batch-update
/// coordinates: a deletion's, move's or update's `indexPath` is the row's position in the
/// state before the commit (where its cell is), an insertion's, move's or update's
/// `newIndexPath` its position in the state after it (where its record is). So the classic
/// delegate code works as it does with Core Data: for an `.update`, find the cell at
/// `indexPath` and configure it with `object(at: newIndexPath)`; for an `.insert`, read
/// `object(at: newIndexPath)`. A deleted section is described as it was; an inserted one as
/// it is.
///
/// Records read during these callbacks are the commit's: a row the commit updated reads
/// with its new values, one it deleted is not in the results any more.
///
/// A ``ChangeSet/reload`` has no section or object callbacks: the "will" callback sees the
/// old state, ``controllerDidChangeContent(_:)`` the new one. A request change
/// (``FetchedResultsController/setRequest(_:)``) is delivered the same way as a commit,
/// before `setRequest` returns. If a callback fetches again or sets another request, the
/// change being delivered is abandoned: no further callback comes for it and the
/// controller shows what that fetch or request produced.
@MainActor
public protocol FetchedResultsControllerDelegate<ResultType>: AnyObject {
    /// The record type of the controller.
    associatedtype ResultType: PersistentRecord

    /// A commit changed the results; changes follow. The controller still shows the state
    /// before the commit (the only callback that does).
    func controllerWillChangeContent(_ controller: FetchedResultsController<ResultType>)
    /// A section was inserted (new index) or deleted (old index). The controller shows the
    /// state after the commit; a deleted section is described as it was.
    func controller(
        _ controller: FetchedResultsController<ResultType>, didChange section: SectionInfo,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)
    /// A row changed: deletions at `indexPath` (old coordinates), insertions at
    /// `newIndexPath` (new coordinates), moves and updates from `indexPath` to
    /// `newIndexPath` (an update's record is read at `newIndexPath`). The controller shows
    /// the state after the commit.
    func controller(
        _ controller: FetchedResultsController<ResultType>, didChangeObject id: RecordID,
        at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    /// The changes of the commit have all been reported; the controller shows the state
    /// after the commit.
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
