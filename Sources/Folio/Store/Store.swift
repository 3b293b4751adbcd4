import Foundation
import GRDB
import GRDBSQLite

/// An SQLite database of records: opens or creates the file, checks its schema,
/// runs reads and writes, and tells live controllers what each commit changed.
///
/// ```swift
/// let store = try Store(path: "feeds.sqlite", records: [Article.self])
/// try store.write { tx in
///     var article = Article(title: "Hello")
///     try tx.insert(&article)
/// }
/// ```
///
/// A file store uses WAL mode and a pool of readers, so reads (and background fetches)
/// run while a write goes on. ``inMemory(records:)`` serializes everything on one
/// connection; ``temporary(records:)`` is a WAL file deleted when the store goes away.
///
/// Several stores and other processes may open the same file; a store whose file is
/// deleted, moved or replaced refuses to read and write. See <doc:StoresAndFiles>.
public final class Store: Sendable {
    /// The database file, `nil` in memory.
    /// - Complexity: O(1).
    public let path: String?
    /// Counters and the SQL log.
    /// - Complexity: O(1).
    public let diagnostics: Diagnostics
    /// Where persistent section caches are written.
    /// - Complexity: O(1).
    public let cacheDirectory: URL

    let writer: any DatabaseWriter
    let hub: ChangeHub
    let schemas: [String: EntitySchema]
    /// The entities with folded attributes, by name: their keys are fixed up at every access
    /// (see ``FoldedKeys``).
    let foldedSchemas: [String: EntitySchema]
    /// PersistentRecord types found to match `schemas`, with their write statements (``writeSQL(for:)``).
    private let checkedEntities = Locked<[ObjectIdentifier: EntityWriteSQL]>([:])
    private let removeOnDeinit: URL?
    let isClosed = Locked(false)
    /// The database file's device and inode when the store opened it (`nil` in memory).
    let fileIdentity: FileIdentity?
    /// The model version the store opened the file with (``StoreModel/version``; 0 for
    /// ``init(path:records:cacheDirectory:openingProgress:)``).
    ///
    /// - Complexity: O(1).
    public let modelVersion: Int
    /// `PRAGMA schema_version` when the model version was last found unchanged (see ``checkModelUnchanged(_:)``).
    let schemaCookie = Locked<Int64>(0)
    /// `PRAGMA schema_version` when Folio's objects in the file — the change log's, the
    /// delete rules' and the folded attributes' triggers, full-text indexes,
    /// `folio_stale_keys` — were last made or checked (``repairSchemaObjectsIfSchemaChanged(_:)``).
    let schemaObjectsCookie = Locked<Int64>(0)
    /// The model the store opened the file with: what its schema objects are made from.
    let declared: DeclaredModel
    /// The entities whose full-text index has not had its rows counted since the opening
    /// (``FoldedKeys/defersRowCount(_:_:)``): counted in the background, or before a search
    /// of them, whichever comes first (``countSearchIndex(_:)``).
    let uncountedSearchIndexes = Locked<Set<String>>([])
    /// The file while this store is counted in ``OpenStoreFiles``.
    private let openFile = Locked<FileIdentity?>(nil)
    /// What wakes the store when another process commits (``ChangeWatcher``), while open.
    let watcher = Locked<ChangeWatcher?>(nil)
    /// The store's own writes as the watcher sees them (``OwnWrites``).
    let ownWrites = Locked(OwnWrites())
    /// The change log's bounds (``ChangeLogLimits``); tests lower them.
    let changeLogLimits = Locked(ChangeLogLimits())
    /// The last `seq` followed when this store last trimmed the change log.
    let lastTrim = Locked<Int64>(0)
    /// This store's random id among the change log's readers (`folio_change_readers`).
    let readerID = Data((0..<16).map { _ in UInt8.random(in: 0...255) })

