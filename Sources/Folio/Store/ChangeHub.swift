import Foundation
import GRDB
import GRDBSQLite

/// Something that wants the rowids each commit touched in one table.
protocol CommitSubscriber: AnyObject, Sendable {
    var table: String { get }
    /// The tables the subscriber reads through to-ones (``RelatedTable``): a commit that
    /// changes their rows changes the subscriber's rows that point to them.
    var relatedTables: [RelatedTable] { get }
    /// Called on the writer's queue right after a commit, with the database in exactly
    /// the state that commit left: the subscriber may read it and must be quick.
    func didCommit(changedRowIDs: Set<Int64>, in db: Database)
    /// Rows of unknown identity changed: another connection or process committed, or a
    /// transaction that was already running, unobserved, when the subscriber subscribed.
    /// It can arrive before the subscriber holds any state (it subscribes before reading):
    /// the subscriber must then read everything again once it has its state.
    func didChangeExternally(in db: Database)
    /// The two above, with the commit's change tokens, read once per table for all the
    /// subscribers of the notification; by default they call the two above.
    func didCommit(changedRowIDs: Set<Int64>, tokens: CommitTokens, in db: Database)
    /// ``didCommit(changedRowIDs:tokens:in:)`` for a subscriber with related tables: the
    /// rows the commit changed in each related table it changed. By default the related
    /// rows are ignored.
    func didCommit(
        changedRowIDs: Set<Int64>, relatedRowIDs: [RelatedTable: Set<Int64>], tokens: CommitTokens, in db: Database)
    func didChangeExternally(tokens: CommitTokens, in db: Database)
    /// The store can no longer follow the file (another process migrated it to another
    /// model version): the subscriber reports `error` and reads nothing.
    func cannotFollow(_ error: FolioError)
    /// The writer's transaction rolled back (writer's queue).
    func didRollback()
}

extension CommitSubscriber {
    func cannotFollow(_ error: FolioError) {}
    func didRollback() {}

    var relatedTables: [RelatedTable] { [] }

    func didCommit(
        changedRowIDs: Set<Int64>, relatedRowIDs: [RelatedTable: Set<Int64>], tokens: CommitTokens, in db: Database
    ) {
        didCommit(changedRowIDs: changedRowIDs, tokens: tokens, in: db)
    }

    /// ``didCommit(changedRowIDs:in:)``, for a subscriber that reads its table's change
    /// token: `tokens` reads each table's token once per commit, however many subscribers
    /// follow that table.
    func didCommit(changedRowIDs: Set<Int64>, tokens: CommitTokens, in db: Database) {
        didCommit(changedRowIDs: changedRowIDs, in: db)
    }

    /// ``didChangeExternally(in:)``, with the commit's tokens (see
    /// ``didCommit(changedRowIDs:tokens:in:)``).
    func didChangeExternally(tokens: CommitTokens, in db: Database) {
        didChangeExternally(in: db)
    }
}

