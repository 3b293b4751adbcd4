import Foundation
import GRDB
import Logging

/// What a store has done, for tests and for the curious: the counterpart of Core Data's
/// `-com.apple.CoreData.SQLDebug`.
///
/// Switch the SQL log on without code with the environment variable `FOLIO_SQL_DEBUG=1`
/// (statements to standard error; `2` adds bound values; `3` adds the query plan of each
/// fetch's identifier query), or with ``logSQL(expanded:queryPlans:_:)`` /
/// ``logSQL(to:expanded:queryPlans:)``.
///
/// With `queryPlans`, the log shows after each identifier query (the one a fetch or
/// `performFetch()` runs to read a list) SQLite's plan for it, one line, and says when the
/// plan reads every row:
///
/// ```
/// SELECT "id" FROM "article" WHERE ("isRead" = ?) ORDER BY "published" DESC, "id" DESC
/// QUERY PLAN: SEARCH article USING COVERING INDEX folio_article_isRead_published_desc_index (isRead=?)
/// ```
///
/// Reading the plan costs one more statement per identifier query, so it is off unless
/// asked for; `Store.explain(_:)` reads one request's plan on demand.
public final class Diagnostics: Sendable {
    /// Counters since the store opened or since ``resetCounters()``.
    public struct Counters: Sendable, Equatable, CustomStringConvertible {
        /// SQL statements stepped, on every connection, GRDB's own included.
        public var statements = 0
        /// Queries that read the identifiers of a fetch request's results in order.
        public var identifierScans = 0
        /// Batches of records loaded by ``FetchedRecords``.
        public var batchesLoaded = 0
        /// Records decoded from rows.
        public var recordsMaterialized = 0
        /// Change sets computed for controllers.
        public var changeSets = 0
        /// Identifier scans that stopped at their first screen, the rest of the results read
        /// in the background (see `FetchedResultsController.isComplete`).
        public var firstScreens = 0
        /// Background reads of the rest of a list shown from its first screen that a newer
        /// fetch, a request change or the controller going away cancelled, counted as each
        /// read ends (see `FetchedResultsController.isComplete`).
        public var completionsCancelled = 0
        /// Rows of first screens that the background read of the rest took as they were,
        /// instead of reading them again: every section but the first screen's last (or,
        /// without sections, every row before its last key's), when the first sort key is
        /// on an index SQLite reads in order (see <doc:LargeLists>).
        public var firstScreenRowsReused = 0
        /// First screens of a full-text search read by walking the list's sort order and
        /// keeping the rows the search matches, instead of sorting every match (see
        /// <doc:SearchingAndSortingText>).
        public var searchWalks = 0
        /// Those of ``searchWalks`` that tested each row's indexed text against the search
        /// (with the index's own tokenizer) instead of reading every match from the index
        /// first: searches that many rows match.
        public var matchingWalks = 0
        /// Walks given up: the sort order's first rows matched too rarely for a first screen
        /// within the walk's budget. A walk testing rows is then followed by one reading the
        /// matches first; that one by the usual plan.
        public var searchWalksAbandoned = 0
        /// Rows of the change log read: the rows other processes' commits and the store's
        /// own changed, as the log tells them (see <doc:StoresAndFiles>).
        public var changeLogRowsRead = 0
        /// Times the change log could not tell which rows changed (it was trimmed past the
        /// store's progress, or emptied), so every live list rescanned: see ``Diagnostics/lastReloadReason``.
        public var changeLogReloads = 0
        /// File-system notifications that woke the store to look for other connections'
        /// commits (inotify or a dispatch source; not the re-checks after one, nor polls):
        /// each costs one `PRAGMA data_version`, and a read of the change log only when
        /// another connection committed (see ``Store/externalChangeDetection``).
        public var fileNotifications = 0
        /// Queries that found where a section begins by seeking the sort index (one per
        /// section read, plus one for the list's first row), in identifier scans of lists
        /// whose section key is the first sort key on an index: such a scan steps the
        /// identifiers alone, as an unsectioned one does (see <doc:SectionsAndCaches>).
        public var sectionBoundarySeeks = 0
        /// Chunks of a live list's identifiers (4,096 to 8,192 each) searched to find where
        /// the rows a commit changed were: a long list's chunks carry summaries, so a
        /// one-row commit searches the chunk that holds the row and about one other in two
        /// hundred, not every identifier (see <doc:Performance>).
        public var identifierChunksSearched = 0
        /// Reads a live list took, after a commit, from another list's identical read of
        /// the same commit instead of running the statement again: the changed rows of a
        /// list with the same filter, sort and section key as another, or the sort keys of
        /// a row that a list with the same sort already probed. A commit reads once what
        /// its lists would read alike (see <doc:Performance>).
        public var sharedCommitReads = 0

