import Foundation
import GRDB

extension FetchedResultsController {
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
            return try store.readWithCurrentKeys(load.tables) { db in try load.read(db) }
        } catch {
            load.abandon()
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
            loaded = try await store.readWithCurrentKeys(load.tables) { db in try load.read(db) }
        } catch {
            load.abandon()
            throw error
        }
        guard generation == self.generation else {
            load.abandon()
            return
        }
        setPresented(install(load, loaded))
    }

    private func nextGeneration() -> Int {
        generation += 1
        return generation
    }

    /// Replaces the request on a live controller — a new predicate, sort, limit — and
    /// reports the difference from what was shown as a change set (also delivered to the
    /// delegate, to ``changes`` and to ``updates``).
    ///
    /// - Complexity: one identifier scan, O(n), on the calling thread, and a difference,
    ///   O(n log n); past 100,000 rows (old and new together) the change set is
    ///   ``ChangeSet/reload``.
    @discardableResult
    public func setRequest(_ request: RecordRequest<R>) throws -> ChangeSet {
        _ = nextGeneration()
        let load = try makeLoad(request)
        let loaded = try read(load)
        let state = install(load, loaded)
        guard let old = presented else {
            fetchRequest = request
            setPresented(state)
            return ChangeSet()
        }
        // Too many rows to compare on the main actor: a reload (see ReloadPolicy).
        let change = ReloadPolicy.requestChange(from: old, to: state)
        // The delegate's "will" callbacks still see the old request and its rows.
        deliver(change, newState: state, newRequest: request)
        return change
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
        let source = try sectionKey.source(under: query)
        if !source.isOrdered(by: query.order.first) {
            throw FolioError.sectionKeyNotLeadingSort(
                sectionKey: sectionKey.description,
                firstSort: request.sortBy.first.map { $0.keyPath.map(SectionKey<R>.name(of:)) ?? "\($0)" } ?? "none")
        }
        return (query, sectionKey.expression(source: source, table: query.table))
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
        guard let source = try? sectionKey.source(under: query) else { return "\(sectionKey.description) sql=? values=exact" }
        let expression = sectionKey.expression(source: source, table: query.table)
        let day = expression.dayOffset.map { String($0) } ?? "-"
        return "\(sectionKey.description) sql=\(expression.fragment.fingerprint) day=\(day) values=exact"
    }

    /// Installs what was read and starts its tracker (catching up on the writer's queue if
    /// commits landed during the read); returns the state to present.
    func install(_ load: ResultsLoad, _ loaded: ResultsLoad.Loaded) -> ResultsState {
        lastCacheOutcome = loaded.outcome
        lastError = nil
        // What later commits need to rewrite the cache (windowed results are not cached live).
        liveCache = load.cachesLive ? load.cacheURL.map { ($0, load.fingerprint) } : nil
        if let cacheURL = load.cacheURL, loaded.outcome != .reused {
            scheduleCacheWrite(loaded.full, fingerprint: load.fingerprint, token: loaded.token, to: cacheURL, delay: false)
        }
        replaceLive(load.live)
        untracked = load.live == nil ? loaded : nil
        if let live = load.install(loaded) { scheduleCatchUp(live) }
        return load.present(loaded.full)
    }

    /// Runs `live`'s catch-up on the writer's queue, after any catch-up scheduled before.
    func scheduleCatchUp(_ live: LiveResults) {
        let previous = catchUpTask
        catchUpTask = Task { [weak self] in
            await previous?.value
            do {
                try await live.catchUp()
            } catch {
                guard let self, self.live === live else { return }
                self.report(FolioError.converting(error))
            }
        }
    }

    /// Follows `new` from now on (or nothing), after stopping what was followed.
    func replaceLive(_ new: LiveResults?) {
        stopTracking()
        live = new
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

    /// Stops following the store: the tracker leaves the change hub and deliveries stop.
    /// The one place the controller lets go of its live results.
    func stopTracking() {
        live?.stop()
        live = nil
        deliveryTask?.cancel()
        deliveryTask = nil
    }

    /// A delegate or a subscriber arrived on a controller fetched without one: follow the
    /// store from what was fetched. The results are not read again here, on the caller:
    /// only the table's change token is, after subscribing. If it moved since the fetch, a
    /// catch-up on the writer's queue rescans and delivers ``ChangeSet/reload``; commits
    /// from now on are followed one by one.
    func startTrackingIfNeeded() {
        guard presented != nil, live == nil, wantsTracking, let loaded = untracked else { return }
        untracked = nil
        do {
            let (query, section) = try validatedQuery(fetchRequest)
            let (live, catchUpDue) = LiveResults.follow(loaded, query: query, section: section, store: store)
            replaceLive(live)
            if catchUpDue { scheduleCatchUp(live) }
        } catch {
            report(FolioError.converting(error))
        }
    }
}