/// Turns the change log into one set of changed rowids per table per commit followed, and
/// hands them to subscribers on the writer's queue.
///
/// Every writer fills the log: built-in triggers on each entity's table
/// (``SQLBuilder/changeTriggers(table:)``, ``SQLBuilder/logUpdateTrigger(_:)``) append the
/// rowid of each row inserted, deleted or really changed by an `UPDATE` (an upsert's
/// `DO UPDATE` included; old and new rowid when the rowid changed) to `folio_changes`, in
/// the transaction that writes the row — in this store, in another store, in another
/// process, in the `sqlite3` shell. A row set to the values it has is not logged, so no
/// controller reports it; `INSERT OR REPLACE` deletes and inserts: its row is logged,
/// values equal or not. A row that a `REPLACE` deletes for a unique value — which SQLite
/// runs no delete trigger for without `PRAGMA recursive_triggers` — is logged by the conflict
/// triggers (``SQLBuilder/replaceTriggers(_:)``) after the statement, as any deleted row. Each statement is compared on its own: a row changed and changed
/// back within one transaction is logged.
///
/// The hub follows the log (``follow(_:)``): after each of the store's own commits (it is a
/// GRDB transaction observer on the writer connection, observing no row event: SQLite's
/// update hook is not used) and when another connection or process committed
/// (``synchronize(_:)``, woken by ``ChangeWatcher``). It reads, in one read transaction on
/// the writer connection, the entities' change identifiers (nothing more when none moved)
/// and the log past the last `seq` it followed, and hands each subscriber its table's rows —
/// and the rows of the tables it reads through to-ones — while the transaction still holds
/// that state, so every position is computed at the state the log describes. Commits that
/// arrive together (another process committed twice before the store looked) are one
/// notification. Tables whose change identifier moved with no row logged (rows set to the
/// values they had) get an empty notification: a new token to keep.
///
/// When the log cannot tell which rows changed — the rows after the last `seq` followed
/// were trimmed (``Store/trimChangeLog(_:)``), or the log was emptied by hand — every
/// subscriber is told of changes of unknown rows (it rescans and sends ``ChangeSet/reload``
/// if its table changed), and the reason goes to ``Diagnostics/lastReloadReason`` and the
/// SQL log. Never a wrong change set.
final class ChangeHub: TransactionObserver, @unchecked Sendable {
    let tables: Set<String>
    private let diagnostics: Diagnostics
    /// The last `seq` of the log followed. Writer queue only.
    private(set) var lastSeq: Int64 = 0
    /// The change identifier of every entity of the file when the log was last followed
    /// (`nil`: unknown, every table counts as written at the next follow). Writer queue only.
    private var changeIDs: [String: Data]?
    /// `PRAGMA data_version` of the writer connection, which changes only when another
    /// connection commits. Writer queue only.
    private var dataVersion: Int64?
    /// Inside ``follow(_:)``: the read transaction's own commit is not followed again.
    private var following = false
    private let subscribers = Locked<[ObjectIdentifier: Weak]>([:])

    struct Weak {
        weak var subscriber: (any CommitSubscriber)?
    }

    init(tables: Set<String>, diagnostics: Diagnostics) {
        self.tables = tables
        self.diagnostics = diagnostics
    }

    func subscribe(_ subscriber: any CommitSubscriber) {
        subscribers.withLock { $0[ObjectIdentifier(subscriber)] = Weak(subscriber: subscriber) }
    }

    /// Whether any subscriber follows the store now (a live list).
    var hasSubscribers: Bool {
        subscribers.withLock { subscribers in subscribers.values.contains { $0.subscriber != nil } }
    }

    func unsubscribe(_ subscriber: any CommitSubscriber) {
        _ = subscribers.withLock { $0.removeValue(forKey: ObjectIdentifier(subscriber)) }
    }

    /// Starts following at the log's end, the file's state when the store opened. Writer
    /// queue, outside a transaction.
    func start(_ db: Database) throws {
        following = true
        defer { following = false }
        try db.inTransaction(.deferred) {
            lastSeq = try Int64.fetchOne(db.cachedStatement(sql: SQLBuilder.changeLogLast)) ?? 0
            changeIDs = try readChangeIDs(db)
            return .commit
        }
        _ = try externalChangeHappened(db)
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }

    func databaseDidChange(with event: DatabaseEvent) {}

    /// The hub's table that SQLite names `name` (identifiers are case-insensitive: a table
    /// another program created may spell it otherwise).
    private func table(named name: String) -> String? {
        if tables.contains(name) { return name }
        // Other spellings (and other models' entities on a shared file) are looked up once
        // each. Writer's queue only.
        if let known = otherNames[name] { return known }
        let table = tables.first { $0.utf8.count == name.utf8.count && $0.lowercased() == name.lowercased() }
        otherNames[name] = .some(table)
        return table
    }

    /// ``table(named:)``'s answers for names that are not one of `tables` as spelled.
    private var otherNames: [String: String?] = [:]

    private var liveSubscribers: [any CommitSubscriber] {
        subscribers.withLock { subs -> [any CommitSubscriber] in
            subs = subs.filter { $0.value.subscriber != nil }
            return subs.values.compactMap(\.subscriber)
        }
    }

    /// Whether another connection committed since the last check. Writer queue only.
    /// With `markingSeen: false` the commit stays unseen, so that ``synchronize(_:)`` then
    /// follows it.
    func externalChangeHappened(_ db: Database, markingSeen: Bool = true) throws -> Bool {
        guard let version = try Int64.fetchOne(db.cachedStatement(sql: SQLBuilder.dataVersion)) else { return false }
        defer { if markingSeen { dataVersion = version } }
        return dataVersion.map { $0 != version } ?? false
    }

