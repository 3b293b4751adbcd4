import Foundation
import GRDB

/// Creates an entity's table, or checks that the existing one is the declared one.
enum SchemaCheck {
    /// - Parameter progress: counts the rows whose folded keys or full-text index the
    ///   opening rewrites (``FoldedKeys/prepare(_:in:countingRows:folding:progress:)``).
    /// - Returns: whether a trigger that logs the table's changes (``SQLBuilder/changeTriggers(table:)``,
    ///   ``SQLBuilder/logUpdateTrigger(_:)``, the `REPLACE` triggers) had to be made or
    ///   replaced: rows written meanwhile may not be in the change log.
    @discardableResult
    static func prepare(_ schema: EntitySchema, in db: Database, progress: RowProgress? = nil) throws -> Bool {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys  // the same text at every open
        let json = String(decoding: try encoder.encode(schema), as: UTF8.self)
        if try !db.tableExists(schema.name) {
            for sql in SQLBuilder.createTableAndIndexes(schema) { try db.execute(sql: sql) }
        } else {
            let differences = try self.differences(schema, db)
            if !differences.isEmpty {
                throw FolioError.schemaMismatch(entity: schema.name, differences: differences)
            }
            try repairFoldedKeyColumns(schema, db)
        }
        // New, made elsewhere (adopted), or Folio's own from any version: the change
        // triggers become exactly the current ones, and the metadata row is there.
        let untracked = try installChangeTriggers(table: schema.name, db)
        // The change log's update trigger names every stored column: made for this schema.
        let updatesUnlogged = try db.installTriggers([SQLBuilder.logUpdateTrigger(schema)])
        try FoldedKeys.prepare(schema, in: db, progress: progress)
        // The rows a `REPLACE` deletes for a unique value: noted and acted on by triggers
        // (those of an attribute no longer unique dropped).
        let replacedUnlogged = try db.reconcileTriggers(
            SQLBuilder.replaceTriggers(schema) + SQLBuilder.searchReplacedRowsTriggers(schema),
            among: SQLBuilder.replaceTriggerNames(table: schema.name))
        try db.execute(sql: SQLBuilder.writeMetadata, arguments: [schema.name, schema.versionHash, json])
        if untracked {
            // Without its triggers (another program dropped them, or the table, and made it
            // again), rows changed and the token did not: no cache of the old rows is trusted.
            try db.execute(sql: SQLBuilder.renewChangeID, arguments: [schema.name])
        }
        return untracked || updatesUnlogged || replacedUnlogged
    }

    /// Makes again a folded key's column or index that another program dropped (they are
    /// derived from the text: ``differences(_:_:)`` does not count them missing); a column
    /// made again has its keys computed by ``FoldedKeys/prepare(_:in:)``.
    static func repairFoldedKeyColumns(_ schema: EntitySchema, _ db: Database) throws {
        let keys = Set(schema.foldedColumns.map(\.key))
        guard !keys.isEmpty else { return }
        let existing = Set(try String.fetchAll(db, sql: SQLBuilder.columnNames, arguments: [schema.name]).map { $0.lowercased() })
        let indexes = Set(try Row.fetchAll(db, sql: SQLBuilder.indexList, arguments: [schema.name]).map { $0[0] as String })
        for column in schema.storedColumns where keys.contains(column.name) {
            if !existing.contains(column.name.lowercased()) {
                try db.execute(sql: SQLBuilder.addColumn(column, to: schema.name))
                // Every key computed again at the next step of the opening.
                try db.execute(sql: SQLBuilder.deleteStoreMetadata, arguments: [SQLBuilder.foldingVersionKey(schema.name)])
            }
            if column.isIndexed, !indexes.contains(SQLBuilder.indexName(schema.name, column.name)) {
                try db.execute(sql: SQLBuilder.createIndex(table: schema.name, column: column))
            }
        }
    }

    /// The compound indexes (``IndexSchema``) the file lacks or has otherwise (other columns,
    /// another order, unique), and Folio's compound indexes it has that are not declared.
    static func compoundIndexDifferences(_ schema: EntitySchema, indexes: [String: Bool], _ db: Database) throws -> [String] {
        var differences: [String] = []
        var declared: Set<String> = []
        for index in schema.indexes {
            let name = SQLBuilder.indexName(schema.name, index)
            declared.insert(name.lowercased())
            guard let found = indexes.first(where: { $0.key.lowercased() == name.lowercased() }) else {
                differences.append("missing index '\(name)' on (\(index.readable))")
                continue
            }
            let columns = try Row.fetchAll(db, sql: SQLBuilder.indexKeys, arguments: [found.key]).map {
                IndexSchema.Column(name: ($0[0] as String?) ?? "<expression>", isDescending: ($0[1] as Int) != 0)
            }
            let actual = IndexSchema(columns: columns)
            let same =
                actual.columns.count == index.columns.count
                && zip(actual.columns, index.columns).allSatisfy {
                    $0.name.lowercased() == $1.name.lowercased() && $0.isDescending == $1.isDescending
                }
            if !same || found.value {
                differences.append(
                    "index '\(name)' is on (\(actual.readable))\(found.value ? ", unique" : ""), declared on (\(index.readable))")
            }
        }
        for name in indexes.keys.sorted()
        where SQLBuilder.isCompoundIndexName(name, table: schema.name) && !declared.contains(name.lowercased()) {
            differences.append("index '\(name)' is not declared")
        }
        return differences
    }

