import Foundation
import GRDB

/// The one seam between a controller and the live engine: a ``ResultsTracker`` built for
/// a request and subscribed to a store's change hub, for as long as the controller follows
/// that request.
///
/// The controller never builds, subscribes or unsubscribes a tracker itself. It gets one
/// from a ``ResultsLoad`` (a fetch that tracks subscribes before it reads) or from
/// ``follow(_:query:section:store:)`` (tracking starts on results fetched
/// without it), reads its ``deliveries`` on its actor, and calls ``stop()`` — the one place
/// a tracker leaves the change hub — when the request changes or the controller goes away.
// Sendable: every stored property is immutable and Sendable.
final class LiveResults: Sendable {
    typealias Delivery = ResultsTracker.Delivery

    let tracker: ResultsTracker
    private let store: Store

    /// Builds a tracker for `query` and subscribes it to `store`'s change hub. Until its
    /// state is installed, commits are only noted.
    init(query: CompiledQuery, section: SectionExpression?, store: Store) {
        self.tracker = ResultsTracker(query: query, section: section, diagnostics: store.diagnostics)
        self.store = store
        store.hub.subscribe(tracker)
    }

    /// Starts following results read earlier, without a tracker. The results are not read
    /// again on the caller: only the table's change token is, after subscribing, so a commit
    /// after that read is noted by the tracker. Returns the live results and whether a
    /// catch-up is due (the token moved since `loaded` was read, or commits arrived): run it
    /// with ``catchUp()``, which rescans and delivers ``ChangeSet/reload``.
    static func follow(
        _ loaded: ResultsLoad.Loaded, query: CompiledQuery, section: SectionExpression?, store: Store
    ) -> (live: LiveResults, catchUpDue: Bool) {
        let live = LiveResults(query: query, section: section, store: store)
        let token = try? store.readSync { db in try Store.changeToken(tables: live.tracker.updater.tokenTables, db) }
        let unchanged = tableUnchanged(since: loaded.token, now: token)
        let due = live.tracker.install(loaded.full, token: loaded.token, changedSinceRead: !unchanged)
        return (live, due)
    }

    /// See ``ResultsTracker/expectUserMove(_:echoes:ifSerial:)``: inside the transaction
    /// that writes a user's move.
    func expectUserMove(_ move: UserMove, echoes: Set<Int64>, ifSerial serial: UInt64) -> Bool {
        tracker.expectUserMove(move, echoes: echoes, ifSerial: serial)
    }

    /// The presented results now, the serial of the last delivery, and the rows touched by
    /// the deliveries after `applied` (``ResultsTracker/current(since:)``).
    func current(since applied: UInt64) -> (state: ResultsState, serial: UInt64, touched: Set<Int64>?)? {
        tracker.current(since: applied)
    }

    /// The tracker's deliveries, one per commit that changed the results, in commit order.
    var deliveries: AsyncStream<Delivery> { tracker.deliveries }

    /// The serial number of the tracker's last delivery.
    var serial: UInt64 { tracker.serial }

    /// Hands what was read to the tracker; returns whether a catch-up is due.
    func install(_ loaded: ResultsLoad.Loaded) -> Bool {
        tracker.install(loaded.full, token: loaded.token)
    }

    /// Runs the tracker's catch-up on the writer's queue, without blocking the caller.
    func catchUp() async throws {
        let tracker = self.tracker
        try await store.onWriterQueue { db in tracker.catchUp(db) }
    }

    /// Stops the tracker and unsubscribes it from the change hub.
    func stop() {
        tracker.stop()
        store.hub.unsubscribe(tracker)
    }
}
