import Foundation
import GRDB

extension Store {
    /// Fetches the request's results.
    ///
    /// With a batch size, this runs one query for the identifiers in order and loads no
    /// record: they are loaded batch by batch as ``FetchedRecords`` is accessed. Without
    /// one, every record is loaded now, with one query.
    /// - Complexity: one query stepping every result; with a batch size, 8 bytes per result
    ///   and no record loaded.
    public func fetch<R: PersistentRecord>(_ request: RecordRequest<R>) throws -> FetchedRecords<R> {
        try requireEntity(R.self)
        let query = try request.compile()
        if request.batchSize > 0 {
            let (ids, _) = try readWithCurrentKeys(query.tables, searching: query.searchedTable) { db in
                try IdentifierScan.run(db, SQLBuilder.identifiers(query), diagnostics: diagnostics)
            }
            return makeResults(ids, request: request)
        }
        let records: [R] = try readWithCurrentKeys(query.tables, searching: query.searchedTable) { db in
            try fetchRecords(query, in: db)
        }
        return makeResults(records: records)
    }

    /// Fetches the request's results without blocking the caller.
    /// - Complexity: as the synchronous `fetch(_:)`.
    public func fetch<R: PersistentRecord>(_ request: RecordRequest<R>) async throws -> FetchedRecords<R> {
        try requireEntity(R.self)
        let query = try request.compile()
        if request.batchSize > 0 {
            let diagnostics = self.diagnostics
            let (ids, _) = try await readWithCurrentKeys(query.tables, searching: query.searchedTable) { db in
                try IdentifierScan.run(db, SQLBuilder.identifiers(query), diagnostics: diagnostics)
            }
            return makeResults(ids, request: request)
        }
        let records: [R] = try await readWithCurrentKeys(query.tables, searching: query.searchedTable) { [self] db in
            try fetchRecords(query, in: db)
        }
        return makeResults(records: records)
    }

    /// The number of results, counted by SQLite.
    /// - Complexity: one `COUNT(*)` query; loads no record.
    public func count<R: PersistentRecord>(_ request: RecordRequest<R>) throws -> Int {
        try requireEntity(R.self)
        let query = try request.compile()
        let fragment = SQLBuilder.count(query)
        return try readWithCurrentKeys(query.tables, searching: query.searchedTable) { db in
            try Int.fetchOne(db, sql: fragment.sql, arguments: fragment.statementArguments) ?? 0
        }
    }

    /// The identifiers of the results, in order. Loads no record.
    /// - Complexity: one query stepping every result, 8 bytes per result.
    public func fetchIdentifiers<R: PersistentRecord>(_ request: RecordRequest<R>) throws -> RecordIDs {
        try requireEntity(R.self)
        let query = try request.compile()
        let (ids, _) = try readWithCurrentKeys(query.tables, searching: query.searchedTable) { db in
            try IdentifierScan.run(db, SQLBuilder.identifiers(query), diagnostics: diagnostics)
        }
        return RecordIDs(ids)
    }

    /// The record with `id`, or `nil`.
    /// - Complexity: one lookup by rowid.
    public func fetchOne<R: PersistentRecord>(_ type: R.Type, id: RecordID) throws -> R? {
        try requireEntity(R.self)
        let sql = SQLBuilder.batch(table: R.entity.name, columns: R.entity.attributes.map(\.column))
        return try readSync { db in
            let statement = try db.cachedStatement(sql: sql)
            try statement.setArguments(["[\(id.rawValue)]"])
            var found: R? = nil
            try statement.forEachRow(in: db) { found = try R.entity.rowDecoder.decode($0) }
            if found != nil { diagnostics.count { $0.recordsMaterialized += 1 } }
            return found
        }
    }

    /// Whole records in the request's order, decoded straight from the stepped statement.
    /// `progress`, when given, is called every `progressInterval` records and at the end.
    func fetchRecords<R: PersistentRecord>(
        _ query: CompiledQuery, in db: Database,
        progressInterval: Int = 4096, progress: ((Int) throws -> Void)? = nil
    ) throws -> [R] {
        try Self.fetchRecords(query, in: db, diagnostics: diagnostics, progressInterval: progressInterval, progress: progress)
    }

    static func fetchRecords<R: PersistentRecord>(
        _ query: CompiledQuery, in db: Database, diagnostics: Diagnostics,
        progressInterval: Int = 4096, progress: ((Int) throws -> Void)? = nil
    ) throws -> [R] {
        let fragment = SQLBuilder.records(query)
        let decoder = R.entity.rowDecoder
        var records: [R] = []
        let statement = try db.cachedStatement(sql: fragment.sql)
        try statement.setArguments(fragment.statementArguments)
        try statement.forEachRow(in: db) { row in
            records.append(try decoder.decode(row))
            if let progress, records.count % progressInterval == 0 { try progress(records.count) }
        }
        diagnostics.count { $0.recordsMaterialized += records.count }
        try progress?(records.count)
        return records
    }

    func makeResults<R: PersistentRecord>(_ ids: IdentifierList, request: RecordRequest<R>) -> FetchedRecords<R> {
        FetchedRecords(
            loader: BatchLoader(
                store: self, identifiers: ids, batchSize: request.batchSize, maxBatches: request.maxBatchesInMemory))
    }

    func makeResults<R: PersistentRecord>(records: [R]) -> FetchedRecords<R> {
        // One pass builds both the identifiers and the loaded batch.
        var ids = IdentifierList.Builder()
        var loaded: [R?] = []
        loaded.reserveCapacity(records.count)
        for record in records {
            ids.append(record.id!.rawValue)
            loaded.append(record)
        }
        return FetchedRecords(
            loader: BatchLoader(
                store: self, identifiers: ids.finish(), batchSize: max(1, records.count), maxBatches: 1, preloaded: loaded))
    }
}
