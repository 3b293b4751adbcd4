import Foundation
import GRDB

/// Manages the results of a fetch request for a list: sections, index titles, lazy
/// records, and live change sets (`NSFetchedResultsController`, rebuilt).
///
/// ```swift
/// var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.published, order: .reverse)])
/// request.batchSize = 50
/// let controller = FetchedResultsController(request, store: store, sectionBy: .day(\.published))
/// controller.delegate = self
/// try controller.performFetch()
/// controller.sections[0].numberOfObjects
/// controller.object(at: IndexPath(item: 0, section: 0))
/// for await change in controller.changes { tableView.apply(change) }
/// ```
///
/// The controller is isolated to the main actor. Its state changes only when a change
/// set is delivered, so between two deliveries `sections`, `object(at:)` and `snapshot`
/// agree with each other and with the last change set — the invariant a table view's
/// batch updates rely on. Writers never wait for delivery.
///
/// Changes reach the app through three channels, in the same order: the ``delegate``
/// (Core Data's callbacks, and errors), ``changes`` (change sets) and ``updates`` (each
/// change set with the snapshot it leads to, and errors).
///
/// Tracking follows the original's three modes (see ``TrackingMode``): with neither a
/// delegate nor a ``changes`` or ``updates`` subscriber nothing is tracked; with a ``cacheName`` the
/// section information is also kept in a file and reused by the next ``performFetch()-68xbj``
/// when it is still valid (checked against the database's identity, the entity's version
/// hash, the request, the section key and the entity's change token — never trusted
/// blindly; ``SectionCache`` lists every check).
//
// This file holds the controller's state; its facets are extensions beside it:
// +Fetching (performFetch, setRequest, loading and installing, starting to track),
// +Delivery (the delegate, `changes` and `updates`), +Sections (sections, index titles,
// records and index paths, snapshots) and +Cache (the persistent section cache).
@MainActor
public final class FetchedResultsController<R: PersistentRecord> {
    /// The request; change it with ``setRequest(_:)``.
    ///
    /// - Complexity: O(1).
    public internal(set) var fetchRequest: RecordRequest<R>
    /// The store fetched from.
    ///
    /// - Complexity: O(1).
    public let store: Store
    /// What divides the results into sections, or `nil` for one section.
    ///
    /// - Complexity: O(1).
    public let sectionKey: SectionKey<R>?
    /// The name of the persistent section cache, or `nil`.
    ///
    /// - Complexity: O(1).
    public let cacheName: String?
    /// Receives the changes. Setting one on a fetched controller starts tracking without
    /// fetching again on the caller (only the change log's end is read): the commits made
    /// since the fetch arrive as one change set, read from the change log on the store's
    /// writer queue (``ChangeSet/reload`` when the log no longer holds them).
    /// - Complexity: O(1).
    public weak var delegate: (any FetchedResultsControllerDelegate<R>)? {
        didSet { startTrackingIfNeeded() }
    }
    /// The index title of a section name, `nil` to leave the section out of the index
    /// (what subclasses override `sectionIndexTitle(forSectionName:)` for in the original).
    /// When not set: the month (`YYYY-MM`) of `.day` sections, and otherwise the name's
    /// first character, capitalized, as in the original.
    /// - Complexity: O(1); the titles are computed again at the next read of ``sections``.
    public var sectionIndexTitle: (@MainActor (String) -> String?)? = nil {
        didSet {
            sectionInfos = nil
            sectionNames = [:]
            labelledSections = ([], [])
        }
    }

    /// Name and index title by section value: computed once per section, not per change.
    var sectionNames: [SQLiteValue.Exact: (name: String, indexTitle: String?)] = [:]
    /// The runs the sections were last computed for and those sections: the next
    /// computation takes the labels of the sections that stayed from them, in order,
    /// comparing values instead of hashing each (a commit changes the counts of a few).
    var labelledSections: (runs: [SectionRun], infos: [SectionInfo]) = ([], [])

    /// What the last ``performFetch()-68xbj`` did with the persistent cache.
    /// - Complexity: O(1).
    public internal(set) var lastCacheOutcome: SectionCache.Outcome = .notUsed

    /// Why the controller could not follow the store at its last attempt, or `nil`.
    ///
    /// A tracking controller that cannot follow a commit — the database cannot be read, or
    /// the rows no longer fall into contiguous sections — keeps showing what it showed, sets
    /// this, and tells the delegate (``FetchedResultsControllerDelegate/controller(_:didFailWith:)``)
    /// and ``updates`` (a ``ControllerUpdate`` with ``ControllerUpdate/error`` set). It tries
    /// again, from scratch, at the next commit to its table, and delivers
    /// ``ChangeSet/reload`` when it succeeds; this is then `nil` again. `performFetch()`
    /// and ``setRequest(_:)`` throw their errors instead, and clear this when they succeed.
    ///
    /// - Complexity: O(1).
    public internal(set) var lastError: FolioError?

    /// The time zone of the day sections shown (the key's, or the user's at the last fetch).
    var sectionZone: DayZone?

    /// The time zone the `.day` sections shown are in: the section key's, or, for a key
    /// that follows the user's zone, `TimeZone.current` as it was at the last
    /// ``performFetch()-68xbj``. `nil` before the first fetch, and for other section keys.
    /// Show times in this zone, so that they agree with their sections.
    ///
    /// - Complexity: O(1).
    public var sectionTimeZone: TimeZone? { sectionZone?.timeZone }

