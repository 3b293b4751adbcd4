import Foundation
import GRDB
import GRDBSQLite

extension ResultsLoad {
    /// The rest of results shown from their first screen, read in the background.
    ///
    /// The first screen was read in one of the pool's read transactions, which ended with it.
    /// The rest is read on a snapshot: a connection of its own holding one read transaction,
    /// so that a read of many seconds takes none of the pool's readers. When the change token
    /// of the list's tables in the snapshot is the first screen's, the first screen is the
    /// beginning of what the snapshot reads and is shown as it is; when it is not (a commit
    /// landed in between), the first screen is read again in the snapshot before anything is
    /// shown. The read takes the sections of the first screen but its last as they are, when
    /// boundary seeks find the sections (``ResultsUpdater/scan(_:after:progress:)``). So the
    /// completed results always extend exactly what was shown. They carry the snapshot's
    /// position in the change log (``Loaded/seq``): the tracker — subscribed before the first
    /// read, noting every commit since — resumes from exactly that position once they are
    /// installed, applying the rows the log holds after it at the state the store has
    /// followed the log to (``LiveResults/catchUp()``).
    ///
    /// The read stops within 1,000 SQLite virtual-machine steps of ``cancel()`` (a newer
    /// fetch, a request change, the controller going away) — also while SQLite works before
    /// the first row (a full-text query gathering its matches, a sort without an index), where
    /// no row is stepped.
    // Sendable: its mutable state is in `state`, behind a lock never held while reading.
    final class Completion: Sendable {
        private struct State {
            var cancelled = false
            var rowsRead = 0
            var result: Result<Loaded, any Error>?
            var waiters: [CheckedContinuation<Loaded, any Error>] = []
        }

        private let state = Locked(State())

        private init() {}

        /// Starts reading the rest of `load`'s results after `first`, its first screen.
        /// Returns the first screen to show — `first`, or the one read again in
        /// the snapshot, which may then be complete — and the completion, `nil` when there is
        /// nothing left to read.
        static func start(_ load: ResultsLoad, after first: Loaded, store: Store) throws -> (
            shown: Loaded, completion: Completion?
        ) {
            let hook = load.completionHook
            hook?(-1)
            guard let snapshot = try store.makeSnapshot() else {
                // One connection (an in-memory store): read everything now.
                return (try store.readSync { db in try load.read(db) }, nil)
            }
            var shown = first
            let (token, seq) = try store.read(snapshot) { db in
                (try Store.changeToken(tables: load.tables, db), try Store.changeLogEnd(db))
            }
            if !tableUnchanged(since: first.token, now: token) {
                shown = try store.read(snapshot) { db in try load.readFirstScreen(db) }
                if shown.complete { return (shown, nil) }
            }
            let completion = Completion()
            let outcome = shown.outcome, cacheDeferred = shown.cacheDeferred, prefix = shown.full
            // A thread of its own, not a global dispatch queue: a read of many seconds must not
            // hold one of the few threads that run Swift concurrency's jobs (on Linux both
            // come from the same pool, as wide as the machine has cores).
            let diagnostics = store.diagnostics
            let thread = Thread {
                let result = Result {
                    try store.read(snapshot) { db in
                        completion.interruptWhenCancelled(db)
                        defer { sqlite3_progress_handler(db.sqliteConnection, 0, nil, nil) }
                        hook?(0)
                        var scanned = outcome
                        if cacheDeferred, let cacheURL = load.cacheURL {
                            switch SectionCache.read(cacheURL, expecting: load.fingerprint, token: token) {
                            case .success(let full): return Loaded(full: full, outcome: .reused, token: token, seq: seq)
                            case .failure(let reason): scanned = .rebuilt(reason)
                            }
                        }
                        // `prefix` begins what this snapshot reads: the rest is read after it.
                        let full = try load.updater.scan(db, after: prefix) { rows in
                            hook?(rows)
                            try completion.note(rows)
                        }
                        return Loaded(full: full, outcome: scanned, token: token, seq: seq)
                    }
                }
                completion.finish(result, diagnostics: diagnostics)
            }
            thread.name = "Folio completion"
            thread.qualityOfService = .userInitiated
            thread.start()
            return (shown, completion)
        }

        /// Rows read so far (progress: a lower bound of the results' count).
        var rowsRead: Int { state.withLock { $0.rowsRead } }

        /// Stops the read within 1,000 SQLite steps; ``value()`` then throws `CancellationError`.
        func cancel() {
            state.withLock { $0.cancelled = true }
        }

        var isCancelled: Bool { state.withLock { $0.cancelled } }

        /// Makes SQLite ask every 1,000 virtual-machine steps whether the read was cancelled,
        /// and interrupt the statement when it was: the progress notes come every 4,096 rows,
        /// and none comes while SQLite works before its first row. Removed by the caller when
        /// the read ends. The completion outlives the read (its thread holds it).
        private func interruptWhenCancelled(_ db: Database) {
            sqlite3_progress_handler(
                db.sqliteConnection, 1000,
                { context in
                    guard let context else { return 0 }
                    return Unmanaged<Completion>.fromOpaque(context).takeUnretainedValue().isCancelled ? 1 : 0
                }, Unmanaged.passUnretained(self).toOpaque())
        }

        /// The complete results, once read.
        func value() async throws -> Loaded {
            try await withCheckedThrowingContinuation { continuation in
                let result: Result<Loaded, any Error>? = state.withLock { state in
                    if state.result == nil { state.waiters.append(continuation) }
                    return state.result
                }
                if let result { continuation.resume(with: result) }
            }
        }

        private func note(_ rows: Int) throws {
            let cancelled = state.withLock { state in
                state.rowsRead = rows
                return state.cancelled
            }
            if cancelled { throw CancellationError() }
        }

        /// Ends the read with `result`. A read cancelled before it ended is counted in
        /// `completionsCancelled` (whether it stopped or, cancelled within its last steps,
        /// read to its end), and its failure (SQLite's interrupt included) is
        /// `CancellationError`.
        private func finish(_ result: Result<Loaded, any Error>, diagnostics: Diagnostics) {
            var result = result
            if isCancelled {
                diagnostics.count { $0.completionsCancelled += 1 }
                if case .failure = result { result = .failure(CancellationError()) }
            }
            let waiters = state.withLock { state in
                state.result = result
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(with: result) }
        }
    }
}

extension ResultsState {
    /// Whether `self` begins with `prefix` — the same first rows, in the same sections by
    /// the same values, the last of them possibly longer — so that going from `prefix` to
    /// `self` only adds rows and sections after it. O(rows of `prefix`).
    func extends(_ prefix: ResultsState) -> Bool {
        guard prefix.ids.count <= ids.count, prefix.runs.count <= runs.count, prefix.sectioned == sectioned else {
            return false
        }
        for (index, run) in prefix.runs.enumerated() {
            guard runs[index].value == run.value else { return false }
            let isLast = index == prefix.runs.count - 1
            guard isLast ? runs[index].count >= run.count : runs[index].count == run.count else { return false }
        }
        var position = 0
        for id in prefix.ids {
            guard ids[position] == id else { return false }
            position += 1
        }
        return true
    }
}
