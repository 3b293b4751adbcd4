import Foundation
import GRDB

/// Opens a store file for a model: creates Folio's tables and the entities' in a new
/// file, checks them in a file of the same model version, migrates a file of an older one.
/// This file plans and runs the migration; the opening transaction around it and the
/// check before the pool opens are in `Store/Store+Opening.swift`.
///
/// Everything happens in one `IMMEDIATE` transaction, with foreign-key enforcement off
/// around it as SQLite's procedure for table changes asks (sqlite.org/lang_altertable.html,
/// section 7; GRDB's `DatabaseMigrator` does the same), and `PRAGMA foreign_key_check`
/// before the commit. The file is migrated entirely or not at all: a throw anywhere — a
/// custom step, a refusal, a kill of the process — leaves it as it was.
///
/// A migration runs in three phases, so that custom steps see the old data and the new
/// columns together:
///
/// 1. **expand**: renamed tables and columns take their new names, new entities' tables
///    are created, added attributes' columns are added (nullable);
/// 2. **custom steps** not yet recorded in the file, in the model's order;
/// 3. **contract**: declared defaults fill the `NULL`s of added and newly required
///    attributes; nothing required may stay `NULL`; removed attributes and entities are
///    dropped (those holding data only when the model allows it); tables are rebuilt
///    where SQLite cannot change them in place; indexes are made the declared ones.
///
/// Then every declared entity's table is checked against its declaration exactly as at
/// every open (``SchemaCheck``), so a migration that did not produce the declared table
/// fails instead of committing.
enum Migrator {
    /// The model version recorded in the file; `nil` when it has none (Folio never opened
    /// it, or an older Folio that recorded none did, which is version 0).
    static func modelVersion(_ db: Database, path: String) throws -> Int? {
        guard try db.tableExists(SQLBuilder.storeMetadataTable) else { return nil }
        guard
            let value = try DatabaseValue.fetchOne(db, sql: SQLBuilder.readStoreMetadata, arguments: [SQLBuilder.modelVersionKey])
        else { return nil }
        guard case .int64(let version) = value.storage, version >= 0, version <= Int64(Int32.max) else {
            throw FolioError.invalidStoreMetadata(path: path, reason: "the model version is \(value)")
        }
        return Int(version)
    }

    /// The model's steps the file has not recorded as run, in order.
    static func pendingSteps(_ db: Database, _ model: DeclaredModel) throws -> [MigrationStep] {
        guard !model.steps.isEmpty else { return [] }
        guard try db.tableExists(SQLBuilder.storeMetadataTable) else { return model.steps }
        return try model.steps.filter { step in
            try DatabaseValue.fetchOne(db, sql: SQLBuilder.readStoreMetadata, arguments: [SQLBuilder.stepKey(step.name)]) == nil
        }
    }

    static func record(_ step: MigrationStep, _ model: DeclaredModel, _ db: Database) throws {
        try db.execute(sql: SQLBuilder.writeStoreMetadata, arguments: [SQLBuilder.stepKey(step.name), model.version])
    }

    // MARK: The three phases

    static func migrate(_ db: Database, _ plan: MigrationPlan, _ model: DeclaredModel, _ guardian: CommitGuard) throws {
        let broken = Set(try compileFailures(db).map(\.key))
        let steps = try pendingSteps(db, model)
        try expand(db, plan, stepsPending: !steps.isEmpty)
        for step in steps {
            try run(step, db, guardian)
            try record(step, model, db)
        }
        // The delete rules' triggers name other tables' columns, which the contract phase may
        // remove (SQLite would refuse): all dropped, made again for the declared model once
        // the tables are done (in the same transaction).
        let tables = plan.tables.flatMap { [$0.file.name, $0.entity.name] } + plan.removedEntities.map(\.name)
        try DeleteRuleTriggers.drop(on: Set(tables), model, db)
        try DerivedAttributeTriggers.drop(on: Set(tables), model, db)
        // Steps may have changed the tables: the contract phase starts from what they left.
        try contract(db, steps.isEmpty ? plan : plan.refreshed(db), model, stepsRan: !steps.isEmpty)
        try checkSchemaCompiles(db, before: broken)
    }

