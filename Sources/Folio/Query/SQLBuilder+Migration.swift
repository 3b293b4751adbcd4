import Foundation
import GRDB

// Migrations and opening: PRAGMAs, the schema as the file has it, table and column changes.
extension SQLBuilder {
    static let modelVersionKey = "model_version"
    /// The `folio_metadata` key that records a custom migration step as run.
    static func stepKey(_ name: String) -> String { "migration_step:" + name }
    static let schemaVersion = "PRAGMA schema_version"
    static let foreignKeys = "PRAGMA foreign_keys"
    static func setForeignKeys(_ on: Bool) -> String { "PRAGMA foreign_keys = \(on ? "ON" : "OFF")" }
    static let legacyAlterTable = "PRAGMA legacy_alter_table"
    static func setLegacyAlterTable(_ on: Bool) -> String { "PRAGMA legacy_alter_table = \(on ? "ON" : "OFF")" }
    static let foreignKeyCheck = "PRAGMA foreign_key_check"
    /// A table's name as the file spells it (SQLite's names ignore ASCII case).
    static let tableName = "SELECT name FROM sqlite_master WHERE type = 'table' AND lower(name) = lower(?)"
    static let entityRows = "SELECT name, version_hash, schema FROM \(metadataTable) ORDER BY name"
    static let columnNames = "SELECT name FROM pragma_table_info(?) ORDER BY cid"
    /// The generated columns of a table (`pragma_table_info` leaves them out).
    static let generatedColumnNames = "SELECT name FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3) ORDER BY cid"
    /// The table, view or index of a name (the three share one namespace in SQLite;
    /// triggers have their own): type, name and the table it belongs to.
    static let objectNamed =
        "SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('table', 'view', 'index') AND lower(name) = lower(?)"
    /// The columns of an index; `NULL` names for expressions.
    static let indexColumns = "SELECT name FROM pragma_index_info(?) ORDER BY seqno"
    /// Whether a table is `WITHOUT ROWID`.
    static let isWithoutRowID = "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?"
    /// The indexes and triggers a table carries, with their SQL (automatic indexes have none). `tbl_name` is compared without case: a trigger's is
    /// spelled as its `ON` clause spells the table (`ON NOTE`), an index's as the table is.
    static let tableObjects =
        "SELECT type, name, sql FROM sqlite_master WHERE lower(tbl_name) = lower(?) AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name"
    static let hasSequenceTable = "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'"
    static let readSequence = "SELECT max(seq) FROM sqlite_sequence WHERE lower(name) = lower(?)"
    static let raiseSequence = "UPDATE sqlite_sequence SET seq = ?2 WHERE name = ?1 AND seq < ?2"
    static let insertSequence =
        "INSERT INTO sqlite_sequence (name, seq) SELECT ?1, ?2 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?1)"
    static let deleteEntityMetadata = "DELETE FROM \(metadataTable) WHERE name = ?"
    static let renameEntityMetadata = "UPDATE \(metadataTable) SET name = ?2 WHERE name = ?1"
    static let renewChangeID = "UPDATE \(metadataTable) SET change_id = randomblob(16) WHERE name = ?"

