import Foundation
import GRDB

// The access guards and the read and write paths. Every read and write, synchronous or
// async, public or Folio's own, checks the same things in the same order: the store is
// open, the thread is not inside one of its closures (nor, for a write, inside a write on
// the same file), and — on the connection — the file was neither moved nor migrated by
// another process (``guarded(_:writing:_:)``).

extension Store {
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
            return try await folio { try await writer.read { db in try self.guarded(db, writing: false, body) } }
        } catch {
            throw movedOr(error)
        }
    }

    func readSync<T>(_ body: (Database) throws -> T) throws -> T {
        try accessing { try writer.read { db in try guarded(db, writing: false, body) } }
    }

    /// What every synchronous access shares around its connection call: the store is open,
    /// GRDB's errors become Folio's, and one that means the file moved says so.
    private func accessing<T>(_ body: () throws -> T) throws -> T {
        try requireOpen()
        do {
            return try folio(body)
        } catch {
            throw movedOr(error)
        }
    }

    /// A connection of its own, holding one read transaction until it is released: reads on
    /// it all see the database as it was when it was made, however long they take, without
    /// holding one of the pool's readers. `nil` for an in-memory store (one connection).
    func makeSnapshot() throws -> DatabaseSnapshot? {
        try accessing { try (writer as? DatabasePool).map { try $0.makeSnapshot() } }
    }

    /// Runs `body` on `snapshot` (``makeSnapshot()``), behind the same guards as every read.
    func read<T>(_ snapshot: DatabaseSnapshot, _ body: (Database) throws -> T) throws -> T {
        try accessing { try snapshot.read { db in try guarded(db, writing: false, body) } }
    }

    /// Runs `body`, which must run exactly one statement, on a read-only connection without
    /// an explicit transaction, guarded as every read is: in SQLite's autocommit mode one
    /// statement is its own read transaction and sees one committed state, so the `BEGIN`
    /// and `COMMIT` of ``readSync(_:)`` would only add two statements. For reads made very
    /// often (a batch of ``FetchedRecords`` each `batchSize` rows scrolled).
    func readSingleStatementSync<T>(_ body: (Database) throws -> T) throws -> T {
        try accessing { try writer.unsafeRead { db in try guarded(db, writing: false, body) } }
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
        try guardedWrite { db in
            try repairSchemaObjectsIfSchemaChanged(db)
            let result = try body(WriteTransaction(db: db, store: self))
            try fixUpFoldedKeys(db)
            return result
        }
    }

    /// Runs `body` in one write transaction, off the caller's thread.
    ///
    /// - Throws: as the synchronous `write(_:)`.
    /// - Complexity: as the synchronous `write(_:)`; the caller's thread is not blocked.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (WriteTransaction) throws -> T) async throws -> T {
        try await guardedWrite { db in
            try self.repairSchemaObjectsIfSchemaChanged(db)
            let result = try body(WriteTransaction(db: db, store: self))
            try self.fixUpFoldedKeys(db)
            return result
        }
    }

    /// Runs `body` in a write transaction, guarded as every write is.
    @discardableResult
    func guardedWrite<T>(_ body: (Database) throws -> T) throws -> T {
        try requireOpen(writing: true)
        return try folio { try writer.writeWithoutTransaction { db in try writeTransaction(db, body) } }
    }

    /// Runs `body` in a write transaction, guarded as every write is, without blocking the
    /// caller's thread.
    @discardableResult
    func guardedWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try requireOpen(writing: true)
        return try await folio { try await writer.writeWithoutTransaction { db in try self.writeTransaction(db, body) } }
    }

    /// The one write transaction of both: other connections' commits followed first, then
    /// `body`, guarded, in a transaction that commits.
    private func writeTransaction<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        followOtherConnections(db)
        ownWrites.withLock { $0.began() }
        defer { ownWrites.withLock { $0.ended() } }
        var result: T?
        try db.inTransaction {
            result = try guarded(db, writing: true, body)
            try trimChangeLogIfDue(db)
            return .commit
        }
        return result!
    }

    /// Before a write transaction begins: when another connection or process committed
    /// since the store last looked, its commits are followed first, as ``synchronize()``
    /// does, at the state they left. Each controller whose table they did not touch finds
    /// its change token unchanged and delivers nothing; the write's own commit is then
    /// followed row by row instead of making every controller reload. One
    /// `PRAGMA data_version` when nobody else wrote. Errors are left to the write's own
    /// checks, which run next.
    func followOtherConnections(_ db: Database) {
        guard (try? hub.externalChangeHappened(db, markingSeen: false)) == true else { return }
        do {
            try checkModelUnchangedTellingControllers(db)
            try fixUpFoldedKeysInTransaction(db)
            try hub.synchronize(db)
        } catch {
            // Reported by the write's guards, or at the next synchronize().
        }
    }

    // MARK: Guards

    func requireOpen(writing: Bool = false) throws {
        if isClosed.current { throw FolioError.storeClosed }
        let dictionary = Thread.current.threadDictionary
        if dictionary[accessKey] != nil { throw FolioError.reentrantAccess }
        if writing, let key = fileIdentity?.writeKey, dictionary[key] != nil {
            throw FolioError.nestedWriteOnSameFile(path: path ?? "")
        }
    }

    /// Marks the current thread as inside one of this store's closures, where GRDB would
    /// trap on a nested access; Folio throws ``FolioError/reentrantAccess`` instead.
    var accessKey: String { "folio.store.\(UInt(bitPattern: ObjectIdentifier(self).hashValue))" }

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

    /// The one access path on a connection, for reads and writes alike: marks the thread
    /// (``marked(writing:_:)``), checks that the file was not moved (``checkNotMoved(_:)``)
    /// nor migrated by another process (``checkModelUnchanged(_:)``), then runs `body`.
    private func guarded<T>(_ db: Database, writing: Bool, _ body: (Database) throws -> T) throws -> T {
        try marked(writing: writing) {
            try checkNotMoved(db)
            try checkModelUnchanged(db)
            return try body(db)
        }
    }
}
