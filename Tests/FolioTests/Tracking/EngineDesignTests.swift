import Foundation
import GRDB
import Testing
@testable import Folio

/// The live engine's design rules: no SQL and no user code while
/// a lock is held; subscribing fetches nothing on the caller; invariants checked in the
/// tests; moves decided in one place, whatever the path.
@Suite("Live engine design")
@MainActor
struct EngineDesignTests {
    /// Observes, from inside the work, whether the tracker's lock is held.
    final class LockProbe: @unchecked Sendable {
        // @unchecked Sendable: every field is guarded by `lock`.
        private let lock = NSLock()
        private var tracker: ResultsTracker?
        private var held = 0
        private var calls = 0
        func watch(_ tracker: ResultsTracker) { lock.withLock { self.tracker = tracker } }
        func check() {
            guard let tracker = lock.withLock({ self.tracker }) else { return }
            let free = tracker._isLockFree
            lock.withLock {
                calls += 1
                if !free { held += 1 }
            }
        }
        var counts: (calls: Int, held: Int) { lock.withLock { (calls, held) } }
    }

    /// A `.computed` section key's closure is app code, and the tracker's queries are SQL:
    /// both used to run inside the tracker's lock (`ResultsTracker.didCommit` did all its
    /// work in `state.withLock`). Every call and every statement now finds the lock free.
    @Test func noSQLAndNoUserCodeRunWhileTheTrackerLockIsHeld() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 300)
        let userCode = LockProbe(), sql = LockProbe()
        let query = try RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]).compile(requireSort: true)
        let section = SectionExpression(
            fragment: SQLBuilder.section(attribute: "score"),
            kind: .computed({ value in
                userCode.check()
                return (value.storedInt64.map { $0 / 10 } ?? -1).databaseValue
            }))
        let tracker = ResultsTracker(query: query, section: section, diagnostics: store.diagnostics)
        userCode.watch(tracker)
        sql.watch(tracker)
        store.diagnostics.logSQL { _ in sql.check() }
        store.hub.subscribe(tracker)
        defer { store.hub.unsubscribe(tracker) }
        let full = try store.read { db in try tracker.updater.scan(db) }
        #expect(!tracker.install(full, token: nil, seq: nil, .readAfterSubscribing))
        for i in 0..<20 {
            try store.write { tx in
                try tx.database.execute(sql: "UPDATE article SET score = score + 7 WHERE id = ?", arguments: [i * 13 + 1])
            }
        }
        // A bulk change (the rescan path) and an unknown change (the reload path).
        try store.write { tx in try tx.database.execute(sql: "UPDATE article SET score = 300 - score") }
        try store.onWriterQueue { db in
            // As another process's write: the table's change token moves behind the hub (which
            // follows the commit only once it is made).
            try db.inTransaction {
                try db.execute(sql: "UPDATE folio_entities SET change_id = randomblob(16) WHERE name = 'article'")
                tracker.didChangeExternally(in: db)
                return .commit
            }
        }
        #expect(tracker.serial >= 22)
        let (calls, held) = userCode.counts
        #expect(calls > 300, "the closure ran for the scans and the changed rows")
        #expect(held == 0, "the closure ran \(held) of \(calls) times under the tracker's lock")
        #expect(sql.counts.calls > 50)
        #expect(sql.counts.held == 0, "\(sql.counts.held) statements ran under the tracker's lock")
    }

    /// Reading `changes` or `updates`, or setting `delegate`, on a fetched controller used to
    /// run a full fetch and a difference on the caller (`startTrackingIfNeeded` →
    /// `setRequest`). Now only the change log's end is read there; the commits since the
    /// fetch are read from the change log on the writer's queue, after the fetch's position
    /// in it, and arrive as one change set (no rescan, no reload).
    @Test(arguments: ["delegate", "changes", "updates"])
    func subscribingFetchesNothingOnTheCaller(how: String) async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 200)
        let controller = FetchedResultsController(sorted([SortDescriptor(\.score)]), store: store)
        try await controller.performFetch()
        try writeSync(store) { tx in
            var a = Article(title: "meanwhile", score: 5)
            try tx.insert(&a)
        }
        let scans = store.diagnostics.counters.identifierScans
        let recorder = SQLRecorder(store)
        let delegate = LiveRecorder()
        var stream: AsyncStream<ChangeSet>? = nil
        var updates: AsyncStream<ControllerUpdate>? = nil
        switch how {
        case "delegate": controller.delegate = delegate
        case "changes": stream = controller.changes
        default: updates = controller.updates
        }
        #expect(store.diagnostics.counters.identifierScans == scans, "no scan on the caller")
        #expect(recorder.statements.filter { $0.contains(#"FROM "article""#) }.isEmpty, "\(recorder.statements)")
        #expect(controller.snapshot.numberOfItems == 200)
        await controller.waitForChanges()
        #expect(controller.snapshot.numberOfItems == 201)
        #expect(store.diagnostics.counters.identifierScans == scans, "no rescan: the rows come from the log")
        // The inserted row, at its place (score 5 after the seeded 5: the rowid breaks ties).
        let inserted = [IndexPath(item: 6, section: 0)]
        if how == "delegate" { #expect(delegate.changeSets.map(\.insertedItems) == [inserted]) }
        if var iterator = stream?.makeAsyncIterator() { #expect(await iterator.next()?.insertedItems == inserted) }
        if var iterator = updates?.makeAsyncIterator() { #expect(await iterator.next()?.changes.insertedItems == inserted) }
        // Nothing changed since the fetch: nothing to rescan, nothing delivered.
        let quiet = FetchedResultsController(sorted([SortDescriptor(\.score)]), store: store)
        try await quiet.performFetch()
        let quietDelegate = LiveRecorder()
        quiet.delegate = quietDelegate
        await quiet.waitForChanges()
        #expect(quietDelegate.changeSets.isEmpty)
        #expect(store.diagnostics.counters.identifierScans == scans + 1, "only the quiet controller's own fetch")
    }

    /// Internal invariants are compiled into the tests: an inconsistent state stops at once.
    @Test func invariantsAreCheckedInTheTests() async {
        await #expect(processExitsWith: .failure) {
            let runs = [SectionRun(value: .integer(1), count: 1), SectionRun(value: .integer(1), count: 1)]
            _ = ResultsState(ids: IdentifierList([1, 2] as [Int64]), runs: runs, sectioned: true)
        }
        let valid = ResultsState(
            validating: IdentifierList([1, 2] as [Int64]), runs: [SectionRun(value: .integer(1), count: 2)], sectioned: true)
        #expect(valid != nil)
        #expect(
            ResultsState(
                validating: IdentifierList([1, 2] as [Int64]), runs: [SectionRun(value: .integer(1), count: 1)], sectioned: true)
                == nil)
    }

    /// Every commit's change set, on the incremental path, has the moves the builder's
    /// general difference finds from the whole states — the same number, and never an
    /// untouched row — for sectioned, windowed and plain controllers.
    @Test(arguments: 0..<3)
    func theIncrementalPathMovesExactlyLikeTheGeneralDifference(seed: Int) async throws {
        var rng = SeededRandom(seed: UInt64(seed) + 1_000)
        let store = try Store.inMemory(records: [Article.self])
        try writeSync(store) { tx in
            for i in 0..<240 {
                var a = Article(
                    title: "t\(i)", published: Date(timeIntervalSince1970: Double(Int.random(in: 0..<(6 * 86_400), using: &rng))),
                    score: Int.random(in: 0..<60, using: &rng))
                try tx.insert(&a)
            }
        }
        let touched = TouchRecorder(table: "article")
        store.hub.subscribe(touched)
        defer { store.hub.unsubscribe(touched) }
        let harnesses = [
            try await LiveHarness(store, sorted([SortDescriptor(\.published)]), sectionBy: .day(\.published, timeZone: .gmt)),
            try await LiveHarness(store, sorted([SortDescriptor(\.score), SortDescriptor(\.title)], limit: 40, offset: 30)),
            try await LiveHarness(store, sorted([SortDescriptor(\.score, order: .reverse)])),
        ]
        var moves = 0
        for _ in 0..<120 {
            let before = harnesses.map { $0.controller.snapshot }
            let ids = harnesses[2].controller.snapshot.identifiers.map(\.rawValue)
            try writeSync(store) { tx in
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let id = ids.randomElement(using: &rng)!
                    switch Int.random(in: 0..<10, using: &rng) {
                    case 0:
                        var a = Article(title: "n", score: Int.random(in: 0..<60, using: &rng))
                        try tx.insert(&a)
                    case 1: try tx.database.execute(sql: "DELETE FROM article WHERE id = ?", arguments: [id])
                    case 2: try tx.database.execute(sql: "UPDATE article SET isRead = 1 - isRead WHERE id = ?", arguments: [id])
                    default:
                        try tx.database.execute(
                            sql: "UPDATE article SET score = ?, published = ? WHERE id = ?",
                            arguments: [
                                Int.random(in: 0..<60, using: &rng), Double(Int.random(in: 0..<(6 * 86_400), using: &rng)), id,
                            ])
                    }
                }
            }
            let rows = touched.take()
            for (h, harness) in harnesses.enumerated() {
                let delivered = try await harness.settle()
                let after = harness.controller.snapshot
                guard let change = delivered.first else {
                    #expect(before[h] == after || rows.isDisjoint(with: after.identifiers.map(\.rawValue)))
                    continue
                }
                #expect(delivered.count == 1)
                let expected = ChangeSetBuilder.diff(old: before[h].state, new: after.state, changed: rows)
                #expect(change.movedItems.count == expected.movedItems.count, "\(change) vs \(expected)")
                for id in change.movedIdentifiers + change.updatedIdentifiers {
                    #expect(rows.contains(id.rawValue), "untouched row \(id) reported in \(change)")
                }
                moves += change.movedItems.count
            }
        }
        #expect(moves > 20)
    }
}

