import Foundation
import GRDB

/// Something that wants the rowids each commit touched in one table.
protocol CommitSubscriber: AnyObject, Sendable {
    var table: String { get }
    /// Called on the writer's queue right after a commit, with the database in exactly
    /// the state that commit left: the subscriber may read it and must be quick.
    func didCommit(changedRowIDs: Set<Int64>, in db: Database)
}

/// Turns SQLite's per-row update-hook events into one set of touched rowids per table
/// per committed transaction, and hands them to subscribers on the writer's queue.
///
/// Because it is a GRDB transaction observer on the writer connection, it sees every
/// write made through the store, including raw SQL on ``Transaction/database``. (GRDB
/// disables SQLite's truncate optimization for observed tables, so `DELETE FROM t`
/// reports each row.) Writes by other processes are not seen.
// @unchecked Sendable: `pending` is touched only on the writer's serial queue, where
// GRDB calls every observer method; `subscribers` is guarded by its lock.
final class ChangeHub: TransactionObserver, @unchecked Sendable {
    let tables: Set<String>
    private var pending: [String: Set<Int64>] = [:]
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

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        switch eventKind {
        case .insert(let table), .delete(let table): tables.contains(table)
        case .update(let table, _): tables.contains(table)
        }
    }

    func databaseDidChange(with event: DatabaseEvent) {
        pending[event.tableName, default: []].insert(event.rowID)
    }

    func databaseDidCommit(_ db: Database) {
        let changes = pending
        pending = [:]
        guard !changes.isEmpty else { return }
        let live = subscribers.withLock { subs -> [any CommitSubscriber] in
            subs = subs.filter { $0.value.subscriber != nil }
            return subs.values.compactMap(\.subscriber)
        }
        for subscriber in live {
            if let rows = changes[subscriber.table] {
                subscriber.didCommit(changedRowIDs: rows, in: db)
            }
        }
    }

    func databaseDidRollback(_ db: Database) {
        pending = [:]
    }
}
