import Folio
import GRDB

/// A connection the store does not own (as another process would have).
enum DatabaseQueueFactory {
    static func open(_ path: String) throws -> DatabaseQueue { try DatabaseQueue(path: path) }
}

/// SQLite's own `date(seconds, 'unixepoch')`.
func sqliteDate(_ store: Folio.Store, _ seconds: Double) throws -> String? {
    try store.read { db in try String.fetchOne(db, sql: "SELECT date(?, 'unixepoch')", arguments: [seconds]) }
}
