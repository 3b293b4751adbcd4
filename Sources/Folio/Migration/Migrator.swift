import Foundation
import GRDB

/// Opens a store file for a model: creates Folio's tables and the entities' in a new
/// file, checks them in a file of the same model version, migrates a file of an older one.
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
    /// it, or Folio up to f4075a8 did, which is version 0).
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

    /// The read-only check made on a plain connection before the store's pool opens (which
    /// writes to the file): refuses a newer file, a file of the same version whose tables
    /// differ, and a migration that cannot be planned — leaving the file byte for byte.
    ///
    /// - Returns: whether the file needs a migration.
    @discardableResult
    static func check(_ db: Database, _ model: DeclaredModel, path: String) throws -> Bool {
        try InternalSchema.checkNotNewer(db, path: path)
        // A file Folio never opened is created at the model's version: its tables must match.
        let isNew = try InternalSchema.version(db, path: path) == 0
        let version = isNew ? model.version : try modelVersion(db, path: path) ?? 0
        if version > model.version {
            throw FolioError.newerModelVersion(path: path, version: version, declared: model.version)
        }
        if version == model.version {
            for schema in model.sortedEntities.map(\.schema) where try db.tableExists(schema.name) {
                let differences = try SchemaCheck.differences(schema, db)
                if !differences.isEmpty { throw FolioError.schemaMismatch(entity: schema.name, differences: differences) }
            }
            if !isNew {
                try checkNoPendingRenames(db, model)
                try checkNoPendingSteps(db, model)
            }
            try checkNamesFree(db, model, plan: nil)
            return false
        }
        try checkNamesFree(db, model, plan: MigrationPlan(file: FileSchema.read(db, names: allNames(model)), model: model))
        return true
    }

    /// Refuses a file where a name Folio is about to give a new table or index is taken by
    /// another table, view or index — another program's view named as a new entity, an
    /// index on another table named as an entity's index — which SQLite would otherwise refuse half-way
    /// through the open with its own error. Nothing of the file is dropped or renamed.
    ///
    /// - Parameter plan: the migration's plan; `nil` at the same model version (the
    ///   refusal is then a ``FolioError/schemaMismatch(entity:differences:)``).
    private static func checkNamesFree(_ db: Database, _ model: DeclaredModel, plan: MigrationPlan?) throws {
        for entity in model.sortedEntities {
            // The table the entity has in the file now (under an old name for a rename).
            let table: String?
            if let plan {
                table = plan.tables.first { $0.entity.name == entity.name }?.file.name
            } else {
                table = try db.tableExists(entity.name) ? entity.name : nil
            }
            var wanted: [(name: String, type: String, what: String)] = []
            if table == nil { wanted.append((entity.name, "table", "the entity's table")) }
            for column in entity.schema.storedColumns where column.isIndexed {
                wanted.append((SQLBuilder.indexName(entity.name, column.name), "index", "the entity's index on '\(column.name)'"))
            }
            for name in wanted {
                for row in try Row.fetchAll(db, sql: objectNamed, arguments: [name.name]) {
                    let type: String = row[0], found: String = row[1], owner: String = row[2]
                    let owners = [entity.name, table].compactMap { $0?.lowercased() }
                    if type == name.type && owners.contains(owner.lowercased()) { continue }
                    let reason =
                        "the name '\(name.name)' of \(name.what) is taken by the \(type) '\(found)'\(type == "index" ? " on '\(owner)'" : "") that Folio did not make; rename or drop it first"
                    if plan == nil { throw FolioError.schemaMismatch(entity: entity.name, differences: [reason]) }
                    throw FolioError.migrationRefused(entity: entity.name, reason: reason)
                }
            }
        }
    }

    /// Tables, views and indexes share one namespace in SQLite; triggers have their own.
    private static let objectNamed =
        "SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('table', 'view', 'index') AND lower(name) = lower(?)"

    /// What ``open(_:_:path:othersOpen:)`` found, read in its transaction.
    struct Opened {
        /// The database identity.
        var identity: Data
        /// `PRAGMA schema_version` as the transaction left it: read before the commit, so
        /// that a migration another process commits right after is seen as a change.
        var schemaVersion: Int64
    }

    /// Prepares the file in one transaction (see ``Migrator``).
    ///
    /// - Parameter othersOpen: whether another store of this process has the file open;
    ///   asked only when a migration is needed, inside the transaction.
    static func open(_ db: Database, _ model: DeclaredModel, path: String, othersOpen: () -> Bool) throws -> Opened {
        let foreignKeys = try Bool.fetchOne(db, sql: SQLBuilder.foreignKeys) ?? false
        if foreignKeys { try db.execute(sql: SQLBuilder.setForeignKeys(false)) }
        defer { if foreignKeys { try? db.execute(sql: SQLBuilder.setForeignKeys(true)) } }
        // A commit before the end (a step running `COMMIT`) becomes a rollback of everything.
        let guardian = CommitGuard()
        db.add(transactionObserver: guardian, extent: .observerLifetime)
        defer { db.remove(transactionObserver: guardian) }
        var opened = Opened(identity: Data(), schemaVersion: 0)
        try db.inTransaction(.immediate) {
            opened.identity = try prepare(db, model, path: path, othersOpen: othersOpen, guardian)
            if foreignKeys { try checkForeignKeys(db) }
            opened.schemaVersion = try Int64.fetchOne(db, sql: SQLBuilder.schemaVersion) ?? 0
            guardian.allowsCommit = true
            return .commit
        }
        return opened
    }

    /// Refuses every commit but the migration's own: SQLite rolls back a transaction whose
    /// commit a transaction observer refuses, so a step that runs `COMMIT` (which would
    /// commit half a migration) undoes the whole migration instead, and fails. It also
    /// sees a step's `ROLLBACK`, after which a new transaction would hold only the rest of
    /// the migration.
    private final class CommitGuard: TransactionObserver {
        var allowsCommit = false
        private(set) var rolledBack = false
        struct EarlyCommit: Error, CustomStringConvertible {
            var description: String { "it ended the migration's transaction (a step must not COMMIT or ROLLBACK)" }
        }
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseWillCommit() throws { if !allowsCommit { throw EarlyCommit() } }
        func databaseDidCommit(_ db: Database) {}
        func databaseDidRollback(_ db: Database) { rolledBack = true }
    }

    private static func prepare(
        _ db: Database, _ model: DeclaredModel, path: String, othersOpen: () -> Bool, _ guardian: CommitGuard
    ) throws -> Data {
        let isNew = try InternalSchema.version(db, path: path) == 0
        let identity = try InternalSchema.prepare(db, path: path)
        let version = isNew ? model.version : try modelVersion(db, path: path) ?? 0
        if version > model.version {
            throw FolioError.newerModelVersion(path: path, version: version, declared: model.version)
        }
        if version == model.version {
            if isNew {
                // Created in the final shape: every step is done.
                for step in model.steps { try record(step, model, db) }
            } else {
                try checkNoPendingRenames(db, model)
                try checkNoPendingSteps(db, model)
            }
            try checkNamesFree(db, model, plan: nil)
        } else {
            if othersOpen() { throw FolioError.migrationWhileOpen(path: path) }
            let plan = try MigrationPlan(file: FileSchema.read(db, names: allNames(model)), model: model)
            try checkNamesFree(db, model, plan: plan)
            try migrate(db, plan, model, guardian)
        }
        for schema in model.sortedEntities.map(\.schema) {
            try SchemaCheck.prepare(schema, in: db)
        }
        // Rows other programs wrote while no store had the file open.
        try FoldedKeys.fixUp(model.sortedEntities.map(\.schema).filter(\.hasFoldedColumns), db)
        if isNew || version != model.version {
            try db.execute(sql: SQLBuilder.writeStoreMetadata, arguments: [SQLBuilder.modelVersionKey, model.version])
        }
        return identity
    }

    private static func checkNoPendingSteps(_ db: Database, _ model: DeclaredModel) throws {
        if let step = try pendingSteps(db, model).first {
            throw FolioError.invalidStoreModel(
                reason:
                    "the migration step '\(step.name)' has not run on this file, which is already at model version \(model.version): a new step needs a new model version"
            )
        }
    }

    /// At the same model version, an entity whose table is missing while its old name's
    /// table is there was renamed without a new version: creating an empty table would hide
    /// every row.
    private static func checkNoPendingRenames(_ db: Database, _ model: DeclaredModel) throws {
        for entity in model.sortedEntities {
            guard let old = entity.renamedFrom, try !db.tableExists(entity.name), try db.tableExists(old) else { continue }
            throw FolioError.schemaMismatch(
                entity: entity.name,
                differences: [
                    "missing table '\(entity.name)'; the table '\(old)' it is renamed from is there (a rename needs a new model version)"
                ])
        }
    }

    private static func allNames(_ model: DeclaredModel) -> [String] {
        model.sortedEntities.flatMap { [$0.name] + ($0.renamedFrom.map { [$0] } ?? []) }
    }

    private static func record(_ step: MigrationStep, _ model: DeclaredModel, _ db: Database) throws {
        try db.execute(sql: SQLBuilder.writeStoreMetadata, arguments: [SQLBuilder.stepKey(step.name), model.version])
    }

    // MARK: The three phases

    private static func migrate(_ db: Database, _ plan: MigrationPlan, _ model: DeclaredModel, _ guardian: CommitGuard) throws {
        let broken = Set(try compileFailures(db).map(\.key))
        try expand(db, plan)
        let steps = try pendingSteps(db, model)
        for step in steps {
            try run(step, db, guardian)
            try record(step, model, db)
        }
        // Steps may have changed the tables: the contract phase starts from what they left.
        try contract(db, steps.isEmpty ? plan : plan.refreshed(db), model)
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

    private static func expand(_ db: Database, _ plan: MigrationPlan) throws {
        // Folio's triggers and full-text index derived from folded attributes name the
        // table, its old name and its columns: dropped here, made again for the declared
        // entity once the table has its final shape (``SchemaCheck``, ``FoldedKeys``).
        for table in plan.tables where table.changes {
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
                    try db.execute(sql: SQLBuilder.addColumn(column, to: name))
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

    private static func contract(_ db: Database, _ plan: MigrationPlan, _ model: DeclaredModel) throws {
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
        for table in plan.tables where table.changes {
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
    /// creates the missing ones — a unique one only when no value appears twice.
    private static func reconcileIndexes(_ table: MigrationPlan.TableMigration, _ db: Database) throws {
        let name = table.entity.name
        var wanted: [String: ColumnSchema] = [:]
        for column in table.entity.schema.storedColumns where column.isIndexed {
            wanted[SQLBuilder.indexName(name, column.name)] = column
        }
        var kept: Set<String> = []
        for row in try Row.fetchAll(db, sql: SQLBuilder.indexList, arguments: [name]) {
            let index: String = row[0]
            guard (row[2] as String) == "c", table.isFolioIndex(index) else { continue }
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
    }

    private static func checkForeignKeys(_ db: Database) throws {
        let violations: [Row]
        do {
            violations = try Row.fetchAll(db, sql: SQLBuilder.foreignKeyCheck)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            // "foreign key mismatch - "child" referencing "parent"": a foreign key whose
            // parent columns are gone or not unique (a removed attribute, say). SQLite would
            // refuse every later write to either table.
            let message = error.message ?? "\(error.resultCode)"
            let names = message.split(separator: "\"", omittingEmptySubsequences: false)
            let child = names.count >= 4 ? String(names[1]) : ""
            let parent = names.count >= 4 ? String(names[3]) : ""
            throw FolioError.migrationRefused(
                entity: child,
                reason:
                    "after the migration, a foreign key of '\(child)' no longer matches its parent '\(parent)' (SQLite: \(message)): the columns it references must exist and be unique; change it in a MigrationStep"
            )
        }
        if let first = violations.first {
            let table: String = first[0]
            throw FolioError.migrationRefused(
                entity: table,
                reason:
                    "\(violations.count) row\(violations.count == 1 ? "" : "s") would violate foreign keys after the migration (the first: rowid \(first[1] as Int64? ?? 0) of '\(table)', referencing '\(first[2] as String)')"
            )
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
