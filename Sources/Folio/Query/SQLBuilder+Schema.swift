import Foundation
import GRDB

// Folio's own tables, entity tables, their indexes and change triggers.
extension SQLBuilder {
    /// Folio's per-entity table: version hash, schema, and the change token.
    ///
    /// `change_id` (16 random bytes, renewed by the triggers at every row written) is the
    /// change token; `change_token` is the counter of internal schema version 1, still
    /// kept by the triggers for files an older Folio may open, and never trusted.
    /// Upgraded files get `change_id` by `ALTER TABLE … ADD COLUMN`, which gives exactly
    /// this text: fresh and upgraded files have the same schema.
    static let createEntityMetadata =
        "CREATE TABLE \(metadataTable) (name TEXT PRIMARY KEY NOT NULL, version_hash TEXT NOT NULL, schema TEXT NOT NULL, change_token INTEGER NOT NULL DEFAULT 0, change_id BLOB)"

    /// Folio's key/value table: the internal schema version, the database identity, and
    /// (later) the model version.
    static let storeMetadataTable = "folio_metadata"
    static let createStoreMetadata = "CREATE TABLE \(storeMetadataTable) (key TEXT PRIMARY KEY NOT NULL, value NOT NULL)"
    static let readStoreMetadata = "SELECT value FROM \(storeMetadataTable) WHERE key = ?"
    static let deleteStoreMetadata = "DELETE FROM \(storeMetadataTable) WHERE key = ?"
    static let writeStoreMetadata =
        "INSERT INTO \(storeMetadataTable) (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
    /// A new random database identity (`randomblob` runs in SQLite, like the triggers' tokens).
    static let writeNewIdentity =
        "INSERT INTO \(storeMetadataTable) (key, value) VALUES (?, randomblob(16)) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
    static let addChangeID = "ALTER TABLE \(metadataTable) ADD COLUMN change_id BLOB"
    static let renewAllChangeIDs = "UPDATE \(metadataTable) SET change_id = randomblob(16)"
    static let entityNames = "SELECT name FROM \(metadataTable) ORDER BY name"
    static let objectSQL = "SELECT sql FROM sqlite_master WHERE type = ? AND name = ?"

    static func createTable(_ schema: EntitySchema) -> [String] {
        createTableAndIndexes(schema) + changeTriggers(table: schema.name).map(\.sql)
    }

    /// The `CREATE TABLE` statement of an entity and those of its declared indexes: a new
    /// table before its change triggers are installed.
    static func createTableAndIndexes(_ schema: EntitySchema) -> [String] {
        var statements = [createTableOnly(schema, named: schema.name)]
        for c in schema.storedColumns where c.isIndexed {
            statements.append(createIndex(table: schema.name, column: c))
        }
        for index in schema.indexes { statements.append(createIndex(table: schema.name, index)) }
        return statements
    }

    /// The `CREATE TABLE` statement of an entity, under `table` (the entity's name, or the
    /// temporary name of a migration's rebuild).
    static func createTableOnly(_ schema: EntitySchema, named table: String) -> String {
        // AUTOINCREMENT: a deleted record's rowid is never given to another record, so a
        // stale identifier can only read as nil, never as someone else.
        var columns = ["\(quote("id")) INTEGER PRIMARY KEY AUTOINCREMENT"]
        for c in schema.storedColumns {
            columns.append("\(quote(c.name)) \(c.type.sqlType)\(c.isOptional ? "" : " NOT NULL")")
        }
        return "CREATE TABLE \(quote(table)) (\(columns.joined(separator: ", ")))"
    }

    static func createIndex(table: String, column c: ColumnSchema) -> String {
        let columns = c.indexedColumns.map(quote).joined(separator: ", ")
        return "CREATE \(c.isUnique ? "UNIQUE " : "")INDEX \(quote(indexName(table, c.name))) ON \(quote(table))(\(columns))"
    }

