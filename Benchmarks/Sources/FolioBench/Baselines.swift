import Foundation
import GRDB
import GRDBSQLite

/// The two baselines of the design, measured with GRDB on its own connection to the
/// same file:
/// - `limit`: the least any batched fetch does — SQLite stepping the identifiers in sort
///   order with the C API into an array; and loading one batch of records by identifiers
///   (one prepared `IN (?, …)` statement, columns read with the C API);
/// - `naive`: GRDB `fetchAll` of every record; after a change, the same again plus
///   `difference(from:)` of the identifier arrays.
struct Baselines {
    let queue: DatabaseQueue

    init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        queue = try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Moves everything in the WAL into the database file, so both sides read the same pages.
    func checkpoint() throws {
        try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
    }

    /// `limit`: every identifier in sort order.
    func identifiers() throws -> [Int64] {
        try queue.read { db in try Bench.stepIdentifiers(db, sql: BaselineSQL.identifiers) }
    }

    /// `limit.withKey`: the identifiers and each row's first sort key, in sort order (C API,
    /// into two arrays).
    func identifiersAndKeys() throws -> (ids: [Int64], keys: [Double]) {
        try queue.read { db in
            let statement = try db.cachedStatement(sql: BaselineSQL.identifiersAndKeys)
            let s = statement.sqliteStatement
            defer { sqlite3_reset(s) }
            var ids: [Int64] = [], keys: [Double] = []
            while true {
                let code = sqlite3_step(s)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
                ids.append(sqlite3_column_int64(s, 0))
                keys.append(sqlite3_column_double(s, 1))
            }
            return (ids, keys)
        }
    }

    /// `limit`: the records of `ids`, in one statement.
    func batch(_ ids: ArraySlice<Int64>) throws -> [ArticleRow] {
        try queue.read { db in
            let statement = try db.cachedStatement(sql: BaselineSQL.batch(count: ids.count))
            let s = statement.sqliteStatement
            defer { sqlite3_reset(s) }
            for (i, id) in ids.enumerated() { sqlite3_bind_int64(s, Int32(i + 1), id) }
            var rows: [ArticleRow] = []
            rows.reserveCapacity(ids.count)
            while true {
                let code = sqlite3_step(s)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
                rows.append(ArticleRow(statement: s))
            }
            return rows
        }
    }

    /// SQLite's own `… ORDER BY … LIMIT n` query, with `filter` if given: the first screen
    /// of rows with nothing else done (columns read with the C API).
    func first(where filter: String?, limit: Int) throws -> [ArticleRow] {
        try queue.read { db in
            let statement = try db.cachedStatement(sql: BaselineSQL.first(where: filter, limit: limit))
            let s = statement.sqliteStatement
            defer { sqlite3_reset(s) }
            var rows: [ArticleRow] = []
            rows.reserveCapacity(limit)
            while true {
                let code = sqlite3_step(s)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
                rows.append(ArticleRow(statement: s))
            }
            return rows
        }
    }

    /// SQLite's plan for `sql`, one step a line, joined with "; ".
    func queryPlan(_ sql: String) throws -> String {
        try queue.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String? ?? "" }
                .joined(separator: "; ")
        }
    }

    /// A one-row update that moves the row, committed by this connection (which the store
    /// does not own: for Folio it is another process's commit).
    func updatePublished(id: Int64, to date: Date) throws {
        try queue.write { db in
            try db.execute(sql: BaselineSQL.updatePublished, arguments: [date.timeIntervalSince1970, id])
        }
    }

    /// `naive`: every record, in sort order.
    func fetchAll() throws -> [ArticleRow] {
        try queue.read { db in try ArticleRow.fetchAll(db, sql: BaselineSQL.records) }
    }

    /// `naive` after a change: insert one row, refetch everything, and diff the identifiers.
    /// Returns the new identifiers and the number of differences found.
    func insertRefetchAndDiff(_ article: Article, previous: [Int64]) throws -> ([Int64], Int) {
        try queue.write { db in
            try db.execute(
                sql: BaselineSQL.insert,
                arguments: [
                    article.title, article.url, article.published.timeIntervalSince1970, article.score,
                    article.category, article.isRead,
                ])
        }
        let ids = try fetchAll().map(\.id)
        let difference = ids.difference(from: previous)
        return (ids, difference.count)
    }
}