    /// Refuses a migration that leaves a view or trigger that does not compile, where it
    /// compiled before (``compileFailures(_:)``): SQLite accepts a trigger or view that
    /// names a column or table the migration removed, and would fail only at the next write
    /// or read. One that did not compile before either — another program's view calling a
    /// function only that program defines, say — is not the migration's doing.
    private static func checkSchemaCompiles(_ db: Database, before: Set<String>) throws {
        guard let failure = try compileFailures(db).first(where: { !before.contains($0.key) }) else { return }
        throw FolioError.migrationRefused(
            entity: failure.name,
            reason:
                "after the migration, the \(failure.type) '\(failure.name)' or one of its triggers no longer compiles (\(failure.message)); change or drop it in a MigrationStep"
        )
    }

    /// Prepares (never runs) a read of every view and an insert, update and delete on
    /// every table, which compiles every view and trigger; returns what does not compile,
    /// keyed by object and SQLite's message.
    private static func compileFailures(_ db: Database) throws -> [(key: String, type: String, name: String, message: String)] {
        var failures: [(key: String, type: String, name: String, message: String)] = []
        for row in try Row.fetchAll(db, sql: SQLBuilder.schemaObjects) {
            let type: String = row[0], name: String = row[1]
            let checks: [String]
            if type == "view" {
                checks = [SQLBuilder.compileCheck(view: name)]
            } else {
                let columns = try String.fetchAll(db, sql: SQLBuilder.columnNames, arguments: [name])
                checks = SQLBuilder.compileChecks(table: name, columns: columns)
            }
            for sql in checks {
                do {
                    _ = try db.makeStatement(sql: sql)
                } catch let error as DatabaseError {
                    let message = error.message ?? "\(error.resultCode)"
                    failures.append(("\(type) \(name.lowercased()): \(message)", type, name, message))
                    break
                }
            }
        }
        return failures
    }

    private static func expand(_ db: Database, _ plan: MigrationPlan, stepsPending: Bool) throws {
        // Folio's triggers and full-text index derived from folded attributes name the
        // table, its old name and its columns: dropped here, made again for the declared
        // entity once the table has its final shape (``SchemaCheck``, ``FoldedKeys``).
        // A table that only gains columns, none of them folded keys, with no custom step to
        // run (which may change anything), keeps them: its keys, index and their triggers
        // stay right (making the index of a table of millions of rows again takes minutes).
        for table in plan.tables where table.changes && (stepsPending || !table.keepsFoldedKeys) {
            for name in Set([table.file.name, table.entity.name]) { try FoldedKeys.dropDerivedObjects(table: name, db) }
        }
        for table in plan.removedEntities {
            try FoldedKeys.dropDerivedObjects(table: table.name, db)
        }
        for table in plan.tables {
            guard let old = table.renamedFrom else { continue }
            let name = table.entity.name
            // The old name's triggers update the old name's record: replaced after the rename.
            for trigger in SQLBuilder.changeTriggers(table: old) { try db.execute(sql: SQLBuilder.dropTrigger(trigger.name)) }
            try refusingOthersObjects(entity: name, "renaming the table '\(old)' to '\(name)'") {
                if old.lowercased() == name.lowercased() {
                    // Only the case changes: SQLite takes the new name for the table's own and
                    // refuses it; through a temporary name.
                    try db.execute(sql: SQLBuilder.renameTable(old, to: "folio_migrating_\(name)"))
                    try db.execute(sql: SQLBuilder.renameTable("folio_migrating_\(name)", to: name))
                } else {
                    try db.execute(sql: SQLBuilder.renameTable(old, to: name))
                }
            }
            try db.execute(sql: SQLBuilder.deleteEntityMetadata, arguments: [name])
            try db.execute(sql: SQLBuilder.renameEntityMetadata, arguments: [old, name])
            try FoldedKeys.forget(entity: old, db)
        }
        for entity in plan.created {
            try SchemaCheck.prepare(entity.schema, in: db)
        }
        for table in plan.tables {
            let name = table.entity.name
            for rename in table.columnRenames {
                try refusingOthersObjects(entity: name, "renaming the column '\(rename.from)' to '\(rename.to)'") {
                    try db.execute(sql: SQLBuilder.renameColumn(rename.from, to: rename.to, in: name))
                }
            }
            for column in table.added {
                try refusingOthersObjects(entity: name, "adding the column '\(column.name)'") {
                    if let literal = table.addedDefaults[column.name] {
                        try db.execute(sql: SQLBuilder.addColumn(column, to: name, notNullDefault: literal))
                    } else {
                        try db.execute(sql: SQLBuilder.addColumn(column, to: name))
                    }
                }
            }
        }
    }