    /// Why the next follow must tell every subscriber of changes of unknown rows (the log
    /// may lack rows: ``changesWentUnlogged(_:)``), if it must. Writer queue only.
    private var unloggedReason: String?

    /// Rows may have changed without being logged (another program dropped the triggers that
    /// log them; they were made again): the next follow — right after the commit that
    /// repaired them — tells every subscriber that rows of unknown identity changed, so each
    /// rescans (and delivers ``ChangeSet/reload`` if its table's token moved). Writer queue,
    /// inside the repairing transaction.
    func changesWentUnlogged(_ reason: String) {
        unloggedReason = reason
    }

    /// The log's end when the hub last found that rows may have changed without being
    /// logged (`Int64.min`: never). Set before the subscribers of that moment are told.
    private let unloggedThrough = Locked(Int64.min)

    /// Whether the log holds every row changed after `seq` — unless the log was trimmed or
    /// went back, which ``ResultsUpdater/loggedRows(after:_:)`` sees itself: no change went
    /// unlogged (``changesWentUnlogged(_:)``) since a state read at `seq`. A tracker resuming
    /// from a state read before it subscribed asks this after subscribing: a later loss is
    /// told to it as changes of unknown rows.
    /// - Complexity: O(1).
    func logHoldsEveryChange(after seq: Int64) -> Bool {
        unloggedThrough.current < seq
    }

    /// Whether subscribers were told that the file's model version changed (once is enough).
    private var toldModelChange = false

    /// Tells every subscriber, once, that the store cannot follow the file any more
    /// (``FolioError/modelVersionChanged(path:found:opened:)``): its controllers report it
    /// instead of showing the old results as current. Writer queue only.
    func modelChanged(_ error: FolioError) {
        guard !toldModelChange else { return }
        toldModelChange = true
        for subscriber in liveSubscribers { subscriber.cannotFollow(error) }
    }

    /// When another connection committed since the last check (`PRAGMA data_version`
    /// moved), follows the log. Returns whether it had. Writer queue only.
    @discardableResult
    func synchronize(_ db: Database) throws -> Bool {
        // Seen (marked) by the follow itself, in its read transaction.
        guard try externalChangeHappened(db, markingSeen: false) else { return false }
        // With nobody subscribed the follow reads only the log's end: seen here.
        if subscribers.withLock({ $0.isEmpty }) { _ = try externalChangeHappened(db) }
        follow(db)
        return true
    }

    func databaseDidCommit(_ db: Database) {
        follow(db)
    }

    func databaseDidRollback(_ db: Database) {
        if following { return }
        for subscriber in liveSubscribers { subscriber.didRollback() }
    }

    // MARK: Following the log

    /// Reads what the log holds past ``lastSeq`` and hands it to the subscribers, in one read
    /// transaction on the writer connection (subscribers read in it too: GRDB announces its
    /// end to every observer of the writer as an empty transaction that commits, which the
    /// hub does not follow again). Writer queue only, outside a write transaction.
    ///
    /// `then` runs in that transaction once every subscriber was told of the commits up to
    /// the state it reads: a tracker's catch-up (``ResultsTracker/catchUp(_:)``) then takes
    /// the commits the hub had not followed yet in the same change set, instead of reading
    /// them at its state and being told them again by the next follow. Not run when the log
    /// cannot be read: every subscriber is told of unknown rows instead.
    func follow(_ db: Database, then: ((Database) -> Void)? = nil) {
        guard !following else { return }
        following = true
        defer { following = false }
        if then == nil, subscribers.withLock({ $0.isEmpty }) {
            // Nobody to tell: one statement. The log's end is read before the subscribers are
            // looked at, so one who subscribes after reads a state with every row up to it.
            do {
                let end = try Int64.fetchOne(db.cachedStatement(sql: SQLBuilder.changeLogLast)) ?? 0
                if subscribers.withLock({ $0.isEmpty }) {
                    lastSeq = end
                    changeIDs = nil
                    if unloggedReason != nil { unloggedThrough.withLock { $0 = end } }
                    unloggedReason = nil
                    return
                }
            } catch {
                changeIDs = nil
                return
            }
        }
        let began = !db.isInsideTransaction
        do {
            if began { try db.beginTransaction(.deferred) }
            try followInTransaction(db)
            then?(db)
            if began { try db.commit() }
        } catch {
            if began { do { try db.commit() } catch { try? db.rollback() } }
            // The log could not be read: the next follow reads everything again.
            changeIDs = nil
            tellUnknownRows(db, reason: "the change log could not be read (\(error))")
        }
    }

