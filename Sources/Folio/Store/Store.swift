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
    private let isClosed = Locked(false)
    /// The database file's device and inode when the store opened it (`nil` in memory).
    let fileIdentity: FileIdentity?
    /// The model version the store opened the file with (``StoreModel/version``; 0 for
    /// ``init(path:records:cacheDirectory:)``).
    ///
    /// - Complexity: O(1).
    public let modelVersion: Int
    /// `PRAGMA schema_version` when the model version was last found unchanged (see ``checkModelUnchanged(_:)``).
    let schemaCookie = Locked<Int64>(0)
    /// `PRAGMA schema_version` when the objects derived from folded attributes (triggers,
    /// full-text indexes, `folio_stale_keys`) were last made or checked (see ``FoldedKeys``).
    let foldedObjectsCookie = Locked<Int64>(0)
    /// The file while this store is counted in ``OpenStoreFiles``.
    private let openFile = Locked<FileIdentity?>(nil)

    /// Opens or creates the store at `path` for the given record types, as model version 0
    /// (an unversioned model: no migrations; see ``init(path:model:cacheDirectory:)``).
    ///
    /// A file written by an older Folio is upgraded in place (see <doc:StoresAndFiles>).
    /// A file that is refused is left exactly as it was.
    ///
    /// - Parameters:
    ///   - path: the database file, created if missing.
    ///   - records: the record types stored; each one's entity becomes (or must match) a table.
    ///   - cacheDirectory: where section caches go; by default `<path>-folio-cache`.
    /// - Throws: ``FolioError/schemaMismatch(entity:differences:)`` when the file's tables
    ///   differ from the entities, ``FolioError/newerModelVersion(path:version:declared:)``
    ///   for a file a versioned model wrote, ``FolioError/notADatabase(path:)`` for a file that is
    ///   not SQLite, ``FolioError/newerStoreFormat(path:version:newestSupported:)`` for a
    ///   file of a newer Folio, ``FolioError/invalidStoreMetadata(path:reason:)`` when
    ///   Folio's own tables are damaged, ``FolioError/sqlite(code:message:sql:arguments:)``
    ///   when it cannot be opened.
    /// - Complexity: a few statements per entity, in one write transaction; an upgrade
    ///   rewrites only Folio's own tables and triggers, never a row of an entity.
    public convenience init(path: String, records: [any PersistentRecord.Type], cacheDirectory: URL? = nil) throws {
        try self.init(path: path, model: StoreModel(unversioned: records), cacheDirectory: cacheDirectory)
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
    /// - Throws: ``FolioError/newerModelVersion(path:version:declared:)`` for a file of a
    ///   newer model; ``FolioError/schemaMismatch(entity:differences:)`` when a file of the
    ///   same version differs from the entities; for a migration,
    ///   ``FolioError/migrationWhileOpen(path:)``, ``FolioError/migrationStepFailed(step:reason:)``,
    ///   ``FolioError/missingDefaultValue(entity:attribute:rows:)``,
    ///   ``FolioError/migrationDiscardsData(entity:attribute:rows:)`` or
    ///   ``FolioError/migrationRefused(entity:reason:)`` — and the file is left unchanged.
    /// - Complexity: O(entities) statements for a file of the same version; a migration
    ///   also copies every row of each table it rebuilds, in one transaction.
    public convenience init(path: String, model: StoreModel, cacheDirectory: URL? = nil) throws {
        try self.init(path: path, inMemory: false, model: model, cacheDirectory: cacheDirectory, removeOnDeinit: nil)
    }

    /// A store in memory, for tests and previews. Reads and writes share one connection.
    /// - Complexity: as ``init(path:records:cacheDirectory:)`` on a new file.
    public static func inMemory(records: [any PersistentRecord.Type]) throws -> Store {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-\(UUID().uuidString)")
        return try Store(
            path: nil, inMemory: true, model: StoreModel(unversioned: records), cacheDirectory: directory,
            removeOnDeinit: directory)
    }

    /// A WAL store in a new temporary directory, deleted when the store is deallocated.
    /// - Complexity: as ``init(path:records:cacheDirectory:)`` on a new file.
    public static func temporary(records: [any PersistentRecord.Type]) throws -> Store {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try Store(
            path: directory.appendingPathComponent("store.sqlite").path, inMemory: false,
            model: StoreModel(unversioned: records), cacheDirectory: directory.appendingPathComponent("cache"),
            removeOnDeinit: directory)
    }

    private init(path: String?, inMemory: Bool, model: StoreModel, cacheDirectory: URL?, removeOnDeinit: URL?) throws {
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
        do {
            if let path {
                if FileManager.default.fileExists(atPath: path) {
                    try Self.checkExistingFile(path, declared)
                }
                writer = try DatabasePool(path: path, configuration: configuration)
            } else {
                writer = try DatabaseQueue(configuration: configuration)
            }
        } catch {
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
        self.hub = ChangeHub(tables: Set(schemas.keys))
        let fileIdentity = path.flatMap(FileIdentity.init(path:))
        self.fileIdentity = fileIdentity
        self.modelVersion = declared.version
        do {
            let opened = try writer.writeWithoutTransaction { db in
                let opened = try Migrator.open(db, declared, path: path ?? ":memory:") {
                    fileIdentity.map { OpenStoreFiles.count($0) > 0 } ?? false
                }
                try self.hub.install(in: db)
                return opened
            }
            identity.withLock { $0 = opened.identity }
            schemaCookie.withLock { $0 = opened.schemaVersion }
            foldedObjectsCookie.withLock { $0 = opened.schemaVersion }
            // Counted once open: a store still opening has no state a migration could
            // invalidate (it finds the migrated file, or its next access throws).
            if let fileIdentity {
                OpenStoreFiles.register(fileIdentity)
                openFile.withLock { $0 = fileIdentity }
            }
        } catch {
            if let db = error as? DatabaseError, db.resultCode == .SQLITE_NOTADB, let path {
                throw FolioError.notADatabase(path: path)
            }
            throw FolioError.wrap(error)
        }
        writer.add(transactionObserver: hub, extent: .databaseLifetime)
        let hub = self.hub
        try? writer.writeWithoutTransaction { db in _ = try hub.externalChangeHappened(db) }
    }

    deinit {
        unregisterOpenFile()
        if let removeOnDeinit { try? FileManager.default.removeItem(at: removeOnDeinit) }
    }

    /// Takes the store out of ``OpenStoreFiles`` (once).
    private func unregisterOpenFile() {
        if let file = openFile.withLock({ file -> FileIdentity? in
            defer { file = nil }; return file
        }) {
            OpenStoreFiles.unregister(file)
        }
    }

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
    /// (sqlite.org/howtocorrupt.html, section 2.2). (A read-only connection would leave
    /// `-wal` and `-shm` files behind; this one removes them as it closes, when it is the
    /// file's last connection.)
    private static func checkExistingFile(_ path: String, _ model: DeclaredModel) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        let migrates = try queue.read { db in try Migrator.check(db, model, path: path) }
        // Checked again in the migration's transaction; here it spares opening the pool.
        if migrates, let file = FileIdentity(path: path), OpenStoreFiles.count(file) > 0 {
            throw FolioError.migrationWhileOpen(path: path)
        }
    }

    /// SQLite says only "unable to open database file": say where, and why if it can be seen.
    private static func cannotOpen(_ path: String, _ error: DatabaseError) -> FolioError {
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

    /// Closes the database connections. Later reads and writes throw ``FolioError/storeClosed``.
    ///
    /// - Throws: ``FolioError/closeInsideAccess`` when called inside one of the store's own
    ///   `read` or `write` closures (the store stays open and usable).
    /// - Complexity: waits for the reads and the write in progress on other threads.
    public func close() throws {
        if Thread.current.threadDictionary[accessKey] != nil { throw FolioError.closeInsideAccess }
        isClosed.withLock { $0 = true }
        try folio { try writer.close() }
        unregisterOpenFile()
    }

    private func requireOpen(writing: Bool = false) throws {
        if isClosed.current { throw FolioError.storeClosed }
        let dictionary = Thread.current.threadDictionary
        if dictionary[accessKey] != nil { throw FolioError.reentrantAccess }
        if writing, let key = fileIdentity?.writeKey, dictionary[key] != nil {
            throw FolioError.nestedWriteOnSameFile(path: path ?? "")
        }
    }

    /// Marks the current thread as inside one of this store's closures, where GRDB would
    /// trap on a nested access; Folio throws ``FolioError/reentrantAccess`` instead.
    private var accessKey: String { "folio.store.\(UInt(bitPattern: ObjectIdentifier(self).hashValue))" }

    /// Marks the thread as inside this store's closure and, for a write, inside a write on
    /// this file, so that a write of another ``Store`` on the same file, which would wait
    /// for this one, throws ``FolioError/nestedWriteOnSameFile(path:)`` at once.
    private func marked<T>(writing: Bool = false, _ body: () throws -> T) rethrows -> T {
        let key = accessKey
        let dictionary = Thread.current.threadDictionary
        dictionary[key] = true
        let writeKey = writing ? fileIdentity?.writeKey : nil
        let wasWriting = writeKey.map { dictionary[$0] != nil } ?? false
        if let writeKey { dictionary[writeKey] = true }
        defer {
            dictionary.removeObject(forKey: key)
            if let writeKey, !wasWriting { dictionary.removeObject(forKey: writeKey) }
        }
        return try body()
    }

    /// Throws ``FolioError/databaseFileMoved(path:)`` when the file this connection has
    /// open is no longer at the store's path: SQLite would go on reading and writing it
    /// (in WAL mode it does not refuse such writes), and every later commit would be
    /// lost. One `stat` of the path (`SQLITE_FCNTL_HAS_MOVED`).
    private func checkNotMoved(_ db: Database) throws {
        guard let path else { return }
        var moved: Int32 = 0
        let code = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_HAS_MOVED, &moved)
        if code == SQLITE_OK && moved != 0 { throw FolioError.databaseFileMoved(path: path) }
    }

    // MARK: Other processes

    /// Looks for commits made by other processes or by connections the store does not own
    /// (SQLite reports those to no one), and sends every tracking controller
    /// ``ChangeSet/reload`` if there were any. Folio also checks at each of its own
    /// commits; call this when another process may have written, or use
    /// ``observeExternalChanges(every:)``.
    /// - Complexity: one `PRAGMA data_version` on the writer, after the write in progress.
    public func synchronize() throws {
        let hub = self.hub
        try requireOpen()
        try folio {
            try writer.writeWithoutTransaction { db in
                try checkModelUnchangedTellingControllers(db)
                try fixUpFoldedKeysInTransaction(db)
                try hub.synchronize(db)
            }
        }
    }

    /// Calls ``synchronize()`` periodically until the returned task is cancelled (or the
    /// store is deallocated). Each check is one `PRAGMA data_version` on the writer.
    /// - Complexity: O(1) for the caller.
    @discardableResult
    public func observeExternalChanges(every interval: Duration = .seconds(1)) -> Task<Void, Never> {
        Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                let hub = self.hub
                try? await self.writer.writeWithoutTransaction { db in
                    try self.checkModelUnchangedTellingControllers(db)
                    try self.fixUpFoldedKeysInTransaction(db)
                    try hub.synchronize(db)
                }
            }
        }
    }

    // MARK: Folded keys

    /// Fixes the folded keys that other writers made stale (``FoldedKeys``), in the
    /// caller's write transaction: at the end of every write, so that what it commits (raw
    /// SQL included) and what other processes wrote before it are consistent.
    func fixUpFoldedKeys(_ db: Database) throws {
        guard !foldedSchemas.isEmpty else { return }
        try repairFoldedObjectsIfSchemaChanged(db)
        try FoldedKeys.fixUp(foldedSchemas.values.sorted { $0.name < $1.name }, db)
    }

    /// When another program (or raw SQL) changed the schema since Folio last looked, what it
    /// dropped or replaced of the folded-key triggers, full-text indexes and stale-row
    /// table is repaired, as at open (``FoldedKeys/prepare(_:in:)``). In the caller's
    /// write transaction; one `PRAGMA schema_version` when nothing changed.
    func repairFoldedObjectsIfSchemaChanged(_ db: Database) throws {
        guard !foldedSchemas.isEmpty, try schemaVersion(db) != foldedObjectsCookie.current else { return }
        for schema in foldedSchemas.values.sorted(by: { $0.name < $1.name }) {
            try SchemaCheck.repairFoldedKeyColumns(schema, db)
            try FoldedKeys.prepare(schema, in: db)
        }
        let cookie = try schemaVersion(db)
        foldedObjectsCookie.withLock { $0 = cookie }
    }

    private func schemaVersion(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: SQLBuilder.schemaVersion)) ?? 0
    }

    /// Whether keys must be fixed up before a read of `schema`'s table: rows are noted
    /// stale, or the schema changed since Folio last checked its folded objects (another
    /// program may have dropped a trigger or the stale-row table itself).
    private func needsFixUp(_ schema: EntitySchema, _ db: Database) throws -> Bool {
        if try schemaVersion(db) != foldedObjectsCookie.current { return true }
        return try FoldedKeys.hasStaleRows(schema, db)
    }

    /// The same in a transaction of its own, outside any (synchronize): a commit that
    /// controllers follow like any other, when there was anything to fix.
    func fixUpFoldedKeysInTransaction(_ db: Database) throws {
        guard !foldedSchemas.isEmpty else { return }
        try db.inTransaction(.immediate) {
            try fixUpFoldedKeys(db)
            return .commit
        }
    }

    /// Runs `body` in a read transaction in which no row of `table` has a stale folded key:
    /// when one has (another process wrote), the keys are fixed up first — a write, an
    /// ordinary commit that live controllers follow — and the read runs again. For tables
    /// without folded attributes, a plain read.
    func readWithCurrentKeys<T>(_ table: String, _ body: (Database) throws -> T) throws -> T {
        guard let schema = foldedSchemas[table] else { return try readSync(body) }
        for attempt in 0..<3 {
            var stale = false
            let result: T?
            do {
                result = try readSync { db -> T? in
                    stale = try needsFixUp(schema, db)
                    return stale ? nil : try body(db)
                }
            } catch let error where attempt < 2 && Self.isDamagedSearchIndex(error, schema) {
                try rebuildSearchIndex(schema)
                continue
            }
            if !stale, let result { return result }
            try fixUpStaleKeys()
        }
        // Another writer keeps making keys stale: read what is there.
        return try readSync(body)
    }

    /// `readWithCurrentKeys(_:_:)` without blocking the caller's thread.
    func readWithCurrentKeys<T: Sendable>(_ table: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard let schema = foldedSchemas[table] else { return try await read(body) }
        for attempt in 0..<3 {
            let result: (stale: Bool, value: T?)
            do {
                result = try await read { db in
                    if try self.needsFixUp(schema, db) { return (true, nil) }
                    return (false, try body(db))
                }
            } catch let error where attempt < 2 && Self.isDamagedSearchIndex(error, schema) {
                try rebuildSearchIndex(schema)
                continue
            }
            if !result.stale, let value = result.value { return value }
            try await fixUpStaleKeys()
        }
        return try await read(body)
    }

    /// Whether `error` is SQLite finding an entity's full-text index damaged — its data or
    /// configuration changed by another program (`SQLITE_CORRUPT_VTAB`, or an FTS5 error):
    /// the index is derived from the folded keys, and made again.
    private static func isDamagedSearchIndex(_ error: any Error, _ schema: EntitySchema) -> Bool {
        guard !schema.searchableKeyColumns.isEmpty, case .sqlite(let code, let message, _, _) = error as? FolioError
        else { return false }
        return code == 267 || message.contains("fts5")
    }

    /// Makes an entity's full-text index again from its folded keys (``FoldedKeys``).
    private func rebuildSearchIndex(_ schema: EntitySchema) throws {
        try requireOpen(writing: true)
        try folio {
            try writer.write { db in
                try marked(writing: true) {
                    try checkNotMoved(db)
                    try checkModelUnchanged(db)
                    try FoldedKeys.rebuildSearchIndex(schema, db)
                }
            }
        }
    }

    /// Fixes the folded keys of `table` up when rows are noted stale (before a read that
    /// reports progress as it goes, and so cannot run twice).
    func fixUpIfStale(_ table: String) async throws {
        guard let schema = foldedSchemas[table] else { return }
        if try await read({ db in try self.needsFixUp(schema, db) }) { try await fixUpStaleKeys() }
    }

    private func fixUpStaleKeys() throws {
        try requireOpen(writing: true)
        try folio {
            try writer.write { db in
                try marked(writing: true) {
                    try checkNotMoved(db)
                    try checkModelUnchanged(db)
                    try fixUpFoldedKeys(db)
                }
            }
        }
    }

    private func fixUpStaleKeys() async throws {
        try requireOpen(writing: true)
        try await folio {
            try await writer.write { db in
                try self.marked(writing: true) {
                    try self.checkNotMoved(db)
                    try self.checkModelUnchanged(db)
                    try self.fixUpFoldedKeys(db)
                }
            }
        }
    }

    // MARK: Raw access

    /// Runs `body` on a read-only connection, in a read transaction (the raw escape hatch).
    ///
    /// - Throws: ``FolioError/databaseFileMoved(path:)`` when the store's file was deleted,
    ///   moved or replaced; ``FolioError/modelVersionChanged(path:found:opened:)`` when
    ///   another process migrated it; ``FolioError/reentrantAccess`` inside the store's own
    ///   closures; whatever `body` throws.
    /// - Complexity: one `stat` of the path and one `PRAGMA schema_version`, then `body`.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try readSync(body)
    }

    /// Runs `body` on a read-only connection without blocking the caller's thread.
    /// - Throws: as the synchronous `read(_:)`.
    /// - Complexity: one `stat` of the path and one `PRAGMA schema_version`, then `body`.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try requireOpen()
        do {
            return try await folio {
                try await writer.read { db in
                    try self.checkNotMoved(db)
                    try self.checkModelUnchanged(db)
                    return try self.marked { try body(db) }
                }
            }
        } catch {
            throw movedOr(error)
        }
    }

    func readSync<T>(_ body: (Database) throws -> T) throws -> T {
        try requireOpen()
        do {
            return try folio {
                try writer.read { db in
                    try checkNotMoved(db)
                    try checkModelUnchanged(db)
                    return try marked { try body(db) }
                }
            }
        } catch {
            throw movedOr(error)
        }
    }

    /// A read may need a new connection, which opens whatever is at the path now: SQLite
    /// says only "unable to open database file" when nothing is. Say that the file moved
    /// when it did (another database at the path is caught by the identity check).
    private func movedOr(_ error: any Error) -> any Error {
        guard case .sqlite(let code, _, _, _) = error as? FolioError, code & 0xFF == SQLITE_CANTOPEN, let path,
            FileIdentity(path: path) != fileIdentity
        else { return error }
        return FolioError.databaseFileMoved(path: path)
    }

    /// Runs `body` on the writer's queue, outside any transaction, after the write in
    /// progress (if any) ends.
    func onWriterQueue(_ body: (Database) throws -> Void) throws {
        try requireOpen()
        try folio { try writer.writeWithoutTransaction { db in try marked { try body(db) } } }
    }

    /// Runs `body` on the writer's queue, outside any transaction, without blocking the
    /// caller's thread.
    func onWriterQueue(_ body: @escaping @Sendable (Database) throws -> Void) async throws {
        try requireOpen()
        try await folio { try await writer.writeWithoutTransaction { db in try self.marked { try body(db) } } }
    }

    // MARK: Writes

    /// Runs `body` in one write transaction, committed when it returns and rolled back
    /// when it throws. Every change is reported to live controllers after the commit.
    ///
    /// - Throws: ``FolioError/databaseFileMoved(path:)`` before running `body` when the
    ///   store's file was deleted, moved or replaced, ``FolioError/modelVersionChanged(path:found:opened:)``
    ///   when another process migrated it; ``FolioError/nestedWriteOnSameFile(path:)``
    ///   inside another store's write on the same file and thread; ``FolioError/reentrantAccess``
    ///   inside this store's own closures; whatever `body` throws (after rolling back).
    /// - Complexity: waits for the write in progress; one `stat` of the path and one
    ///   `PRAGMA schema_version`, then `body`.
    @discardableResult
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        try requireOpen(writing: true)
        return try folio {
            try writer.write { db in
                try marked(writing: true) {
                    try checkNotMoved(db)
                    try checkModelUnchanged(db)
                    try repairFoldedObjectsIfSchemaChanged(db)
                    let result = try body(WriteTransaction(db: db, store: self))
                    try fixUpFoldedKeys(db)
                    return result
                }
            }
        }
    }

    /// Runs `body` in one write transaction, off the caller's thread.
    ///
    /// - Throws: as the synchronous `write(_:)`.
    /// - Complexity: as the synchronous `write(_:)`; the caller's thread is not blocked.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (WriteTransaction) throws -> T) async throws -> T {
        try requireOpen(writing: true)
        return try await folio {
            try await writer.write { db in
                try self.marked(writing: true) {
                    try self.checkNotMoved(db)
                    try self.checkModelUnchanged(db)
                    try self.repairFoldedObjectsIfSchemaChanged(db)
                    let result = try body(WriteTransaction(db: db, store: self))
                    try self.fixUpFoldedKeys(db)
                    return result
                }
            }
        }
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
}

/// A file's device and inode: what identifies a file, whatever path leads to it.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// The thread-dictionary key that marks a write in progress on this file.
    var writeKey: String { "folio.write.\(device).\(inode)" }
}

/// The SQL of the single-row writes of one entity.
struct EntityWriteSQL: Sendable {
    var insert: String
    var insertWithID: String
    var update: String
    var delete: String
}