        /// The counters as one line of text.
        public var description: String {
            "statements \(statements), identifier scans \(identifierScans), batches \(batchesLoaded), records \(recordsMaterialized)"
        }
    }

    private struct State {
        var counters = Counters()
        var lastReloadReason: String?
        var sink: (@Sendable (String) -> Void)?
        var expanded = false
        var queryPlans = false
        var seeksSectionBoundaries = true
        var walksTestingRows = true
        var largeCacheBytes: UInt64 = 4 << 20
    }

    private let state: Locked<State>

    init() {
        var initial = State()
        let level = ProcessInfo.processInfo.environment["FOLIO_SQL_DEBUG"].flatMap(Int.init) ?? 0
        if level > 0 {
            initial.sink = { line in FileHandle.standardError.write(Data("FOLIO SQL: \(line)\n".utf8)) }
            initial.expanded = level > 1
            initial.queryPlans = level > 2
        }
        state = Locked(initial)
    }

    /// The counters now.
    public var counters: Counters { state.withLock { $0.counters } }

    /// Sets every counter to zero.
    public func resetCounters() { state.withLock { $0.counters = Counters() } }

    /// Sends each SQL statement to `sink` (nil switches the log off).
    /// - Parameters:
    ///   - expanded: include bound values in the text.
    ///   - queryPlans: after each identifier query, send its plan too (`QUERY PLAN: …`,
    ///     ending with `(reads every row)` when it does), at the cost of one more statement.
    ///   - sink: called with each statement's text, on the thread that runs it.
    /// - Complexity: O(1).
    public func logSQL(expanded: Bool = false, queryPlans: Bool = false, _ sink: (@Sendable (String) -> Void)?) {
        state.withLock {
            $0.sink = sink; $0.expanded = expanded; $0.queryPlans = queryPlans
        }
    }

    /// Sends each SQL statement to a swift-log `Logger` at debug level.
    /// - Parameters:
    ///   - logger: the logger.
    ///   - expanded: include bound values in the text.
    ///   - queryPlans: after each identifier query, send its plan too.
    /// - Complexity: O(1).
    public func logSQL(to logger: Logger, expanded: Bool = false, queryPlans: Bool = false) {
        logSQL(expanded: expanded, queryPlans: queryPlans) { line in logger.debug("\(line)") }
    }

    /// Whether the log wants the plans of identifier queries (a sink is set and asked for them).
    var logsQueryPlans: Bool { state.withLock { $0.sink != nil && $0.queryPlans } }

    /// Sends a line that is no statement (a query plan) to the log, if it is on.
    func note(_ line: String) {
        if let sink = state.withLock({ $0.sink }) { sink(line) }
    }

    func statement(_ event: Database.TraceEvent) {
        guard case .statement(let statement) = event else { return }
        let (sink, expanded) = state.withLock { s -> ((@Sendable (String) -> Void)?, Bool) in
            s.counters.statements += 1
            return (s.sink, s.expanded)
        }
        if let sink { sink(expanded ? statement.expandedSQL : statement.sql) }
    }

    func count(_ update: (inout Counters) -> Void) { state.withLock { update(&$0.counters) } }

    /// Whether identifier scans may find section boundaries by seeks
    /// (``Counters/sectionBoundarySeeks``); tests switch it off to compare with the scan
    /// that reads every row's section value.
    var seeksSectionBoundaries: Bool {
        get { state.withLock { $0.seeksSectionBoundaries } }
        set { state.withLock { $0.seeksSectionBoundaries = newValue } }
    }

    /// Whether a search's first screen may be walked testing each row against the search
    /// (`SearchWalk.matchingWalk`); tests switch it off to reach the walk that reads the
    /// matches first.
    var walksTestingRows: Bool {
        get { state.withLock { $0.walksTestingRows } }
        set { state.withLock { $0.walksTestingRows = newValue } }
    }

    /// The size from which a valid section cache is read by the background completion, after
    /// a first screen is shown, rather than before it: 4 MiB (half a million identifiers),
    /// which take longer to read than a first screen. Tests lower it.
    var largeCacheBytes: UInt64 {
        get { state.withLock { $0.largeCacheBytes } }
        set { state.withLock { $0.largeCacheBytes = newValue } }
    }

    /// Why the live lists last rescanned because the change log could not tell which rows
    /// changed (say, "the change log was trimmed past this store's progress …"), `nil` if
    /// they never had to. Each such reload also goes to the SQL log (``logSQL(expanded:queryPlans:_:)``)
    /// as a line starting with `CHANGE LOG:`.
    /// - Complexity: O(1).
    public var lastReloadReason: String? { state.withLock { $0.lastReloadReason } }

    /// Notes that every live list rescans, and why.
    func reloadBecause(_ reason: String) {
        state.withLock {
            $0.lastReloadReason = reason
            $0.counters.changeLogReloads += 1
        }
        note("CHANGE LOG: \(reason): every live list reloads")
    }
}
