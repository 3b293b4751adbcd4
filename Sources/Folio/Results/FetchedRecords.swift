import Foundation

/// The results of a fetch: every identifier eagerly, records lazily, batch by batch.
///
/// This is the Swift counterpart of the batch-faulting `NSArray` Core Data returns for a
/// request with a `fetchBatchSize` — and it stays lazy in Swift: it is a
/// `RandomAccessCollection`, so iterating, slicing, `first`, `last` and `prefix` fault one
/// batch at a time and never copy the whole result. (`Array(results)` does load every
/// record, as it must.)
///
/// An element is `nil` when its record was deleted after the fetch: never a crash,
/// never a blank record, never another record.
///
/// ```swift
/// var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.published, order: .reverse)])
/// request.batchSize = 50
/// let results = try store.fetch(request)   // one identifier query, no records
/// let first = results.first ?? nil         // loads batch 0 (items 0..<50)
/// ```
///
/// - Complexity: `count`, `identifiers` and `identifier(at:)` are O(1) and load nothing.
///   Subscripting is O(1) when the item's batch is cached, and otherwise runs one query
///   that loads the batch (`batchSize` records).
public struct FetchedRecords<R: PersistentRecord>: RandomAccessCollection, Sendable {
    /// A record, or `nil` when it was deleted since the fetch.
    public typealias Element = R?
    /// Positions are `Int`s from `0` to `count`.
    public typealias Index = Int

    let loader: BatchLoader<R>

    init(loader: BatchLoader<R>) { self.loader = loader }

    /// Reads the results in order, one batch at a time: within a loaded batch, the next
    /// element is read from the batch itself, with no lock and no cache lookup; the first
    /// element of each batch goes through the cache (loading the batch if needed), as the
    /// subscript does. Elements are exactly the subscript's, in order.
    public struct Iterator: IteratorProtocol {
        let loader: BatchLoader<R>
        let end: Int
        @usableFromInline var position = 0
        /// The records of the batch being read, failure-free, and the positions they hold.
        @usableFromInline var window: [R?] = []
        @usableFromInline var windowStart = 0
        @usableFromInline var windowEnd = 0

        init(loader: BatchLoader<R>) {
            self.loader = loader
            self.end = loader.identifiers.count
        }

        /// The next record (`nil` inside for one deleted since the fetch, or whose batch
        /// could not be read: see ``FetchedRecords/lastError``), or `nil` at the end.
        ///
        /// - Complexity: O(1) within a batch; the first element of a batch that is not
        ///   loaded runs one query that loads it (`batchSize` records).
        @inlinable
        public mutating func next() -> R?? {
            if position < windowEnd {
                defer { position += 1 }
                return .some(window[position &- windowStart])
            }
            return nextFromLoader()
        }

        /// The next element through the loader's cache; makes its batch the window when
        /// the batch is kept and every row of it decoded.
        @usableFromInline
        mutating func nextFromLoader() -> R?? {
            guard position < end else { return nil }
            let index = position
            position += 1
            do {
                let (batch, number, kept) = try loader.batch(containing: index)
                let start = number * loader.batchSize
                if kept && batch.failures.isEmpty {
                    window = batch.records
                    windowStart = start
                    windowEnd = start + batch.records.count
                } else {
                    window = []
                    windowStart = 0
                    windowEnd = 0
                }
                if !batch.failures.isEmpty, let failure = batch.failures[index - start] {
                    loader.noteError(failure)
                    return .some(nil)
                }
                return .some(batch.records[index - start])
            } catch {
                loader.noteError(error)
                return .some(nil)
            }
        }
    }

    /// An iterator over the results in order, which reads each batch's records from the
    /// batch itself.
    ///
    /// - Complexity: O(1); loads nothing until the first ``Iterator/next()``.
    public func makeIterator() -> Iterator { Iterator(loader: loader) }

    /// The number of results.
    ///
    /// - Complexity: O(1); loads nothing.
    public var count: Int { loader.identifiers.count }

    /// Always `0`.
    ///
    /// - Complexity: O(1); loads nothing.
    public var startIndex: Int { 0 }

    /// The number of results (the position after the last one).
    ///
    /// - Complexity: O(1); loads nothing.
    public var endIndex: Int { loader.identifiers.count }

    /// The record at `position`, loading its batch if needed; `nil` if it was deleted
    /// since the fetch (or the batch could not be read: see ``lastError``).
    ///
    /// Inside one of the store's own `read` or `write` closures, a batch that is not loaded
    /// is read through that closure's connection — in a `write`, it sees the transaction's
    /// own uncommitted changes — and is not kept.
    ///
    /// `position` must be in `0..<count`, as for an array.
    ///
    /// - Complexity: O(1) when the batch holding `position` is loaded; otherwise one query
    ///   that loads that batch (`batchSize` records), dropping the least recently used
    ///   batch beyond ``RecordRequest/maxBatchesInMemory``.
    public subscript(position: Int) -> R? {
        precondition(position >= 0 && position < count, "Index \(position) out of range 0..<\(count)")
        do {
            return try loader.record(at: position)
        } catch {
            loader.noteError(error)
            return nil
        }
    }

    /// The record at `position`, throwing if its batch cannot be read; `nil` if it was
    /// deleted since the fetch.
    ///
    /// `position` must be in `0..<count`, as for an array.
    ///
    /// - Complexity: like the subscript: O(1) when its batch is loaded, otherwise one
    ///   query that loads the batch.
    public func record(at position: Int) throws -> R? {
        precondition(position >= 0 && position < count, "Index \(position) out of range 0..<\(count)")
        return try loader.record(at: position)
    }

    /// The identifier at `position`.
    ///
    /// - Complexity: O(1); loads nothing.
    public func identifier(at position: Int) -> RecordID { RecordID(loader.identifiers[position]) }

    /// Every identifier, in order, sharing this collection's storage.
    ///
    /// - Complexity: O(1); loads nothing.
    public var identifiers: RecordIDs { RecordIDs(loader.identifiers) }

    /// The batch size (the result count when the request had none).
    ///
    /// - Complexity: O(1).
    public var batchSize: Int { loader.batchSize }

    /// How many batches are loaded now.
    ///
    /// - Complexity: O(1); loads nothing.
    public var loadedBatchCount: Int { loader.loadedBatchCount }

    /// The error of the last failed batch load by the subscript, if any.
    ///
    /// - Complexity: O(1).
    public var lastError: FolioError? { loader.lastError }
}

/// An ordered collection of identifiers, eight bytes each, shared without copying.
public struct RecordIDs: RandomAccessCollection, Sendable, Equatable, Hashable {
    let list: IdentifierList

    init(_ list: IdentifierList) { self.list = list }

    /// Always `0`.
    public var startIndex: Int { 0 }
    /// The number of identifiers.
    public var endIndex: Int { list.count }
    /// The identifier at `position`, which must be in `0..<count`.
    ///
    /// - Complexity: O(1).
    public subscript(position: Int) -> RecordID { RecordID(list[position]) }

    /// Hashes the count and the first identifier (equal collections hash equally; `==`
    /// compares every identifier).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(list.count)
        if let first = list.first { hasher.combine(first) }
    }
}
