import Foundation
import GRDB

/// Something that wants the rowids each commit touched in one table.
protocol CommitSubscriber: AnyObject, Sendable {
    var table: String { get }
    /// Called on the writer's queue right after a commit, with the database in exactly
    /// the state that commit left: the subscriber may read it and must be quick.
    func didCommit(changedRowIDs: Set<Int64>, in db: Database)
    /// Rows of unknown identity changed: another connection or process committed, or a
    /// transaction that was already running, unobserved, when the subscriber subscribed.
    /// It can arrive before the subscriber holds any state (it subscribes before reading):
    /// the subscriber must then read everything again once it has its state.
    func didChangeExternally(in db: Database)
    /// The store can no longer follow the file (another process migrated it to another
    /// model version): the subscriber reports `error` and reads nothing.
    func cannotFollow(_ error: FolioError)
}

extension CommitSubscriber {
    func cannotFollow(_ error: FolioError) {}
}

/// Turns SQLite's per-row update-hook events into one set of touched rowids per table
/// per committed transaction, and hands them to subscribers on the writer's queue.
///
/// Because it is a GRDB transaction observer on the writer connection, it sees every
/// write made through the store, including raw SQL on ``WriteTransaction/database``. (GRDB
/// disables SQLite's truncate optimization for observed tables, so `DELETE FROM t`
/// reports each row.) Writes by other processes are not seen.
///
/// SQLite's update hook reports an `UPDATE` that changes a rowid under the new rowid
/// only; the old one would linger in every controller that showed it. So the hub also
/// installs, on the writer connection, a temporary trigger per table that reports the
/// old rowid of such an update through an SQL function (``install(in:)``).
// @unchecked Sendable: `pending` is touched only on the writer's serial queue, where
// GRDB calls every observer method; `subscribers` is guarded by its lock.
final class ChangeHub: TransactionObserver, @unchecked Sendable {
    let tables: Set<String>
    private var pending: [String: Set<Int64>] = [:]
    /// `PRAGMA data_version` of the writer connection, which changes only when another
    /// connection commits.
    private var dataVersion: Int64?
    /// The current transaction's row events are not recorded: nobody was subscribed when
    /// it began changing rows (bulk imports cost nothing then).
    private var skippedTransaction = false
    private let subscribers = Locked<[ObjectIdentifier: Weak]>([:])

    struct Weak {
        weak var subscriber: (any CommitSubscriber)?
    }

    init(tables: Set<String>) { self.tables = tables }

    func subscribe(_ subscriber: any CommitSubscriber) {
        subscribers.withLock { $0[ObjectIdentifier(subscriber)] = Weak(subscriber: subscriber) }
    }

    func unsubscribe(_ subscriber: any CommitSubscriber) {
        _ = subscribers.withLock { $0.removeValue(forKey: ObjectIdentifier(subscriber)) }
    }

    /// Registers the rowid-change function and triggers on the writer connection.
    func install(in db: Database) throws {
        db.add(
            function: DatabaseFunction(SQLBuilder.rowIDChangedFunction, argumentCount: 2, pure: false) { [weak self] values in
                if let table = String.fromDatabaseValue(values[0]), let id = Int64.fromDatabaseValue(values[1]) {
                    self?.rowIDChanged(table: table, oldRowID: id)
                }
                return nil
            })
        for table in tables.sorted() {
            try db.execute(sql: SQLBuilder.rowIDChangeTrigger(table: table))
        }
    }

    /// Called by the trigger, on the writer's queue, inside the transaction.
    private func rowIDChanged(table: String, oldRowID: Int64) {
        pending[table, default: []].insert(oldRowID)
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        switch eventKind {
        case .insert(let table), .delete(let table): tables.contains(table)
        case .update(let table, _): tables.contains(table)
        }
    }

    func databaseDidChange(with event: DatabaseEvent) {
        if pending.isEmpty && subscribers.withLock({ $0.isEmpty }) {
            skippedTransaction = true
            stopObservingDatabaseChangesUntilNextTransaction()
            return
        }
        pending[tables.count == 1 ? tables.first! : event.tableName, default: []].insert(event.rowID)
    }

    private var liveSubscribers: [any CommitSubscriber] {
        subscribers.withLock { subs -> [any CommitSubscriber] in
            subs = subs.filter { $0.value.subscriber != nil }
            return subs.values.compactMap(\.subscriber)
        }
    }

    /// Whether another connection committed since the last check. Writer queue only.
    func externalChangeHappened(_ db: Database) throws -> Bool {
        guard let version = try Int64.fetchOne(db, sql: SQLBuilder.dataVersion) else { return false }
        defer { dataVersion = version }
        return dataVersion.map { $0 != version } ?? false
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

    /// Checks for commits by other connections and tells every subscriber. Writer queue only.
    func synchronize(_ db: Database) throws {
        guard try externalChangeHappened(db) else { return }
        for subscriber in liveSubscribers { subscriber.didChangeExternally(in: db) }
    }

    /// Subscribers read the database from here, in read transactions of their own on the
    /// writer connection (nested in GRDB's commit notification): GRDB announces each to every
    /// observer of the writer as an empty transaction that commits — never as a rollback
    /// (see ``ResultsUpdater/inReadTransaction(_:_:)``), which an observer not yet told of
    /// this commit would take for the end of it and drop its rows.
    func databaseDidCommit(_ db: Database) {
        let changes = pending
        pending = [:]
        if skippedTransaction {
            // Whoever subscribed while the transaction ran missed some of its rows — maybe
            // while reading its first state: it must not lose them.
            skippedTransaction = false
            _ = try? externalChangeHappened(db)
            for subscriber in liveSubscribers { subscriber.didChangeExternally(in: db) }
            return
        }
        guard !changes.isEmpty else { return }
        let live = liveSubscribers
        if (try? externalChangeHappened(db)) == true {
            // Rows this commit did not touch may have changed too: positions computed from
            // them would be wrong, so every subscriber reloads.
            for subscriber in live { subscriber.didChangeExternally(in: db) }
            return
        }
        for subscriber in live {
            if let rows = changes[subscriber.table] {
                subscriber.didCommit(changedRowIDs: rows, in: db)
            }
        }
    }

    func databaseDidRollback(_ db: Database) {
        pending = [:]
        skippedTransaction = false
    }
}
