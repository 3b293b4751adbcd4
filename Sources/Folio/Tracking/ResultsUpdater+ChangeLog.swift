import Foundation
import GRDB
import GRDBSQLite

extension ResultsUpdater {
    /// The rows of the list that the change log says changed after `seq`, read in the
    /// caller's transaction: the rows logged in its table, and its rows that point to rows
    /// logged in the tables it reads through to-ones (``relatedTables``). With the state at
    /// `seq`, they are exactly what must be applied to reach the state the transaction reads,
    /// whoever committed meanwhile.
    ///
    /// `nil` when the log cannot tell: it no longer holds the rows right after `seq`
    /// (trimmed past it), or it ends before `seq` (emptied by hand, or the file replaced by
    /// an older copy).
    /// - Complexity: one read of the log's rows after `seq`, and one indexed lookup per
    ///   related row.
    func loggedRows(after seq: Int64, _ db: Database) throws -> Set<Int64>? {
        var rows = Set<Int64>()
        var related: [RelatedTable: Set<Int64>] = [:]
        var first: Int64?
        var count = 0
        let table = self.table
        let relatedTables = self.relatedTables
        let statement = try db.cachedStatement(sql: SQLBuilder.changeLogSince)
        statement.setUncheckedArguments([seq])
        try statement.forEachRow(in: db) { row in
            if first == nil { first = sqlite3_column_int64(row, 0) }
            count += 1
            guard let text = sqlite3_column_text(row, 1) else { return }
            let name = String(cString: text)
            var logged = [sqlite3_column_int64(row, 2)]
            if sqlite3_column_type(row, 3) == SQLITE_INTEGER { logged.append(sqlite3_column_int64(row, 3)) }
            if Self.names(name, table) { rows.formUnion(logged) }
            for dependency in relatedTables where Self.names(name, dependency.table) {
                related[dependency, default: []].formUnion(logged)
            }
        }
        diagnostics.count { $0.changeLogRowsRead += count }
        if let first {
            guard first == seq + 1 else { return nil }
        } else if try Store.changeLogEnd(db) < seq {
            return nil
        }
        if !related.isEmpty { rows.formUnion(try referencingRows(related, db)) }
        return rows
    }

    /// Whether the log's entity name `name` is `table` (SQLite's identifiers ignore case:
    /// another program may have spelled the table otherwise in its triggers).
    private static func names(_ name: String, _ table: String) -> Bool {
        name == table || (name.utf8.count == table.utf8.count && name.lowercased() == table.lowercased())
    }
}