    /// Any name from the file (another program's table or view), as an identifier: in
    /// double quotes, its own double quotes doubled. Used only to prepare statements that
    /// check the schema compiles, never to run them.
    static func quoteAnyName(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
    /// The tables and views of the file, but SQLite's own.
    /// (Folio's own tables — metadata, stale keys, full-text indexes and FTS5's tables behind
    /// them — are left out: none of them has a trigger or view of the app's.)
    static let schemaObjects =
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'folio\\_%' ESCAPE '\\' ORDER BY name"
    /// Statements that, prepared, compile a table's triggers (every `UPDATE OF` column is set).
    static func compileChecks(table: String, columns: [String]) -> [String] {
        let name = quoteAnyName(table)
        var checks = ["INSERT INTO \(name) DEFAULT VALUES", "DELETE FROM \(name)"]
        if !columns.isEmpty {
            checks.append(
                "UPDATE \(name) SET " + columns.map { "\(quoteAnyName($0)) = \(quoteAnyName($0))" }.joined(separator: ", "))
        }
        return checks
    }
    static func compileCheck(view: String) -> String { "SELECT * FROM \(quoteAnyName(view))" }

    static func renameTable(_ table: String, to newName: String) -> String {
        "ALTER TABLE \(quote(table)) RENAME TO \(quote(newName))"
    }

    static func renameColumn(_ column: String, to newName: String, in table: String) -> String {
        "ALTER TABLE \(quote(table)) RENAME COLUMN \(quote(column)) TO \(quote(newName))"
    }

    /// An added attribute's column, always nullable at first: existing rows hold `NULL`
    /// until a custom step or the declared default fills them, and a rebuild applies
    /// `NOT NULL` (SQLite adds a `NOT NULL` column only with a `DEFAULT` in the schema).
    static func addColumn(_ column: ColumnSchema, to table: String) -> String {
        "ALTER TABLE \(quote(table)) ADD COLUMN \(quote(column.name)) \(column.type.sqlType)"
    }

    /// A non-optional added attribute's column with its declared default as the column's
    /// `DEFAULT` (``defaultLiteral(_:)``): SQLite records it in the schema only, and every
    /// existing row reads it at once, whatever the table's size.
    static func addColumn(_ column: ColumnSchema, to table: String, notNullDefault literal: String) -> String {
        "ALTER TABLE \(quote(table)) ADD COLUMN \(quote(column.name)) \(column.type.sqlType) NOT NULL DEFAULT \(literal)"
    }

    /// A value as the SQL literal of a column's `DEFAULT` — the one place a value is written
    /// into SQL rather than bound, as DDL takes no parameters: integers, finite reals (as
    /// Swift prints them, which reads back as the same double), text without NUL (quotes
    /// doubled), blobs (`X'…'`). `nil` for anything else (NULL, ±∞, NaN, -0.0, text with
    /// NUL), which the migration fills row by row instead.
    static func defaultLiteral(_ value: DatabaseValue) -> String? {
        switch value.storage {
        case .int64(let n): return String(n)
        case .double(let d):
            guard d.isFinite, !(d == 0 && d.sign == .minus) else { return nil }
            let text = "\(d)"
            guard Double(text) == d, text.allSatisfy({ "0123456789.-+e".contains($0) }) else { return nil }
            return text
        case .string(let text):
            guard !text.utf8.contains(0) else { return nil }
            return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data):
            return "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
        case .null: return nil
        }
    }

    static func dropTable(_ table: String) -> String { "DROP TABLE \(quote(table))" }
    static func dropIndex(_ name: String) -> String { "DROP INDEX \(quote(name))" }
    static func countRows(_ table: String) -> String { "SELECT count(*) FROM \(quote(table))" }
    static func countNulls(_ column: String, in table: String) -> String {
        "SELECT count(*) FROM \(quote(table)) WHERE \(quote(column)) IS NULL"
    }
    static func countValues(_ column: String, in table: String) -> String {
        "SELECT count(*) FROM \(quote(table)) WHERE \(quote(column)) IS NOT NULL"
    }
    static func fillNulls(_ column: String, in table: String) -> String {
        "UPDATE \(quote(table)) SET \(quote(column)) = ? WHERE \(quote(column)) IS NULL"
    }
    /// The number of distinct non-`NULL` values that appear more than once (a unique index
    /// allows several `NULL`s).
    static func duplicateValues(_ column: String, in table: String) -> String {
        "SELECT count(*) FROM (SELECT 1 FROM \(quote(table)) WHERE \(quote(column)) IS NOT NULL GROUP BY \(quote(column)) HAVING count(*) > 1)"
    }

    /// Copies every row of a rebuilt table, keeping rowids: `id` (or the implicit `rowid`
    /// of a table that has no `id` column) and the declared columns, by name.
    static func copyRows(from table: String, to newTable: String, columns: [String], rowIDColumn: String) -> String {
        let target = ([quote("id")] + columns.map(quote)).joined(separator: ", ")
        let source = ([quote(rowIDColumn)] + columns.map(quote)).joined(separator: ", ")
        return "INSERT INTO \(quote(newTable)) (\(target)) SELECT \(source) FROM \(quote(table))"
    }
}
