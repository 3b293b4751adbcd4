import Foundation
import GRDB

/// One table of a store file as SQLite describes it, read in the migration's transaction.
struct FileTable: Sendable {
    struct Column: Sendable {
        /// The file's own spelling.
        var name: String
        /// The declared type, uppercased (`INTEGER`, `REAL`, `TEXT`, `BLOB`, or whatever a
        /// table made elsewhere says).
        var sqlType: String
        var notNull: Bool
    }

    struct Index: Sendable {
        var name: String
        var isUnique: Bool
        /// `c` (`CREATE INDEX`), `u` (a `UNIQUE` constraint) or `pk`.
        var origin: String
        /// The indexed columns; `nil` for an expression.
        var columns: [String?]
        /// Whether each indexed column is in descending order.
        var descending: [Bool] = []
    }

    var name: String
    /// Every column but `id`, in the file's order.
    var columns: [Column]
    /// Whether `id` is the table's `INTEGER PRIMARY KEY` (the rowid).
    var hasRowIDColumn: Bool
    /// Whether a column named `id` exists that is not the rowid (a table made elsewhere).
    var hasOtherIDColumn: Bool
    var isAutoincrement: Bool
    var isWithoutRowID: Bool
    var indexes: [Index]
    /// Generated columns another program added (`pragma_table_info` leaves them out): a
    /// rebuild, which copies the declared columns, would drop them.
    var generatedColumns: [String]
    /// What Folio recorded for the table (`folio_entities.schema`), when it did.
    var stored: EntitySchema?

    func column(named name: String) -> Column? {
        columns.first { $0.name.lowercased() == name.lowercased() }
    }

    /// The attribute type recorded for a column, when the record agrees with the file's
    /// declared type (an `ALTER TABLE` made by hand may have changed it since).
    func recordedType(of column: Column) -> AttributeType? {
        guard let recorded = stored?.columns.first(where: { $0.name.lowercased() == column.name.lowercased() }),
            recorded.type.sqlType == column.sqlType
        else { return nil }
        return recorded.type
    }

    static func read(_ name: String, stored: EntitySchema?, _ db: Database) throws -> FileTable {
        var columns: [Column] = []
        var hasRowIDColumn = false
        var hasOtherIDColumn = false
        let info = try Row.fetchAll(db, sql: SQLBuilder.tableInfo, arguments: [name])
        let primaryKeyColumns = info.filter { ($0[3] as Int) != 0 }.count
        for row in info {
            let column = Column(name: row[0], sqlType: (row[1] as String).uppercased(), notNull: (row[2] as Int) != 0)
            if column.name.lowercased() == "id" {
                if (row[3] as Int) != 0 && primaryKeyColumns == 1 && column.sqlType == "INTEGER" {
                    hasRowIDColumn = true
                } else {
                    hasOtherIDColumn = true
                }
            } else {
                columns.append(column)
            }
        }
        let sql = try String.fetchOne(db, sql: SQLBuilder.tableSQL, arguments: [name]) ?? ""
        var indexes: [Index] = []
        for row in try Row.fetchAll(db, sql: SQLBuilder.indexList, arguments: [name]) {
            let indexName: String = row[0]
            let keys = try Row.fetchAll(db, sql: SQLBuilder.indexKeys, arguments: [indexName])
            indexes.append(
                Index(
                    name: indexName, isUnique: (row[1] as Int) != 0, origin: row[2], columns: keys.map { $0[0] as String? },
                    descending: keys.map { ($0[1] as Int) != 0 }))
        }
        return FileTable(
            name: name, columns: columns, hasRowIDColumn: hasRowIDColumn, hasOtherIDColumn: hasOtherIDColumn,
            isAutoincrement: sql.uppercased().contains("AUTOINCREMENT"),
            isWithoutRowID: try Bool.fetchOne(db, sql: SQLBuilder.isWithoutRowID, arguments: [name]) ?? false,
            indexes: indexes,
            generatedColumns: try String.fetchAll(db, sql: SQLBuilder.generatedColumnNames, arguments: [name]), stored: stored)
    }
}

/// What a store file holds that a migration starts from: its entities (the tables Folio
/// recorded in `folio_entities`) and the tables the model names (adopted ones included).
struct FileSchema: Sendable {
    /// By the table's name in the file.
    var tables: [String: FileTable]
    /// The names recorded in `folio_entities`, whose table may be gone.
    var recordedEntities: [String]

    func table(named name: String) -> FileTable? {
        tables.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    /// Reads the recorded entities' tables and those of `names` (the model's entities and
    /// their old names) that exist.
    static func read(_ db: Database, names: [String]) throws -> FileSchema {
        var stored: [String: EntitySchema] = [:]
        var recorded: [String] = []
        if try db.tableExists(SQLBuilder.metadataTable) {
            for row in try Row.fetchAll(db, sql: SQLBuilder.entityRows) {
                let name: String = row[0]
                recorded.append(name)
                // A schema Folio cannot read is no schema: the file's tables decide.
                if let json: String = row[2] {
                    stored[name] = try? JSONDecoder().decode(EntitySchema.self, from: Data(json.utf8))
                }
            }
        }
        var tables: [String: FileTable] = [:]
        for name in recorded + names where tables[name] == nil {
            // A recorded name that is not an identifier can be no entity of any store: no
            // SQL is built from it, and its table (if any) is left alone.
            guard SQLBuilder.isPlainIdentifier(name), try db.tableExists(name) else { continue }
            let actual = try String.fetchOne(db, sql: SQLBuilder.tableName, arguments: [name]) ?? name
            guard tables[actual] == nil else { continue }
            tables[actual] = try FileTable.read(actual, stored: stored[actual] ?? stored[name], db)
        }
        return FileSchema(tables: tables, recordedEntities: recorded)
    }
}