    var presented: ResultsState?
    var sectionInfos: [SectionInfo]?
    var results: FetchedRecords<R>?
    /// The live results being followed, when the controller tracks.
    var live: LiveResults?
    var deliveryTask: Task<Void, Never>?
    var appliedSerial: UInt64 = 0
    var waiters: [CheckedContinuation<Void, Never>] = []
    /// The writes of the user's moves under way (``moveObject(at:to:)``).
    var moveWrites = MoveWrites()
    var cacheWriteTask: Task<Void, Never>?
    /// The last catch-up scheduled on the writer's queue (each waits for the one before).
    var catchUpTask: Task<Void, Never>?
    /// What the last fetch read, kept while nothing tracks it: tracking starts from it.
    var untracked: ResultsLoad.Loaded?

    /// Creates a controller. Nothing is read until ``performFetch()-68xbj``.
    ///
    /// - Parameters:
    ///   - request: at least one sort descriptor; with sections, the first one must sort
    ///     by the section key's attribute.
    ///   - store: the store to fetch from and follow.
    ///   - sectionBy: the section key, or `nil` for a single section.
    ///   - cacheName: a plain file name for the persistent section cache.
    /// - Complexity: O(1); reads nothing.
    public init(_ request: RecordRequest<R>, store: Store, sectionBy: SectionKey<R>? = nil, cacheName: String? = nil) {
        self.fetchRequest = request
        self.store = store
        self.sectionKey = sectionBy
        self.cacheName = cacheName
    }

    isolated deinit {
        completion?.reader.cancel()
        stopTracking()
        changeSubscribers.finish()
        updateSubscribers.finish()
    }

    /// How the controller follows the store now.
    /// - Complexity: O(1).
    public var trackingMode: TrackingMode {
        guard wantsTracking else { return .none }
        return cacheName == nil ? .memory : .persistent
    }

    var wantsTracking: Bool { delegate != nil || !changeSubscribers.isEmpty || !updateSubscribers.isEmpty }

    /// Bumped by each fetch: an async fetch that finishes after a newer one installs nothing.
    var generation = 0

    /// The background read of the rest of the results, while incomplete, with the fetch
    /// generation that started it.
    var completion: (reader: ResultsLoad.Completion, generation: Int)?
    /// The task that installs the last completion started, and how many were started.
    var completionTask: Task<Void, Never>?
    var completionStarted = 0
    /// When a fetch stops at its first screen (at least the request's batch); `nil`: never.
    /// Tests set it to make a list of any size incomplete, or never.
    var firstScreenRule: FirstScreenRule? = .automatic(rows: 0)
    /// Tests: see `ResultsLoad.completionHook`.
    var completionHook: (@Sendable (Int) -> Void)?
    /// Tests: called at each point of a hand-over (``LiveResults/HandOverPoint``), on the
    /// caller, so that a test commits exactly between a state read and its installation.
    var handOverHook: (@Sendable (LiveResults.HandOverPoint) -> Void)?

    /// The cache file and fingerprint of the current fetch, when commits should rewrite it.
    var liveCache: (url: URL, fingerprint: SectionCache.Fingerprint)?

    func setPresented(_ state: ResultsState) {
        presented = state
        sectionInfos = nil
        results = nil
        inheritedRecords = [:]
    }

    /// Records the previous results had loaded and no commit touched since.
    var inheritedRecords: [Int64: R] = [:]

    /// Whether a fetch of a long list returns with its first screen and reads the rest in
    /// the background (`true`), or reads every row before it returns, as Core Data's
    /// `performFetch()` does (`false`, the default).
    ///
    /// Set it to `true` for a list a person scrolls: its first screen shows at once however
    /// long the list (see *Large Lists*). Leave it `false` where the whole results are needed
    /// at once and nothing waits for the completion: code that reads counts right after
    /// fetching, or a program whose main actor never runs a loop (the completion is
    /// installed on the main actor). A list that fits its first screen is complete at once
    /// either way. Read by the next fetch.
    ///
    /// - Complexity: O(1).
    public var completesInBackground = false

    /// Whether every row of the results is known.
    ///
    /// `false` from a ``performFetch()-68xbj`` or ``setRequest(_:)`` that returned with the
    /// first screen of a long list until the rest of it is read in the background, which
    /// is delivered as one change set, ``ChangeSet/isCompletion``. Meanwhile the controller
    /// shows a prefix of the results: the first rows, exact and in order, and the sections
    /// they are in; the last section's ``SectionInfo/numberOfObjects`` counts only the rows
    /// read so far, and ``sections`` and ``sectionIndexTitles`` list only the sections
    /// shown. Commits that land meanwhile are delivered after the completion, as change
    /// sets from the complete results.
    ///
    /// - Complexity: O(1).
    public var isComplete: Bool { completion == nil }

    /// Rows of the results read so far while the controller completes them in the
    /// background (``isComplete`` is `false`), for a progress indicator or a status line
    /// ("12,000+ items"); the number of rows shown once complete.
    ///
    /// - Complexity: O(1).
    public var rowsKnown: Int {
        let shown = presented?.ids.count ?? 0
        guard let completion else { return shown }
        return Swift.max(shown, completion.reader.rowsRead)
    }

    /// Waits until the results are complete (``isComplete``): at once when they are.
    ///
    /// - Throws: the error that stopped the background read (also in ``lastError`` and told
    ///   to the delegate); the results then stay at their first screen until the next fetch.
    /// - Complexity: O(1) to check; it suspends until the rest of the results is read.
    public func waitUntilComplete() async throws {
        while let task = completionTask {
            let started = completionStarted
            await task.value
            // A newer fetch started another completion meanwhile: wait for that one.
            if completionStarted == started { break }
        }
        if !isComplete, let lastError { throw lastError }
    }

    let changeSubscribers = Subscribers<ChangeSet>()
    let updateSubscribers = Subscribers<ControllerUpdate>()
}
