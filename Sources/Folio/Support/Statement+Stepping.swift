import Foundation
import GRDB
import GRDBSQLite

// Folio's hot reads (identifier scans, batches, records, sort-key probes) step SQLite
// statements with the C API: no row objects, each column read once. These are the one
// step loop and the one translation of a failed step into an error.

extension Statement {
    /// Steps the statement (its arguments already set) with the C API, calling `body`
    /// with the SQLite statement for each row; resets it afterwards.
    @inline(__always)
    func forEachRow(in db: Database, _ body: (OpaquePointer) throws -> Void) throws {
        let sqlite = sqliteStatement
        defer { sqlite3_reset(sqlite) }
        while true {
            let code = sqlite3_step(sqlite)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw FolioError.stepFailure(code, db, sql: sql) }
            try body(sqlite)
        }
    }

    /// Steps like ``forEachRow(in:_:)`` until `body` returns `true` (stop); returns whether every
    /// row was stepped. Resets the statement either way.
    @inline(__always)
    func stepRows(in db: Database, stoppingWhen body: (OpaquePointer) throws -> Bool) throws -> Bool {
        let sqlite = sqliteStatement
        defer { sqlite3_reset(sqlite) }
        while true {
            let code = sqlite3_step(sqlite)
            if code == SQLITE_DONE { return true }
            guard code == SQLITE_ROW else { throw FolioError.stepFailure(code, db, sql: sql) }
            if try body(sqlite) { return false }
        }
    }
}

extension FolioError {
    /// The error of a step that returned neither a row nor done: an interrupted statement
    /// is a cancellation, anything else an SQLite error with the connection's message.
    static func stepFailure(_ code: Int32, _ db: Database, sql: String) -> any Error {
        if code == SQLITE_INTERRUPT { return CancellationError() }
        return FolioError.sqlite(
            code: code, message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: sql, arguments: nil)
    }
}
