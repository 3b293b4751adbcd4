import Foundation
import GRDB

// The change log: which rows of which entity every commit changed, in commit order, filled
// by built-in triggers in every connection and process (see `ChangeHub`), and the readers'
// progress it is trimmed by.
extension SQLBuilder {
    /// The log: one row per row inserted, changed or deleted in an entity's table. `seq`
    /// grows by one per logged row (`INTEGER PRIMARY KEY` without `AUTOINCREMENT`: the
    /// largest plus one, and the log is never trimmed to empty, so it never goes back);
    /// `old_row` is the old rowid of an `UPDATE` that changed it, otherwise `NULL`.
    static let changeLogTable = "folio_changes"
    static let createChangeLog =
        "CREATE TABLE IF NOT EXISTS \(changeLogTable) (seq INTEGER PRIMARY KEY, entity TEXT NOT NULL, row INTEGER NOT NULL, old_row INTEGER)"

    /// Each store's progress in the log: its random id, the last `seq` it followed, and
    /// when it said so (Unix seconds). Written only by Folio, at the store's own writes.
    static let changeReadersTable = "folio_change_readers"
    static let createChangeReaders =
        "CREATE TABLE IF NOT EXISTS \(changeReadersTable) (reader BLOB PRIMARY KEY NOT NULL, seq INTEGER NOT NULL, seen INTEGER NOT NULL)"

    /// The statement the insert trigger adds to log a row (``changeTriggers(table:)``).
    static func logInsert(table: String, row: String) -> String {
        "INSERT INTO \(changeLogTable) (entity, row) VALUES ('\(table)', \(row));"
    }

    /// The trigger that logs each row an `UPDATE` really changed: its new rowid, and its old
    /// one when that changed, when the rowid or a stored value of the entity differs
    /// (compared as SQLite stores them: the same storage class and the same bytes under
    /// `BINARY`; so `1` and `1.0`, NFC and NFD text, `'A'` and `'a'` in a `NOCASE` column all
    /// differ, `NULL` and `NULL` do not). A row set to the values it has is not logged.
    /// SQLite built-ins only (`typeof`, `nullif`).
    ///
    /// - Parameter schema: the entity; its stored columns (declared attributes and their
    ///   folded keys) are compared, the rowid alias `id` always.
    static func logUpdateTrigger(_ schema: EntitySchema) -> (name: String, sql: String) {
        logUpdateTrigger(table: schema.name, columns: schema.storedColumns.map(\.name))
    }

    /// ``logUpdateTrigger(_:)`` for a table and the columns compared (validated identifiers).
    static func logUpdateTrigger(table: String, columns: [String]) -> (name: String, sql: String) {
        let unchanged =
            ["OLD.\(quote("id")) IS NEW.\(quote("id"))"]
            + columns.map { column in
                let old = "OLD.\(quote(column))"
                let new = "NEW.\(quote(column))"
                return "(\(old) COLLATE BINARY) IS \(new) AND typeof(\(old)) = typeof(\(new))"
            }
        let name = "folio_\(table)_changed"
        return (
            name,
            """
            CREATE TRIGGER \(quote(name)) AFTER UPDATE ON \(quote(table)) \
            WHEN NOT (\(unchanged.joined(separator: " AND "))) \
            BEGIN INSERT INTO \(changeLogTable) (entity, row, old_row) \
            VALUES ('\(table)', NEW.\(quote("id")), nullif(OLD.\(quote("id")), NEW.\(quote("id")))); END
            """
        )
    }

    /// The logged rows after a `seq`, in order.
    static let changeLogSince = "SELECT seq, entity, row, old_row FROM \(changeLogTable) WHERE seq > ? ORDER BY seq"
    /// The last `seq` logged (0 for an empty log).
    static let changeLogLast = "SELECT coalesce(max(seq), 0) FROM \(changeLogTable)"
    /// Every entity's change identifier (the change tokens, read together).
    static let allChangeIDs = "SELECT name, change_id FROM \(metadataTable)"

    /// Records a store's progress (`reader`, `seq`, now).
    static let writeChangeReader =
        "INSERT INTO \(changeReadersTable) (reader, seq, seen) VALUES (?, ?, CAST(strftime('%s', 'now') AS INTEGER)) ON CONFLICT(reader) DO UPDATE SET seq = excluded.seq, seen = excluded.seen"
    /// Forgets the readers not seen for the given number of seconds (closed, crashed, or
    /// reading only: their progress holds the log back no longer).
    static let forgetStaleChangeReaders =
        "DELETE FROM \(changeReadersTable) WHERE seen < CAST(strftime('%s', 'now') AS INTEGER) - ?"
    static let forgetChangeReader = "DELETE FROM \(changeReadersTable) WHERE reader = ?"
    /// Deletes the log's rows older than the newest ones always kept (bound: how many) that
    /// every reader followed, and those past the cap in rows (bound: the cap), always
    /// keeping the last row so that `seq` never goes back.
    static let trimChangeLog = """
        WITH last(seq) AS (SELECT max(seq) FROM \(changeLogTable)) \
        DELETE FROM \(changeLogTable) WHERE seq < (SELECT seq FROM last) AND seq <= (SELECT seq FROM last) - ? \
        AND (seq <= coalesce((SELECT min(seq) FROM \(changeReadersTable)), (SELECT seq FROM last)) OR seq <= (SELECT seq FROM last) - ?)
        """
}
