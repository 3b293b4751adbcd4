import Foundation
import GRDB

/// What a migration does to a file, worked out from the file's tables and the declared
/// model before anything is written: which tables are renamed, created, changed, rebuilt
/// or dropped. Building it throws every refusal that does not depend on the data (a type
/// change, a table Folio cannot rebuild), so the read-only check at open finds them too.
struct MigrationPlan: Sendable {
    /// One declared entity whose table exists in the file (under its name or an old one).
    struct TableMigration: Sendable {
        var entity: DeclaredEntity
        /// The table as the file had it when the migration began.
        var file: FileTable
        /// Columns renamed: the file's name → the declared one.
        var columnRenames: [(from: String, to: String)]
        /// Declared columns the file lacks: added (nullable at first).
        var added: [ColumnSchema]
        /// The file's columns no attribute declares any more (file names, after renames).
        var removed: [String]
        /// Declared non-optional columns that may hold `NULL` before the contract phase:
        /// added ones, and ones the file has as nullable.
        var required: [ColumnSchema]
        /// Columns whose existing `NULL`s get the declared default: added and newly required ones.
        var filled: [ColumnSchema]
        /// Whether the table is rebuilt (SQLite cannot drop `NOT NULL`, add it, or drop an
        /// indexed column in place; a table made elsewhere may lack AUTOINCREMENT).
        var needsRebuild: Bool
        /// `id`, or `rowid` for a table made elsewhere without an `id` column.
        var rowIDColumn: String
        /// Added non-optional columns whose declared default SQLite can hold as the column's
        /// `DEFAULT` (column name → SQL literal): added `NOT NULL DEFAULT` that value, which
        /// every existing row reads at once (no `UPDATE` of the rows, no rebuild).
        var addedDefaults: [String: String] = [:]
        /// The table as the custom steps left it (``MigrationPlan/refreshed(_:)``), when they ran.
        var current: FileTable?

        /// The file's table name, when it differs from the entity's: a renamed entity, or
        /// one whose name changed case only (SQLite would not mind, but Folio's records,
        /// indexes and triggers are named after the entity exactly).
        var renamedFrom: String? { file.name == entity.name ? nil : file.name }

        /// Whether the only change to the table's columns is columns added (no rename, no
        /// removal, no rebuild) and none of them a folded key: its folded keys and full-text
        /// index stay as they are, with their triggers, which name none of the added columns.
        var keepsFoldedKeys: Bool {
            renamedFrom == nil && columnRenames.isEmpty && removed.isEmpty && !needsRebuild
                && !added.contains { ColumnSchema.isFoldedKeyColumn($0.name) }
        }

        /// Whether anything about the table changes, its recorded description included.
        var changes: Bool {
            renamedFrom != nil || !columnRenames.isEmpty || !added.isEmpty || !removed.isEmpty || needsRebuild
                || !filled.isEmpty || file.stored != entity.schema || indexesDiffer
        }

        /// Whether Folio's indexes on the table differ from the declared ones.
        var indexesDiffer: Bool {
            let wanted = Set(entity.schema.storedColumns.filter(\.isIndexed).map { "\($0.name.lowercased()):\($0.isUnique)" })
            let found = Set(
                file.indexes.filter { isFolioIndex($0.name) && !isCompoundIndex($0.name) }.map { index in
                    "\(index.columns.first.flatMap { $0 }.map { renamed($0).lowercased() } ?? ""):\(index.isUnique)"
                })
            let wantedCompound = Set(entity.schema.indexes.map { $0.canonicalText.lowercased() })
            let foundCompound = Set(
                file.indexes.filter { isCompoundIndex($0.name) }.map { index in
                    let columns = zip(index.columns, index.descending).map { column, descending in
                        IndexSchema.Column(name: renamed(column ?? "?"), isDescending: descending)
                    }
                    return IndexSchema(columns: columns).canonicalText.lowercased() + (index.isUnique ? ":u" : "")
                })
            return wanted != found || wantedCompound != foundCompound
        }