    private static func run(_ step: MigrationStep, _ db: Database, _ guardian: CommitGuard) throws {
        do {
            try step.body(db)
        } catch {
            let reason = (error as? FolioError)?.description ?? (error as? DatabaseError)?.description ?? "\(error)"
            throw FolioError.migrationStepFailed(step: step.name, reason: reason)
        }
        guard db.isInsideTransaction, !guardian.rolledBack else {
            throw FolioError.migrationStepFailed(
                step: step.name, reason: "it ended the migration's transaction (a step must not COMMIT or ROLLBACK)")
        }
    }

    private static func contract(_ db: Database, _ plan: MigrationPlan, _ model: DeclaredModel, stepsRan: Bool) throws {
        for table in plan.tables {
            let name = table.entity.name
            for column in table.filled {
                if let value = table.entity.defaults[column.name] {
                    let fill = SQLBuilder.fillNulls(column.name, in: name)
                    try refusingOthersObjects(
                        entity: name, "filling the NULLs of '\(column.name)' with its default value",
                        hint:
                            "a unique index (declared or another program's) or a trigger is in the way; give those rows values in a MigrationStep, or change the index or trigger"
                    ) {
                        try execute(fill, [value], db)
                    }
                }
            }
            for column in table.required {
                let rows = try Int.fetchOne(db, sql: SQLBuilder.countNulls(column.name, in: name)) ?? 0
                if rows > 0 { throw FolioError.missingDefaultValue(entity: name, attribute: column.name, rows: rows) }
            }
            for column in table.removed {
                // Folded keys are Folio's own, computed from a column: never data to keep.
                if ColumnSchema.isFoldedKeyColumn(column) { continue }
                let rows = try Int.fetchOne(db, sql: SQLBuilder.countValues(column, in: name)) ?? 0
                let names = [name, table.file.name].map { $0.lowercased() }
                let allowed = model.discarding.contains {
                    if case .attribute(let attribute, let entity) = $0 {
                        return attribute.lowercased() == column.lowercased() && names.contains(entity.lowercased())
                    }
                    return false
                }
                if rows > 0 && !allowed { throw FolioError.migrationDiscardsData(entity: name, attribute: column, rows: rows) }
            }
        }
        for table in plan.removedEntities {
            // (A custom step may have dropped the table itself, after moving its rows.)
            if try db.tableExists(table.name) {
                let rows = try Int.fetchOne(db, sql: SQLBuilder.countRows(table.name)) ?? 0
                let allowed = model.discarding.contains {
                    if case .entity(let entity) = $0 { return entity.lowercased() == table.name.lowercased() }
                    return false
                }
                if rows > 0 && !allowed {
                    throw FolioError.migrationDiscardsData(entity: table.name, attribute: nil, rows: rows)
                }
                try db.execute(sql: SQLBuilder.dropTable(table.name))
            }
            try db.execute(sql: SQLBuilder.deleteEntityMetadata, arguments: [table.name])
            try FoldedKeys.forget(entity: table.name, db)
        }
        for name in plan.staleRecords {
            try db.execute(sql: SQLBuilder.deleteEntityMetadata, arguments: [name])
        }
        for table in plan.tables where table.needsRebuild {
            try TableRebuild(table).run(db)
        }
        for table in plan.tables {
            try reconcileIndexes(table, db)
        }
        // Keys of added folded attributes, and of rows a custom step wrote: all computed
        // again (``SchemaCheck`` then makes the full-text index from them).
        for table in plan.tables where table.changes && !(table.keepsFoldedKeys && !stepsRan) {
            try FoldedKeys.refold(table.entity.schema, db)
        }
        for table in plan.tables where table.changes {
            let schema = table.entity.schema
            let json = String(decoding: try JSONEncoder().encode(schema), as: UTF8.self)
            try db.execute(sql: SQLBuilder.writeMetadata, arguments: [schema.name, schema.versionHash, json])
            // Whatever a cache of the entity holds was computed from the old table.
            try db.execute(sql: SQLBuilder.renewChangeID, arguments: [schema.name])
        }
    }

