import Foundation

/// What one committed transaction did to a controller's results, ready to apply as a
/// batch update to a table or collection view.
///
/// The coordinates follow UIKit's `performBatchUpdates` rules:
/// - ``deletedSections`` and ``deletedItems`` are in the *old* coordinates;
/// - ``insertedSections`` and ``insertedItems`` are in the *new* coordinates;
/// - ``movedItems`` go from old to new coordinates;
/// - ``updatedItems`` are in the old coordinates, and are rows changed in place.
///
/// Rows of a deleted section are not listed in ``deletedItems``, and rows of an
/// inserted section are not listed in ``insertedItems`` (a table view takes a new
/// section's rows from its data source). A move never starts in a deleted section or
/// ends in an inserted one: such a row is a delete and an insert. No row is both
/// deleted and updated, or moved and updated-in-place. A moved row whose record
/// changed has ``Move/isUpdated`` set, so the cell can be reconfigured.
///
/// Applied in order, change sets turn the previous state into exactly what a fresh
/// fetch returns — Folio's randomized tests check this after every commit.
public struct ChangeSet: Sendable, Equatable, CustomStringConvertible {
    /// A row that changed position.
    public struct Move: Sendable, Hashable {
        /// Old coordinates.
        public var from: IndexPath
        /// New coordinates.
        public var to: IndexPath
        /// Whether the record changed too (reconfigure the cell).
        public var isUpdated: Bool

        /// Creates a move from old to new coordinates.
        public init(from: IndexPath, to: IndexPath, isUpdated: Bool) {
            self.from = from
            self.to = to
            self.isUpdated = isUpdated
        }
    }

    /// Sections removed, old indexes, ascending.
    public var deletedSections: [Int] = []
    /// Sections added, new indexes, ascending.
    public var insertedSections: [Int] = []
    /// Rows removed, old index paths, ascending.
    public var deletedItems: [IndexPath] = []
    /// Rows added, new index paths, ascending.
    public var insertedItems: [IndexPath] = []
    /// Rows that moved, old → new.
    public var movedItems: [Move] = []
    /// Rows changed in place, old index paths, ascending.
    public var updatedItems: [IndexPath] = []
    /// The identifiers of ``insertedItems``, in the same order.
    public var insertedIdentifiers: [RecordID] = []
    /// The identifiers of ``deletedItems``, in the same order.
    public var deletedIdentifiers: [RecordID] = []
    /// The identifiers of ``movedItems``, in the same order.
    public var movedIdentifiers: [RecordID] = []
    /// The identifiers of ``updatedItems``, in the same order.
    public var updatedIdentifiers: [RecordID] = []
    /// The result was replaced wholesale (the store was reset or the controller could not
    /// follow): discard what you show and reload from the controller. When set, the
    /// other lists are empty.
    public var isReload = false
    /// The results were completed (see ``FetchedResultsController/isComplete``): rows were
    /// added after the last row shown and sections after the last section shown, and nothing
    /// shown changed — its rows, their order and the names of its sections are as they were.
    /// The last section shown may have grown. A table view calls `reloadData()` (the rows on
    /// screen stay where they are); a diffable data source applies the new snapshot. When
    /// set, the other lists are empty: the rows read in the background are not listed one
    /// by one.
    public var isCompletion = false

    /// An empty change set.
    public init() {}

    /// A change set that asks for a full reload.
    public static var reload: ChangeSet {
        var change = ChangeSet()
        change.isReload = true
        return change
    }

    /// The change set that completes results shown from their first screen
    /// (``isCompletion``).
    public static var completion: ChangeSet {
        var change = ChangeSet()
        change.isCompletion = true
        return change
    }

    /// Whether the change set changes nothing.
    public var isEmpty: Bool {
        !isReload && !isCompletion && deletedSections.isEmpty && insertedSections.isEmpty && deletedItems.isEmpty
            && insertedItems.isEmpty && movedItems.isEmpty && updatedItems.isEmpty
    }

    /// A compact text form, such as `ChangeSet(-[0.3] +[0.0] ~[1.2>0.1*])`.
    public var description: String {
        if isReload { return "ChangeSet(reload)" }
        if isCompletion { return "ChangeSet(completion)" }
        func paths(_ p: [IndexPath]) -> String { p.map { "\($0.section).\($0.item)" }.joined(separator: " ") }
        var parts: [String] = []
        if !deletedSections.isEmpty { parts.append("-s[\(deletedSections.map(String.init).joined(separator: " "))]") }
        if !insertedSections.isEmpty { parts.append("+s[\(insertedSections.map(String.init).joined(separator: " "))]") }
        if !deletedItems.isEmpty { parts.append("-[\(paths(deletedItems))]") }
        if !insertedItems.isEmpty { parts.append("+[\(paths(insertedItems))]") }
        if !movedItems.isEmpty {
            parts.append(
                "~["
                    + movedItems.map {
                        "\($0.from.section).\($0.from.item)>\($0.to.section).\($0.to.item)\($0.isUpdated ? "*" : "")"
                    }.joined(separator: " ") + "]")
        }
        if !updatedItems.isEmpty { parts.append("*[\(paths(updatedItems))]") }
        return "ChangeSet(\(parts.joined(separator: " ")))"
    }
}
