import Foundation
import Observation

/// A live, sectioned, batch-faulting list for SwiftUI and any other Observation user: a
/// ``FetchedResultsController`` seen through `@Observable`.
///
/// ```swift
/// var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.published, order: .reverse)])
/// request.batchSize = 50
/// let model = FetchedResultsModel(request, store: store, sectionBy: .day(\.published))
/// try await model.performFetch()
/// for section in model.sections {
///     print(section.name, section.items.count)              // loads no record
/// }
/// model.sections.first?.items.first?.record                 // loads one batch of 50
/// model.predicate = #Predicate { $0.score > 10 }            // applied as one change
/// ```
///
/// The model keeps what the controller promises and adds what observers rely on:
/// - **Identifiers are free.** ``sections`` and ``items`` hold identifiers; a
///   ``FetchedItem``'s ``FetchedItem/id`` loads nothing, so a SwiftUI `List`, which reads
///   every row's identifier, loads only the batches of the rows it draws.
/// - **One notification per commit that changes what it shows**, none for a commit that
///   does not touch its results (another entity, rows its predicate excludes), and none
///   for reading: loading a batch changes nothing an observer can see. The results are one
///   observed value, replaced once per delivered change set. A commit by another process
///   or connection arrives as an ordinary change set too (the change log names the rows it
///   changed): one notification if it changes what the model shows, none otherwise.
/// - **Filter and sort are settable** (``predicate``, ``sortBy``, ``fetchRequest``); each
///   change is applied to the live controller and arrives as one notification, leaving the
///   model as a fresh fetch of the new request would.
/// - **Loading state and errors are observable**: ``loadingState`` and ``lastError``. A
///   commit that recovers from an error, or a fetch that clears one, changes the results
///   and ``lastError`` in one notification, whichever of the two an observer reads.
///
/// The model is isolated to the main actor and owns its controller. It reads nothing until
/// `performFetch()` (so creating one in a SwiftUI view's initializer is cheap), then
/// follows the store until it is released.
///
/// A search is part of the request (``RecordRequest/search``): setting ``search`` — or a
/// ``fetchRequest`` with another search — applies like a predicate, as one change.
@Observable
@MainActor
public final class FetchedResultsModel<R: PersistentRecord> {
    /// Where the model is in fetching its results.
    public enum LoadingState: Sendable, Hashable {
        /// Nothing fetched yet (or the first fetch failed: see ``FetchedResultsModel/lastError``).
        case idle
        /// A background fetch (the async `performFetch()`) is running; results
        /// fetched before stay readable meanwhile.
        case loading
        /// The results are fetched and followed live.
        case loaded
    }

    /// What the model shows, replaced as one value so that observers hear one change per
    /// commit, filter or sort change — whichever of its parts they read.
    struct Content {
        var request: RecordRequest<R>
        var sectionKey: SectionKey<R>?
        var sections: [FetchedSection<R>]
        var items: FetchedItems<R>
    }

    /// The store the results come from.
    ///
    /// - Complexity: O(1).
    public let store: Store
    /// The name of the persistent section cache, or `nil`.
    ///
    /// - Complexity: O(1).
    public let cacheName: String?

    /// Where the model is in fetching its results.
    ///
    /// `.idle` → `.loading` → `.loaded` for the async `performFetch()` (the synchronous
    /// `performFetch()` goes to `.loaded` directly). A failed first fetch goes back to
    /// `.idle`; a failed fetch after results were shown goes back to `.loaded`, with the
    /// results as they were. Either way ``lastError`` says why.
    ///
    /// - Complexity: O(1).
    public internal(set) var loadingState: LoadingState = .idle

    /// Why the model could not fetch, apply a request, or follow the store at its last
    /// attempt; `nil` after the next success.
    ///
    /// Set when `performFetch()` or a request change fails (the results and the request
    /// stay as they were), and when the controller cannot follow a commit (see
    /// ``FetchedResultsController/lastError``: the results stay as they were until a later
    /// commit reloads them, which clears this). Cancelling a fetch is not an error.
    /// A batch that fails to load while a record is read is not reported here (reading
    /// never notifies): use ``FetchedItem/loadRecord()`` to get that error.
    ///
    /// - Complexity: O(1).
    public internal(set) var lastError: FolioError? {
        get {
            access(keyPath: \.lastError)
            access(keyPath: \.resultsAndError)
            return storedError
        }
        set {
            // As the `@Observable` macro does for an equatable value: no change, no notification.
            guard newValue != storedError else { return }
            withMutation(keyPath: \.lastError) { storedError = newValue }
        }
    }

    /// Whether every row of the results is known: `false` while a long list, shown from its
    /// first screen, is read in the background (see
    /// ``FetchedResultsController/isComplete``). The sections and items then hold the
    /// first rows; the completion is one notification.
    ///
    /// - Complexity: O(1).
    public internal(set) var isComplete = true