    /// Makes Folio's indexes on a table exactly the declared ones: drops those that are no
    /// longer declared (or changed uniqueness, or index a renamed table's old name), and
    /// creates the missing ones — a unique one only when no value appears twice. Compound
    /// indexes likewise: kept when their columns and orders are the declared ones.
    private static func reconcileIndexes(_ table: MigrationPlan.TableMigration, _ db: Database) throws {
        let name = table.entity.name
        var wanted: [String: ColumnSchema] = [:]
        for column in table.entity.schema.storedColumns where column.isIndexed {
            wanted[SQLBuilder.indexName(name, column.name)] = column
        }
        var compound: [String: IndexSchema] = [:]
        for index in table.entity.schema.indexes { compound[SQLBuilder.indexName(name, index)] = index }
        var kept: Set<String> = []
        for row in try Row.fetchAll(db, sql: SQLBuilder.indexList, arguments: [name]) {
            let index: String = row[0]
            guard (row[2] as String) == "c", table.isFolioIndex(index) else { continue }
            if table.isCompoundIndex(index) {
                let keys = try Row.fetchAll(db, sql: SQLBuilder.indexKeys, arguments: [index]).map {
                    IndexSchema.Column(name: ($0[0] as String?) ?? "", isDescending: ($0[1] as Int) != 0)
                }
                if let declared = compound[index], (row[1] as Int) == 0, IndexSchema(columns: keys) == declared {
                    kept.insert(index)
                } else {
                    try db.execute(sql: SQLBuilder.dropIndex(index))
                }
                continue
            }
            let columns = try String.fetchAll(db, sql: SQLBuilder.indexColumns, arguments: [index])
            if let column = wanted[index], column.isUnique == ((row[1] as Int) != 0),
                columns.map({ $0.lowercased() }) == column.indexedColumns.map({ $0.lowercased() })
            {
                kept.insert(index)
            } else {
                try db.execute(sql: SQLBuilder.dropIndex(index))
            }
        }
        for (index, column) in wanted.sorted(by: { $0.key < $1.key }) where !kept.contains(index) {
            if column.isUnique {
                let duplicates = try Int.fetchOne(db, sql: SQLBuilder.duplicateValues(column.name, in: name)) ?? 0
                if duplicates > 0 {
                    throw FolioError.migrationRefused(
                        entity: name,
                        reason:
                            "'\(column.name)' is declared unique, but \(duplicates) of its values appear in more than one row; remove the duplicates in a MigrationStep"
                    )
                }
            }
            try db.execute(sql: SQLBuilder.createIndex(table: name, column: column))
        }
        for (index, schema) in compound.sorted(by: { $0.key < $1.key }) where !kept.contains(index) {
            try db.execute(sql: SQLBuilder.createIndex(table: name, schema))
        }
    }

    /// Runs one of the migration's own statements; when SQLite refuses it because of what
    /// another program made — a unique index or a trigger whose insert fails when the
    /// declared default fills the `NULL`s, a view that no longer parses when a column is
    /// renamed — the migration is refused by name instead of failing with SQLite's error.
    static func refusingOthersObjects(
        entity: String, _ what: String,
        hint: String = "another program's index, trigger or view is in the way; change or drop it first",
        _ body: () throws -> Void
    ) throws {
        do {
            try body()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT || error.resultCode == .SQLITE_ERROR {
            throw FolioError.migrationRefused(
                entity: entity,
                reason:
                    "\(what) fails (\(error.message ?? "\(error.resultCode)")): \(hint)"
            )
        }
    }

    private static func execute(_ sql: String, _ arguments: [DatabaseValue], _ db: Database) throws {
        let statement = try db.makeStatement(sql: sql)
        try statement.setExactArguments(arguments)
        try statement.execute()
    }
}
