import Foundation

extension FetchedResultsController {
    // MARK: Delivery

    /// Waits until every commit made so far has been delivered (and any catch-up the
    /// controller scheduled has run, and the writes of the moves made so far with
    /// ``moveObject(at:to:)``): after the results are complete (``isComplete``), since
    /// commits that land before are delivered after the completion.
    ///
    /// - Complexity: O(1) to check; it suspends until the deliveries arrive.
    public func waitForChanges() async {
        try? await waitUntilComplete()
        while true {
            if let task = moveWrites.task {
                await task.value
                if moveWrites.task == task { moveWrites.task = nil }
                continue
            }
            if let task = catchUpTask {
                await task.value
                if catchUpTask == task { catchUpTask = nil }
                continue
            }
            guard let live, appliedSerial < live.serial else { return }
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    func receive(_ delivery: LiveResults.Delivery, from source: LiveResults) {
        guard source === live else { return }
        // Computed without the user's moves being written: applied after them (or replaced
        // by the rebase that follows them).
        if moveWrites.pending > 0 { return moveWrites.deferred.append((delivery, source)) }
        // Already shown: a user's move rebased the results past it.
        guard delivery.serial > appliedSerial else { return resumeWaiters() }
        appliedSerial = delivery.serial
        switch delivery.event {
        case .change(let change, let state, let changed, let token):
            lastError = nil
            deliver(change, newState: state, changed: changed)
            // A delegate callback that fetched again replaced `live`: this state is not shown.
            guard source === live else { break }
            if let token, let (url, fingerprint) = liveCache {
                scheduleCacheWrite(state, fingerprint: fingerprint, token: token, to: url, delay: true)
            }
        case .failure(let error):
            report(error)
        }
        resumeWaiters()
    }

    /// The controller could not follow the store: say so everywhere errors are heard.
    func report(_ error: FolioError) {
        lastError = error
        if !updateSubscribers.isEmpty {
            updateSubscribers.yield(ControllerUpdate(changes: ChangeSet(), snapshot: snapshot, error: error))
        }
        delegate?.controller(self, didFailWith: error)
    }

    func resumeWaiters() {
        guard !waiters.isEmpty else { return }
        if let live, appliedSerial < live.serial { return }
        let ready = waiters
        waiters = []
        for waiter in ready { waiter.resume() }
    }

    /// Applies a change set. `changed` are the rows touched since the previous delivery:
    /// records loaded before and not among them are handed to the new results; `nil`
    /// (unknown, a reload, a request change) hands none over. `newRequest`, for a request
    /// change, becomes ``fetchRequest`` with the new state.
    ///
    /// The order is Core Data's, as ``FetchedResultsControllerDelegate`` documents: the
    /// "will" callback sees the state before the change; the new state is installed right
    /// after it, so the section and object callbacks, ``FetchedResultsControllerDelegate/controllerDidChangeContent(_:)``,
    /// the change-set and snapshot callbacks, ``changes`` and ``updates`` see it.
    func deliver(
        _ change: ChangeSet, newState: ResultsState, changed: Set<Int64>? = nil, newRequest: RecordRequest<R>? = nil
    ) {
        let generation = self.generation
        if let delegate {
            delegate.controllerWillChangeContent(self)
            // A "will" callback that fetched again or set another request replaced the
            // results: this change set no longer leads anywhere (the fetch reported its own).
            guard generation == self.generation else { return }
        }
        // What the per-change callbacks describe of the old state: the deleted sections.
        let deletedSections = change.deletedSections.isEmpty || delegate == nil ? [] : sections
        let held = changed.flatMap { changed in results?.loader.heldRecords(excluding: changed) } ?? [:]
        // A change set that inserts and deletes no section keeps the sections: only counts move.
        let recountable =
            change.isReload || !change.insertedSections.isEmpty || !change.deletedSections.isEmpty || newRequest != nil
            ? nil : sectionInfos.flatMap { infos in presented.map { (infos, $0) } }
        if let newRequest { fetchRequest = newRequest }
        setPresented(newState)
        if let (infos, old) = recountable { sectionInfos = sections(recounting: infos, from: old, for: newState) }
        inheritedRecords = held
        if let delegate, !change.isReload {
            reportChanges(change, deletedSections: deletedSections, to: delegate, generation: generation)
            // A callback that fetched again or set another request replaced the results.
            guard generation == self.generation else { return }
        }
        changeSubscribers.yield(change)
        if !updateSubscribers.isEmpty { updateSubscribers.yield(ControllerUpdate(changes: change, snapshot: snapshot)) }
        guard let delegate else { return }
        delegate.controllerDidChangeContent(self)
        delegate.controller(self, didChangeContentWith: change)
        delegate.controller(self, didChangeContentWith: snapshot)
    }

    /// The section and object callbacks of `change`, with the new state installed: a
    /// deleted section is described as it was (`deletedSections`, the old sections); an
    /// update carries its row's new index path as `newIndexPath`, where its record is read
    /// (as Core Data's users do). Stops when a callback fetched again or set another
    /// request (`generation` moved).
    private func reportChanges(
        _ change: ChangeSet, deletedSections: [SectionInfo], to delegate: any FetchedResultsControllerDelegate<R>,
        generation: Int
    ) {
        for index in change.deletedSections {
            guard generation == self.generation else { return }
            delegate.controller(self, didChange: deletedSections[index], atSectionIndex: index, for: .delete)
        }
        let newSections = change.insertedSections.isEmpty ? [] : sections
        for index in change.insertedSections {
            guard generation == self.generation else { return }
            delegate.controller(self, didChange: newSections[index], atSectionIndex: index, for: .insert)
        }
        for (path, id) in zip(change.deletedItems, change.deletedIdentifiers) {
            guard generation == self.generation else { return }
            delegate.controller(self, didChangeObject: id, at: path, for: .delete, newIndexPath: nil)
        }
        for (path, id) in zip(change.insertedItems, change.insertedIdentifiers) {
            guard generation == self.generation else { return }
            delegate.controller(self, didChangeObject: id, at: nil, for: .insert, newIndexPath: path)
        }
        for (move, id) in zip(change.movedItems, change.movedIdentifiers) {
            guard generation == self.generation else { return }
            delegate.controller(self, didChangeObject: id, at: move.from, for: .move, newIndexPath: move.to)
        }
        guard !change.updatedItems.isEmpty, let presented else { return }
        let found = presented.ids.positions(of: Set(change.updatedIdentifiers.map(\.rawValue)))
        for (path, id) in zip(change.updatedItems, change.updatedIdentifiers) {
            guard generation == self.generation else { return }
            let newPath = found[id.rawValue].map { ResultsState.path(of: $0, offsets: presented.offsets) }
            delegate.controller(self, didChangeObject: id, at: path, for: .update, newIndexPath: newPath)
        }
    }

    /// Every change set from now on, one per commit that changed the results, in commit
    /// order. Each access returns a new sequence; iterating it starts tracking.
    ///
    /// The controller does not wait for consumers: when reading its state while handling a
    /// change set, use ``updates``, which delivers the matching snapshot with it. Errors
    /// are not in this sequence: see ``lastError`` and ``updates``.
    ///
    /// Subscribing to a controller fetched without tracking starts tracking without fetching
    /// again on the caller (only the change log's end is read): the commits made since the
    /// fetch arrive as one change set, read from the change log on the store's writer queue
    /// (``ChangeSet/reload`` when the log no longer holds them).
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