    static func differences(_ schema: EntitySchema, _ db: Database) throws -> [String] {
        var differences: [String] = []
        // Keyed by lowercased name (SQLite's column names are case-insensitive); `name` is
        // the file's own spelling, for the messages.
        var actual: [String: (name: String, type: String, notNull: Bool, pk: Bool)] = [:]
        for row in try Row.fetchAll(db, sql: SQLBuilder.tableInfo, arguments: [schema.name]) {
            let name: String = row[0]
            actual[name.lowercased()] = (name, (row[1] as String).uppercased(), (row[2] as Int) != 0, (row[3] as Int) != 0)
        }
        if let id = actual["id"] {
            if !(id.pk && id.type == "INTEGER") { differences.append("column 'id' is not INTEGER PRIMARY KEY") }
            let sql = try String.fetchOne(db, sql: SQLBuilder.tableSQL, arguments: [schema.name]) ?? ""
            if !sql.uppercased().contains("AUTOINCREMENT") {
                differences.append("column 'id' is not AUTOINCREMENT (rowids of deleted records could be reused)")
            }
        } else {
            differences.append("missing column 'id' (INTEGER PRIMARY KEY)")
        }
        var declared: Set<String> = ["id"]
        // A folded key's column and index are derived from the text: in a file of the declared
        // entity (its version hash recorded), made again when missing
        // (``repairFoldedKeyColumns(_:_:)``), not a difference.
        var keys: Set<String> = []
        if try db.tableExists(SQLBuilder.metadataTable),
            let stored = try Row.fetchOne(db, sql: SQLBuilder.readMetadata, arguments: [schema.name]),
            (stored[0] as String?) == schema.versionHash
        {
            keys = Set(schema.foldedColumns.map(\.key))
        }
        for column in schema.storedColumns {
            declared.insert(column.name.lowercased())
            guard let found = actual[column.name.lowercased()] else {
                if keys.contains(column.name) { continue }
                differences.append("missing column '\(column.name)' (\(column.type.sqlType))")
                continue
            }
            if found.type != column.type.sqlType {
                differences.append(
                    "column '\(column.name)' is \(found.type), declared \(column.type.sqlType) (\(column.type.rawValue))")
            }
            if found.notNull == column.isOptional {
                differences.append(
                    "column '\(column.name)' is \(found.notNull ? "NOT NULL" : "nullable"), declared \(column.isOptional ? "optional" : "non-optional")"
                )
            }
        }
        for key in actual.keys.sorted() where !declared.contains(key) {
            differences.append("unexpected column '\(actual[key]!.name)'")
        }
        var indexes: [String: Bool] = [:]
        for row in try Row.fetchAll(db, sql: SQLBuilder.indexList, arguments: [schema.name]) {
            indexes[row[0]] = (row[1] as Int) != 0
        }
        for column in schema.storedColumns where column.isIndexed {
            let name = SQLBuilder.indexName(schema.name, column.name)
            if indexes[name] == nil, keys.contains(column.name) { continue }
            if let unique = indexes[name] {
                if unique != column.isUnique {
                    differences.append(
                        "index on '\(column.name)' is \(unique ? "unique" : "not unique"), declared \(column.isUnique ? "unique" : "not unique")"
                    )
                }
            } else {
                differences.append("missing index on '\(column.name)'")
            }
        }
        for column in schema.storedColumns where !column.isIndexed {
            if indexes[SQLBuilder.indexName(schema.name, column.name)] != nil {
                differences.append("column '\(column.name)' has an index, declared without one")
            }
        }
        differences += try compoundIndexDifferences(schema, indexes: indexes, db)
        if differences.isEmpty, try db.tableExists(SQLBuilder.metadataTable),
            let stored = try Row.fetchOne(db, sql: SQLBuilder.readMetadata, arguments: [schema.name])
        {
            let hash: String = stored[0]
            if hash != schema.versionHash {
                differences.append("version hash \(hash) stored, \(schema.versionHash) declared")
            }
        }
        return differences
    }

    /// Makes the entity's three change triggers exactly the current ones: creates missing
    /// ones and replaces any other text (a version-1 trigger that only counted, say).
    ///
    /// - Returns: whether any trigger was missing or different — rows may then have been
    ///   written without renewing the entity's change token.
    @discardableResult
    static func installChangeTriggers(table: String, _ db: Database) throws -> Bool {
        try db.installTriggers(SQLBuilder.changeTriggers(table: table))
    }
}
