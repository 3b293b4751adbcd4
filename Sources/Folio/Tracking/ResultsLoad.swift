import Foundation
import GRDB

/// A table's change token as ``Store`` reads it (`Store.changeToken(table:_:)`): what the
/// persistent cache and the trackers compare to know whether a table changed. One name, so
/// that the token's type can change in one place.
typealias TableToken = ChangeToken

/// Whether a table is known not to have changed between the state read at `then` and `now`.
/// `false` when either is missing or unknown (a damaged `folio_entities`): an unknown token
/// never means "unchanged".
func tableUnchanged(since then: TableToken?, now: TableToken?) -> Bool {
    guard let then, let now, then.isKnown, now.isKnown else { return false }
    return then == now
}

/// One fetch of a controller's results — performFetch, a request change — prepared on the
/// main actor, read on a database connection, installed back on the main actor.
///
/// When the controller tracks, the tracker is subscribed *before* the read, so no commit
/// falls between what was read and what is followed: commits that land during the read are
/// noted by the tracker. The state carries its position in the change log (the log's last
/// `seq`, read in the same transaction: ``Loaded/seq``). When commits were noted, a catch-up
/// on the writer's queue right after the state is installed (``ResultsTracker/catchUp(_:)``),
/// not at a next commit that may never come, applies exactly the rows the log holds after
/// that position, read in the transaction that applies them — never the noted rows alone at
/// a state that may already hold other connections' commits not noted yet. A transaction
/// that was already running, unobserved, when the tracker subscribed is reported by the
/// change hub as a change of unknown rows: the catch-up rescans.
struct ResultsLoad: Sendable {
    let updater: ResultsUpdater
    let cacheURL: URL?
    let fingerprint: SectionCache.Fingerprint
    /// Subscribed to the store's change hub when the controller tracks.
    let live: LiveResults?
    /// When the read may stop at the first screen; `nil`: never.
    let firstScreen: FirstScreenRule?
    /// Tests: called by a ``Completion`` with -1 on the caller before the snapshot is made,
    /// 0 in the background read's transaction right before its query runs (SQLite's check
    /// for cancellation already installed), and the rows read every 4,096 rows; it may block
    /// to hold the read at that point.
    let completionHook: (@Sendable (Int) -> Void)?

    struct Loaded: Sendable {
        /// The full results; ``ResultsUpdater/present(_:)`` gives what is shown.
        var full: ResultsState
        var outcome: SectionCache.Outcome
        /// The table's change token at the state read.
        var token: TableToken
        /// The change log's last `seq` in the read transaction of `full`: where in the log
        /// the state is (``Store/changeLogEnd(_:)``), from which a tracker resumes.
        var seq: Int64
        /// `false` for a first screen: `full` holds the first rows only, and the rest is
        /// read by a ``Completion``.
        var complete = true
        /// A first screen read before a large valid cache: the completion reads the rest from
        /// the cache (when it is still valid in its snapshot) instead of scanning.
        var cacheDeferred = false
    }

    /// Creates the load, subscribing a tracker to `store` when `tracking`.
    init(
        query: CompiledQuery, section: SectionExpression?, cacheURL: URL?, fingerprint: SectionCache.Fingerprint,
        tracking: Bool, firstScreen: FirstScreenRule? = nil, completionHook: (@Sendable (Int) -> Void)? = nil,
        store: Store
    ) {
        self.firstScreen = firstScreen
        self.completionHook = completionHook
        self.updater = ResultsUpdater(query: query, section: section, diagnostics: store.diagnostics)
        self.cacheURL = cacheURL
        self.fingerprint = fingerprint
        self.live = tracking ? LiveResults(query: query, section: section, store: store) : nil
    }

    /// The time zone of the load's day sections, `nil` for other sections.
    var dayZone: DayZone? { updater.section?.dayZone }

    /// The tables the load reads: the list's, and those it reads through to-ones.
    var tables: [String] { updater.tokenTables }
    /// The table whose full-text index the load searches, if it does.
    var searchedTable: String? { updater.query.searchedTable }

    /// Whether later commits should rewrite the cache (windowed results are not cached live).
    var cachesLive: Bool { cacheURL != nil && !updater.query.isWindowed }

    /// What the controller shows of the full results: the request's window.
    func present(_ full: ResultsState) -> ResultsState { updater.present(full) }

    /// Reads the state — from the cache when it is valid — in the read transaction `db` is in,
    /// stopping at the first screen when `firstScreen` says so (windowed results are always
    /// read whole: their window is taken from the full results).
    func read(_ db: Database, firstScreen: FirstScreenRule? = nil) throws -> Loaded {
        let token = try Store.changeToken(tables: updater.tokenTables, db)
        let seq = try Store.changeLogEnd(db)
        var outcome = SectionCache.Outcome.notUsed
        let rule = updater.query.isWindowed ? nil : firstScreen
        if let cacheURL {
            // A large cache takes longer to read than a first screen: the first screen first,
            // the cache after it, in the background.
            if rule != nil, let size = SectionCache.sizeIfWanted(cacheURL, expecting: fingerprint, token: token),
                size >= updater.diagnostics.largeCacheBytes
            {
                let (state, complete) = try updater.scan(db, until: rule)
                return Loaded(
                    full: state, outcome: .reused, token: token, seq: seq, complete: complete, cacheDeferred: !complete)
            }
            switch SectionCache.read(cacheURL, expecting: fingerprint, token: token) {
            case .success(let state): return Loaded(full: state, outcome: .reused, token: token, seq: seq)
            case .failure(let reason): outcome = .rebuilt(reason)
            }
        }
        let (state, complete) = try updater.scan(db, until: rule)
        return Loaded(full: state, outcome: outcome, token: token, seq: seq, complete: complete)
    }

    /// ``read(_:firstScreen:)`` with the load's own first-screen rule.
    func readFirstScreen(_ db: Database) throws -> Loaded {
        try read(db, firstScreen: firstScreen)
    }

    /// Hands what was read to the tracker; returns the live results if a catch-up is due
    /// (run it with ``LiveResults/catchUp()``).
    func install(_ loaded: Loaded) -> LiveResults? {
        guard let live, live.install(loaded) else { return nil }
        return live
    }

    /// Unsubscribes the tracker of a load that failed or was superseded.
    func abandon() {
        live?.stop()
    }
}
