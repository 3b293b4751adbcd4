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
    /// again on the caller: only the change log's end is, after subscribing, so a commit
    /// after that read is noted by the tracker. Returns the live results and whether a
    /// catch-up is due (the log moved since `loaded` was read, or commits were noted): run it
    /// with ``catchUp()``, which applies the rows the log holds after `loaded`'s position
    /// (``ResultsLoad/Loaded/seq``) as one change set — or, when the log no longer holds
    /// them, rescans and delivers ``ChangeSet/reload``. `hook` (tests) is called after
    /// subscribing and after reading the log's end.
    static func follow(
        _ loaded: ResultsLoad.Loaded, query: CompiledQuery, section: SectionExpression?, store: Store,
        hook: (@Sendable (HandOverPoint) -> Void)? = nil
    ) -> (live: LiveResults, catchUpDue: Bool) {
        let live = LiveResults(query: query, section: section, store: store)
        hook?(.trackingSubscribed)
        let end = try? store.readSync { db in try Store.changeLogEnd(db) }
        hook?(.trackingLogEndRead)
        // Rows another program changed while the triggers that log them were gone are in no
        // log: a state read before that is read again.
        let logged = store.hub.logHoldsEveryChange(after: loaded.seq)
        let moved = !logged || end != loaded.seq
        let due = live.tracker.install(
            loaded.full, token: loaded.token, seq: logged ? loaded.seq : nil, .readEarlier(logMoved: moved))
        return (live, due)
    }

    /// See ``ResultsTracker/expectUserMoves(_:echoes:ifSerial:)``: inside the transaction
    /// that writes a user's moves.
    func expectUserMoves(_ moves: [UserMove], echoes: Set<Int64>, ifSerial serial: UInt64) -> Bool {
        tracker.expectUserMoves(moves, echoes: echoes, ifSerial: serial)
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

    /// Hands what was read (after subscribing) to the tracker; returns whether a catch-up
    /// is due.
    func install(_ loaded: ResultsLoad.Loaded) -> Bool {
        tracker.install(loaded.full, token: loaded.token, seq: loaded.seq, .readAfterSubscribing)
    }

    /// Runs the tracker's catch-up on the writer's queue, without blocking the caller: as a
    /// wake-up does, other connections' commits are looked for first (folded keys fixed
    /// up), then the change hub follows the log and the catch-up runs in its transaction, so
    /// that the commits the hub had not followed yet arrive in the same change set.
    func catchUp() async throws {
        let tracker = self.tracker
        let store = self.store
        try await store.onWriterQueue { db in
            store.followOtherConnections(db)
            store.hub.follow(db) { db in tracker.catchUp(db) }
        }
    }

    /// Stops the tracker and unsubscribes it from the change hub.
    func stop() {
        tracker.stop()
        store.hub.unsubscribe(tracker)
    }
}

extension LiveResults {
    /// Where a hand-over between a state read at one snapshot and the change log followed from
    /// then on stands, for tests that commit at exactly that point (``FetchedResultsController``'s
    /// `handOverHook`).
    enum HandOverPoint: Sendable, CaseIterable {
        /// A fetch that tracks read its state (the tracker was subscribed before); not installed.
        case stateRead
        /// A background completion read the rest of the results; not installed.
        case completionRead
        /// Tracking starts on results fetched without it: the tracker just subscribed.
        case trackingSubscribed
        /// …and the change log's end was read; the results are not installed yet.
        case trackingLogEndRead
    }
}
