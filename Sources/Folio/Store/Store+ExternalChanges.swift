import Foundation
import GRDB
import GRDBSQLite

// Other processes: following their commits (woken by ``ChangeWatcher``, or asked:
// ``Store/synchronize()``), noticing that one migrated the file, and that the store's file
// was deleted, moved or replaced.

extension Store {
    // MARK: Other processes

    /// Follows, now, the commits made by other processes or by connections the store does
    /// not own: every tracking controller gets the rows they changed as an ordinary change
    /// set (inserts, deletes, moves, updates, sections), read from the change log (see
    /// <doc:StoresAndFiles>). The store already does this on its own when it is woken
    /// (``externalChangeDetection``) and before each of its writes; call this to be sure
    /// before reading, say after another process told you it wrote.
    /// - Complexity: one `PRAGMA data_version` on the writer, after the write in progress;
    ///   when another connection committed, one read of the log's new rows, and O(changed
    ///   rows · log n) per controller.
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
    ///
    /// The store follows other processes' commits on its own (``externalChangeDetection``):
    /// this adds checks at a fixed interval, for a file system that sends no notifications
    /// the store can detect as missing (a network file system written from another machine).
    /// - Complexity: O(1) for the caller.
    @discardableResult
    public func observeExternalChanges(every interval: Duration = .seconds(1)) -> Task<Void, Never> {
        let file = openFileIdentity
        return Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard self != nil else { return }
                await OpenStoreFiles.step(file) { await self?.synchronizeWithoutWaiting() }
            }
        }
    }

    /// ``synchronize()`` from a task, suspending instead of blocking while the writer is busy.
    private func synchronizeWithoutWaiting() async {
        let hub = self.hub
        try? await writer.writeWithoutTransaction { db in
            try self.checkModelUnchangedTellingControllers(db)
            try self.fixUpFoldedKeysInTransaction(db)
            try hub.synchronize(db)
        }
    }

    /// How the store learns that another process committed to its file, which it then
    /// follows on its own: ``ExternalChangeDetection/inotify`` on Linux,
    /// ``ExternalChangeDetection/dispatchSource`` on Apple platforms,
    /// ``ExternalChangeDetection/polling(interval:)`` where neither can be set up, and
    /// ``ExternalChangeDetection/none`` in memory or once closed. On Linux every store of
    /// the process shares one inotify instance (Linux allows 128 per user by default), so a
    /// process with hundreds of stores open still watches each one; a store polls only when
    /// the process could get no instance at all. See <doc:StoresAndFiles>.
    /// - Complexity: O(1).
    public var externalChangeDetection: ExternalChangeDetection {
        watcher.withLock { $0?.detection } ?? .none
    }

    /// Starts (or restarts) following other processes' commits on its own: each wake-up of
    /// the ``ChangeWatcher`` runs ``followOtherConnections(_:)`` on the writer's queue, off
    /// the caller's thread. `notifications: false` forces the polling fallback (tests);
    /// `dropsNotifications` (tests) loses every notification, leaving the store to the
    /// watcher's heartbeat, every `heartbeat`; `polling` is the polling fallback's check of
    /// the database (tests: a long one leaves the files' stamps alone to find commits);
    /// `stamp` reads the files' stamps (tests: stamps that never move).
    func watchExternalChanges(
        notifications: Bool = true, dropsNotifications: Bool = false,
        heartbeat: DispatchTimeInterval = ChangeWatcher.heartbeat, polling: Duration = ChangeWatcher.pollingInterval,
        stamp: @escaping @Sendable (String) -> FileStamp = { FileStamp(path: $0) }
    ) {
        guard let path, !isClosed.current else { return }
        let diagnostics = self.diagnostics
        let hub = self.hub
        let watcher = ChangeWatcher(
            path: path, notifications: notifications, dropsNotifications: dropsNotifications, heartbeat: heartbeat,
            polling: polling,
            notified: { diagnostics.count { $0.fileNotifications += 1 } },
            isFollowed: { [weak hub] in hub?.hasSubscribers ?? false },
            stamp: stamp
        ) { [weak self, file = openFileIdentity] in OpenStoreFiles.step(file) { self?.wakeUp() } }
        self.watcher.withLock {
            $0?.cancel()
            $0 = watcher
        }
    }

    /// One wake-up: on the writer's queue, `PRAGMA data_version`, and when another connection
    /// committed, its commits followed (``followOtherConnections(_:)``).
    ///
    /// Skipped while the store's own write runs or just ended (``OwnWrites``): that write's
    /// own `-wal` frames are what woke it, and every write of the store follows other
    /// connections' commits before it begins; the watcher's re-checks after the last
    /// notification (``ChangeWatcher/rechecks``) find another process's commit that came
    /// meanwhile. At most one wake-up waits on the writer's queue at a time.
    private func wakeUp() {
        guard !isClosed.current else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        guard ownWrites.withLock({ $0.shouldWake(at: now) }) else { return }
        let file = openFileIdentity
        writer.asyncWriteWithoutTransaction { [weak self] db in
            OpenStoreFiles.step(file) { self?.wokenUp(db) }
        }
    }

    private func wokenUp(_ db: Database) {
        ownWrites.withLock { $0.wakePending = false }
        guard !isClosed.current else { return }
        followOtherConnections(db)
    }

    // MARK: Another process's migration

    /// Throws ``FolioError/modelVersionChanged(path:found:opened:)`` when the file was
    /// migrated to another model version since this store opened it (by another process:
    /// in this one a migration waits for every other store to close). Its tables may then
    /// differ from the ones this store's statements and controllers read, and a column
    /// renamed or reused would give wrong data instead of an error.
    ///
    /// One `PRAGMA schema_version` (the schema cookie in the file's header, read in the
    /// caller's transaction) per read or write; only when it moved — any schema change,
    /// such as another store creating an entity's table — is the model version read again.
    func checkModelUnchanged(_ db: Database) throws {
        guard let path else { return }
        let cookie = try Int64.fetchOne(db.cachedStatement(sql: SQLBuilder.schemaVersion)) ?? 0
        if cookie == schemaCookie.current { return }
        let found = try Migrator.modelVersion(db, path: path) ?? 0
        if found != modelVersion {
            throw FolioError.modelVersionChanged(path: path, found: found, opened: modelVersion)
        }
        schemaCookie.withLock { $0 = cookie }
    }

    /// ``checkModelUnchanged(_:)`` where the store looks for other processes' commits
    /// (``synchronize()``, ``observeExternalChanges(every:)``): when the model version
    /// changed, the live controllers are told too (once), so that a list following the
    /// store reports the error rather than showing the old results as current. Writer
    /// queue only.
    func checkModelUnchangedTellingControllers(_ db: Database) throws {
        do {
            try checkModelUnchanged(db)
        } catch let error as FolioError {
            if case .modelVersionChanged = error { hub.modelChanged(error) }
            throw error
        }
    }

    // MARK: The file

    /// Throws ``FolioError/databaseFileMoved(path:)`` when the file this connection has
    /// open is no longer at the store's path: SQLite would go on reading and writing it
    /// (in WAL mode it does not refuse such writes), and every later commit would be
    /// lost. One `stat` of the path (`SQLITE_FCNTL_HAS_MOVED`).
    func checkNotMoved(_ db: Database) throws {
        guard let path else { return }
        var moved: Int32 = 0
        let code = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_HAS_MOVED, &moved)
        if code == SQLITE_OK && moved != 0 { throw FolioError.databaseFileMoved(path: path) }
    }

    /// A read may need a new connection, which opens whatever is at the path now: SQLite
    /// says only "unable to open database file" when nothing is. Say that the file moved
    /// when it did (another database at the path is caught by the identity check).
    func movedOr(_ error: any Error) -> any Error {
        guard case .sqlite(let code, _, _, _) = error as? FolioError, code & 0xFF == SQLITE_CANTOPEN, let path,
            FileIdentity(path: path) != fileIdentity
        else { return error }
        return FolioError.databaseFileMoved(path: path)
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

/// The store's own writes, as its ``ChangeWatcher`` wake-ups see them: a notification that
/// comes while the store writes, or within ``quiet`` of its last commit, is the store's own
/// `-wal` being written, and is not checked at once (see `Store.wakeUp()`).
struct OwnWrites: Sendable {
    /// Write transactions of the store under way.
    private var active = 0
    /// When the last one ended (`DispatchTime` nanoseconds).
    private var lastEnded: UInt64 = 0
    /// A wake-up is queued on the writer and has not run yet.
    var wakePending = false
    /// Shorter than the watcher's first re-check (2 ms), so the re-check after the last
    /// notification of a burst always runs.
    static let quiet: UInt64 = 1_000_000

    mutating func began() { active += 1 }

    mutating func ended() {
        active -= 1
        lastEnded = DispatchTime.now().uptimeNanoseconds
    }

    /// Whether a wake-up at `now` should check the file (and, if so, it is now pending).
    mutating func shouldWake(at now: UInt64) -> Bool {
        if active > 0 || wakePending || now &- lastEnded < Self.quiet { return false }
        wakePending = true
        return true
    }
}
