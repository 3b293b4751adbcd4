import Foundation
import GRDB

/// Keeps one controller's results current, commit by commit.
///
/// The change hub calls it on the store's writer queue right after each commit, when the
/// database is in exactly the state that commit left, so every position it computes is
/// exact. Its work has three parts, kept apart as in swift-async-algorithms' state
/// machines:
/// - ``StateMachine`` decides what to do, under a lock that only swaps state;
/// - ``ResultsUpdater`` does it — SQL, and a `.computed` section key's closure — with no
///   lock held (the writer queue already serializes the work);
/// - the result goes back through the state machine, and the delivery it returns is
///   yielded, in commit order, to the controller's actor.
///
/// It never stops following on its own: when it cannot tell which rows changed (another
/// process wrote, or a transaction was already running when it subscribed) it compares its
/// table's change token, which it always keeps: unchanged (the write was to another table)
/// means nothing is read or delivered; otherwise it rescans and delivers
/// ``ChangeSet/reload``; when a commit cannot be followed at all (the database
/// cannot be read) it delivers the error and rescans at the next commit.
// @unchecked Sendable: mutable state lives in `machine`, guarded by its lock; the other
// properties are immutable. The lock is never held while running SQL or user code.
final class ResultsTracker: CommitSubscriber, @unchecked Sendable {
    struct Delivery: Sendable {
        enum Event: Sendable {
            /// A change set and the presented (windowed) state it leads to. `changed` are the
            /// rows touched since the previous delivery (records loaded before may be stale),
            /// `nil` when unknown. `token` is the table's change token at that state, when read.
            case change(ChangeSet, state: ResultsState, changed: Set<Int64>?, token: TableToken?)
            /// A commit could not be followed; the results stay as they were until a later
            /// commit, which rescans.
            case failure(FolioError)
        }
        var event: Event
        var serial: UInt64
    }

    let table: String
    let updater: ResultsUpdater
    let deliveries: AsyncStream<Delivery>
    private let continuation: AsyncStream<Delivery>.Continuation
    private let machine = Locked(StateMachine())

    init(query: CompiledQuery, section: SectionExpression?, diagnostics: Diagnostics) {
        self.table = query.table
        self.updater = ResultsUpdater(query: query, section: section, diagnostics: diagnostics)
        self.relatedTables = updater.relatedTables
        (deliveries, continuation) = AsyncStream.makeStream(of: Delivery.self)
    }

    // MARK: Installing

    /// When the installed state was read, against the tracker's subscription.
    enum Resumption: Sendable {
        /// After subscribing (a fetch that tracks, a completion): every commit after the
        /// state was noted, or will be.
        case readAfterSubscribing
        /// Before (tracking starts on results fetched without it); `logMoved`: the change
        /// log's end, read after subscribing, is not the state's position (the commits in
        /// between may have been followed before the tracker subscribed).
        case readEarlier(logMoved: Bool)
    }

    /// Installs the full results the controller read, at the table's change token `token`
    /// and at position `seq` in the change log (``ResultsLoad/Loaded/seq``; `nil`: the log may
    /// lack rows changed since). Returns whether a catch-up is due: commits were noted since
    /// subscribing (they may or may not be in what was read, and no later commit may come to
    /// bring them in), the state is older than the subscription and the log moved since, or
    /// changes of unknown rows arrived. The caller then runs ``catchUp(_:)`` on the writer's
    /// queue (``LiveResults/catchUp()``): it applies the rows the log holds after `seq`.
    func install(_ full: ResultsState, token: TableToken?, seq: Int64?, _ resumption: Resumption) -> Bool {
        let maxID = full.ids.maximum
        return machine.withLock { $0.install(full, maxID: maxID, token: token, seq: seq, resumption) }
    }

    /// Applies what changed since the installed state was read: the rows the change log
    /// holds after its position, read in the transaction that applies them, so the result is
    /// the state that transaction reads whoever committed meanwhile (or a rescan). Writer's
    /// queue; ``LiveResults/catchUp()`` runs it in the change hub's transaction once the hub
    /// followed the log, so the commits the hub had not followed yet arrive in the same
    /// change set.
    func catchUp(_ db: Database) {
        run(machine.withLock { $0.catchUp() }, db, CommitTokens(sharesRows: false))
    }

    var serial: UInt64 { machine.withLock { $0.serial } }

    /// Whether the results held carry chunk summaries (tests: a long list gets them at its
    /// first commit).
    var summarized: Bool { machine.withLock { $0.summarized } }

    /// Whether the tracker's lock is free right now (tests: no SQL or user code under it).
    var _isLockFree: Bool { machine._isFree }

    func stop() {
        machine.withLock { $0.stop() }
        continuation.finish()
    }

    // MARK: Commits

    func didCommit(changedRowIDs: Set<Int64>, in db: Database) {
        didCommit(changedRowIDs: changedRowIDs, tokens: CommitTokens(sharesRows: false), in: db)
    }

    func didCommit(changedRowIDs: Set<Int64>, tokens: CommitTokens, in db: Database) {
        run(machine.withLock { $0.rowsChanged(changedRowIDs) }, db, tokens)
    }

    let relatedTables: [RelatedTable]