    private func followInTransaction(_ db: Database) throws {
        // Other connections' commits are followed here too: seen.
        _ = try externalChangeHappened(db)
        let ids = try readChangeIDs(db)
        let previous = changeIDs
        changeIDs = ids
        let live = liveSubscribers
        if let reason = unloggedReason {
            // What the log says is not all that changed: everything is read again.
            unloggedReason = nil
            lastSeq = try Int64.fetchOne(db.cachedStatement(sql: SQLBuilder.changeLogLast)) ?? lastSeq
            unloggedThrough.withLock { [lastSeq] in $0 = lastSeq }
            return tellUnknownRows(db, reason: reason)
        }
        guard previous != ids else { return }
        let written = tables.filter { table in previous.map { $0[table] != ids[table] } ?? true }
        var changes: [String: Set<Int64>] = [:]
        var first: Int64?
        var last = lastSeq
        var count = 0
        let statement = try db.cachedStatement(sql: SQLBuilder.changeLogSince)
        statement.setUncheckedArguments([lastSeq])
        try statement.forEachRow(in: db) { row in
            let seq = sqlite3_column_int64(row, 0)
            if first == nil { first = seq }
            last = seq
            count += 1
            guard let text = sqlite3_column_text(row, 1) else { return }
            let name = String(cString: text)
            guard let table = table(named: name) else { return }
            changes[table, default: []].insert(sqlite3_column_int64(row, 2))
            if sqlite3_column_type(row, 3) == SQLITE_INTEGER {
                changes[table, default: []].insert(sqlite3_column_int64(row, 3))
            }
        }
        diagnostics.count { $0.changeLogRowsRead += count }
        let followed = lastSeq
        lastSeq = last
        if let first, first != followed + 1 {
            return tellUnknownRows(
                db,
                reason:
                    "the change log was trimmed past this store's progress (it had followed seq \(followed), the log now starts at \(first))"
            )
        }
        if first == nil, let end = try Int64.fetchOne(db.cachedStatement(sql: SQLBuilder.changeLogLast)), end < followed {
            lastSeq = end
            return tellUnknownRows(
                db, reason: "the change log went back (it had followed seq \(followed), the log now ends at \(end))")
        }
        let tokens = CommitTokens(sharesRows: live.count > 1)
        for subscriber in live {
            var related: [RelatedTable: Set<Int64>] = [:]
            var relatedWritten = false
            for dependency in subscriber.relatedTables {
                if let rows = changes[dependency.table] {
                    related[dependency] = rows
                } else if written.contains(dependency.table) {
                    relatedWritten = true
                }
            }
            if !related.isEmpty {
                subscriber.didCommit(
                    changedRowIDs: changes[subscriber.table] ?? [], relatedRowIDs: related, tokens: tokens, in: db)
            } else if let rows = changes[subscriber.table] {
                subscriber.didCommit(changedRowIDs: rows, tokens: tokens, in: db)
            } else if written.contains(subscriber.table) || relatedWritten {
                // Rows set to the values they had: nothing to report, a new token to keep.
                subscriber.didCommit(changedRowIDs: [], tokens: tokens, in: db)
            }
        }
    }

    /// Every entity's change identifier, by name.
    private func readChangeIDs(_ db: Database) throws -> [String: Data] {
        var ids: [String: Data] = [:]
        try db.cachedStatement(sql: SQLBuilder.allChangeIDs).forEachRow(in: db) { row in
            guard let text = sqlite3_column_text(row, 0) else { return }
            let count = Int(sqlite3_column_bytes(row, 1))
            let bytes = sqlite3_column_blob(row, 1).map { Data(bytes: $0, count: count) } ?? Data()
            ids[String(cString: text)] = bytes
        }
        return ids
    }

    /// Tells every subscriber that rows of unknown identity changed (each rescans, and
    /// delivers ``ChangeSet/reload`` if its table's token moved), and says why.
    private func tellUnknownRows(_ db: Database, reason: String) {
        diagnostics.reloadBecause(reason)
        let live = liveSubscribers
        let tokens = CommitTokens(sharesRows: live.count > 1)
        for subscriber in live { subscriber.didChangeExternally(tokens: tokens, in: db) }
    }
}
