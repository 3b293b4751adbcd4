import Foundation
import GRDB

// Single-row and batch writes of records.
extension SQLBuilder {
    static func insert(table: String, columns: [String]) -> String {
        // An entity without attributes: SQLite has no `() VALUES ()`.
        if columns.isEmpty { return "INSERT INTO \(quote(table)) DEFAULT VALUES" }
        let names = columns.map(quote).joined(separator: ", ")
        let marks = columns.map { _ in "?" }.joined(separator: ", ")
        return "INSERT INTO \(quote(table)) (\(names)) VALUES (\(marks))"
    }

    static func insertWithID(table: String, columns: [String]) -> String {
        insert(table: table, columns: ["id"] + columns)
    }

    /// For an entity without attributes, which has nothing to set, the `SELECT` that
    /// finds the row (``WriteTransaction/update(_:)`` writes nothing then).
    static func update(table: String, columns: [String]) -> String {
        if columns.isEmpty { return selectID(table: table, column: "id") }
        let sets = columns.map { "\(quote($0)) = ?" }.joined(separator: ", ")
        return "UPDATE \(quote(table)) SET \(sets) WHERE \(quote("id")) = ?"
    }

    static func delete(table: String) -> String {
        "DELETE FROM \(quote(table)) WHERE \(quote("id")) = ?"
    }

    /// `INSERT … ON CONFLICT(key) DO UPDATE`: reported to observers as an insert or an
    /// update, unlike `INSERT OR REPLACE`, whose implicit deletes are not.
    static func upsert(table: String, columns: [String], conflict: String) -> String {
        let sets = columns.filter { $0 != conflict }.map { "\(quote($0)) = excluded.\(quote($0))" }
        let action = sets.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + sets.joined(separator: ", ")
        return insert(table: table, columns: columns)
            + " ON CONFLICT(\(quote(conflict))) \(action) RETURNING \(quote("id"))"
    }

    static func selectID(table: String, column: String) -> String {
        "SELECT \(quote("id")) FROM \(quote(table)) WHERE \(quote(column)) = ?"
    }

    static func updateAll(table: String, assignments: [String], filter: SQLFragment?) -> String {
        let sets = assignments.map { "\(quote($0)) = ?" }.joined(separator: ", ")
        return "UPDATE \(quote(table)) SET \(sets)" + (filter.map { " WHERE \($0.sql)" } ?? "")
    }

    static func deleteAll(table: String, filter: SQLFragment?) -> String {
        "DELETE FROM \(quote(table))" + (filter.map { " WHERE \($0.sql)" } ?? "")
    }
}