    /// The results, observed under their own key path and under ``resultsAndError``.
    var content: Content {
        get {
            access(keyPath: \.content)
            access(keyPath: \.resultsAndError)
            return storedContent
        }
        set { withMutation(keyPath: \.content) { storedContent = newValue } }
    }

    /// ``content`` and ``lastError`` are kept here and observed by hand: each under its own
    /// key path, and both under ``resultsAndError``, the one key path a change of both is
    /// announced under (``show(_:clearingError:)``) — one notification for an observer that
    /// reads either or both, where two assignments would notify one that reads both twice.
    @ObservationIgnored private var storedContent: Content
    @ObservationIgnored private var storedError: FolioError?
    /// The key path of a change of both the results and the error (it holds nothing).
    private var resultsAndError: Void { () }

    /// The controller the model follows (internal: tests hold it weakly to see it released).
    @ObservationIgnored private(set) var controller: FetchedResultsController<R>
    @ObservationIgnored private var relay: FetchedResultsModelRelay<R>
    /// Bumped by every fetch and request change: a background fetch that finds it moved was
    /// superseded and leaves the state to what superseded it.
    @ObservationIgnored var generation = 0
    /// Whether the controller has results (a fetch or request change succeeded).
    @ObservationIgnored var hasResults = false
    /// Set while the model applies a request itself (the controller's delivery of it is
    /// then ignored: the model reads the new state once, after).
    @ObservationIgnored var applyingRequest = false

    /// Creates a model. Nothing is read until `performFetch()`.
    ///
    /// - Parameters:
    ///   - request: at least one sort descriptor; with sections, the first one must sort by
    ///     the section key's attribute. Give it a `batchSize`: records then load in batches
    ///     as rows are read.
    ///   - store: the store to fetch from and follow.
    ///   - sectionBy: the section key, or `nil` for a single section.
    ///   - cacheName: a plain file name for the persistent section cache.
    /// - Complexity: O(1); reads nothing.
    public init(_ request: RecordRequest<R>, store: Store, sectionBy: SectionKey<R>? = nil, cacheName: String? = nil) {
        self.store = store
        self.cacheName = cacheName
        let relay = FetchedResultsModelRelay<R>()
        self.relay = relay
        self.controller = FetchedResultsController(request, store: store, sectionBy: sectionBy, cacheName: cacheName)
        self.storedContent = Content(
            request: request, sectionKey: sectionBy, sections: [], items: FetchedItems(records: .empty(store), bounds: 0..<0))
        relay.model = self
        controller.delegate = relay
    }

    // MARK: Reading

    /// The sections, in order; one section named `""` for results without a section key;
    /// none before the first fetch. Loads no record.
    ///
    /// - Complexity: O(1); the sections are built once per change (O(sections)).
    public var sections: [FetchedSection<R>] { content.sections }

    /// Every row, in order, across sections. Loads no record.
    ///
    /// - Complexity: O(1); loads nothing.
    public var items: FetchedItems<R> { content.items }

    /// The section key, or `nil` for a single section. Change it with
    /// ``setRequest(_:sectionBy:)``.
    ///
    /// - Complexity: O(1).
    public var sectionKey: SectionKey<R>? { content.sectionKey }

    /// The time zone the `.day` sections shown are in: the key's, or the user's
    /// (`TimeZone.current`) at the last fetch (``FetchedResultsController/sectionTimeZone``).
    /// `nil` before the first fetch and for other keys. Show times in it.
    ///
    /// - Complexity: O(1).
    public var sectionTimeZone: TimeZone? { controller.sectionTimeZone }

    // MARK: Fetching

    /// Fetches the results on a background connection, so the main actor stays free during
    /// the identifier scan, then follows the store. Loads no record.
    ///
    /// ``loadingState`` is `.loading` meanwhile. A fetch superseded by a later fetch or
    /// request change returns without changing anything. Cancelling the calling task
    /// cancels the fetch (``lastError`` is not set).
    ///
    /// - Throws: the errors of ``FetchedResultsController``'s `performFetch()`, also kept
    ///   in ``lastError``; `CancellationError`.
    /// - Complexity: one identifier scan, O(n), off the main actor (or one cache file
    ///   read), then O(sections) on it.
    public func performFetch() async throws {
        generation += 1
        let generation = self.generation
        loadingState = .loading
        do {
            try await controller.performFetch()
        } catch {
            guard generation == self.generation else { return }
            loadingState = hasResults ? .loaded : .idle
            if error is CancellationError { throw error }
            throw fail(error)
        }
        guard generation == self.generation else { return }
        showFetched(request: content.request, sectionBy: content.sectionKey)
    }

    /// Fetches the results on the calling thread, then follows the store. Loads no record.
    ///
    /// - Throws: the errors of ``FetchedResultsController``'s `performFetch()`, also kept
    ///   in ``lastError``.
    /// - Complexity: one identifier scan, O(n), on the main actor (or one cache file read).
    public func performFetch() throws {
        generation += 1
        do {
            try controller.performFetch()
        } catch {
            loadingState = hasResults ? .loaded : .idle
            throw fail(error)
        }
        showFetched(request: content.request, sectionBy: content.sectionKey)
    }

