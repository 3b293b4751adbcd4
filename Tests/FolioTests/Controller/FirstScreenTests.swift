import Foundation
import GRDB
import Testing
@testable import Folio

/// Holds a background completion at a point until the test lets it go on.
final class FirstScreenGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var open = false
    private var heldAt: Int?
    /// The point to hold at: -1 before the snapshot, 0 before the read, rows read otherwise
    /// (the first call with at least that many rows).
    let point: Int

    init(at point: Int) { self.point = point }

    /// Every point the completion reported, in order (held or not).
    var calls: [Int] {
        condition.lock()
        defer { condition.unlock() }
        return seen
    }
    private var seen: [Int] = []

    var hook: @Sendable (Int) -> Void {
        { [self] rows in
            condition.lock()
            seen.append(rows)
            condition.unlock()
            guard rows == point || (point > 0 && rows >= point) else { return }
            condition.lock()
            if heldAt == nil { heldAt = rows }
            while !open { condition.wait() }
            condition.unlock()
        }
    }

    /// Waits until the completion reached the point (or gives up after 30 s).
    func reached() async -> Bool {
        for _ in 0..<3000 {
            if isHeld() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    private func isHeld() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return heldAt != nil
    }

    func release() {
        condition.lock()
        open = true
        condition.broadcast()
        condition.unlock()
    }
}

/// The synchronous `performFetch()` (in an async test the async one would be chosen).
@MainActor
func fetchNow<R: PersistentRecord>(_ controller: FetchedResultsController<R>) throws {
    try controller.performFetch()
}

@MainActor
func fetchNow<R: PersistentRecord>(_ model: FetchedResultsModel<R>) throws {
    try model.performFetch()
}

/// A controller of the articles by day (24 rows a day with `seed`), whose fetch stops at its
/// first screen of `rows` rows whatever the list's size.
@MainActor
func firstScreenController(
    _ store: Store, rows: Int = 100, predicate: Predicate<Article>? = nil, cacheName: String? = nil,
    gate: FirstScreenGate? = nil
) -> (FetchedResultsController<Article>, LiveRecorder) {
    let request = RecordRequest<Article>(
        predicate: predicate, sortBy: [SortDescriptor(\.published), SortDescriptor(\.score)], batchSize: 50)
    let controller = FetchedResultsController(
        request, store: store, sectionBy: .day(\.published, timeZone: .gmt), cacheName: cacheName)
    controller.completesInBackground = true
    controller.firstScreenRule = .immediately(rows: rows)
    controller.completionHook = gate?.hook
    let recorder = LiveRecorder()
    controller.delegate = recorder
    return (controller, recorder)
}

/// Applies every change set the recorder holds, each with the snapshot it led to.
@MainActor
func applyAll(_ recorder: LiveRecorder, to model: inout TableViewModel) throws {
    for (change, snapshot) in zip(recorder.changeSets, recorder.snapshots) {
        try model.apply(change, dataSource: snapshot)
    }
}

