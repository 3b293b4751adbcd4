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
/// Tracking follows the original's three modes (see ``TrackingMode``): with neither a
/// delegate nor a ``changes`` subscriber nothing is tracked; with a ``cacheName`` the
/// section information is also kept in a file and reused by the next ``performFetch()-68xbj``
/// when it is still valid (checked against the database's identity, the entity's version
/// hash, the request, the section key and the entity's change token — never trusted
/// blindly; ``SectionCache`` lists every check).
@MainActor
public final class FetchedResultsController<R: PersistentRecord> {
    /// The request; change it with ``setRequest(_:)``.
    ///
    /// - Complexity: O(1).
    public private(set) var fetchRequest: RecordRequest<R>
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
    /// fetching again on the caller (only the table's change token is read): if the table
    /// changed since the fetch, a catch-up on the store's writer queue rescans and delivers
    /// ``ChangeSet/reload``.
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
        }
    }

    /// Name and index title by section value: computed once per section, not per change.
    private var sectionNames: [SQLiteValue: (name: String, indexTitle: String?)] = [:]

    /// What the last ``performFetch()-68xbj`` did with the persistent cache.
    /// - Complexity: O(1).
    public private(set) var lastCacheOutcome: SectionCache.Outcome = .notUsed

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
    public private(set) var lastError: FolioError?

    private var presented: ResultsState?
    private var sectionInfos: [SectionInfo]?
    private var results: FetchedRecords<R>?
    private var tracker: ResultsTracker?
    private var deliveryTask: Task<Void, Never>?
    private var appliedSerial: UInt64 = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var cacheWriteTask: Task<Void, Never>?
    /// The last catch-up scheduled on the writer's queue (each waits for the one before).
    private var catchUpTask: Task<Void, Never>?
    /// What the last fetch read, kept while nothing tracks it: tracking starts from it.
    private var untracked: ResultsLoad.Loaded?

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
        tracker?.stop()
        if let tracker { store.hub.unsubscribe(tracker) }
        deliveryTask?.cancel()
        changeSubscribers.finish()
        updateSubscribers.finish()
    }

    /// How the controller follows the store now.
    /// - Complexity: O(1).
    public var trackingMode: TrackingMode {
        guard wantsTracking else { return .none }
        return cacheName == nil ? .memory : .persistent
    }

    private var wantsTracking: Bool { delegate != nil || !changeSubscribers.isEmpty || !updateSubscribers.isEmpty }

    // MARK: Fetching

    /// Fetches the identifiers and sections (or reuses a valid persistent cache).
    /// Loads no record.
    ///
    /// - Throws: ``FolioError/missingSortDescriptor(entity:)``,
    ///   ``FolioError/sectionKeyNotLeadingSort(sectionKey:firstSort:)``,
    ///   ``FolioError/sectionsNotContiguous(_:)``,
    ///   ``FolioError/invalidCacheName(_:reason:)``, predicate errors, SQLite errors.
    /// - Complexity: one identifier scan, O(n), on the calling thread (or one cache file read);
    ///   commits that land meanwhile are caught up with afterwards, on the store's writer queue.
    public func performFetch() throws {
        _ = nextGeneration()
        let load = try makeLoad(fetchRequest)
        setPresented(install(load, try read(load)))
    }

    /// Reads `load` on the calling thread (with current folded keys: see
    /// `Store.readWithCurrentKeys`); abandons it (unsubscribing its tracker) if the read fails.
    private func read(_ load: ResultsLoad) throws -> ResultsLoad.Loaded {
        do {
            return try store.readWithCurrentKeys(load.updater.table) { db in try load.read(db) }
        } catch {
            load.abandon(store)
            throw error
        }
    }

    /// Fetches like ``performFetch()-68xbj``, reading on a background connection so the main
    /// actor stays free during the identifier scan.
    ///
    /// - Complexity: one identifier scan, O(n), off the main actor.
    public func performFetch() async throws {
        let generation = nextGeneration()
        let load = try makeLoad(fetchRequest)
        let loaded: ResultsLoad.Loaded
        do {
            loaded = try await store.readWithCurrentKeys(load.updater.table) { db in try load.read(db) }
        } catch {
            load.abandon(store)
            throw error
        }
        guard generation == self.generation else {
            load.abandon(store)
            return
        }
        setPresented(install(load, loaded))
    }

    private var generation = 0
    private func nextGeneration() -> Int {
        generation += 1
        return generation
    }

    /// Replaces the request on a live controller — a new predicate, sort, limit — and
    /// reports the difference from what was shown as a change set (also delivered to the
    /// delegate and to ``changes``).
    ///
    /// - Complexity: one identifier scan, O(n), on the calling thread, and a difference,
    ///   O(n log n); past 100,000 rows (old and new together) the change set is
    ///   ``ChangeSet/reload``.
    @discardableResult
    public func setRequest(_ request: RecordRequest<R>) throws -> ChangeSet {
        _ = nextGeneration()
        let load = try makeLoad(request)
        let loaded = try read(load)
        fetchRequest = request
        let state = install(load, loaded)
        guard let old = presented else {
            setPresented(state)
            return ChangeSet()
        }
        // Past 100,000 rows a request change is a reload: the difference would take
        // longer to compute (on the main actor) than a table view takes to reload.
        let change =
            old.ids.count + state.ids.count > 100_000
            ? ChangeSet.reload
            : ResultsUpdater.limitReload(ChangeSetBuilder.diff(old: old, new: state, changed: nil))
        deliver(change, newState: state)
        return change
    }

    /// Waits until every commit made so far has been delivered (and any catch-up the
    /// controller scheduled has run).
    ///
    /// - Complexity: O(1) to check; it suspends until the deliveries arrive.
    public func waitForChanges() async {
        while true {
            if let task = catchUpTask {
                await task.value
                if catchUpTask == task { catchUpTask = nil }
                continue
            }
            guard let tracker, appliedSerial < tracker.serial else { return }
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    private func validatedQuery(_ request: RecordRequest<R>) throws -> (CompiledQuery, SectionExpression?) {
        try store.requireEntity(R.self)
        let query = try request.compile(requireSort: true)
        if query.rankingQuery != nil {
            throw FolioError.invalidArgument(
                "a FetchedResultsController cannot rank a search by relevance: a record's relevance changes with every record written, so positions could not be followed; rank one-shot fetches (store.fetch) instead"
            )
        }
        guard let sectionKey else { return (query, nil) }
        let column = try sectionKey.column(under: query)
        if query.order.first?.column != column {
            throw FolioError.sectionKeyNotLeadingSort(
                sectionKey: sectionKey.description,
                firstSort: request.sortBy.first.map { "\($0.keyPath.map { "\($0)" } ?? "\($0)")" } ?? "none")
        }
        return (query, sectionKey.expression(column: column))
    }

    /// Validates the request and, when the controller tracks, subscribes a tracker first,
    /// so that no commit can fall between the read and the tracking.
    private func makeLoad(_ request: RecordRequest<R>) throws -> ResultsLoad {
        let (query, section) = try validatedQuery(request)
        let cacheURL = try cacheName.map { try SectionCache.url(forName: $0, in: store) }
        return ResultsLoad(
            query: query, section: section, cacheURL: cacheURL, fingerprint: fingerprint(query), tracking: wantsTracking,
            store: store)
    }

    private func fingerprint(_ query: CompiledQuery) -> SectionCache.Fingerprint {
        SectionCache.Fingerprint(
            entity: R.entity.name, versionHash: R.entity.versionHash, query: query.fingerprint,
            sectionKey: sectionKeyFingerprint(query))
    }

    /// The section key and how it is computed (its SQL, and that section values are stored
    /// as exact bytes), so that a cache written by a version of Folio that computed sections
    /// differently is not reused.
    private func sectionKeyFingerprint(_ query: CompiledQuery) -> String {
        guard let sectionKey else { return "-" }
        guard let column = try? sectionKey.column(under: query) else { return "\(sectionKey.description) sql=? values=exact" }
        let expression = sectionKey.expression(column: column)
        let day = expression.dayOffset.map { String($0) } ?? "-"
        return "\(sectionKey.description) sql=\(expression.fragment.fingerprint) day=\(day) values=exact"
    }

    /// Installs what was read and starts its tracker (catching up on the writer's queue if
    /// commits landed during the read); returns the state to present.
    private func install(_ load: ResultsLoad, _ loaded: ResultsLoad.Loaded) -> ResultsState {
        lastCacheOutcome = loaded.outcome
        lastError = nil
        // What later commits need to rewrite the cache (windowed results are not cached live).
        liveCache = load.cacheURL.flatMap { load.updater.query.isWindowed ? nil : ($0, load.fingerprint) }
        if let cacheURL = load.cacheURL, loaded.outcome != .reused {
            scheduleCacheWrite(loaded.full, fingerprint: load.fingerprint, token: loaded.token, to: cacheURL, delay: false)
        }
        replaceTracker(load.tracker)
        untracked = load.tracker == nil ? loaded : nil
        if let tracker = load.install(loaded) { scheduleCatchUp(tracker) }
        return load.updater.present(loaded.full)
    }

    /// Runs `tracker`'s catch-up on the writer's queue, after any catch-up scheduled before.
    private func scheduleCatchUp(_ tracker: ResultsTracker) {
        let store = self.store
        let previous = catchUpTask
        catchUpTask = Task { [weak self] in
            await previous?.value
            do {
                try await ResultsLoad.catchUp(tracker, on: store)
            } catch {
                guard let self, self.tracker === tracker else { return }
                self.report(FolioError.following(error))
            }
        }
    }

    private func replaceTracker(_ new: ResultsTracker?) {
        if let tracker {
            tracker.stop()
            store.hub.unsubscribe(tracker)
        }
        deliveryTask?.cancel()
        deliveryTask = nil
        tracker = new
        appliedSerial = 0
        resumeWaiters()
        guard let new else { return }
        deliveryTask = Task { [weak self] in
            for await delivery in new.deliveries {
                guard let self, !Task.isCancelled else { return }
                self.receive(delivery, from: new)
            }
        }
    }

    /// A delegate or a subscriber arrived on a controller fetched without one: follow the
    /// store from what was fetched. The results are not read again here, on the caller:
    /// only the table's change token is, after subscribing. If it moved since the fetch, a
    /// catch-up on the writer's queue rescans and delivers ``ChangeSet/reload``; commits
    /// from now on are followed one by one.
    private func startTrackingIfNeeded() {
        guard presented != nil, tracker == nil, wantsTracking, let loaded = untracked else { return }
        untracked = nil
        do {
            let (query, section) = try validatedQuery(fetchRequest)
            let tracker = ResultsTracker(
                query: query, section: section, diagnostics: store.diagnostics, readsToken: cacheName != nil)
            store.hub.subscribe(tracker)
            replaceTracker(tracker)
            // Subscribed first: a commit after this read is noted by the tracker.
            let token = try? store.readSync { db in try Store.changeToken(table: query.table, db) }
            let unchanged = tableUnchanged(since: loaded.token, now: token)
            if tracker.install(loaded.full, token: loaded.token, changedSinceRead: !unchanged) {
                scheduleCatchUp(tracker)
            }
        } catch {
            report(FolioError.following(error))
        }
    }

    // MARK: Delivery

    private func receive(_ delivery: ResultsTracker.Delivery, from source: ResultsTracker) {
        guard source === tracker else { return }
        appliedSerial = Swift.max(appliedSerial, delivery.serial)
        switch delivery.event {
        case .change(let change, let state, let changed, let token):
            lastError = nil
            deliver(change, newState: state, changed: changed)
            if let token, let (url, fingerprint) = liveCache {
                scheduleCacheWrite(state, fingerprint: fingerprint, token: token, to: url, delay: true)
            }
        case .failure(let error):
            report(error)
        }
        resumeWaiters()
    }

    /// The controller could not follow the store: say so everywhere errors are heard.
    private func report(_ error: FolioError) {
        lastError = error
        if !updateSubscribers.isEmpty {
            updateSubscribers.yield(ControllerUpdate(changes: ChangeSet(), snapshot: snapshot, error: error))
        }
        delegate?.controller(self, didFailWith: error)
    }

    private func resumeWaiters() {
        guard !waiters.isEmpty else { return }
        if let tracker, appliedSerial < tracker.serial { return }
        let ready = waiters
        waiters = []
        for waiter in ready { waiter.resume() }
    }

    /// Applies a change set. `changed` are the rows touched since the previous delivery:
    /// records loaded before and not among them are handed to the new results; `nil`
    /// (unknown, a reload, a request change) hands none over.
    private func deliver(_ change: ChangeSet, newState: ResultsState, changed: Set<Int64>? = nil) {
        let oldSections = delegate == nil ? [] : sections
        let held = changed.flatMap { changed in results?.loader.heldRecords(excluding: changed) } ?? [:]
        setPresented(newState)
        inheritedRecords = held
        changeSubscribers.yield(change)
        if !updateSubscribers.isEmpty { updateSubscribers.yield(ControllerUpdate(changes: change, snapshot: snapshot)) }
        guard let delegate else { return }
        delegate.controllerWillChangeContent(self)
        if !change.isReload {
            let newSections = sections
            for index in change.deletedSections {
                delegate.controller(self, didChange: oldSections[index], atSectionIndex: index, for: .delete)
            }
            for index in change.insertedSections {
                delegate.controller(self, didChange: newSections[index], atSectionIndex: index, for: .insert)
            }
            for (path, id) in zip(change.deletedItems, change.deletedIdentifiers) {
                delegate.controller(self, didChangeObject: id, at: path, for: .delete, newIndexPath: nil)
            }
            for (path, id) in zip(change.insertedItems, change.insertedIdentifiers) {
                delegate.controller(self, didChangeObject: id, at: nil, for: .insert, newIndexPath: path)
            }
            for (move, id) in zip(change.movedItems, change.movedIdentifiers) {
                delegate.controller(self, didChangeObject: id, at: move.from, for: .move, newIndexPath: move.to)
            }
            for (path, id) in zip(change.updatedItems, change.updatedIdentifiers) {
                delegate.controller(self, didChangeObject: id, at: path, for: .update, newIndexPath: nil)
            }
        }
        delegate.controllerDidChangeContent(self)
        delegate.controller(self, didChangeContentWith: change)
        delegate.controller(self, didChangeContentWith: snapshot)
    }

    /// The cache file and fingerprint of the current fetch, when commits should rewrite it.
    private var liveCache: (url: URL, fingerprint: SectionCache.Fingerprint)?

    private func setPresented(_ state: ResultsState) {
        presented = state
        sectionInfos = nil
        results = nil
        inheritedRecords = [:]
    }

    /// Records the previous results had loaded and no commit touched since.
    private var inheritedRecords: [Int64: R] = [:]

    // MARK: Change sets as a sequence

    /// Every change set from now on, one per commit that changed the results, in commit
    /// order. Each access returns a new sequence; iterating it starts tracking.
    ///
    /// The controller does not wait for consumers: when reading its state while handling a
    /// change set, use ``updates``, which delivers the matching snapshot with it. Errors
    /// are not in this sequence: see ``lastError`` and ``updates``.
    ///
    /// Subscribing to a controller fetched without tracking starts tracking without fetching
    /// again on the caller (only the table's change token is read); if the table changed
    /// since the fetch, the first change set is ``ChangeSet/reload``.
    /// - Complexity: O(1).
    public var changes: AsyncStream<ChangeSet> {
        defer { startTrackingIfNeeded() }
        return changeSubscribers.subscribe()
    }

    /// Every change set from now on with the snapshot it leads to, one per commit that
    /// changed the results, in commit order.
    ///
    /// Prefer this to ``changes`` when the consumer may run behind: by the time it reads a
    /// change set, the controller may have applied later ones, but the snapshot delivered
    /// with it is the state that change set produced.
    ///
    /// When the controller cannot follow a commit, an update with ``ControllerUpdate/error``
    /// set comes instead (its change set empty, its snapshot unchanged), and the sequence
    /// goes on: the controller recovers at a later commit (see ``lastError``).
    /// - Complexity: O(1).
    public var updates: AsyncStream<ControllerUpdate> {
        defer { startTrackingIfNeeded() }
        return updateSubscribers.subscribe()
    }

    private let changeSubscribers = Subscribers<ChangeSet>()
    private let updateSubscribers = Subscribers<ControllerUpdate>()

    // MARK: Reading the results

    /// The results, lazily loaded in batches of the request's batch size; `nil` before
    /// ``performFetch()-68xbj``. Never a copied array.
    /// - Complexity: O(1); loads nothing (subscripting it loads batches).
    public var fetchedObjects: FetchedRecords<R>? {
        if let results { return results }
        guard let presented else { return nil }
        let batchSize = fetchRequest.batchSize > 0 ? fetchRequest.batchSize : Swift.max(1, presented.ids.count)
        let made = FetchedRecords(
            loader: BatchLoader<R>(
                store: store, identifiers: presented.ids, batchSize: batchSize,
                maxBatches: fetchRequest.batchSize > 0 ? fetchRequest.maxBatchesInMemory : 1,
                inherited: inheritedRecords))
        inheritedRecords = [:]
        results = made
        return made
    }

    /// The sections. Computed from counts held in memory; loads no record.
    /// - Complexity: O(sections) the first time after a change, O(1) after that.
    public var sections: [SectionInfo] {
        if let sectionInfos { return sectionInfos }
        guard let presented else { return [] }
        var infos: [SectionInfo] = []
        infos.reserveCapacity(presented.runs.count)
        var offset = 0
        if sectionNames.count > 4 * presented.runs.count + 64 { sectionNames = [:] }
        for run in presented.runs {
            let label: (name: String, indexTitle: String?)
            if let known = sectionNames[run.value] {
                label = known
            } else {
                let name = presented.sectioned ? (sectionKey?.name(of: run.value) ?? "") : ""
                label = (name, sectionIndexTitle.map { $0(name) } ?? defaultIndexTitle(name))
                sectionNames[run.value] = label
            }
            infos.append(
                SectionInfo(
                    name: label.name, indexTitle: label.indexTitle, numberOfObjects: run.count,
                    offset: offset, isNil: presented.sectioned && run.value.isNull))
            offset += run.count
        }
        sectionInfos = infos
        return infos
    }

    private func defaultIndexTitle(_ name: String) -> String? {
        if case .day = sectionKey?.kind { return String(name.prefix(7)) }
        return name.first.map { String($0).uppercased() }
    }

    /// The index titles of the sections, in order, without repeats.
    /// - Complexity: O(sections).
    public var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return sections.compactMap(\.indexTitle).filter { seen.insert($0).inserted }
    }

    /// The section a section-index title jumps to: the first section with that title;
    /// for a title with no section, the first section whose title sorts after it (or the
    /// last section). `index` is the title's position in ``sectionIndexTitles``.
    /// - Complexity: O(sections).
    public func section(forSectionIndexTitle title: String, at index: Int) -> Int {
        let all = sections
        if let exact = all.firstIndex(where: { $0.indexTitle == title }) { return exact }
        if let after = all.firstIndex(where: { ($0.indexTitle ?? "") > title }) { return after }
        return Swift.max(0, all.count - 1)
    }

    /// The record at an index path (loading its batch if needed); `nil` if it was deleted
    /// since the last change set was delivered.
    ///
    /// The record is the stored one: a record loaded before a commit that changed it is
    /// read again once that commit's change set is delivered.
    ///
    /// It works inside one of the store's own `read` or `write` closures too (never a `nil`
    /// that would read as "deleted"): a batch that is not loaded is then read through that
    /// closure's connection — in a `write`, it sees the transaction's own uncommitted
    /// changes — and is not kept.
    /// - Complexity: O(1) when the item's batch is loaded; otherwise one query that loads
    ///   the batch (`batchSize` records).
    public func object(at indexPath: IndexPath) -> R? {
        guard let objects = fetchedObjects else { return nil }
        return objects[flatIndex(indexPath)]
    }

    /// The identifier at an index path. Loads nothing.
    /// - Complexity: O(1).
    public func identifier(at indexPath: IndexPath) -> RecordID {
        guard let presented else { preconditionFailure("identifier(at:) before performFetch(): there are no results yet") }
        return RecordID(presented.ids[flatIndex(indexPath)])
    }

    /// The index path of a record, or `nil` if it is not in the results.
    /// - Complexity: O(n): one pass over the identifiers in memory; loads nothing.
    public func indexPath(for id: RecordID) -> IndexPath? {
        guard let presented, let index = presented.ids.positions(of: [id.rawValue])[id.rawValue] else { return nil }
        return ResultsState.path(of: index, offsets: presented.offsets)
    }

    /// The sections and identifiers now, loading no record.
    /// - Complexity: O(sections); the identifiers are shared, not copied.
    public var snapshot: Snapshot {
        Snapshot(state: presented ?? .empty(sectioned: sectionKey != nil), sections: sections)
    }

    private func flatIndex(_ indexPath: IndexPath) -> Int {
        let info = sections[indexPath.section]
        precondition(indexPath.item >= 0 && indexPath.item < info.numberOfObjects, "Index path out of range")
        return info.offset + indexPath.item
    }

    // MARK: Persistent cache

    private func scheduleCacheWrite(
        _ state: ResultsState, fingerprint: SectionCache.Fingerprint, token: TableToken, to url: URL, delay: Bool
    ) {
        cacheWriteTask?.cancel()
        cacheWriteTask = Task.detached(priority: .utility) {
            if delay { try? await Task.sleep(for: .milliseconds(500)) }
            guard !Task.isCancelled else { return }
            try? SectionCache.write(state, fingerprint: fingerprint, token: token, to: url)
        }
    }

    /// Waits for a pending cache write (tests, and before quitting).
    /// - Complexity: O(1); suspends until the write ends.
    public func flushCache() async {
        await cacheWriteTask?.value
    }

    /// Deletes the cache file with `name` (all of the store's caches when `nil`).
    /// - Complexity: O(cache files).
    public static func deleteCache(withName name: String?, in store: Store) throws {
        try SectionCache.delete(name: name, in: store)
    }
}

/// The consumers of one of a controller's async sequences.
@MainActor
final class Subscribers<Element: Sendable> {
    private var continuations: [UUID: AsyncStream<Element>.Continuation] = [:]

    var isEmpty: Bool { continuations.isEmpty }

    /// A new sequence; it stops receiving when its iteration ends.
    func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let key = UUID()
        continuations[key] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { @MainActor in self?.continuations[key] = nil }
        }
        return stream
    }

    func yield(_ element: Element) {
        for continuation in continuations.values { continuation.yield(element) }
    }

    func finish() {
        for continuation in continuations.values { continuation.finish() }
    }
}
