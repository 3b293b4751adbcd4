import Foundation

/// One row of a ``FetchedResultsModel``: its identifier now, its record when read.
///
/// Reading ``id`` loads nothing, so a SwiftUI `List` or `ForEach` — which reads the
/// identifier of every row, visible or not — costs eight bytes per row and no query.
/// Reading ``record`` loads the row's batch (the request's `batchSize` records) once; the
/// other rows of that batch are then read from memory.
///
/// ```swift
/// ForEach(section.items) { item in
///     Text(item.record?.title ?? "")   // loads this row's batch the first time
/// }
/// ```
public struct FetchedItem<R: PersistentRecord>: Identifiable, Sendable {
    /// The record's identifier: stable across commits, filter and sort changes.
    ///
    /// - Complexity: O(1); loads nothing.
    public let id: RecordID
    let records: FetchedRecords<R>
    let position: Int

    init(id: RecordID, records: FetchedRecords<R>, position: Int) {
        self.id = id
        self.records = records
        self.position = position
    }

    /// The record, loading its batch if needed; `nil` if it was deleted since the results
    /// this item belongs to were delivered, or if it could not be read or decoded (see
    /// ``loadRecord()`` to get the error).
    ///
    /// An item belongs to the results it was delivered with, as an element of
    /// ``FetchedRecords`` does: once its batch is loaded, it returns the record as loaded
    /// then. The items the model shows after a commit that changed the record read the
    /// stored one — read the model's current items rather than keeping an item.
    ///
    /// Loading a batch changes nothing an observer can see: it never notifies. Inside one of
    /// the store's own `read` or `write` closures, a batch that is not loaded is read through
    /// that closure's connection — in a `write`, it sees the transaction's own uncommitted
    /// changes — and is not kept.
    ///
    /// - Complexity: O(1) when the item's batch is loaded; otherwise one query that loads
    ///   the batch (`batchSize` records).
    public var record: R? { records[position] }

    /// The record, loading its batch if needed and throwing if the batch cannot be read;
    /// `nil` if it was deleted since the results this item belongs to were delivered.
    ///
    /// - Throws: SQLite errors, ``FolioError/storeClosed``, or the error decoding the
    ///   record.
    /// - Complexity: like ``record``: O(1) when the batch is loaded, otherwise one query.
    public func loadRecord() throws -> R? { try records.record(at: position) }
}

/// The rows of a ``FetchedResultsModel`` or of one of its sections, as a collection whose
/// elements carry identifiers eagerly and records lazily.
///
/// A `RandomAccessCollection` indexed from `0`: counting, subscripting, iterating and
/// slicing read identifiers held in memory and load no record; only
/// ``FetchedItem/record`` loads, batch by batch.
///
/// - Complexity: `count` and the subscript are O(1) and load nothing.
public struct FetchedItems<R: PersistentRecord>: RandomAccessCollection, Sendable {
    /// Positions are `Int`s from `0` to `count`.
    public typealias Index = Int

    let records: FetchedRecords<R>
    /// The positions in `records` these items cover.
    let bounds: Range<Int>

    init(records: FetchedRecords<R>, bounds: Range<Int>) {
        precondition(bounds.lowerBound >= 0 && bounds.upperBound <= records.count, "items out of the results' range")
        self.records = records
        self.bounds = bounds
    }

    /// Always `0`.
    ///
    /// - Complexity: O(1).
    public var startIndex: Int { 0 }

    /// The number of items.
    ///
    /// - Complexity: O(1); loads nothing.
    public var endIndex: Int { bounds.count }

    /// The item at `position`, which must be in `0..<count`. Loads nothing: the record
    /// loads when ``FetchedItem/record`` is read.
    ///
    /// - Complexity: O(1); loads nothing.
    public subscript(position: Int) -> FetchedItem<R> {
        precondition(position >= 0 && position < bounds.count, "Index \(position) out of range 0..<\(bounds.count)")
        let index = bounds.lowerBound + position
        return FetchedItem(id: records.identifier(at: index), records: records, position: index)
    }

    /// The position of the item with identifier `id`, or `nil`.
    ///
    /// - Complexity: O(count): one pass over identifiers held in memory; loads nothing.
    public func firstIndex(of id: RecordID) -> Int? {
        for position in bounds where records.identifier(at: position) == id { return position - bounds.lowerBound }
        return nil
    }
}
