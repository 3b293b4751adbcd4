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
/// section information is also kept in a file and reused by the next ``performFetch()``
/// when it is still valid (checked against the database's identity, the entity's version
/// hash, the request, the section key and the entity's change token — never trusted
/// blindly; ``SectionCache`` lists every check).
@MainActor
public final class FetchedResultsController<R: PersistentRecord> {
    /// The request; change it with ``setRequest(_:)``.
    public private(set) var fetchRequest: RecordRequest<R>
    /// The store fetched from.
    public let store: Store
    /// What divides the results into sections, or `nil` for one section.
    public let sectionKey: SectionKey<R>?
    /// The name of the persistent section cache, or `nil`.
    public let cacheName: String?
    /// Receives the changes. Setting one on a fetched controller starts tracking.
    public weak var delegate: (any FetchedResultsControllerDelegate<R>)? {
        didSet { startTrackingIfNeeded() }
    }
    /// The index title of a section name, `nil` to leave the section out of the index
    /// (what subclasses override `sectionIndexTitle(forSectionName:)` for in the original).
    /// When not set: the month (`YYYY-MM`) of `.day` sections, and otherwise the name's
    /// first character, capitalized, as in the original.
    public var sectionIndexTitle: (@MainActor (String) -> String?)? = nil {
        didSet {
            sectionInfos = nil
            sectionNames = [:]
        }
    }

    /// Name and index title by section value: computed once per section, not per change.
    private var sectionNames: [DatabaseValue: (name: String, indexTitle: String?)] = [:]

    /// What the last ``performFetch()`` did with the persistent cache.
    public private(set) var lastCacheOutcome: SectionCache.Outcome = .notUsed

    private var presented: ResultsState?
    private var sectionInfos: [SectionInfo]?
    private var results: FetchedRecords<R>?
    private var tracker: ResultsTracker?
    private var deliveryTask: Task<Void, Never>?
    private var appliedSerial: UInt64 = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var cacheWriteTask: Task<Void, Never>?

    /// Creates a controller. Nothing is read until ``performFetch()``.
    ///
    /// - Parameters:
    ///   - request: at least one sort descriptor; with sections, the first one must sort
    ///     by the section key's attribute.
    ///   - sectionBy: the section key, or `nil` for a single section.
    ///   - cacheName: a plain file name for the persistent section cache.
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
    ///   ``FolioError/invalidCacheName(_:reason:)``, predicate errors, SQLite errors.
    public func performFetch() throws {
        _ = nextGeneration()
        let (state, tracker) = try load(fetchRequest)
        replaceTracker(tracker)
        setPresented(state)
    }

    /// Fetches like ``performFetch()``, reading on a background connection so the main
    /// actor stays free during the identifier scan.
    public func performFetch() async throws {
        let generation = nextGeneration()
        let (state, tracker) = try await loadAsync(fetchRequest)
        guard generation == self.generation else {
            if let tracker { tracker.stop(); store.hub.unsubscribe(tracker) }
            return
        }
        replaceTracker(tracker)
        setPresented(state)
    }

    private var generation = 0
    private func nextGeneration() -> Int {
        generation += 1
        return generation
    }

    /// Replaces the request on a live controller — a new predicate, sort, limit — and
    /// reports the difference from what was shown as a change set (also delivered to the
    /// delegate and to ``changes``).
    @discardableResult
    public func setRequest(_ request: RecordRequest<R>) throws -> ChangeSet {
        _ = nextGeneration()
        let (state, tracker) = try load(request)
        fetchRequest = request
        replaceTracker(tracker)
        guard let old = presented else {
            setPresented(state)
            return ChangeSet()
        }
        // Past 100,000 rows a request change is a reload: the difference would take
        // longer to compute (on the main actor) than a table view takes to reload.
        let change =
            old.ids.count + state.ids.count > 100_000
            ? ChangeSet.reload
            : ResultsTracker.limitReload(ChangeSetBuilder.diff(old: old, new: state, changed: nil))
        deliver(change, newState: state)
        return change
    }

