import Foundation
import GRDB

extension FetchedResultsController {
    // MARK: Fetching

    /// Fetches the identifiers and sections (or reuses a valid persistent cache), and
    /// with ``completesInBackground`` set, returns as soon as the first screen is known.
    /// Loads no record.
    ///
    /// A list whose identifier scan ends within the first-screen budget (about 3,000 rows
    /// looked at and 4 ms) is complete when this returns. A longer one returns with its first
    /// rows — at least the request's `batchSize`, and 50 — and the sections they are in
    /// (``isComplete`` is `false`); the rest is read in the background and arrives as one
    /// change set, ``ChangeSet/isCompletion``. The article *Large Lists* says what the
    /// controller answers meanwhile.
    ///
    /// - Throws: ``FolioError/missingSortDescriptor(entity:)``,
    ///   ``FolioError/sectionKeyNotLeadingSort(sectionKey:firstSort:)``,
    ///   ``FolioError/sectionsNotContiguous(_:)``,
    ///   ``FolioError/invalidCacheName(_:reason:)``, predicate errors, SQLite errors.
    /// - Complexity: the first screen's part of the identifier scan on the calling thread (or
    ///   one cache file read); the rest of the scan, O(n), in the background. Commits that
    ///   land meanwhile are caught up with afterwards, on the store's writer queue.
    public func performFetch() throws {
        _ = nextGeneration()
        let load = try makeLoad(fetchRequest, zone: sectionKey?.resolvedZone())
        let first = try read(load)
        setPresented(try show(load, first))
    }

    /// Reads `load` on the calling thread (with current folded keys: see
    /// `Store.readWithCurrentKeys`), up to its first screen; abandons it (unsubscribing its
    /// tracker) if the read fails.
    private func read(_ load: ResultsLoad) throws -> ResultsLoad.Loaded {
        do {
            return try store.readWithCurrentKeys(load.tables, searching: load.searchedTable) { db in try load.readFirstScreen(db)
            }
        } catch {
            load.abandon()
            throw error
        }
    }

    /// Installs what was read and returns the state to present; for a first screen, starts
    /// reading the rest in the background first.
    private func show(_ load: ResultsLoad, _ first: ResultsLoad.Loaded) throws -> ResultsState {
        handOverHook?(.stateRead)
        guard !first.complete else { return install(load, first) }
        let shown: ResultsLoad.Loaded
        let completion: ResultsLoad.Completion?
        do {
            (shown, completion) = try ResultsLoad.Completion.start(load, after: first, store: store)
        } catch {
            load.abandon()
            throw error
        }
        let state = install(load, shown)
        if let completion { complete(load, with: completion) }
        return state
    }

    /// Fetches like ``performFetch()-68xbj``, reading on a background connection so the main
    /// actor stays free during the identifier scan.
    ///
    /// - Complexity: the first screen's part of the identifier scan off the main actor, then
    ///   the rest, O(n), in the background (see ``performFetch()-68xbj``).
    public func performFetch() async throws {
        let generation = nextGeneration()
        let load = try makeLoad(fetchRequest, zone: sectionKey?.resolvedZone())
        let loaded: ResultsLoad.Loaded
        do {
            loaded = try await store.readWithCurrentKeys(load.tables, searching: load.searchedTable) { db in
                try load.readFirstScreen(db)
            }
        } catch {
            load.abandon()
            throw error
        }
        guard generation == self.generation else {
            load.abandon()
            return
        }
        setPresented(try show(load, loaded))
    }

    private func nextGeneration() -> Int {
        generation += 1
        cancelCompletion()
        return generation
    }

    /// Replaces the request on a live controller — a new predicate, sort, limit — and
    /// reports the difference from what was shown as a change set (also delivered to the
    /// delegate, to ``changes`` and to ``updates``).
    ///
    /// The new results are read up to their first screen, as by ``performFetch()-68xbj``:
    /// when they do not fit it, the change set is ``ChangeSet/reload`` and the rest arrives
    /// later as ``ChangeSet/isCompletion``. A request set while the previous one is still
    /// being completed stops that read.
    ///
    /// - Complexity: the first screen's part of the identifier scan on the calling thread,
    ///   and a difference, O(n log n); past 100,000 rows (old and new together) the change
    ///   set is ``ChangeSet/reload``.
    @discardableResult
    public func setRequest(_ request: RecordRequest<R>) throws -> ChangeSet {
        _ = nextGeneration()
        // The zone of the sections shown: a new request does not move the user.
        let load = try makeLoad(request, zone: sectionZone ?? sectionKey?.resolvedZone())
        let first = try read(load)
        let state = try show(load, first)
        guard let old = presented else {
            fetchRequest = request
            setPresented(state)
            return ChangeSet()
        }
        // Too many rows to compare on the main actor, or the rest still to read: a reload.
        let change = isComplete ? ReloadPolicy.requestChange(from: old, to: state) : .reload
        // The delegate's "will" callbacks still see the old request and its rows.
        deliver(change, newState: state, newRequest: request)
        return change
    }

    /// The request compiled, and its section expression, day sections in `zone`.
    private func validatedQuery(_ request: RecordRequest<R>, zone: DayZone?) throws -> (CompiledQuery, SectionExpression?) {
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
        return (query, sectionKey.expression(source: source, table: query.table, zone: zone))
    }