    /// Opens or creates the store at `path` for the given record types, as model version 0
    /// (an unversioned model: no migrations; see ``init(path:model:cacheDirectory:openingProgress:)``).
    ///
    /// A file written by an older Folio is upgraded in place (see <doc:StoresAndFiles>).
    /// A file that is refused is left as it was: the database file and its `-wal` byte for
    /// byte (see <doc:StoresAndFiles>).
    ///
    /// - Parameters:
    ///   - path: the database file, created if missing.
    ///   - records: the record types stored; each one's entity becomes (or must match) a table.
    ///   - cacheDirectory: where section caches go; by default `<path>-folio-cache`.
    ///   - openingProgress: told how far the opening is when it rewrites rows — the file's
    ///     folded keys and full-text indexes, made by another version of Folio's folding,
    ///     computed again (see ``OpeningProgress``); called on the writer's thread, during
    ///     the initializer, and never when there is nothing to rewrite.
    /// - Throws: ``FolioError/schemaMismatch(entity:differences:)`` when the file's tables
    ///   differ from the entities, ``FolioError/newerModelVersion(path:version:declared:)``
    ///   for a file a versioned model wrote, ``FolioError/notADatabase(path:)`` for a file that is
    ///   not SQLite, ``FolioError/newerStoreFormat(path:version:newestSupported:)`` for a
    ///   file of a newer Folio, ``FolioError/invalidStoreMetadata(path:reason:)`` when
    ///   Folio's own tables are damaged, ``FolioError/sqlite(code:message:sql:arguments:)``
    ///   when it cannot be opened.
    /// - Complexity: a few statements per entity, in one write transaction; an upgrade
    ///   rewrites only Folio's own tables and triggers, never a row of an entity's own
    ///   columns. Keys made by another folding version: O(n) per entity with folded
    ///   attributes, once.
    public convenience init(
        path: String, records: [any PersistentRecord.Type], cacheDirectory: URL? = nil,
        openingProgress: (@Sendable (OpeningProgress) -> Void)? = nil
    ) throws {
        try self.init(
            path: path, model: StoreModel(unversioned: records), cacheDirectory: cacheDirectory,
            openingProgress: openingProgress)
    }

    /// Opens or creates the store at `path` for a versioned model, migrating a file of an
    /// older model version first (see ``StoreModel`` and <doc:EvolvingYourSchema>).
    ///
    /// ```swift
    /// let model = StoreModel(version: 2, records: [Article.self, Feed.self])
    /// let store = try Store(path: "feeds.sqlite", model: model)
    /// ```
    ///
    /// - Parameters:
    ///   - path: the database file, created if missing.
    ///   - model: the record types, their model version, and the custom migration steps.
    ///   - cacheDirectory: where section caches go; by default `<path>-folio-cache`.
    ///   - openingProgress: told how far the opening is when it rewrites rows — the file's
    ///     folded keys and full-text indexes, made by another version of Folio's folding,
    ///     computed again (see ``OpeningProgress``); called on the writer's thread, during
    ///     the initializer, and never when there is nothing to rewrite.
    /// - Throws: ``FolioError/newerModelVersion(path:version:declared:)`` for a file of a
    ///   newer model; ``FolioError/schemaMismatch(entity:differences:)`` when a file of the
    ///   same version differs from the entities; for a migration,
    ///   ``FolioError/migrationWhileOpen(path:)``, ``FolioError/migrationStepFailed(step:reason:)``,
    ///   ``FolioError/missingDefaultValue(entity:attribute:rows:)``,
    ///   ``FolioError/migrationDiscardsData(entity:attribute:rows:)`` or
    ///   ``FolioError/migrationRefused(entity:reason:)`` — and the file is left unchanged
    ///   (the database file and its `-wal` byte for byte; see <doc:StoresAndFiles>);
    ///   ``FolioError/nameClash(name:first:second:)`` when two of the model's tables,
    ///   indexes or triggers would get one name, before the file is opened.
    /// - Complexity: O(entities) statements for a file of the same version; a migration
    ///   also copies every row of each table it rebuilds, in one transaction; keys made by
    ///   another folding version are computed again, O(n) per entity with folded attributes,
    ///   once.
    public convenience init(
        path: String, model: StoreModel, cacheDirectory: URL? = nil,
        openingProgress: (@Sendable (OpeningProgress) -> Void)? = nil
    ) throws {
        try self.init(
            path: path, inMemory: false, model: model, cacheDirectory: cacheDirectory, removeOnDeinit: nil,
            openingProgress: openingProgress)
    }

    /// A store in memory, for tests and previews. Reads and writes share one connection.
    /// - Complexity: as ``init(path:records:cacheDirectory:openingProgress:)`` on a new file.
    public static func inMemory(records: [any PersistentRecord.Type]) throws -> Store {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-\(UUID().uuidString)")
        return try Store(
            path: nil, inMemory: true, model: StoreModel(unversioned: records), cacheDirectory: directory,
            removeOnDeinit: directory)
    }

