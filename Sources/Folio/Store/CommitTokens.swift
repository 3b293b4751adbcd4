import Foundation
import GRDB

/// What the subscribers of one commit notification read, each read once: every subscriber
/// reads at the same state, so what two of them would read alike is read for the first and
/// handed to the second. The change tokens of the tables the commit reaches (twenty
/// controllers of a table cost one lookup, not twenty), and the rows a tracker reads by a
/// statement — its SQL and exact arguments (``SQLFragment/fingerprint``): the changed rows
/// of a list with the same filter and sort as another, the sort keys of one row for a
/// binary search along the same sort. Writer's queue only, for one notification; gone
/// with it.
final class CommitTokens {
    private var read: [String: ChangeToken] = [:]
    /// Whether rows are kept for later subscribers: not when one subscriber follows the
    /// commit (nobody could ask again, and keeping a thousand-row commit's probes cost more
    /// than reading them).
    let sharesRows: Bool

    /// `sharesRows`: several subscribers follow this commit.
    init(sharesRows: Bool = true) {
        self.sharesRows = sharesRows
    }

    private struct RowsKey: Hashable {
        var statement: String
        var identifiers: String
    }

    /// A probe: its statement by number (``probeStatement(_:)``), so that a binary search's
    /// thousands of lookups hash two integers, not the statement's text.
    private struct ProbeKey: Hashable {
        var statement: Int
        var id: Int64
    }

    private var rows: [RowsKey: [[SQLiteValue]]] = [:]
    private var probeStatements: [String: Int] = [:]
    /// `.some(nil)`: the row is gone.
    private var keyed: [ProbeKey: [SQLiteValue]?] = [:]

    /// The rows a statement reads with `identifiers` bound (a JSON array), read by `body`
    /// the first time it is asked for; `shared` is true when they come from an earlier read.
    /// `statement` identifies the statement and every other argument exactly.
    func rows(
        _ statement: String, identifiers: String, _ body: () throws -> [[SQLiteValue]]
    ) rethrows -> (rows: [[SQLiteValue]], shared: Bool) {
        guard sharesRows else { return (try body(), false) }
        let key = RowsKey(statement: statement, identifiers: identifiers)
        if let known = rows[key] { return (known, true) }
        let read = try body()
        rows[key] = read
        return (read, false)
    }

    /// The number that stands for a probe statement (its SQL and exact arguments) in
    /// ``row(_:id:_:)`` for this commit.
    func probeStatement(_ statement: String) -> Int {
        if let known = probeStatements[statement] { return known }
        let number = probeStatements.count
        probeStatements[statement] = number
        return number
    }

    /// The one row probe statement `statement` (``probeStatement(_:)``) reads with rowid `id`
    /// bound (`nil`: none), read by `body` the first time it is asked for; `shared` as in
    /// ``rows(_:identifiers:_:)``.
    func row(_ statement: Int, id: Int64, _ body: () throws -> [SQLiteValue]?) rethrows -> (
        row: [SQLiteValue]?, shared: Bool
    ) {
        guard sharesRows else { return (try body(), false) }
        let key = ProbeKey(statement: statement, id: id)
        if let known = keyed[key] { return (known, true) }
        let read = try body()
        if keyed.isEmpty { keyed.reserveCapacity(256) }
        keyed[key] = .some(read)
        return (read, false)
    }

    /// The change token of `table`, read on `db` the first time it is asked for.
    func token(of table: String, _ db: Database) throws -> ChangeToken {
        if let token = read[table] { return token }
        let token = try Store.changeToken(table: table, db)
        read[table] = token
        return token
    }

    /// The change token of several tables (a list's and those it reads through to-ones):
    /// ``ChangeToken/combining(_:)`` of each one's token, each read once per commit.
    func token(of tables: [String], _ db: Database) throws -> ChangeToken {
        if tables.count == 1 { return try token(of: tables[0], db) }
        return ChangeToken.combining(try tables.map { try token(of: $0, db) })
    }
}