@MainActor
@Suite struct FirstScreenTests {
    @Test func aLongListShowsItsFirstScreenThenCompletesInOneChangeSet() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 30_000)
        let gate = FirstScreenGate(at: 0)
        let (controller, recorder) = firstScreenController(store, gate: gate)
        store.diagnostics.resetCounters()
        try fetchNow(controller)
        #expect(await gate.reached())
        // The first screen: exactly the first 101 rows (one more than the screen: the list goes
        // on past it), in the sections they are in; the last
        // section counts only its rows read so far. No record was loaded to show it.
        #expect(!controller.isComplete)
        #expect(controller.rowsKnown >= 101)
        #expect(store.diagnostics.counters.firstScreens == 1)
        #expect(store.diagnostics.counters.batchesLoaded == 0)
        let first = TableViewModel(controller.snapshot)
        #expect(first.identifiers.count == 101)
        #expect(controller.sections.map(\.numberOfObjects) == [24, 24, 24, 24, 5])
        #expect(controller.sections.map(\.name) == ["1970-01-01", "1970-01-02", "1970-01-03", "1970-01-04", "1970-01-05"])
        #expect(controller.object(at: IndexPath(item: 3, section: 4))?.score == 99)
        #expect(controller.indexPath(for: first.identifiers[99]) == IndexPath(item: 3, section: 4))
        #expect(controller.indexPath(for: first.identifiers[100]) == IndexPath(item: 4, section: 4))
        let beyond = try await store.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM article WHERE score = 101") }
        #expect(controller.indexPath(for: RecordID(beyond!)) == nil)
        #expect(recorder.changeSets.isEmpty)

        gate.release()
        try await controller.waitUntilComplete()
        #expect(controller.isComplete)
        #expect(recorder.changeSets == [.completion])
        // One scan for the first screen and one in the background; the records loaded for
        // the first screen were handed over (none loaded again).
        #expect(store.diagnostics.counters.identifierScans == 2)
        let batches = store.diagnostics.counters.batchesLoaded
        _ = controller.object(at: IndexPath(item: 3, section: 4))
        #expect(store.diagnostics.counters.batchesLoaded == batches)
        var model = first
        try applyAll(recorder, to: &model)
        #expect(model == (try freshModel(controller)))
        #expect(controller.sections.count == 1250)
        #expect(controller.rowsKnown == 30_000)
    }

    @Test func aListThatEndsWithinTheFirstScreenIsCompleteAtOnce() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 100)
        let (controller, recorder) = firstScreenController(store, rows: 100)
        try fetchNow(controller)
        // 100 rows read and then the end: complete (a stop needs a row past the screen's).
        #expect(controller.isComplete)
        #expect(store.diagnostics.counters.firstScreens == 0)
        try await controller.waitUntilComplete()
        await controller.waitForChanges()
        #expect(recorder.changeSets.isEmpty)
    }

    @Test(arguments: [1, 1_000, 2_000])
    func withTheAutomaticRuleSmallListsAreAlwaysComplete(count: Int) async throws {
        // Below the rule's SQLite step floor a list never stops at its first screen, however
        // slow the machine: it behaves exactly as before first screens existed.
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: count)
        let controller = FetchedResultsController(
            RecordRequest<Article>(sortBy: [SortDescriptor(\.published)]), store: store,
            sectionBy: .day(\.published, timeZone: .gmt))
        controller.completesInBackground = true
        #expect(controller.firstScreenRule == .automatic(rows: 0))
        try fetchNow(controller)
        #expect(controller.isComplete)
        #expect(controller.fetchedObjects?.count == count)
        #expect(store.diagnostics.counters.firstScreens == 0)
    }

    @Test func commitsWhileTheListCompletesArriveAfterTheCompletionAndAreExact() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 20_000)
        let gate = FirstScreenGate(at: 4096)
        let (controller, recorder) = firstScreenController(store, gate: gate)
        try fetchNow(controller)
        var model = TableViewModel(controller.snapshot)
        #expect(await gate.reached())
        // Writes in the first screen, across its end, and far beyond it, while the
        // background read is held in the middle of the list.
        try writeSync(store) { tx in
            var top = Article(title: "new first", published: Date(timeIntervalSince1970: -10), score: -1)
            try tx.insert(&top)
            try tx.database.execute(sql: "DELETE FROM article WHERE score IN (3, 50, 99, 100, 15000)")
            try tx.database.execute(sql: "UPDATE article SET published = 3600 * 19999.5 WHERE score IN (10, 12000)")
            try tx.database.execute(sql: "UPDATE article SET published = 1800 WHERE score = 18000")
            try tx.database.execute(sql: "UPDATE article SET title = 'renamed' WHERE score IN (20, 98, 17000)")
        }
        #expect(recorder.changeSets.isEmpty, "nothing is delivered before the completion")
        gate.release()
        await controller.waitForChanges()
        #expect(recorder.changeSets.first == .completion)
        #expect(recorder.changeSets.count == 2)
        try applyAll(recorder, to: &model)
        #expect(model == TableViewModel(controller.snapshot))
        #expect(model == (try freshModel(controller)))
    }

    @Test func aCommitBetweenTheFirstScreenAndTheSnapshotIsInWhatIsShown() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 10_000)
        let (controller, recorder) = firstScreenController(store)
        // Right after the first screen's read ends, before the snapshot the rest is read in:
        // a commit that changes the first screen.
        controller.completionHook = { rows in
            guard rows == -1 else { return }
            try? store.write { tx in try tx.database.execute(sql: "DELETE FROM article WHERE score < 30") }
        }
        try fetchNow(controller)
        // What is shown is the first screen read again in the snapshot: without the rows.
        let shown = TableViewModel(controller.snapshot)
        #expect(shown.identifiers.count == 101)
        #expect(controller.object(at: IndexPath(item: 0, section: 0))?.score == 30)
        var model = shown
        await controller.waitForChanges()
        #expect(recorder.changeSets.first == .completion)
        try applyAll(recorder, to: &model)
        #expect(model == (try freshModel(controller)))
        #expect(controller.fetchedObjects?.count == 9_970)
    }

    @Test func aNewFetchStopsTheRead() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 20_000)
        let gate = FirstScreenGate(at: 4096)
        let (controller, recorder) = firstScreenController(store, gate: gate)
        try fetchNow(controller)
        #expect(await gate.reached())
        controller.completionHook = nil
        try controller.setRequest(
            RecordRequest<Article>(
                predicate: #Predicate { $0.score >= 10_000 }, sortBy: [SortDescriptor(\.published), SortDescriptor(\.score)]))
        #expect(recorder.changeSets == [.reload], "a request whose results do not fit the first screen is a reload")
        gate.release()
        try await controller.waitUntilComplete()
        await controller.waitForChanges()
        // The first read's completion was dropped: one completion, for the new request.
        #expect(recorder.changeSets == [.reload, .completion])
        #expect(controller.fetchedObjects?.count == 10_000)
        #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))
    }

    @Test func theSectionCacheIsWrittenOnceCompleteAndReusedWhole() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 12_000)
        let (first, _) = firstScreenController(store, cacheName: "first-screen")
        try fetchNow(first)
        #expect(!first.isComplete)
        try await first.waitUntilComplete()
        await first.flushCache()
        let (second, _) = firstScreenController(store, cacheName: "first-screen")
        try fetchNow(second)
        #expect(second.lastCacheOutcome == .reused)
        #expect(second.isComplete)
        #expect(second.fetchedObjects?.count == 12_000)
    }

    @Test func windowedRequestsAndInMemoryStoresAreReadWhole() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 5_000)
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.published)])
        request.limit = 3_000
        request.offset = 10
        let windowed = FetchedResultsController(request, store: store)
        windowed.completesInBackground = true
        windowed.firstScreenRule = .immediately(rows: 10)
        try fetchNow(windowed)
        #expect(windowed.isComplete)
        #expect(windowed.fetchedObjects?.count == 3_000)

        let memory = try Store.inMemory(records: [Article.self])
        try seed(memory, count: 5_000)
        let (inMemory, _) = firstScreenController(memory)
        try fetchNow(inMemory)
        #expect(inMemory.isComplete)
        #expect(inMemory.fetchedObjects?.count == 5_000)
    }

    @Test func anErrorBeyondTheFirstScreenKeepsTheFirstScreenAndIsReported() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 12_000)
        // Sections by a key that comes back to "a" after 10,000: not contiguous, which only
        // the rows past the first screen show.
        let key = SectionKey<Article>.computed(\.score, name: "comes back") { (score: Int) in
            score < 100 ? "a" : score < 10_000 ? "b" : "a"
        }
        let controller = FetchedResultsController(
            RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]), store: store, sectionBy: key)
        controller.completesInBackground = true
        controller.firstScreenRule = .immediately(rows: 200)
        let recorder = LiveRecorder()
        controller.delegate = recorder
        try fetchNow(controller)
        #expect(!controller.isComplete)
        let shown = controller.snapshot
        await #expect(throws: FolioError.self) { try await controller.waitUntilComplete() }
        #expect(!controller.isComplete)
        #expect(controller.snapshot == shown)
        #expect(recorder.changeSets.isEmpty)
        guard case .sectionsNotContiguous = recorder.errors.first else {
            Issue.record("expected sectionsNotContiguous, got \(recorder.errors)")
            return
        }
    }

    @Test func aListCannotBeReorderedByHandUntilComplete() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 5_000)
        let gate = FirstScreenGate(at: 0)
        let (controller, _) = firstScreenController(store, gate: gate)
        try fetchNow(controller)
        #expect(await gate.reached())
        let error = folioError {
            try controller.moveObject(at: IndexPath(item: 0, section: 0), to: IndexPath(item: 1, section: 0))
        }
        #expect(error?.description.contains("waitUntilComplete") == true)
        gate.release()
        try await controller.waitUntilComplete()
    }

    @Test func trackingThatStartsWhileIncompleteFollowsFromTheCompletion() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 10_000)
        let gate = FirstScreenGate(at: 0)
        let request = RecordRequest<Article>(sortBy: [SortDescriptor(\.published), SortDescriptor(\.score)])
        let controller = FetchedResultsController(request, store: store, sectionBy: .day(\.published, timeZone: .gmt))
        controller.completesInBackground = true
        controller.firstScreenRule = .immediately(rows: 100)
        controller.completionHook = gate.hook
        try fetchNow(controller)  // no delegate: not tracked
        #expect(await gate.reached())
        let recorder = LiveRecorder()
        controller.delegate = recorder
        try execute(store, "UPDATE article SET published = -5 WHERE score = 5000")
        gate.release()
        try await controller.waitUntilComplete()
        try execute(store, "DELETE FROM article WHERE score = 1")
        await controller.waitForChanges()
        #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))
        #expect(recorder.changeSets.first == .completion)
    }

    @Test func theObservableModelCompletesInOneNotification() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 10_000)
        let model = FetchedResultsModel(
            RecordRequest<Article>(sortBy: [SortDescriptor(\.published)]), store: store,
            sectionBy: .day(\.published, timeZone: .gmt))
        model.controller.completesInBackground = true
        model.controller.firstScreenRule = .immediately(rows: 50)
        let gate = FirstScreenGate(at: 0)
        model.controller.completionHook = gate.hook
        try fetchNow(model)
        #expect(await gate.reached())
        #expect(!model.isComplete)
        #expect(model.items.count == 51)
        gate.release()
        try await model.waitUntilComplete()
        await model.waitForChanges()
        #expect(model.isComplete)
        #expect(model.items.count == 10_000)
        #expect(model.sections.count == 417)
    }

    /// Random writes while lists of every kind are incomplete, with the background read held
    /// at a random point: the change sets after the completion lead exactly to a fresh fetch.
    @Test(arguments: 0..<6)
    func randomWritesWhileIncomplete(seed seedValue: UInt64) async throws {
        var random = SeededRandom(seed: 0xF1257 &+ seedValue)
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 9_000)
        let point = [-1, 0, 4096, 8192].randomElement(using: &random)!
        let gate = FirstScreenGate(at: point)
        let predicates: [Predicate<Article>?] = [nil, #Predicate { $0.category != "a" }, #Predicate { $0.isRead == false }]
        let (controller, recorder) = firstScreenController(
            store, rows: Int.random(in: 1...300, using: &random), predicate: predicates.randomElement(using: &random)!,
            gate: point == -1 ? nil : gate)
        if point == -1 {
            let writes = (0..<5).map { _ in Int.random(in: 0..<9_000, using: &random) }
            controller.completionHook = { rows in
                guard rows == -1 else { return }
                try? store.write { tx in
                    for score in writes {
                        try tx.database.execute(
                            sql: "UPDATE article SET published = published + 7200 WHERE score = ?", arguments: [score])
                    }
                }
            }
        }
        try await controller.performFetch()
        var model = TableViewModel(controller.snapshot)
        if point >= 0 { #expect(await gate.reached()) }
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let score = Int.random(in: 0..<9_000, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: try execute(store, "DELETE FROM article WHERE score BETWEEN ? AND ?", [score, score + 50])
            case 1:
                try execute(
                    store, "UPDATE article SET published = ? WHERE score = ?",
                    [Int.random(in: -3600...40_000_000, using: &random), score])
            case 2:
                try execute(
                    store, "UPDATE article SET isRead = NOT isRead, score = score + 30000 WHERE score % 97 = ?", [score % 97])
            default:
                try writeSync(store) { tx in
                    var a = Article(
                        title: "n", published: Date(timeIntervalSince1970: Double(score) * 3600 + 1), score: 50_000 + score)
                    try tx.insert(&a)
                }
            }
        }
        gate.release()
        await controller.waitForChanges()
        #expect(controller.isComplete)
        try applyAll(recorder, to: &model)
        #expect(recorder.changeSets.filter(\.isCompletion).count <= 1)
        #expect(model == (try freshModel(controller)), "seed \(seedValue), held at \(point)")
    }
}
