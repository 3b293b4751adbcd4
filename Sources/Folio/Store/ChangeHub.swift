import Foundation
import GRDB

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

/// The change tokens of the tables one commit notification reaches, each read once: every
/// subscriber of a table reads the same token at the same state, so twenty controllers of a
/// table cost one lookup, not twenty. Writer's queue only, for one notification.
final class CommitTokens {
    private var read: [String: ChangeToken] = [:]

    /// The change token of `table`, read on `db` the first time it is asked for.
    func token(of table: String, _ db: Database) throws -> ChangeToken {
        if let token = read[table] { return token }
        let token = try Store.changeToken(table: table, db)
        read[table] = token
        return token
    }

    /// The change token of several tables (a list's and those it reads through to-ones):
    /// ``ChangeToken/combining(_:)`` of each one's token, each read once per commit.
    func token(of tables: [String], _ db: Database) throws -> ChangeToken {
        if tables.count == 1 { return try token(of: tables[0], db) }
        return ChangeToken.combining(try tables.map { try token(of: $0, db) })
    }
}

/// Turns SQLite's per-row events into one set of touched rowids per table per committed
/// transaction, and hands them to subscribers on the writer's queue.
///
/// Inserts and deletes come from SQLite's update hook: the hub is a GRDB transaction
/// observer on the writer connection, so it sees every write made through the store,
/// including raw SQL on ``WriteTransaction/database``. (GRDB disables SQLite's truncate
/// optimization for observed tables, so `DELETE FROM t` reports each row.) Writes by other
/// processes are not seen.
///
/// Updates do not: the update hook reports every row an `UPDATE` names, whether or not a
/// value changed, and an `UPDATE` that changes a rowid under the new rowid only. So the hub
/// installs, on the writer connection, a temporary trigger per table that reports, through
/// an SQL function, each row whose rowid or stored values an `UPDATE` (an upsert's
/// `DO UPDATE` included) really changed — old and new rowid — compared as SQLite stores
/// them (``SQLBuilder/rowUpdateTrigger(table:columns:)``). Of the update hook's updates the
/// hub keeps only which tables were written (their change tokens were renewed). A row set
/// to the values it has is not touched, so no controller reports it. `INSERT OR REPLACE` deletes and inserts: its row is touched, values equal
/// or not. Each statement is compared on its own: a row changed and changed back within
/// one transaction is touched.
final class ChangeHub: TransactionObserver, @unchecked Sendable {
    let tables: Set<String>
    private var pending: [String: Set<Int64>] = [:]
    /// `PRAGMA data_version` of the writer connection, which changes only when another
    /// connection commits.
    private var dataVersion: Int64?
    /// The current transaction's row events are not recorded: nobody was subscribed when
    /// it began changing rows (bulk imports cost nothing then).
    private var skippedTransaction = false
    /// Tables the current transaction updated rows of, values changed or not: their change
    /// tokens were renewed, so a subscriber whose rows did not change reads its token again.
    private var written = Set<String>()
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

    /// Registers the row-update function and triggers on the writer connection.
    ///
    /// - Parameter columns: per table, the columns whose values make a row updated: the
    ///   ones Folio stores (declared attributes and their folded keys), which are all that a
    ///   record, a predicate, a sort or a section reads. A column only another program uses
    ///   is not compared: changing it changes no record Folio shows.
    func install(in db: Database, columns: [String: [String]]) throws {
        db.add(
            function: DatabaseFunction(SQLBuilder.rowUpdatedFunction, argumentCount: 3, pure: false) { [weak self] values in
                if let table = String.fromDatabaseValue(values[0]), let old = Int64.fromDatabaseValue(values[1]),
                    let new = Int64.fromDatabaseValue(values[2])
                {
                    self?.rowUpdated(table: table, oldRowID: old, newRowID: new)
                }
                return nil
            })
        for table in tables.sorted() {
            try db.execute(sql: SQLBuilder.rowUpdateTrigger(table: table, columns: columns[table] ?? []))
        }
    }

    /// Called by the trigger, on the writer's queue, inside the transaction.
    private func rowUpdated(table: String, oldRowID: Int64, newRowID: Int64) {
        if skippedTransaction { return }
        if pending.isEmpty && subscribers.withLock({ $0.isEmpty }) {
            // As for the update hook's events: nobody listens, the transaction is skipped.
            skippedTransaction = true
            return
        }
        pending[table, default: []].insert(newRowID)
        if oldRowID != newRowID { pending[table, default: []].insert(oldRowID) }
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        switch eventKind {
        case .insert(let table), .delete(let table): tables.contains(table)
        case .update(let table, _): tables.contains(table)
        }
    }

    func databaseDidChange(with event: DatabaseEvent) {
        if skippedTransaction || (pending.isEmpty && written.isEmpty && subscribers.withLock({ $0.isEmpty })) {
            skippedTransaction = true
            stopObservingDatabaseChangesUntilNextTransaction()
            return
        }
        // GRDB hands an observer every event of a statement it observes, the writes of the
        // statement's triggers to other tables included (a full-text index's `%_data` rows 1
        // and 10 at every indexed write): only the rows of the hub's own tables count.
        guard let table = table(named: event.tableName) else { return }
        if event.kind == .update {
            // Every row an `UPDATE` names, changed or not: the row-update trigger reports the
            // changed ones. The table's change token was renewed all the same.
            written.insert(table)
            return
        }
        pending[table, default: []].insert(event.rowID)
    }

    /// The hub's table that SQLite names `name` (identifiers are case-insensitive: a table
    /// another program created may spell it otherwise).
    private func table(named name: String) -> String? {
        if tables.contains(name) { return name }
        // Other spellings (and other tables: a full-text index's shadow tables at every
        // indexed write) are looked up once each. Writer's queue only.
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
    /// tells the subscribers.
    func externalChangeHappened(_ db: Database, markingSeen: Bool = true) throws -> Bool {
        guard let version = try Int64.fetchOne(db.cachedStatement(sql: SQLBuilder.dataVersion)) else { return false }
        defer { if markingSeen { dataVersion = version } }
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
        let tokens = CommitTokens()
        for subscriber in liveSubscribers { subscriber.didChangeExternally(tokens: tokens, in: db) }
    }

    /// Subscribers read the database from here, in read transactions of their own on the
    /// writer connection (nested in GRDB's commit notification): GRDB announces each to every
    /// observer of the writer as an empty transaction that commits — never as a rollback
    /// (see ``ResultsUpdater/inReadTransaction(_:_:)``), which an observer not yet told of
    /// this commit would take for the end of it and drop its rows.
    func databaseDidCommit(_ db: Database) {
        let changes = pending
        let written = self.written
        pending = [:]
        self.written = []
        let tokens = CommitTokens()
        if skippedTransaction {
            // Whoever subscribed while the transaction ran missed some of its rows — maybe
            // while reading its first state: it must not lose them.
            skippedTransaction = false
            _ = try? externalChangeHappened(db)
            for subscriber in liveSubscribers { subscriber.didChangeExternally(tokens: tokens, in: db) }
            return
        }
        guard !changes.isEmpty || !written.isEmpty else { return }
        let live = liveSubscribers
        if (try? externalChangeHappened(db)) == true {
            // Rows this commit did not touch may have changed too: positions computed from
            // them would be wrong, so every subscriber reloads.
            for subscriber in live { subscriber.didChangeExternally(tokens: tokens, in: db) }
            return
        }
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

    func databaseDidRollback(_ db: Database) {
        pending = [:]
        written = []
        skippedTransaction = false
        for subscriber in liveSubscribers { subscriber.didRollback() }
    }
}
