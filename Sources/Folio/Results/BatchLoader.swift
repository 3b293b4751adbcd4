import Foundation
import GRDB
import GRDBSQLite

/// One loaded batch of a ``FetchedRecords``: its records in the order of its identifiers
/// (`nil` for a row gone), and the errors of the rows that could not be decoded, by offset.
/// Immutable once made, so readers share it without copying.
// @unchecked Sendable: immutable; the errors are only rethrown.
final class LoadedBatch<R: PersistentRecord>: @unchecked Sendable {
    let records: [R?]
    let failures: [Int: any Error]

    init(records: [R?], failures: [Int: any Error] = [:]) {
        self.records = records
        self.failures = failures
    }
}

/// Loads and caches the records of a ``FetchedRecords`` batch by batch.
///
/// A batch is `batchSize` consecutive identifiers, fetched with one statement whose
/// identifiers are bound as a single JSON array that SQLite walks in order, each row placed
/// at its identifier's offset (no dictionary, no sort). At most `maxBatches` batches are
/// kept; the least recently used one is dropped.
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
        var batches: [Int: LoadedBatch<R>] = [:]
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
        self.sql = SQLBuilder.batchInOrder(table: R.entity.name, columns: R.entity.attributes.map(\.column))
        var initial = Cache()
        if let preloaded {
            initial.batches[0] = LoadedBatch(records: preloaded)
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
            for batch in c.batches.values {
                for case let record? in batch.records where !changed.contains(record.id!.rawValue) {
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
        let (batch, number, _) = try batch(containing: index)
        let offset = index - number * batchSize
        if !batch.failures.isEmpty, let failure = batch.failures[offset] { throw failure }
        return batch.records[offset]
    }

    /// The batch holding `index` — from the cache, or read (one query) — with its number,
    /// and whether it is kept in the cache (a batch read inside one of the store's own
    /// closures is not).
    func batch(containing index: Int) throws -> (batch: LoadedBatch<R>, number: Int, kept: Bool) {
        let number = index / batchSize
        if let hit = cache.withLock({ c -> LoadedBatch<R>? in
            guard let batch = c.batches[number] else { return nil }
            if c.recency.last != number, let i = c.recency.firstIndex(of: number) {
                c.recency.remove(at: i)
                c.recency.append(number)
            }
            return batch
        }) {
            return (hit, number, true)
        }
        let loaded: LoadedBatch<R>
        do {
            loaded = try load(batch: number, insideStoreClosure: false)
        } catch FolioError.reentrantAccess {
            // Called inside one of the store's own read or write closures, where the store
            // cannot start a read of its own: the batch is read through that closure's
            // connection. It may see the closure's uncommitted changes, so it is returned
            // and not kept.
            return (try load(batch: number, insideStoreClosure: true), number, false)
        }
        // Evicted batches are freed after the lock is released, not under it.
        let evicted = cache.withLock { c -> [LoadedBatch<R>] in
            c.batches[number] = loaded
            c.recency.removeAll { $0 == number }
            c.recency.append(number)
            var evicted: [LoadedBatch<R>] = []
            while c.recency.count > maxBatches {
                if let batch = c.batches.removeValue(forKey: c.recency.removeFirst()) { evicted.append(batch) }
            }
            return evicted
        }
        withExtendedLifetime(evicted) {}
        return (loaded, number, true)
    }

    /// Reads one batch; identifiers whose rows are gone come back `nil`, and rows that
    /// cannot be decoded `nil` with their error (by offset in the batch).
    private func load(batch: Int, insideStoreClosure: Bool) throws -> LoadedBatch<R> {
        let lower = batch * batchSize
        let upper = min(lower + batchSize, identifiers.count)
        let ids = identifiers.slice(lower..<upper)
        if !inherited.isEmpty {
            let known = ids.compactMap { inherited[$0] }
            if known.count == ids.count { return LoadedBatch(records: known) }
        }
        let json = IdentifierList.jsonArray(ids)
        // A class: calling it at every row looks up no generic metadata, as a method of the
        // entity (a generic struct, copied into each call) does.
        let decoder = R.entity.rowDecoder
        let sql = self.sql
        let count = ids.count
        let keyColumn = Int32(R.entity.attributes.count + 1)
        // A row that cannot be decoded (a value raw SQL wrote that the attribute's type
        // cannot hold) fails alone: the other rows of its batch are still read.
        let read = { (db: Database) throws -> (LoadedBatch<R>, Int) in
            // The rows decoded, then moved (not copied) into their places: assigning into an
            // array of `R?` at every row looks up the metadata of `Optional<R>` at every row.
            let decoded = UnsafeMutablePointer<R>.allocate(capacity: count)
            let offsets = UnsafeMutablePointer<Int>.allocate(capacity: count)
            // Rows decoded, and of them the rows moved out into `records`.
            var found = 0
            var placed = 0
            defer {
                (decoded + placed).deinitialize(count: found - placed)
                decoded.deallocate()
                offsets.deallocate()
            }
            var failures: [Int: any Error] = [:]
            let statement = try db.cachedStatement(sql: sql)
            try statement.setArguments([json])
            try statement.forEachRow(in: db) { row in
                let offset = Int(sqlite3_column_int64(row, keyColumn))
                guard offset >= 0 && offset < count && found < count else { return }
                do {
                    (decoded + found).initialize(to: try decoder.decode(row))
                    offsets[found] = offset
                    found += 1
                } catch {
                    failures[offset] = error
                }
            }
            var records = [R?](repeating: nil, count: count)
            while placed < found {
                records[offsets[placed]] = (decoded + placed).move()
                placed += 1
            }
            return (LoadedBatch(records: records, failures: failures), found)
        }
        let (loaded, found) =
            insideStoreClosure
            ? try folio { try store.writer.unsafeReentrantRead(read) } : try store.readSingleStatementSync(read)
        store.diagnostics.count {
            $0.batchesLoaded += 1
            $0.recordsMaterialized += found
        }
        return loaded
    }

    func noteError(_ error: any Error) { cache.withLock { $0.lastError = FolioError.converting(error) } }
}