    /// A commit that changed rows the results read through to-ones: the list's rows that
    /// point to them (found through the reference index) are changed rows too, since their
    /// sort keys, sections or match may have changed. If they cannot be read, the tracker
    /// rescans, as for rows of unknown identity.
    func didCommit(
        changedRowIDs: Set<Int64>, relatedRowIDs: [RelatedTable: Set<Int64>], tokens: CommitTokens, in db: Database
    ) {
        let pointing: Set<Int64>
        do {
            pointing = try ResultsUpdater.inReadTransaction(db) { try updater.referencingRows(relatedRowIDs, db) }
        } catch {
            return didChangeExternally(tokens: tokens, in: db)
        }
        run(machine.withLock { $0.rowsChanged(changedRowIDs.union(pointing)) }, db, tokens)
    }

    func didChangeExternally(in db: Database) {
        didChangeExternally(tokens: CommitTokens(sharesRows: false), in: db)
    }

    func didChangeExternally(tokens: CommitTokens, in db: Database) {
        run(machine.withLock { $0.unknownRowsChanged() }, db, tokens)
    }

    /// See ``StateMachine/expectUserMoves(_:echoes:ifSerial:)``. Writer's queue, inside the
    /// transaction that writes the moves.
    func expectUserMoves(_ moves: [UserMove], echoes: Set<Int64>, ifSerial serial: UInt64) -> Bool {
        machine.withLock { $0.expectUserMoves(moves, echoes: echoes, ifSerial: serial) }
    }

    func didRollback() { machine.withLock { $0.rolledBack() } }

    /// The presented (windowed) results now, the serial of the last delivery, and the rows
    /// the deliveries after `applied` touched (``StateMachine/current(since:)``).
    func current(since applied: UInt64) -> (state: ResultsState, serial: UInt64, touched: Set<Int64>?)? {
        guard let (full, serial, touched) = machine.withLock({ $0.current(since: applied) }) else { return nil }
        return (updater.present(full), serial, touched)
    }

    func cannotFollow(_ error: FolioError) {
        // As a failed rescan: nothing is read, and a later commit reads everything again.
        guard let work = machine.withLock({ $0.unknownRowsChanged() }),
            let delivery = machine.withLock({ $0.finish(work, .failed(error)) })
        else { return }
        continuation.yield(delivery)
    }

    /// Performs the work the state machine asked for (no lock held), then hands the result
    /// back to it and yields the delivery it makes; then the work noted meanwhile, if any (a
    /// follow of the change hub nested in the work's read transaction, which the state
    /// machine only notes while a work is out), each at the state it reads. Writer's queue
    /// only: deliveries are yielded in commit order.
    private func run(_ work: StateMachine.Work?, _ db: Database, _ tokens: CommitTokens) {
        var next = work
        var tokens = tokens
        while var work = next {
            let outcome = perform(&work, db, tokens)
            if var delivery = machine.withLock({ $0.finish(work, outcome) }) {
                if case .change(let change, let full, let changed, let token) = delivery.event {
                    delivery.event = .change(change, state: updater.present(full), changed: changed, token: token)
                    updater.diagnostics.count { $0.changeSets += 1 }
                }
                continuation.yield(delivery)
            }
            next = machine.withLock { $0.workNotedMeanwhile() }
            // A later state: nothing read for the first work holds.
            if next != nil { tokens = CommitTokens(sharesRows: false) }
        }
    }

    /// Every outcome carries the table's change token at the new state, whether or not the
    /// controller caches: it is what lets a later change of unknown rows — another
    /// connection's commit, `synchronize()`, a transaction that ran unobserved — that did
    /// not touch this table deliver nothing instead of ``ChangeSet/reload``. One indexed
    /// lookup per commit that touched the table, shared by every tracker of the table
    /// (`tokens`).
    ///
    /// A hand-over's work (``StateMachine/Work/logSince``) reads the rows to apply from the
    /// log, in the same transaction, and `work` then holds them; when the log cannot tell,
    /// it rescans.
    private func perform(_ work: inout StateMachine.Work, _ db: Database, _ tokens: CommitTokens)
        -> StateMachine.Outcome
    {
        do {
            return try ResultsUpdater.inReadTransaction(db) { () throws -> StateMachine.Outcome in
                let token = try tokens.token(of: updater.tokenTables, db)
                if work.rescan {
                    if work.changed.isEmpty, tableUnchanged(since: work.token, now: token) {
                        return .unchanged
                    }
                    let new = try updater.scan(db)
                    return .rescanned(new, maxID: new.ids.maximum, token: token)
                }
                if let since = work.logSince {
                    guard let logged = try updater.loggedRows(after: since, db) else {
                        updater.diagnostics.reloadBecause(
                            "the change log no longer holds the rows after a list's position (seq \(since))")
                        let new = try updater.scan(db)
                        return .rescanned(new, maxID: new.ids.maximum, token: token)
                    }
                    work.changed = logged
                }
                if work.changed.isEmpty {
                    // The table was written without a changed value: only its token is new.
                    return .updated(work.full, ChangeSet(), maxID: work.maxID, token: token)
                }
                let (new, change) = try updater.apply(
                    work.changed, to: work.full, maxID: work.maxID, shared: tokens, db)
                return .updated(
                    new, change, maxID: Swift.max(work.maxID, work.changed.max() ?? work.maxID), token: token)
            }
        } catch {
            return .failed(FolioError.converting(error))
        }
    }
}