    /// Validates the request and, when the controller tracks, subscribes a tracker first,
    /// so that no commit can fall between the read and the tracking.
    private func makeLoad(_ request: RecordRequest<R>, zone: DayZone?) throws -> ResultsLoad {
        let (query, section) = try validatedQuery(request, zone: zone)
        let cacheURL = try cacheName.map { try SectionCache.url(forName: $0, in: store) }
        let firstScreen = (completesInBackground ? firstScreenRule : nil).map { rule in
            var rule = rule
            rule.rows = Swift.max(rule.rows, request.batchSize)
            return rule
        }
        return ResultsLoad(
            query: query, section: section, cacheURL: cacheURL, fingerprint: fingerprint(query, section: section),
            tracking: wantsTracking,
            firstScreen: firstScreen, completionHook: completionHook, store: store)
    }

    private func fingerprint(_ query: CompiledQuery, section: SectionExpression?) -> SectionCache.Fingerprint {
        SectionCache.Fingerprint(
            entity: R.entity.name, versionHash: R.entity.versionHash, query: query.fingerprint,
            sectionKey: sectionKeyFingerprint(section))
    }

    /// The section key and how it is computed (its SQL, that section values are stored as
    /// exact bytes, and for days the zone: its identifier and a digest of its transitions,
    /// which are not in the SQL), so that a cache written by a version of Folio that
    /// computed sections differently, in another zone, or under other rules of the zone,
    /// is not reused.
    private func sectionKeyFingerprint(_ section: SectionExpression?) -> String {
        guard let sectionKey else { return "-" }
        guard let section else { return "\(sectionKey.description) sql=? values=exact" }
        let day = section.dayZone.map { "zone(\($0.fingerprint))" } ?? "-"
        return "\(sectionKey.description) sql=\(section.fragment.fingerprint) day=\(day) values=exact"
    }

    /// Installs what was read and starts its tracker (catching up on the writer's queue if
    /// commits landed during the read); returns the state to present. For a first screen,
    /// the tracker only notes commits until the completion is installed
    /// (``installCompletion(_:_:)``).
    func install(_ load: ResultsLoad, _ loaded: ResultsLoad.Loaded) -> ResultsState {
        lastCacheOutcome = loaded.outcome
        sectionZone = load.dayZone
        lastError = nil
        // What later commits need to rewrite the cache (windowed results are not cached live).
        liveCache = load.cachesLive ? load.cacheURL.map { ($0, load.fingerprint) } : nil
        replaceLive(load.live)
        untracked = nil
        guard loaded.complete else { return load.present(loaded.full) }
        installComplete(load, loaded)
        return load.present(loaded.full)
    }

    /// The part of installing that needs the whole results: the cache, the tracker.
    private func installComplete(_ load: ResultsLoad, _ loaded: ResultsLoad.Loaded) {
        if let cacheURL = load.cacheURL, loaded.outcome != .reused {
            scheduleCacheWrite(loaded.full, fingerprint: load.fingerprint, token: loaded.token, to: cacheURL, delay: false)
        }
        untracked = load.live == nil ? loaded : nil
        if let live = load.install(loaded) { scheduleCatchUp(live) }
    }

    /// Waits on the main actor for `completion`, then installs what it read.
    private func complete(_ load: ResultsLoad, with completion: ResultsLoad.Completion) {
        let generation = self.generation
        self.completion = (completion, generation)
        completionStarted += 1
        completionTask = Task { [weak self] in
            let result: Result<ResultsLoad.Loaded, any Error>
            do {
                result = .success(try await completion.value())
            } catch {
                result = .failure(error)
            }
            guard let self, self.completion?.generation == generation, self.generation == generation else { return }
            switch result {
            case .success(let loaded):
                self.completion = nil
                self.installCompletion(load, loaded)
            case .failure(let error):
                // The first screen stays shown, incomplete; a later fetch reads again.
                if !(error is CancellationError) { self.report(FolioError.converting(error)) }
            }
        }
    }

    /// Shows the complete results — one change set, ``ChangeSet/isCompletion`` — then starts
    /// the tracker from them, which catches up with the commits that landed meanwhile.
    private func installCompletion(_ load: ResultsLoad, _ loaded: ResultsLoad.Loaded) {
        handOverHook?(.completionRead)
        // A first screen shown before a large cache: whether the completion could read it.
        lastCacheOutcome = loaded.outcome
        let state = load.present(loaded.full)
        // Always true (the completion reads the snapshot the first screen came from): checked,
        // since a change set that did not lead from what is shown would corrupt a table view.
        let change = presented.map { state.extends($0) } == true ? ChangeSet.completion : .reload
        let generation = self.generation
        deliver(change, newState: state, changed: [])
        // A delegate callback fetched again: these results are no longer followed.
        guard generation == self.generation else { return }
        installComplete(load, loaded)
        // A delegate or subscriber arrived while the results were read without tracking.
        startTrackingIfNeeded()
    }

    /// Stops reading the rest of the results, when a newer fetch replaces them.
    func cancelCompletion() {
        completion?.reader.cancel()
        completion = nil
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
    /// only the change log's end is, after subscribing. If it moved since the fetch, a
    /// catch-up on the writer's queue applies the rows the log holds after the fetch's
    /// position (``ResultsLoad/Loaded/seq``) as one change set (a rescan and
    /// ``ChangeSet/reload`` when the log no longer holds them); commits from now on are
    /// followed one by one.
    func startTrackingIfNeeded() {
        guard presented != nil, live == nil, wantsTracking, let loaded = untracked else { return }
        untracked = nil
        do {
            let (query, section) = try validatedQuery(fetchRequest, zone: sectionZone)
            let (live, catchUpDue) = LiveResults.follow(
                loaded, query: query, section: section, store: store, hook: handOverHook)
            replaceLive(live)
            if catchUpDue { scheduleCatchUp(live) }
        } catch {
            report(FolioError.converting(error))
        }
    }
}
