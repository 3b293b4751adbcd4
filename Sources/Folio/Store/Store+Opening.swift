import Foundation
import GRDB

// Opening a store file: the read-only check before the pool opens, and the opening
// transaction that creates, checks or migrates the file (``Migrator`` plans and runs the
// migration itself).

extension Store {
    /// Checks an existing file on a plain connection before the pool opens: opening a pool
    /// writes to the file (it switches it to WAL mode and commits a transaction so that a
    /// WAL file exists), and a file that is not a database, was written by a newer Folio or
    /// a newer model, whose tables do not match, or that cannot be migrated must be left
    /// exactly as it was (``Migrator/check(_:_:path:)``).
    ///
    /// Only SQLite touches the file: GRDB's first read says `SQLITE_NOTADB` for a file that
    /// is not a database. Folio never opens the database file itself — closing any
    /// descriptor of a file drops every POSIX lock the process holds on it, the locks of
    /// other connections (another ``Store`` on the same file) included, and another
    /// process could then delete a WAL that still holds commits
    /// (sqlite.org/howtocorrupt.html, section 2.2).
    ///
    /// The last connection to a WAL file to close checkpoints it: it copies the WAL's
    /// commits into the database file and deletes `-wal` and `-shm`. So the connection is
    /// read-only when either file is there (a read-only connection never checkpoints nor
    /// deletes them), and read-write when neither is (it then removes, as it closes, the
    /// empty `-wal` and the `-shm` that its read made).
    ///
    /// - Returns: the read-only connection, still open, when `-wal` or `-shm` was there:
    ///   the caller closes it after the pool (``closeOpening(_:keeper:)``), so that a
    ///   refusal in the pool's opening transaction does not checkpoint the WAL either.
    static func checkExistingFile(_ path: String, _ model: DeclaredModel) throws -> DatabaseQueue? {
        let files = FileManager.default
        // `fileExists` asks the file system (stat); it opens no descriptor.
        let hasWAL = files.fileExists(atPath: path + "-wal") || files.fileExists(atPath: path + "-shm")
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.readonly = hasWAL
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        do {
            let migrates = try queue.read { db in try Migrator.check(db, model, path: path) }
            // Checked again in the migration's transaction; here it spares opening the pool.
            // A store counts as open once its opening transaction committed: when that
            // transaction was the migration this read found still to do, the file is read
            // again, and found migrated.
            if migrates, let file = FileIdentity(path: path), OpenStoreFiles.waitForReleasedStores(file) > 0,
                try queue.read({ db in try Migrator.check(db, model, path: path) })
            {
                throw FolioError.migrationWhileOpen(path: path)
            }
        } catch {
            try? queue.close()
            throw error
        }
        if hasWAL { return queue }
        try? queue.close()
        return nil
    }

    /// Closes the connections of an opening that failed: the pool first, then the
    /// read-only connection of the check, so that the last to close cannot checkpoint.
    static func closeOpening(_ writer: (any DatabaseWriter)?, keeper: DatabaseQueue?) {
        try? writer?.close()
        try? keeper?.close()
    }

    /// SQLite says only "unable to open database file": say where, and why if it can be seen.
    static func cannotOpen(_ path: String, _ error: DatabaseError) -> FolioError {
        let files = FileManager.default
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        let reason: String
        if files.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            reason = "the path is a directory"
        } else if !files.fileExists(atPath: directory, isDirectory: &isDirectory) {
            reason = "the directory \(directory) does not exist"
        } else if !isDirectory.boolValue {
            reason = "\(directory) is not a directory"
        } else if !files.isWritableFile(atPath: directory) {
            reason = "the directory \(directory) is not writable"
        } else {
            reason = error.message ?? "\(error.resultCode)"
        }
        return .sqlite(
            code: error.extendedResultCode.rawValue, message: "unable to open database file at \(path): \(reason)", sql: nil,
            arguments: nil)
    }
}

extension Migrator {
    /// The read-only check made on a plain connection before the store's pool opens (which
    /// writes to the file): refuses a newer file, a file of the same version whose tables
    /// differ, and a migration that cannot be planned — leaving the database file and its
    /// `-wal` byte for byte (see ``Store/checkExistingFile(_:_:)``).
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
                for row in try Row.fetchAll(db, sql: SQLBuilder.objectNamed, arguments: [name.name]) {
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

    /// What ``open(_:_:path:othersOpen:)`` found, read in its transaction.
    struct Opened {
        /// The database identity.
        var identity: Data
        /// `PRAGMA schema_version` as the transaction left it: read before the commit, so
        /// that a migration another process commits right after is seen as a change.
        var schemaVersion: Int64
        /// The entities whose full-text index the opening did not count
        /// (``FoldedKeys/defersRowCount(_:_:)``): the store counts them before they answer a
        /// search.
        var uncountedSearchIndexes: [String] = []
    }

    /// Prepares the file in one transaction (see ``Migrator``).
    ///
    /// - Parameters:
    ///   - othersOpen: whether another store of this process has the file open; asked only
    ///     when a migration is needed, inside the transaction.
    ///   - progress: receives the progress of the rows the opening rewrites — folded keys
    ///     computed again and full-text indexes filled (``RowProgress``) — when there are any.
    static func open(
        _ db: Database, _ model: DeclaredModel, path: String, othersOpen: () -> Bool,
        progress: RowProgress.Report? = nil
    ) throws -> Opened {
        let foreignKeys = try Bool.fetchOne(db, sql: SQLBuilder.foreignKeys) ?? false
        if foreignKeys { try db.execute(sql: SQLBuilder.setForeignKeys(false)) }
        defer { if foreignKeys { try? db.execute(sql: SQLBuilder.setForeignKeys(true)) } }
        // A commit before the end (a step running `COMMIT`) becomes a rollback of everything.
        let guardian = CommitGuard()
        db.add(transactionObserver: guardian, extent: .observerLifetime)
        defer { db.remove(transactionObserver: guardian) }
        var opened = Opened(identity: Data(), schemaVersion: 0)
        try db.inTransaction(.immediate) {
            opened.identity = try prepare(db, model, path: path, othersOpen: othersOpen, guardian, progress: progress)
            opened.uncountedSearchIndexes = try model.sortedEntities.map(\.schema)
                .filter { try FoldedKeys.defersRowCount($0, db) }.map(\.name)
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
    final class CommitGuard: TransactionObserver {
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
        _ db: Database, _ model: DeclaredModel, path: String, othersOpen: () -> Bool, _ guardian: CommitGuard,
        progress report: RowProgress.Report?
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
        // The keys made by another folding, counted before any is computed again, so that
        // the progress has its total from the start.
        let progress = try report.map { report in
            var planned: [String: Int] = [:]
            for schema in model.sortedEntities.map(\.schema) {
                planned.merge(try FoldedKeys.plannedRewrite(schema, db)) { $1 }
            }
            planned.merge(try DerivedAttributeTriggers.plannedRecompute(model, db)) { $1 }
            return RowProgress(planned: planned, report: report)
        }
        for schema in model.sortedEntities.map(\.schema) {
            try SchemaCheck.prepare(schema, in: db, progress: progress)
        }
        // Rows other programs wrote while no store had the file open.
        try FoldedKeys.fixUp(model.sortedEntities.map(\.schema).filter(\.hasFoldedColumns), db)
        // Every table is there: the delete rules' triggers, which name other tables, last.
        try DeleteRuleTriggers.install(model, db)
        // The derived attributes' triggers, and their columns computed where they are new.
        try DerivedAttributeTriggers.install(model, db, progress: progress)
        progress?.finish()
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
}