    /// A compound index (``IndexSchema``), each column `ASC` or `DESC` as declared.
    static func createIndex(table: String, _ index: IndexSchema) -> String {
        let columns = index.columns.map { "\(quote($0.name)) \($0.isDescending ? "DESC" : "ASC")" }.joined(separator: ", ")
        return "CREATE INDEX \(quote(indexName(table, index))) ON \(quote(table))(\(columns))"
    }

    /// A compound index's name: `folio_<table>_<column>…_index`, `_desc` after each
    /// descending column (Folio's prefix, which no entity or attribute may use, so it
    /// differs from every single-column index's `<table>_<column>_index`).
    static func indexName(_ table: String, _ index: IndexSchema) -> String {
        let columns = index.columns.map { $0.isDescending ? "\($0.name)_desc" : $0.name }
        return "folio_\(table)_\(columns.joined(separator: "_"))_index"
    }

    /// Whether `name` is a compound index Folio names for `table` (`folio_<table>_…_index`).
    static func isCompoundIndexName(_ name: String, table: String) -> Bool {
        let lower = name.lowercased()
        return lower.hasPrefix("folio_\(table.lowercased())_") && lower.hasSuffix("_index")
    }

    /// The key columns of an index in order, with `1` for a descending one.
    static let indexKeys = "SELECT name, \"desc\" FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno"

    /// The three triggers that renew an entity's change token at every row inserted,
    /// updated or deleted, by any connection or process; the insert and delete triggers
    /// also log the row in the change log (``changeLogTable``; an update is logged by
    /// ``logUpdateTrigger(_:)``, only when a value changed). SQLite built-ins only
    /// (`randomblob`), so the `sqlite3` shell and every other program can still write.
    static func changeTriggers(table: String) -> [(name: String, sql: String)] {
        [("INSERT", "ins", "NEW"), ("UPDATE", "upd", nil), ("DELETE", "del", "OLD")].map { event, suffix, row in
            let name = "folio_\(table)_\(suffix)"
            let log = row.map { " " + logInsert(table: table, row: "\($0).\(quote("id"))") } ?? ""
            return (
                name,
                """
                CREATE TRIGGER \(quote(name)) AFTER \(event) ON \(quote(table)) \
                BEGIN UPDATE \(metadataTable) SET change_token = change_token + 1, change_id = randomblob(16) \
                WHERE name = '\(table)';\(log) END
                """
            )
        }
    }

    static func dropTrigger(_ name: String) -> String { "DROP TRIGGER IF EXISTS \(quote(name))" }

    static func indexName(_ table: String, _ column: String) -> String { "\(table)_\(column)_index" }

    /// A table's columns in declaration order: name, declared type, `NOT NULL`, primary key.
    static let tableInfo = "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid"
    /// Name, uniqueness and origin (`c` for `CREATE INDEX`, `u` for a `UNIQUE` constraint,
    /// `pk` for a primary key) of a table's indexes.
    static let indexList = "SELECT name, \"unique\", origin FROM pragma_index_list(?)"
    static let dataVersion = "PRAGMA data_version"
    static let tableSQL = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?"
    static let readMetadata = "SELECT version_hash, schema FROM \(metadataTable) WHERE name = ?"
    /// An entity's row; a new one gets a random change token, an existing one keeps its own.
    static let writeMetadata =
        "INSERT INTO \(metadataTable) (name, version_hash, schema, change_token, change_id) VALUES (?, ?, ?, 0, randomblob(16)) ON CONFLICT(name) DO UPDATE SET version_hash = excluded.version_hash, schema = excluded.schema, change_id = coalesce(change_id, excluded.change_id)"
    /// The database identity and an entity's change token, read together.
    static let changeToken =
        "SELECT (SELECT value FROM \(storeMetadataTable) WHERE key = 'database_identity'), change_id FROM \(metadataTable) WHERE name = ?"
}