        /// Whether an index of the table is a compound index Folio made
        /// (`folio_<table>_…_index`, for the table's current or old name).
        func isCompoundIndex(_ name: String) -> Bool {
            SQLBuilder.isCompoundIndexName(name, table: entity.name) || SQLBuilder.isCompoundIndexName(name, table: file.name)
        }

        /// The declared name of a file column (after renames).
        func renamed(_ column: String) -> String {
            columnRenames.first { $0.from.lowercased() == column.lowercased() }?.to ?? column
        }

        /// Whether an index of the table is one Folio made: `<table>_<column>_index` for the
        /// table's current or old name and any column it has, had or declares, or a compound
        /// index (``isCompoundIndex(_:)``).
        func isFolioIndex(_ name: String) -> Bool {
            if isCompoundIndex(name) { return true }
            var columns = Set(file.columns.map(\.name) + entity.schema.storedColumns.map(\.name))
            for column in current?.columns ?? [] { columns.insert(column.name) }
            for rename in columnRenames { columns.insert(rename.to) }
            let tables = [entity.name, file.name]
            return tables.contains { table in
                columns.contains { SQLBuilder.indexName(table, $0).lowercased() == name.lowercased() }
            }
        }
    }

    var tables: [TableMigration]
    /// Declared entities the file lacks.
    var created: [DeclaredEntity]
    /// Recorded entities the model no longer declares, whose tables are dropped.
    var removedEntities: [FileTable]
    /// Names recorded in `folio_entities` whose table is gone and that the model does not
    /// declare: their records are deleted.
    var staleRecords: [String]

    init(file: FileSchema, model: DeclaredModel) throws {
        var used: Set<String> = []
        var tables: [TableMigration] = []
        var created: [DeclaredEntity] = []
        for entity in model.sortedEntities {
            let found = file.table(named: entity.name) ?? entity.renamedFrom.flatMap { file.table(named: $0) }
            guard let found else {
                created.append(entity)
                continue
            }
            used.insert(found.name.lowercased())
            tables.append(try Self.plan(entity, found))
        }
        var removed: [FileTable] = []
        var stale: [String] = []
        let declared = Set(model.entities.keys.map { $0.lowercased() })
        for name in file.recordedEntities where !declared.contains(name.lowercased()) && !used.contains(name.lowercased()) {
            if let table = file.table(named: name) {
                if !removed.contains(where: { $0.name == table.name }) { removed.append(table) }
            } else if SQLBuilder.isPlainIdentifier(name) {
                // (A name that is not an identifier can be no store's entity: left alone.)
                stale.append(name)
            }
        }
        self.tables = tables
        self.created = created
        self.removedEntities = removed
        self.staleRecords = stale
    }

