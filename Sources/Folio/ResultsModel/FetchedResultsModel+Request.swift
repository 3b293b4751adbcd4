import Foundation

extension FetchedResultsModel {
    // MARK: Filter and sort

    /// The request the results follow. Setting it applies the new request to the live
    /// results as one change (one notification) — see ``setRequest(_:)``, which throws
    /// instead of setting ``lastError``.
    ///
    /// When the request cannot be applied (an untranslatable predicate, a sort that does not
    /// lead with the section key's attribute), the request and the results stay as they
    /// were and ``lastError`` says why. Before the first fetch, the new request is only
    /// kept: `performFetch()` uses (and checks) it. A request that selects, orders and
    /// batches exactly as the current one (the same value set again, as a binding that
    /// writes back what it read does) changes nothing: no scan, no notification.
    ///
    /// - Complexity: one identifier scan, O(n), on the main actor, and a difference,
    ///   O(n log n) (see ``FetchedResultsController/setRequest(_:)``); loads no record.
    public var fetchRequest: RecordRequest<R> {
        get { content.request }
        set { try? setRequest(newValue) }
    }

    /// Which records; `nil` for all. Setting it applies the change as ``fetchRequest`` does.
    ///
    /// - Complexity: as setting ``fetchRequest``: one identifier scan, O(n).
    public var predicate: Predicate<R>? {
        get { content.request.predicate }
        set { setRequest(\.predicate, to: newValue) }
    }

    /// A full-text search the records must also match; `nil` for none. Setting it applies
    /// the change as ``fetchRequest`` does — what a search field bound to the list sets as
    /// the user types (see <doc:SearchingAndSortingText>).
    ///
    /// ```swift
    /// model.search = text.isEmpty ? nil : TextSearch(text, matchingPrefixes: true)
    /// ```
    ///
    /// - Complexity: as setting ``fetchRequest``: one identifier scan of the matches.
    public var search: TextSearch<R>? {
        get { content.request.search }
        set { setRequest(\.search, to: newValue) }
    }

    /// The order. Setting it applies the change as ``fetchRequest`` does. With sections,
    /// the first sort descriptor must sort by the section key's attribute.
    ///
    /// - Complexity: as setting ``fetchRequest``: one identifier scan, O(n).
    public var sortBy: [SortDescriptor<R>] {
        get { content.request.sortBy }
        set { setRequest(\.sortBy, to: newValue) }
    }

    /// Applies a new request to the live results as one change, throwing if it cannot.
    ///
    /// On success the model shows what a fresh fetch of `request` would, observers are told
    /// once, and ``lastError`` is cleared. On failure nothing changes but ``lastError``.
    /// Before the first fetch, the request is kept for `performFetch()` (and not checked).
    ///
    /// - Throws: the errors of ``FetchedResultsController/setRequest(_:)``.
    /// - Complexity: one identifier scan, O(n), on the main actor, and a difference,
    ///   O(n log n); loads no record.
    public func setRequest(_ request: RecordRequest<R>) throws {
        try setRequest(request, sectionBy: content.sectionKey, replacingController: false)
    }

    /// Applies a new request and section key as one change, throwing if it cannot.
    ///
    /// The section key of a controller is fixed, so the model replaces its controller with
    /// one for `sectionBy` and fetches it; the old one is released. Observers are told once.
    /// On failure the model keeps its controller, request and results, and sets
    /// ``lastError``.
    ///
    /// - Parameters:
    ///   - request: the new request; its first sort descriptor must sort by the section
    ///     key's attribute.
    ///   - sectionBy: the new section key, or `nil` for a single section.
    /// - Throws: the errors of ``FetchedResultsController/setRequest(_:)``.
    /// - Complexity: one identifier scan, O(n), on the main actor; loads no record. The
    ///   change is a reload (a new controller), not a difference.
    public func setRequest(_ request: RecordRequest<R>, sectionBy: SectionKey<R>?) throws {
        try setRequest(request, sectionBy: sectionBy, replacingController: true)
    }

    private func setRequest(_ request: RecordRequest<R>, sectionBy: SectionKey<R>?, replacingController: Bool) throws {
        guard hasResults || loadingState == .loading else {
            // Nothing shown or being fetched: a new controller (reading nothing) for the next fetch.
            generation += 1
            replaceController(with: makeController(request, sectionBy: sectionBy))
            var content = self.content
            content.request = request
            content.sectionKey = sectionBy
            self.content = content
            return
        }
        if !replacingController, loadingState == .loaded, controller.lastError == nil,
            Self.selectsTheSame(request, content.request)
        {
            // The same request again (a binding that sets what it read, a search field
            // cleared twice): what a fresh fetch would show is what is shown. No scan, no
            // notification; only an error of an earlier attempt is cleared.
            lastError = nil
            return
        }
        if replacingController {
            let new = makeController(request, sectionBy: sectionBy)
            do {
                try new.controller.performFetch()
            } catch {
                // Nothing changed: a fetch in flight on the current controller goes on.
                new.relay.model = nil
                throw fail(error)
            }
            generation += 1
            replaceController(with: new)
        } else {
            // The controller's own request change supersedes a fetch in flight, even when it
            // fails: so does the model's.
            generation += 1
            applyingRequest = true
            defer { applyingRequest = false }
            do {
                try controller.setRequest(request)
            } catch {
                if loadingState == .loading { loadingState = hasResults ? .loaded : .idle }
                throw fail(error)
            }
        }
        showFetched(request: request, sectionBy: sectionBy)
    }

    /// Whether two requests select, order and load the same rows: the same SQL (predicate,
    /// search, order, limit and offset, as compiled) with the same bound values, the same
    /// search as typed, and the same batching. A request that does not compile is never the
    /// same.
    ///
    /// Texts and values are compared as SQLite compares them, never with Swift's `String`
    /// equality (canonical equivalence): a predicate on `"e\u{301}"` and one on `"é"` select
    /// different rows, and so do `1` and `1.0` against a text column (see `CompiledQuery`'s
    /// equality). So is the search as typed, byte for byte, so that the request the model
    /// shows is always the one last set.
    static func selectsTheSame(_ a: RecordRequest<R>, _ b: RecordRequest<R>) -> Bool {
        guard a.batchSize == b.batchSize, a.maxBatchesInMemory == b.maxBatchesInMemory,
            a.estimatedResultCount == b.estimatedResultCount,
            (a.search == nil) == (b.search == nil),
            (a.search?.text ?? "").hasSameBytes(as: b.search?.text ?? ""),
            a.search?.attributes == b.search?.attributes, a.search?.matchesPrefixes == b.search?.matchesPrefixes,
            a.search?.ranksByRelevance == b.search?.ranksByRelevance,
            let first = try? a.compile(requireSort: true), let second = try? b.compile(requireSort: true)
        else { return false }
        return first == second
    }

    /// Sets one part of the request and applies it as setting ``fetchRequest`` does.
    private func setRequest<Value>(_ part: WritableKeyPath<RecordRequest<R>, Value>, to value: Value) {
        var request = content.request
        request[keyPath: part] = value
        fetchRequest = request
    }
}
