import Foundation
import GRDB

// The change log's bounds: trimmed by the readers' progress, with a cap in rows; a reader
// not seen for a while holds it back no longer.

extension Store {
    /// How long the change log is kept (see <doc:StoresAndFiles>).
    struct ChangeLogLimits: Sendable {
        /// The newest rows, always kept: a store that does not write (its progress is not
        /// recorded) and was not woken can fall this far behind and still follow row by row.
        var kept: Int64 = 10_000
        /// Rows kept at most (the newest ones), whatever the readers' progress: a store that
        /// fell further behind reloads its lists (``Diagnostics/lastReloadReason`` says so).
        var cap: Int64 = 1_000_000
        /// Seconds after which a store that said nothing of its progress holds the log back
        /// no longer (closed, crashed, or only reading since).
        var readerAge: Int64 = 600
        /// The log is trimmed at a store's write once it grew by this many rows since the
        /// store last trimmed it.
        var trimEvery: Int64 = 1_000
    }

    /// Trims the change log when it grew by ``ChangeLogLimits/trimEvery`` rows since this store
    /// last did. In the caller's write transaction, after its writes.
    /// - Complexity: O(1) when not due; otherwise O(rows deleted · log n).
    func trimChangeLogIfDue(_ db: Database) throws {
        let limits = changeLogLimits.current
        guard hub.lastSeq - lastTrim.current >= limits.trimEvery else { return }
        try trimChangeLog(db, limits)
    }

    /// Records this store's progress (the last `seq` it followed, now), forgets the readers
    /// not seen for ``ChangeLogLimits/readerAge`` seconds, and deletes, of the rows older
    /// than the newest ``ChangeLogLimits/kept``, those every reader followed and those past
    /// the ``ChangeLogLimits/cap`` — never the last row, so that `seq` never goes back. In the
    /// caller's write transaction.
    func trimChangeLog(_ db: Database, _ limits: ChangeLogLimits) throws {
        let followed = hub.lastSeq
        try db.execute(sql: SQLBuilder.writeChangeReader, arguments: [readerID, followed])
        try db.execute(sql: SQLBuilder.forgetStaleChangeReaders, arguments: [limits.readerAge])
        try db.execute(sql: SQLBuilder.trimChangeLog, arguments: [limits.kept, limits.cap])
        lastTrim.withLock { $0 = followed }
    }

    /// The change log's last `seq` (0 for an empty log), read in the caller's transaction:
    /// the position in the log of the state read in that transaction. Every commit after it,
    /// by any connection or process, logs its rows with a larger `seq` (``ChangeHub``).
    /// - Complexity: O(log n) (the log's rowid).
    static func changeLogEnd(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: SQLBuilder.changeLogLast)) ?? 0
    }

    /// Stops waking for other processes' commits (tests: a store that falls behind).
    func stopWatching() {
        watcher.withLock { watcher in
            watcher?.cancel()
            watcher = nil
        }
    }
}