    /// The columns of one table: matched by name, by declared old name, or added; the
    /// file's others are removed.
    private static func plan(_ entity: DeclaredEntity, _ file: FileTable) throws -> TableMigration {
        if file.isWithoutRowID {
            throw FolioError.migrationRefused(entity: entity.name, reason: "'\(file.name)' is a WITHOUT ROWID table")
        }
        if file.hasOtherIDColumn {
            throw FolioError.migrationRefused(
                entity: entity.name, reason: "the column 'id' of '\(file.name)' is not its INTEGER PRIMARY KEY")
        }
        var matched: Set<String> = []
        var renames: [(from: String, to: String)] = []
        var added: [ColumnSchema] = []
        var required: [ColumnSchema] = []
        var filled: [ColumnSchema] = []
        var nullabilityChanges = false
        var addedDefaults: [String: String] = [:]
        for column in entity.schema.storedColumns {
            let found: FileTable.Column
            if let same = file.column(named: column.name) {
                found = same
            } else if let old = entity.columnRenames[column.name] ?? entity.foldedKeyRenames[column.name],
                let previous = file.column(named: old)
            {
                found = previous
                renames.append((previous.name, column.name))
            } else {
                added.append(column)
                if !column.isOptional, let value = entity.defaults[column.name],
                    let literal = SQLBuilder.defaultLiteral(value)
                {
                    addedDefaults[column.name] = literal
                    continue
                }
                if !column.isOptional { required.append(column) }
                if entity.defaults[column.name] != nil { filled.append(column) }
                continue
            }
            matched.insert(found.name.lowercased())
            let sameType = file.recordedType(of: found).map { $0 == column.type } ?? (found.sqlType == column.type.sqlType)
            if !sameType {
                let stored = file.recordedType(of: found).map { "\($0.rawValue) (\(found.sqlType))" } ?? found.sqlType
                throw FolioError.migrationRefused(
                    entity: entity.name,
                    reason:
                        "the attribute '\(column.name)' is stored as \(stored) and declared \(column.type.rawValue) (\(column.type.sqlType)); Folio does not infer a type change: declare the new type under another column and fill it in a MigrationStep"
                )
            }
            if found.notNull == column.isOptional {
                nullabilityChanges = true
                if !column.isOptional {
                    required.append(column)
                    if entity.defaults[column.name] != nil { filled.append(column) }
                }
            }
        }
        var removed: [String] = []
        for column in file.columns where !matched.contains(column.name.lowercased()) {
            guard SQLBuilder.isPlainIdentifier(column.name) else {
                throw FolioError.migrationRefused(
                    entity: entity.name,
                    reason:
                        "the column \(column.name.debugDescription) of '\(file.name)', which the entity does not declare, has a name Folio does not handle"
                )
            }
            removed.append(column.name)
        }
        let needsRebuild =
            !removed.isEmpty || nullabilityChanges || !required.isEmpty || !file.isAutoincrement || !file.hasRowIDColumn
        if needsRebuild, let generated = file.generatedColumns.first {
            throw FolioError.migrationRefused(
                entity: entity.name,
                reason:
                    "the table '\(file.name)' must be rebuilt, which would drop its generated column '\(generated)' (no attribute declares it); drop it first, or declare what it holds"
            )
        }
        return TableMigration(
            entity: entity, file: file, columnRenames: renames, added: added, removed: removed, required: required,
            filled: filled, needsRebuild: needsRebuild, rowIDColumn: file.hasRowIDColumn ? "id" : "rowid",
            addedDefaults: addedDefaults, current: nil)
    }

    /// The plan for the contract phase, worked out again from the file as the custom steps
    /// left it: a step may drop a column or table the plan would remove (after moving its
    /// data), add a column no attribute declares, or rebuild a table by hand. The contract
    /// phase must neither fail on what a step already removed nor drop silently what a step
    /// added (such a column is a removed attribute like any other: dropped only when empty
    /// or with ``StoreModel/DiscardedData``).
    ///
    /// Renames and additions were made by the expand phase, so every declared column is
    /// found under its declared name; one that is not (a step dropped or renamed it), or
    /// whose type a step changed, refuses the migration.
    func refreshed(_ db: Database) throws -> MigrationPlan {
        var plan = self
        plan.tables = try tables.map { table in
            let name = table.entity.name
            guard try db.tableExists(name) else {
                throw FolioError.migrationRefused(
                    entity: name,
                    reason: "a migration step dropped its table '\(name)', which the model declares; its rows would be lost")
            }
            let actual = try String.fetchOne(db, sql: SQLBuilder.tableName, arguments: [name]) ?? name
            let current = try FileTable.read(actual, stored: table.file.stored, db)
            var entity = table.entity
            entity.columnRenames = [:]
            entity.foldedKeyRenames = [:]
            let now = try Self.plan(entity, current)
            if let missing = now.added.first {
                throw FolioError.migrationRefused(
                    entity: name,
                    reason:
                        "a migration step removed or renamed the column '\(missing.name)', which the entity declares; its values would be lost"
                )
            }
            var refreshed = table
            refreshed.removed = now.removed
            refreshed.required = now.required
            for column in now.filled where !refreshed.filled.contains(where: { $0.name == column.name }) {
                refreshed.filled.append(column)
            }
            refreshed.needsRebuild = now.needsRebuild
            refreshed.rowIDColumn = now.rowIDColumn
            refreshed.current = current
            return refreshed
        }
        return plan
    }

    /// Whether the plan changes nothing (the file only gets the new model version).
    var isEmpty: Bool { created.isEmpty && removedEntities.isEmpty && staleRecords.isEmpty && !tables.contains(where: \.changes) }
}