    /// Waits until every commit made so far has reached the model.
    ///
    /// - Complexity: O(1) to check; it suspends until the deliveries arrive.
    public func waitForChanges() async {
        await controller.waitForChanges()
    }

    /// Waits until the results are complete (``isComplete``): at once when they are.
    ///
    /// - Throws: the error that stopped the background read (also in ``lastError``).
    /// - Complexity: O(1) to check; it suspends until the rest of the results is read.
    public func waitUntilComplete() async throws {
        try await controller.waitUntilComplete()
    }

    // MARK: Following the controller

    /// A change set arrived from `source`: one notification, unless it changes nothing.
    func controller(_ source: FetchedResultsController<R>, didDeliver changes: ChangeSet) {
        guard source === controller, !applyingRequest, !changes.isEmpty else { return }
        // A commit after a failure recovers: the results and the error as one change.
        show(makeContent(request: content.request, sectionBy: content.sectionKey), clearingError: true)
        if isComplete != controller.isComplete { isComplete = controller.isComplete }
    }

    /// `source` could not follow a commit.
    func controller(_ source: FetchedResultsController<R>, didFailWith error: FolioError) {
        guard source === controller else { return }
        lastError = error
    }

    /// Shows what a fetch or request change produced: one notification for the results
    /// (the error and loading state notify only their own observers, and only if they change).
    func showFetched(request: RecordRequest<R>, sectionBy: SectionKey<R>?) {
        show(makeContent(request: request, sectionBy: sectionBy), clearingError: true)
        if isComplete != controller.isComplete { isComplete = controller.isComplete }
        hasResults = true
        loadingState = .loaded
    }

    /// Shows new results and, when `clearingError`, clears ``lastError``: when there is an
    /// error to clear, both change in one mutation — one notification for every observer of
    /// either — and otherwise the results alone.
    func show(_ new: Content, clearingError: Bool) {
        if clearingError, storedError != nil {
            withMutation(keyPath: \.resultsAndError) {
                storedContent = new
                storedError = nil
            }
        } else {
            content = new
        }
    }

    /// Records an error (cancellation is not one) and returns it to throw.
    func fail(_ error: any Error) -> any Error {
        if !(error is CancellationError) { lastError = FolioError.converting(error) }
        return error
    }

    /// A controller with its own relay as delegate, set before any fetch so that tracking
    /// starts with the fetch.
    func makeController(
        _ request: RecordRequest<R>, sectionBy: SectionKey<R>?
    ) -> (controller: FetchedResultsController<R>, relay: FetchedResultsModelRelay<R>) {
        let new = FetchedResultsController(request, store: store, sectionBy: sectionBy, cacheName: cacheName)
        let relay = FetchedResultsModelRelay<R>()
        relay.model = self
        new.delegate = relay
        return (new, relay)
    }

    /// Replaces the controller; the old one is released (it stops tracking) and nothing it
    /// still delivers reaches the model.
    func replaceController(with new: (controller: FetchedResultsController<R>, relay: FetchedResultsModelRelay<R>)) {
        relay.model = nil
        relay = new.relay
        controller = new.controller
        hasResults = false
    }

    func makeContent(request: RecordRequest<R>, sectionBy: SectionKey<R>?) -> Content {
        guard let records = controller.fetchedObjects else {
            return Content(
                request: request, sectionKey: sectionBy, sections: [],
                items: FetchedItems(records: .empty(store), bounds: 0..<0))
        }
        let snapshot = controller.snapshot
        var sections: [FetchedSection<R>] = []
        sections.reserveCapacity(snapshot.sections.count)
        for (info, run) in zip(snapshot.sections, snapshot.state.runs) {
            sections.append(FetchedSection(id: FetchedSection.ID(value: run.value), info: info, records: records))
        }
        return Content(
            request: request, sectionKey: sectionBy, sections: sections,
            items: FetchedItems(records: records, bounds: 0..<records.count))
    }
}

/// The model's delegate on its controller: a separate object, because a controller holds
/// its delegate weakly and the model's own conformance would make the delegate methods
/// part of its public API.
@MainActor
final class FetchedResultsModelRelay<R: PersistentRecord>: FetchedResultsControllerDelegate {
    weak var model: FetchedResultsModel<R>?

    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith changes: ChangeSet) {
        model?.controller(controller, didDeliver: changes)
    }

    func controller(_ controller: FetchedResultsController<R>, didFailWith error: FolioError) {
        model?.controller(controller, didFailWith: error)
    }
}

extension FetchedRecords {
    /// Results with no rows (before a fetch).
    static func empty(_ store: Store) -> FetchedRecords {
        FetchedResultsController<R>.noRecords(in: store)
    }
}