    /// A WAL store in a new temporary directory, deleted when the store is deallocated.
    /// - Complexity: as ``init(path:records:cacheDirectory:openingProgress:)`` on a new file.
    public static func temporary(records: [any PersistentRecord.Type]) throws -> Store {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try Store(
            path: directory.appendingPathComponent("store.sqlite").path, inMemory: false,
            model: StoreModel(unversioned: records), cacheDirectory: directory.appendingPathComponent("cache"),
            removeOnDeinit: directory)
    }

    private init(
        path: String?, inMemory: Bool, model: StoreModel, cacheDirectory: URL?, removeOnDeinit: URL?,
        openingProgress: (@Sendable (OpeningProgress) -> Void)? = nil
    ) throws {
        let declared = try DeclaredModel(model)
        let schemas = declared.schemas
        let diagnostics = Diagnostics()
        // Set once Folio's tables are ready: every connection the pool opens later must
        // find this database there, not another file put at the path since.
        let identity = Locked<Data?>(nil)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            if let expected = identity.current, let path {
                guard (try? InternalSchema.identity(db)) == expected else { throw FolioError.databaseFileMoved(path: path) }
            }
            db.trace(options: .statement) { diagnostics.statement($0) }
        }
        let writer: any DatabaseWriter
        // The check's read-only connection, open until the store is (see ``checkExistingFile(_:_:)``).
        var keeper: DatabaseQueue?
        do {
            if let path {
                if FileManager.default.fileExists(atPath: path) {
                    keeper = try Self.checkExistingFile(path, declared)
                }
                writer = try DatabasePool(path: path, configuration: configuration)
            } else {
                writer = try DatabaseQueue(configuration: configuration)
            }
        } catch {
            Self.closeOpening(nil, keeper: keeper)
            if let db = error as? DatabaseError, db.resultCode == .SQLITE_NOTADB, let path {
                throw FolioError.notADatabase(path: path)
            }
            if let db = error as? DatabaseError, db.resultCode == .SQLITE_CANTOPEN, let path {
                throw Self.cannotOpen(path, db)
            }
            throw FolioError.wrap(error)
        }
        self.path = path
        self.diagnostics = diagnostics
        self.writer = writer
        self.schemas = schemas
        self.foldedSchemas = schemas.filter { $0.value.hasFoldedColumns }
        self.removeOnDeinit = removeOnDeinit
        self.cacheDirectory =
            cacheDirectory
            ?? URL(fileURLWithPath: (path ?? NSTemporaryDirectory()) + "-folio-cache")
        self.hub = ChangeHub(tables: Set(schemas.keys), diagnostics: diagnostics)
        let fileIdentity = path.flatMap(FileIdentity.init(path:))
        self.fileIdentity = fileIdentity
        self.modelVersion = declared.version
        self.declared = declared
        do {
            let opened = try writer.writeWithoutTransaction { db in
                let report = openingProgress.map { report in
                    { (completed: Int, total: Int, isFinished: Bool) in
                        report(OpeningProgress(completed: completed, total: total, isFinished: isFinished))
                    }
                }
                return try Migrator.open(
                    db, declared, path: path ?? ":memory:",
                    othersOpen: { fileIdentity.map { OpenStoreFiles.count($0) > 0 } ?? false }, progress: report)
            }
            identity.withLock { $0 = opened.identity }
            schemaCookie.withLock { $0 = opened.schemaVersion }
            schemaObjectsCookie.withLock { $0 = opened.schemaVersion }
            uncountedSearchIndexes.withLock { $0 = Set(opened.uncountedSearchIndexes) }
            // Counted once open: a store still opening has no state a migration could
            // invalidate (it finds the migrated file, or its next access throws).
            if let fileIdentity {
                OpenStoreFiles.register(fileIdentity)
                openFile.withLock { $0 = fileIdentity }
            }
        } catch {
            Self.closeOpening(writer, keeper: keeper)
            if let db = error as? DatabaseError, db.resultCode == .SQLITE_NOTADB, let path {
                throw FolioError.notADatabase(path: path)
            }
            throw FolioError.wrap(error)
        }
        try? keeper?.close()
        writer.add(transactionObserver: hub, extent: .databaseLifetime)
        let hub = self.hub
        try? writer.writeWithoutTransaction { db in try hub.start(db) }
        countSearchIndexesInBackground()
        // Section caches a process killed while writing them left half-written.
        TemporaryFiles.removeStale(in: self.cacheDirectory, extension: TemporaryFiles.sectionCacheExtension)
        // `FOLIO_CHANGE_DETECTION=polling` forces the fallback (to measure or test it).
        if path != nil {
            watchExternalChanges(notifications: getenv("FOLIO_CHANGE_DETECTION").map { String(cString: $0) } != "polling")
        }
    }

    deinit {
        watcher.withLock { $0?.cancel() }
        unregisterOpenFile()
        if let removeOnDeinit { try? FileManager.default.removeItem(at: removeOnDeinit) }
    }

    /// The file while this store is counted in ``OpenStoreFiles``, for its background steps
    /// (``OpenStoreFiles/step(_:_:)``).
    var openFileIdentity: FileIdentity? { openFile.current }

    /// Takes the store out of ``OpenStoreFiles`` (once).
    private func unregisterOpenFile() {
        if let file = openFile.withLock({ file -> FileIdentity? in
            defer { file = nil }; return file
        }) {
            OpenStoreFiles.unregister(file)
        }
    }

    /// Closes the database connections. Later reads and writes throw ``FolioError/storeClosed``.
    ///
    /// - Throws: ``FolioError/closeInsideAccess`` when called inside one of the store's own
    ///   `read` or `write` closures (the store stays open and usable).
    /// - Complexity: waits for the reads and the write in progress on other threads.
    public func close() throws {
        if Thread.current.threadDictionary[accessKey] != nil { throw FolioError.closeInsideAccess }
        isClosed.withLock { $0 = true }
        watcher.withLock { watcher in
            watcher?.cancel()
            watcher = nil
        }
        // A closed store no longer holds the change log back (its recorded progress would,
        // until ``ChangeLogLimits/readerAge``). Best effort: a file another program locks
        // or made read-only still closes.
        _ = try? writer.write { db in try db.execute(sql: SQLBuilder.forgetChangeReader, arguments: [readerID]) }
        try folio { try writer.close() }
        unregisterOpenFile()
    }

    func requireEntity<R: PersistentRecord>(_ type: R.Type) throws {
        _ = try writeSQL(for: type)
    }

    /// The write statements of a record type, after checking that the type is one of the
    /// store's entities. Both are worked out once per type: building and comparing a
    /// schema, and building SQL text, would otherwise cost more than the write itself.
    func writeSQL<R: PersistentRecord>(for type: R.Type) throws -> EntityWriteSQL {
        let key = ObjectIdentifier(type)
        if let known = checkedEntities.withLock({ $0[key] }) { return known }
        let entity = R.entity
        guard let schema = schemas[entity.name], schema == entity.schema else {
            throw FolioError.unknownEntity(String(describing: R.self))
        }
        let columns = entity.storedColumnNames
        let sql = EntityWriteSQL(
            insert: SQLBuilder.insert(table: entity.name, columns: columns),
            insertWithID: SQLBuilder.insertWithID(table: entity.name, columns: columns),
            update: SQLBuilder.update(table: entity.name, columns: columns),
            delete: SQLBuilder.delete(table: entity.name))
        checkedEntities.withLock { $0[key] = sql }
        return sql
    }

    /// The store's change token for an entity: it is renewed (16 new random bytes) at every
    /// row written to the table, by any connection or process, and never comes back after
    /// a rollback or restore of the file (see ``ChangeToken``).
    /// - Complexity: one indexed lookup.
    public func changeToken<R: PersistentRecord>(for type: R.Type) throws -> ChangeToken {
        try requireEntity(type)
        return try readSync { db in try Self.changeToken(table: R.entity.name, db) }
    }

    static func changeToken(table: String, _ db: Database) throws -> ChangeToken {
        try ChangeToken.read(table: table, db)
    }

    /// The change token of several tables (``ChangeToken/combining(_:)``); one table's own.
    static func changeToken(tables: [String], _ db: Database) throws -> ChangeToken {
        if tables.count == 1 { return try changeToken(table: tables[0], db) }
        return ChangeToken.combining(try tables.map { try changeToken(table: $0, db) })
    }
}

/// The SQL of the single-row writes of one entity.
struct EntityWriteSQL: Sendable {
    var insert: String
    var insertWithID: String
    var update: String
    var delete: String
}
