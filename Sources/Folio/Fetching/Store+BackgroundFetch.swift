import Foundation
import GRDB
import GRDBSQLite

extension Store {
    /// Starts fetching the request's results in the background and returns at once.
    ///
    /// ```swift
    /// var request = RecordRequest<Article>(
    ///     predicate: #Predicate { $0.score > 10 },
    ///     sortBy: [SortDescriptor(\.published, order: .reverse)])
    /// request.batchSize = 50
    /// let fetch = store.fetchInBackground(request)
    /// for await step in fetch.progressUpdates { print(step.fractionCompleted) }
    /// let results = try await fetch.value
    /// ```
    ///
    /// The work runs on one of the store's read connections, in one read transaction: the
    /// results count (skipped when the request has an
    /// ``RecordRequest/estimatedResultCount``), then the identifiers in order (with a
    /// ``RecordRequest/batchSize``) or the whole records (without one). The caller's actor
    /// is not blocked, and a file store keeps accepting writes. See ``BackgroundFetch``
    /// for progress and cancellation.
    ///
    /// Errors (an invalid request, a closed store, SQLite errors) are thrown by
    /// ``BackgroundFetch/value``; this method does not throw.
    ///
    /// - Parameters:
    ///   - request: what to fetch.
    ///   - priority: the priority of the background task; by default, that of the
    ///     calling task.
    /// - Complexity: O(1) for the caller. In the background: one `COUNT(*)` and one query
    ///   stepping every result; with a batch size, 8 bytes per result and no record.
    public func fetchInBackground<R: PersistentRecord>(
        _ request: RecordRequest<R>, priority: TaskPriority? = nil
    ) -> BackgroundFetch<R> {
        let storage = BackgroundFetchStorage(estimatedTotal: request.estimatedResultCount)
        let task = Task.detached(priority: priority ?? Task.currentPriority) { [self] in
            try await runBackgroundFetch(request, storage: storage)
        }
        return BackgroundFetch(storage: storage, task: task)
    }

    /// What the read connection produces: identifiers for a batched request, records otherwise.
    private enum BackgroundPayload<R: PersistentRecord>: Sendable {
        case identifiers(IdentifierList)
        case records([R])

        var count: Int {
            switch self {
            case .identifiers(let ids): ids.count
            case .records(let records): records.count
            }
        }
    }

    private func runBackgroundFetch<R: PersistentRecord>(
        _ request: RecordRequest<R>, storage: BackgroundFetchStorage
    ) async throws -> FetchedRecords<R> {
        do {
            try Task.checkCancellation()
            try requireEntity(R.self)
            let query = try request.compile()
            if let estimate = request.estimatedResultCount, estimate < 0 {
                throw FolioError.invalidArgument("estimatedResultCount must not be negative (\(estimate))")
            }
            let count = request.estimatedResultCount == nil ? SQLBuilder.count(query) : nil
            let batched = request.batchSize > 0
            let diagnostics = self.diagnostics
            try await countSearchIndex(query.searchedTable)
            try await fixUpIfStale(query.tables)
            let payload: BackgroundPayload<R> = try await read { db in
                Self.interruptWhenCancelled(db)
                defer { sqlite3_progress_handler(db.sqliteConnection, 0, nil, nil) }
                if let count {
                    let total = try Int.fetchOne(db, sql: count.sql, arguments: count.statementArguments) ?? 0
                    storage.counted(total)
                }
                let report: (Int) throws -> Void = { rows in
                    try Task.checkCancellation()
                    storage.read(rows)
                }
                if batched {
                    let (ids, _) = try IdentifierScan.run(
                        db, SQLBuilder.identifiers(query), diagnostics: diagnostics, progress: report)
                    return .identifiers(ids)
                }
                return .records(try Self.fetchRecords(query, in: db, diagnostics: diagnostics, progress: report))
            }
            try storage.succeed(rows: payload.count)
            switch payload {
            case .identifiers(let ids): return makeResults(ids, request: request)
            case .records(let records): return makeResults(records: records)
            }
        } catch {
            let error = FolioError.wrap(error)
            storage.fail(error)
            throw error
        }
    }

    /// Makes SQLite check the task's cancellation every 1,000 virtual machine instructions
    /// and interrupt the statement when it is set.
    ///
    /// GRDB's async read calls `sqlite3_interrupt` when the task is cancelled, but that
    /// only stops the statements running at that instant: a cancellation that lands
    /// between two statements (after the count, before the scan) would let the next one,
    /// a sort of a million rows say, run to its end. The progress handler closes that gap.
    /// Removed when the read ends, before the connection goes back to the pool.
    static func interruptWhenCancelled(_ db: Database) {
        sqlite3_progress_handler(db.sqliteConnection, 1000, { _ in Task.isCancelled ? 1 : 0 }, nil)
    }
}