/// Collects the rows each commit touched, as the change hub reports them.
final class TouchRecorder: CommitSubscriber, @unchecked Sendable {
    // @unchecked Sendable: `rows` is only touched under its lock.
    let table: String
    private let rows = Locked(Set<Int64>())
    init(table: String) { self.table = table }
    func didCommit(changedRowIDs: Set<Int64>, in db: Database) { rows.withLock { $0.formUnion(changedRowIDs) } }
    func didChangeExternally(in db: Database) {}
    func take() -> Set<Int64> {
        rows.withLock { rows in
            let taken = rows
            rows = []
            return taken
        }
    }
}

extension DatabaseValue {
    fileprivate var storedInt64: Int64? {
        if case .int64(let v) = storage { return v }
        return nil
    }
}

extension EngineDesignTests {
    /// A GRDB transaction observer of the store's writer, registered after Folio's.
    final class RowObserver: TransactionObserver, @unchecked Sendable {
        // @unchecked Sendable: `pending` is touched on the writer's queue only; `committed`
        // under its lock.
        private var pending = Set<Int64>()
        private let committed = Locked<[Set<Int64>]>([])
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == "article" }
        func databaseDidChange(with event: DatabaseEvent) { pending.insert(event.rowID) }
        func databaseDidCommit(_ db: Database) {
            let rows = pending
            pending = []
            if !rows.isEmpty { committed.withLock { $0.append(rows) } }
        }
        func databaseDidRollback(_ db: Database) { pending = [] }
        var commits: [Set<Int64>] { committed.current }
    }

    /// Found by the randomized suite (a stale record and an unreported change): a tracker reads in a transaction of its own inside GRDB's commit
    /// notification, and rolled it back when its work failed — which GRDB reported to every
    /// observer of the writer as a rollback, so an observer not yet told of the commit
    /// dropped the committed rows. The read transaction now always ends with a commit.
    @Test func aTrackerThatFailsDoesNotMakeOtherObserversLoseTheCommit() async throws {
        let (store, key) = try tensWithABreakingSectionKey()
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.score)]), sectionBy: key)
        let observer = RowObserver()
        store.writer.add(transactionObserver: observer, extent: .observerLifetime)
        var bad = Article(title: "bad", score: 55)
        try writeSync(store) { tx in try tx.insert(&bad) }
        await live.controller.waitForChanges()
        #expect(live.recorder.errors.count == 1, "the tracker failed to follow this commit")
        #expect(observer.commits == [[bad.id!.rawValue]], "the other observer still saw the commit")
        // The bad row goes; the controller recovers and the observer sees that commit too.
        _ = try writeSync(store) { tx in try tx.delete(bad) }
        await live.controller.waitForChanges()
        #expect(observer.commits.count == 2)
        #expect(live.controller.lastError == nil, "recovered")
    }
}
