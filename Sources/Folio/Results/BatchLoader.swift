import Foundation
import GRDB
import GRDBSQLite

/// Loads and caches the records of a ``FetchedRecords`` batch by batch.
///
/// A batch is `batchSize` consecutive identifiers, fetched with one statement whose
/// identifiers are bound as a single JSON array. At most `maxBatches` batches are kept;
/// the least recently used one is dropped.
// @unchecked Sendable: `cache` is only touched inside its lock; the rest is immutable.
final class BatchLoader<R: PersistentRecord>: @unchecked Sendable {
    let store: Store
    let identifiers: IdentifierList
    let batchSize: Int
    let maxBatches: Int
    private let sql: String
    private let cache: Locked<Cache>
    /// Records loaded by the results this one replaced, and not changed since: a batch
    /// made only of them is assembled without a query.
    private let inherited: [Int64: R]

    struct Cache {
        var batches: [Int: [R?]] = [:]
        /// Rows of a loaded batch that could not be decoded, by batch and offset.
        var failures: [Int: [Int: any Error]] = [:]
        var recency: [Int] = []  // most recent last
        var lastError: FolioError?
    }

    init(
        store: Store, identifiers: IdentifierList, batchSize: Int, maxBatches: Int,
        preloaded: [R?]? = nil, inherited: [Int64: R] = [:]
    ) {
        self.store = store
        self.inherited = inherited
        self.identifiers = identifiers
        self.batchSize = max(1, batchSize)
        self.maxBatches = max(1, maxBatches)
        self.sql = SQLBuilder.batch(table: R.entity.name, columns: R.entity.attributes.map(\.column))
        var initial = Cache()
        if let preloaded {
            initial.batches[0] = preloaded
            initial.recency = [0]
        }
        self.cache = Locked(initial)
    }

    var lastError: FolioError? { cache.withLock { $0.lastError } }

    var loadedBatchCount: Int { cache.withLock { $0.batches.count } }

    /// The records held now, but those in `changed` (for the results that replace these):
    /// the loaded batches, then as many inherited records as fit within twice the cache's
    /// capacity (so records of rows long gone from view are not carried for ever).
    func heldRecords(excluding changed: Set<Int64>) -> [Int64: R] {
        var held: [Int64: R] = [:]
        cache.withLock { c in
            for records in c.batches.values {
                for case let record? in records where !changed.contains(record.id!.rawValue) {
                    held[record.id!.rawValue] = record
                }
            }
        }
        let (capacity, overflow) = batchSize.multipliedReportingOverflow(by: maxBatches)
        let limit = overflow || capacity > Int.max / 2 ? Int.max : 2 * capacity
        for (id, record) in inherited where held.count < limit && !changed.contains(id) && held[id] == nil {
            held[id] = record
        }
        return held
    }

    /// The record at `index`; throws the error of a row that cannot be decoded (its
    /// batch's other rows are still returned), or of a batch that cannot be read.
    func record(at index: Int) throws -> R? {
        let batch = index / batchSize
        let offset = index - batch * batchSize
        if let hit = cache.withLock({ c -> Result<R?, any Error>? in
            guard let records = c.batches[batch] else { return nil }
            if c.recency.last != batch, let i = c.recency.firstIndex(of: batch) {
                c.recency.remove(at: i)
                c.recency.append(batch)
            }
            if let failure = c.failures[batch]?[offset] { return .failure(failure) }
            return .success(records[offset])
        }) {
            return try hit.get()
        }
        let loaded: (records: [R?], failures: [Int: any Error])
        do {
            loaded = try load(batch: batch, insideStoreClosure: false)
        } catch FolioError.reentrantAccess {
            // Called inside one of the store's own read or write closures, where the store
            // cannot start a read of its own: the batch is read through that closure's
            // connection. It may see the closure's uncommitted changes, so it is returned
            // and not kept.
            let inside = try load(batch: batch, insideStoreClosure: true)
            if let failure = inside.failures[offset] { throw failure }
            return inside.records[offset]
        }
        cache.withLock { c in
            c.batches[batch] = loaded.records
            c.failures[batch] = loaded.failures.isEmpty ? nil : loaded.failures
            c.recency.removeAll { $0 == batch }
            c.recency.append(batch)
            while c.recency.count > maxBatches {
                let evicted = c.recency.removeFirst()
                c.batches[evicted] = nil
                c.failures[evicted] = nil
            }
        }
        if let failure = loaded.failures[offset] { throw failure }
        return loaded.records[offset]
    }

    /// Reads one batch; identifiers whose rows are gone come back `nil`, and rows that
    /// cannot be decoded `nil` with their error (by offset in the batch).
    private func load(batch: Int, insideStoreClosure: Bool) throws -> (records: [R?], failures: [Int: any Error]) {
        let lower = batch * batchSize
        let upper = min(lower + batchSize, identifiers.count)
        let ids = identifiers.slice(lower..<upper)
        if !inherited.isEmpty {
            let known = ids.compactMap { inherited[$0] }
            if known.count == ids.count { return (known, [:]) }
        }
        let json = IdentifierList.jsonArray(ids)
        let entity = R.entity
        let sql = self.sql
        // A row that cannot be decoded (a value raw SQL wrote that the attribute's type
        // cannot hold) fails alone: the other rows of its batch are still read.
        let read = { (db: Database) throws -> ([Int64: R], [Int64: any Error]) in
            var byID: [Int64: R] = [:]
            var failures: [Int64: any Error] = [:]
            byID.reserveCapacity(ids.count)
            let statement = try db.cachedStatement(sql: sql)
            try statement.setArguments([json])
            try statement.forEachRow(in: db) { row in
                do {
                    let record = try entity.decode(statement: row)
                    byID[record.id!.rawValue] = record
                } catch {
                    failures[sqlite3_column_int64(row, 0)] = error
                }
            }
            return (byID, failures)
        }
        let (found, failed) =
            insideStoreClosure
            ? try folio { try store.writer.unsafeReentrantRead(read) } : try store.readSync(read)
        store.diagnostics.count {
            $0.batchesLoaded += 1
            $0.recordsMaterialized += found.count
        }
        var failures: [Int: any Error] = [:]
        if !failed.isEmpty {
            for (offset, id) in ids.enumerated() { if let error = failed[id] { failures[offset] = error } }
        }
        return (ids.map { found[$0] }, failures)
    }

    func noteError(_ error: any Error) { cache.withLock { $0.lastError = FolioError.converting(error) } }
}