    /// Waits until every commit made so far has been delivered.
    public func waitForChanges() async {
        while let tracker, appliedSerial < tracker.serial {
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    private func validatedQuery(_ request: RecordRequest<R>) throws -> (CompiledQuery, SectionExpression?) {
        try store.requireEntity(R.self)
        let query = try request.compile(requireSort: true)
        guard let sectionKey else { return (query, nil) }
        let column = try R.entity.column(for: sectionKey.keyPath)
        if query.order.first?.column != column {
            throw FolioError.sectionKeyNotLeadingSort(
                sectionKey: sectionKey.description,
                firstSort: request.sortBy.first.map { "\($0.keyPath.map { "\($0)" } ?? "\($0)")" } ?? "none")
        }
        return (query, try sectionKey.expression())
    }

    /// Everything a fetch needs, prepared on the main actor.
    private struct LoadPlan: Sendable {
        var query: CompiledQuery
        var section: SectionExpression?
        var cacheURL: URL?
        var fingerprint: SectionCache.Fingerprint
        var tracker: ResultsTracker?
        var diagnostics: Diagnostics

        /// Reads the state — from the cache when valid — in one read transaction.
        func read(_ db: Database) throws -> (ResultsState, SectionCache.Outcome, ChangeToken) {
            let token = try Store.changeToken(table: query.table, db)
            var outcome = SectionCache.Outcome.notUsed
            if let cacheURL {
                switch SectionCache.read(cacheURL, expecting: fingerprint, token: token) {
                case .success(let state): return (state, .reused, token)
                case .failure(let reason): outcome = .rebuilt(reason)
                }
            }
            let state = try ResultsTracker.fetchFull(db, query: query, section: section, diagnostics: diagnostics)
            return (state, outcome, token)
        }
    }

    /// Validates the request and subscribes a tracker first, so that no commit can fall
    /// between the read and the tracking.
    private func plan(_ request: RecordRequest<R>) throws -> LoadPlan {
        let (query, section) = try validatedQuery(request)
        let cacheURL = try cacheName.map { try SectionCache.url(forName: $0, in: store) }
        var tracker: ResultsTracker? = nil
        if wantsTracking {
            let t = ResultsTracker(query: query, section: section, diagnostics: store.diagnostics, readsToken: cacheName != nil)
            store.hub.subscribe(t)
            tracker = t
        }
        return LoadPlan(
            query: query, section: section, cacheURL: cacheURL, fingerprint: fingerprint(query),
            tracker: tracker, diagnostics: store.diagnostics)
    }

    private func fingerprint(_ query: CompiledQuery) -> SectionCache.Fingerprint {
        SectionCache.Fingerprint(
            entity: R.entity.name, versionHash: R.entity.versionHash, query: query.fingerprint,
            sectionKey: sectionKeyFingerprint)
    }

    /// The section key and how it is computed (its SQL), so that a cache written by a
    /// version of Folio that computed sections differently is not reused.
    private var sectionKeyFingerprint: String {
        guard let sectionKey else { return "-" }
        let expression = try? sectionKey.expression()
        return
            "\(sectionKey.description) sql=\(expression?.fragment.fingerprint ?? "?") day=\(expression?.dayOffset.map(String.init) ?? "-")"
    }

    /// Installs what was read. The tracker it returns with `catchUp` saw commits while the
    /// state was read: run its ``ResultsTracker/catchUp(_:)`` on the writer's queue now
    /// (their change set is delivered after this state), not at a next commit that may
    /// never come.
    private func finish(_ plan: LoadPlan, _ loaded: (ResultsState, SectionCache.Outcome, ChangeToken))
        -> (state: ResultsState, tracker: ResultsTracker?, catchUp: ResultsTracker?)
    {
        let (full, outcome, token) = loaded
        let needsCatchUp = plan.tracker?.install(full) ?? false
        lastCacheOutcome = outcome
        // What later commits need to rewrite the cache (windowed results are not cached live).
        liveCache = plan.cacheURL.flatMap { plan.query.isWindowed ? nil : ($0, plan.fingerprint) }
        if let cacheURL = plan.cacheURL, outcome != .reused {
            scheduleCacheWrite(full, fingerprint: plan.fingerprint, token: token, to: cacheURL, delay: false)
        }
        let query = plan.query
        let presentedState = query.isWindowed ? full.window(offset: query.offset ?? 0, limit: query.limit) : full
        return (presentedState, plan.tracker, needsCatchUp ? plan.tracker : nil)
    }

    private func abandon(_ plan: LoadPlan) {
        if let tracker = plan.tracker {
            tracker.stop()
            store.hub.unsubscribe(tracker)
        }
    }

    private func load(_ request: RecordRequest<R>) throws -> (ResultsState, ResultsTracker?) {
        let plan = try plan(request)
        do {
            let loaded = finish(plan, try store.readSync { db in try plan.read(db) })
            if let tracker = loaded.catchUp { try store.onWriterQueue { db in tracker.catchUp(db) } }
            return (loaded.state, loaded.tracker)
        } catch {
            abandon(plan)
            throw error
        }
    }

    private func loadAsync(_ request: RecordRequest<R>) async throws -> (ResultsState, ResultsTracker?) {
        let plan = try plan(request)
        do {
            let loaded = finish(plan, try await store.read { db in try plan.read(db) })
            if let tracker = loaded.catchUp { try await store.onWriterQueue { db in tracker.catchUp(db) } }
            return (loaded.state, loaded.tracker)
        } catch {
            abandon(plan)
            throw error
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

    private func startTrackingIfNeeded() {
        guard presented != nil, tracker == nil, wantsTracking else { return }
        _ = try? setRequest(fetchRequest)
    }

    // MARK: Delivery

    private func receive(_ delivery: ResultsTracker.Delivery, from source: ResultsTracker) {
        guard source === tracker else { return }
        appliedSerial = delivery.serial
        if delivery.change.isReload {
            // The tracker lost track: read afresh, and tell the delegate to reload.
            if let (state, tracker) = try? load(fetchRequest) {
                replaceTracker(tracker)
                deliver(.reload, newState: state)
                return
            }
        }
        deliver(delivery.change, newState: delivery.state, changed: delivery.changed)
        if let token = delivery.token, let (url, fingerprint) = liveCache {
            scheduleCacheWrite(delivery.state, fingerprint: fingerprint, token: token, to: url, delay: true)
        }
        resumeWaiters()
    }

    private func resumeWaiters() {
        guard !waiters.isEmpty else { return }
        if let tracker, appliedSerial < tracker.serial { return }
        let ready = waiters
        waiters = []
        for waiter in ready { waiter.resume() }
    }

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

    /// Records the previous results had loaded and the last commit did not touch.
    private var inheritedRecords: [Int64: R] = [:]

    // MARK: Change sets as a sequence

    /// Every change set from now on, one per commit that changed the results, in commit
    /// order. Each access returns a new sequence; iterating it starts tracking.
    ///
    /// The controller does not wait for consumers: when reading its state while handling a
    /// change set, use ``updates``, which delivers the matching snapshot with it.
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
    public var updates: AsyncStream<ControllerUpdate> {
        defer { startTrackingIfNeeded() }
        return updateSubscribers.subscribe()
    }

    private let changeSubscribers = Subscribers<ChangeSet>()
    private let updateSubscribers = Subscribers<ControllerUpdate>()

    // MARK: Reading the results

    /// The results, lazily loaded in batches of the request's batch size; `nil` before
    /// ``performFetch()``. Never a copied array.
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
    public var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return sections.compactMap(\.indexTitle).filter { seen.insert($0).inserted }
    }

    /// The section a section-index title jumps to: the first section with that title;
    /// for a title with no section, the first section whose title sorts after it (or the
    /// last section). `index` is the title's position in ``sectionIndexTitles``.
    public func section(forSectionIndexTitle title: String, at index: Int) -> Int {
        let all = sections
        if let exact = all.firstIndex(where: { $0.indexTitle == title }) { return exact }
        if let after = all.firstIndex(where: { ($0.indexTitle ?? "") > title }) { return after }
        return Swift.max(0, all.count - 1)
    }

    /// The record at an index path (loading its batch if needed); `nil` if it was deleted
    /// since the last change set was delivered.
    public func object(at indexPath: IndexPath) -> R? {
        guard let objects = fetchedObjects else { return nil }
        return objects[flatIndex(indexPath)]
    }

    /// The identifier at an index path. Loads nothing.
    public func identifier(at indexPath: IndexPath) -> RecordID {
        RecordID(presented!.ids[flatIndex(indexPath)])
    }

    /// The index path of a record, or `nil` if it is not in the results.
    /// - Complexity: O(n): one pass over the identifiers in memory; loads nothing.
    public func indexPath(for id: RecordID) -> IndexPath? {
        guard let presented, let index = presented.ids.positions(of: [id.rawValue])[id.rawValue] else { return nil }
        return ResultsState.path(of: index, offsets: presented.offsets)
    }

    /// The sections and identifiers now, loading no record. O(sections).
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
        _ state: ResultsState, fingerprint: SectionCache.Fingerprint, token: ChangeToken, to url: URL, delay: Bool
    ) {
        cacheWriteTask?.cancel()
        cacheWriteTask = Task.detached(priority: .utility) {
            if delay { try? await Task.sleep(for: .milliseconds(500)) }
            guard !Task.isCancelled else { return }
            try? SectionCache.write(state, fingerprint: fingerprint, token: token, to: url)
        }
    }

    /// Waits for a pending cache write (tests, and before quitting).
    public func flushCache() async {
        await cacheWriteTask?.value
    }

    /// Deletes the cache file with `name` (all of the caches in the store's cache directory
    /// when `nil`). Only files Folio wrote are deleted, never a directory, a link or
    /// another file.
    ///
    /// - Throws: ``FolioError/invalidCacheName(_:reason:)`` for a name that is not a plain
    ///   file name, or when what is at the cache's path is not a cache Folio wrote (it is
    ///   left in place).
    /// - Complexity: one `lstat` and a read of 7 bytes per file in the cache directory.
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
