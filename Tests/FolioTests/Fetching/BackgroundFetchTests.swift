import Foundation
import Testing
import class GRDB.DatabaseQueue
import GRDBSQLite
@testable import Folio

/// Background fetches: exact progress, the estimate's doubling, prompt cancellation,
/// concurrent writes, errors, and what the main actor sees meanwhile.
///
/// Serialized: the million-row tests share one store and print timings that parallel
/// tests on a two-core machine would only blur.
@Suite("Background fetch", .serialized)
struct BackgroundFetchTests {
    // MARK: Results

    @Test(arguments: [0, 100])
    func resultsMatchAForegroundFetch(batchSize: Int) async throws {
        let store = try Store.temporary(records: [Article.self])
        try seedQuickly(store, count: 10_000)
        var request = RecordRequest<Article>(
            predicate: #Predicate { $0.score >= 2_500 }, sortBy: [SortDescriptor(\.published, order: .reverse)])
        request.batchSize = batchSize
        let expected = try await store.fetch(request)
        store.diagnostics.resetCounters()
        let results = try await store.fetchInBackground(request).value
        #expect(results.count == 7_500)
        #expect(Array(results.identifiers) == Array(expected.identifiers))
        if batchSize > 0 {
            // The background part read identifiers only; records fault in batches.
            #expect(store.diagnostics.counters.recordsMaterialized == 0)
            #expect(results.batchSize == 100)
            #expect(results[0]?.score == 9_999)
            #expect(store.diagnostics.counters.batchesLoaded == 1)
        } else {
            #expect(store.diagnostics.counters.recordsMaterialized == 7_500)
            #expect(results.map { $0!.score } == Array((2_500..<10_000).reversed()))
            #expect(store.diagnostics.counters.batchesLoaded == 0)
        }
    }

    @Test func countAndRowsAreReadInOneTransaction() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seedQuickly(store, count: 100)
        let recorder = SQLRecorder(store)
        var request = RecordRequest<Article>(predicate: #Predicate { $0.score < 10 }, sortBy: [SortDescriptor(\.score)])
        request.batchSize = 5
        _ = try await store.fetchInBackground(request).value
        let ours = recorder.statements.filter { !$0.hasPrefix("PRAGMA") && !$0.contains("sqlite_master") }
        #expect(
            ours == [
                "BEGIN DEFERRED TRANSACTION",
                #"SELECT COUNT(*) FROM "article" WHERE ("score" < ?)"#,
                #"SELECT "id" FROM "article" WHERE ("score" < ?) ORDER BY "score", "id""#,
                "COMMIT TRANSACTION",
            ])
        // With an estimate, nothing is counted.
        recorder.reset()
        request.estimatedResultCount = 7
        _ = try await store.fetchInBackground(request).value
        #expect(!recorder.statements.contains { $0.contains("COUNT") })
    }

    // MARK: Progress

    @Test(arguments: [0, 50])
    func progressIsMonotonicAndEndsAtExactlyOneWithTheExactTotal(batchSize: Int) async throws {
        let store = try Store.temporary(records: [Article.self])
        try seedQuickly(store, count: 30_000)
        var request = RecordRequest<Article>(predicate: #Predicate { $0.score >= 5_000 }, sortBy: [SortDescriptor(\.title)])
        request.batchSize = batchSize
        let fetch = store.fetchInBackground(request)
        let steps = await collect(fetch.progressUpdates)
        let results = try await fetch.value

        #expect(results.count == 25_000)
        #expect(steps.allSatisfy { $0.total == 25_000 }, "the total is counted before any row is read: \(steps)")
        expectMonotonic(steps)
        #expect(steps.last == FetchProgress(completed: 25_000, total: 25_000, isFinished: true))
        #expect(steps.last?.fractionCompleted == 1.0)
        #expect(steps.dropLast().allSatisfy { !$0.isFinished })

        #expect(fetch.progress.totalUnitCount == 25_000)
        #expect(fetch.progress.completedUnitCount == 25_000)
        #expect(fetch.progress.fractionCompleted == 1.0)
        #expect(!fetch.progress.isCancelled)

        // A stream opened after the end gets the last step and ends.
        #expect(await collect(fetch.progressUpdates) == [FetchProgress(completed: 25_000, total: 25_000, isFinished: true)])
    }

    @Test func progressAdvancesAboutEvery4096RowsOfAMillion() async throws {
        let store = try MillionRows.store()
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 100
        let fetch = store.fetchInBackground(request)
        let steps = await collect(fetch.progressUpdates)
        _ = try await fetch.value
        expectMonotonic(steps)
        #expect(steps.allSatisfy { $0.total == MillionRows.count })
        #expect(steps.last?.fractionCompleted == 1.0)
        // Not per row, not only at the end: one step per 4,096 rows (244), a count step, a last one.
        #expect(steps.count >= 100 && steps.count <= 250, "\(steps.count) steps")
        let gaps = zip(steps.dropFirst(), steps).map { $0.completed - $1.completed }
        #expect(gaps.allSatisfy { $0 <= 4_096 })
        print("BACKGROUND FETCH progress: \(steps.count) steps for \(MillionRows.count) rows")
    }

    @Test func progressComposesWithAParentProgress() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seedQuickly(store, count: 5_000)
        let parent = Progress(totalUnitCount: 2)
        let fetch = asChild(of: parent) { store.fetchInBackground(RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])) }
        _ = try await fetch.value
        #expect(fetch.progress.fractionCompleted == 1.0)
        #expect(parent.completedUnitCount == 1)
        #expect(parent.fractionCompleted == 0.5)
    }

    @Test func emptyResultsFinishAtOne() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seedQuickly(store, count: 100)
        let fetch = store.fetchInBackground(RecordRequest<Article>(predicate: #Predicate { $0.score > 1_000 }))
        let steps = await collect(fetch.progressUpdates)
        #expect(try await fetch.value.isEmpty)
        #expect(steps.last == FetchProgress(completed: 0, total: 0, isFinished: true))
        #expect(steps.last?.fractionCompleted == 1.0)
        // Foundation calls 0 of 0 indeterminate; Folio finishes an empty fetch as 1 of 1.
        #expect(fetch.progress.fractionCompleted == 1.0)
        #expect(!fetch.progress.isIndeterminate)
    }

    // MARK: The estimate

    @Test func anEstimateIsDoubledWhenTheRowsReadReachItAsCoreDataDoes() {
        var machine = BackgroundFetchStateMachine(estimatedTotal: 1_000)
        #expect(machine.latest == FetchProgress(completed: 0, total: 1_000))
        #expect(machine.counted(10_000) == nil, "with an estimate, no count is used")
        #expect(machine.read(999) == FetchProgress(completed: 999, total: 1_000))
        #expect(machine.read(1_000) == FetchProgress(completed: 1_000, total: 2_000))  // reached: doubled
        #expect(machine.read(4_096) == FetchProgress(completed: 4_096, total: 8_000))  // doubled twice
        #expect(machine.read(4_096) == nil)  // nothing new
        #expect(machine.read(8_192) == FetchProgress(completed: 8_192, total: 16_000))
        #expect(machine.read(10_000) == FetchProgress(completed: 10_000, total: 16_000))
        guard case .succeeded(let last, _) = machine.succeed(rows: 10_000) else {
            Issue.record("the fetch should succeed")
            return
        }
        #expect(last == FetchProgress(completed: 10_000, total: 10_000, isFinished: true))
        #expect(last.fractionCompleted == 1.0)
        #expect(machine.read(10_001) == nil, "nothing after the end")

        var zero = BackgroundFetchStateMachine(estimatedTotal: 0)
        #expect(zero.read(3) == FetchProgress(completed: 3, total: 4))
    }

    @Test func anEstimateLowerThanTheCountDoublesThenFinishesAtTheRowsRead() async throws {
        // A million rows, so that the stream is open long before the estimate is reached.
        let store = try MillionRows.store()
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 20
        request.estimatedResultCount = 100_000
        let fetch = store.fetchInBackground(request)
        let steps = await collect(fetch.progressUpdates)
        #expect(try await fetch.value.count == MillionRows.count)

        for step in steps.dropLast() {
            // The smallest 100,000 × 2ⁿ above the rows read: fractions stay below 1 until the end.
            var expected = 100_000
            while step.completed >= expected { expected *= 2 }
            #expect(step.total == expected, "\(step)")
            #expect(step.fractionCompleted < 1)
        }
        let totals = steps.dropLast().map(\.total)
        #expect(Array(Set(totals)).sorted() == [100_000, 200_000, 400_000, 800_000, 1_600_000].suffix(Set(totals).count))
        #expect(totals.contains(1_600_000))
        // The fraction falls back each time the total doubles, as documented.
        #expect(zip(steps, steps.dropFirst()).contains { $1.fractionCompleted < $0.fractionCompleted })
        #expect(steps.last == FetchProgress(completed: MillionRows.count, total: MillionRows.count, isFinished: true))
        #expect(fetch.progress.totalUnitCount == Int64(MillionRows.count))
        #expect(fetch.progress.fractionCompleted == 1.0)
    }

    @Test func anEstimateHigherThanTheCountJumpsToOneAtTheEnd() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seedQuickly(store, count: 10_000)
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.estimatedResultCount = 50_000
        let fetch = store.fetchInBackground(request)
        let steps = await collect(fetch.progressUpdates)
        _ = try await fetch.value
        #expect(steps.dropLast().allSatisfy { $0.total == 50_000 && $0.fractionCompleted <= 0.2 })
        #expect(steps.last == FetchProgress(completed: 10_000, total: 10_000, isFinished: true))
        expectMonotonic(steps)
    }

    // MARK: Cancellation

    enum CancelMethod: String, CaseIterable, Sendable {
        case handle, progress, parentProgress, awaitingTask
    }

    enum CancelPoint: String, CaseIterable, Sendable {
        /// An unbatched fetch decoding records (seconds for a million): cancelled after 20,000 rows.
        case whileReadingRows
        /// A batched fetch sorted on an unindexed column: SQLite sorts a million titles in
        /// one statement before the first row comes out. Cancelled 30 ms into it.
        case insideOneStatement
    }

    @Test(arguments: CancelMethod.allCases, CancelPoint.allCases)
    func cancellingAMillionRowFetchInFlight(method: CancelMethod, point: CancelPoint) async throws {
        let store = try MillionRows.store()
        var request: RecordRequest<Article>
        switch point {
        case .whileReadingRows:
            request = RecordRequest(sortBy: [SortDescriptor(\.score)])
        case .insideOneStatement:
            request = RecordRequest(sortBy: [SortDescriptor(\.title)])
            request.batchSize = 50
        }
        let parent = Progress(totalUnitCount: 1)
        let fetch =
            method == .parentProgress
            ? asChild(of: parent) { store.fetchInBackground(request) }
            : store.fetchInBackground(request)
        let waiter = Task { try await fetch.value }

        for await step in fetch.progressUpdates {
            if point == .insideOneStatement || step.completed >= 20_000 { break }
        }
        if point == .insideOneStatement { try await Task.sleep(for: .milliseconds(30)) }
        let rowsReadAtCancel = fetch.progress.completedUnitCount

        let start = ContinuousClock.now
        switch method {
        case .handle: fetch.cancel()
        case .progress: fetch.progress.cancel()
        case .parentProgress: parent.cancel()
        case .awaitingTask: waiter.cancel()
        }
        let result = await waiter.result
        let latency = ContinuousClock.now - start

        print(
            "BACKGROUND FETCH cancel latency [\(method.rawValue), \(point.rawValue)]: \(milliseconds(latency)) ms"
                + " (rows read at cancel: \(rowsReadAtCancel) of \(MillionRows.count))")
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(rowsReadAtCancel < MillionRows.count)
        // No time limit here (a shared machine; folio-bench measures the latency): a fetch
        // that ignored the cancellation would have read every row and returned a value.
        #expect(fetch.isCancelled)
        #expect(fetch.progress.isCancelled)
        #expect(fetch.progress.completedUnitCount < MillionRows.count)
        await #expect(throws: CancellationError.self) { try await fetch.value }
        #expect(await collect(fetch.progressUpdates).allSatisfy { !$0.isFinished })

        // The store is still usable, the interrupted connection included (more fetches
        // than the pool has readers).
        var next = RecordRequest<Article>(sortBy: [SortDescriptor(\.score, order: .reverse)], limit: 1_000)
        next.batchSize = 10
        for _ in 0..<6 {
            let results = try await store.fetchInBackground(next).value
            #expect(results.count == 1_000)
            #expect(results.first??.score == MillionRows.count - 1)
        }
        #expect(try store.count(RecordRequest<Article>()) == MillionRows.count)
    }

    /// GRDB interrupts the statement running when the task is cancelled, but SQLite
    /// forgets an interrupt that comes while no statement runs: without the progress
    /// handler Folio installs, the scan below runs to its end (a million rows sorted by
    /// title, about 0.6 s here). With it, the next statement stops at once.
    @Test func aCancellationBetweenTwoStatementsStopsTheNextOne() async throws {
        let store = try MillionRows.store()
        let query = try RecordRequest<Article>(sortBy: [SortDescriptor(\.title)]).compile()
        let diagnostics = store.diagnostics
        let result = await Task {
            try await store.read { db in
                Store.interruptWhenCancelled(db)
                defer { sqlite3_progress_handler(db.sqliteConnection, 0, nil, nil) }
                _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM article")
                withUnsafeCurrentTask { $0?.cancel() }  // between two statements
                let (ids, _) = try IdentifierScan.run(
                    db, SQLBuilder.identifiers(query), diagnostics: diagnostics)
                return ids.count
            }
        }.result
        // Without the handler the scan would return its million identifiers.
        #expect(throws: CancellationError.self) { try result.get() }
    }

    @Test func cancellingBeforeItStartsOrAfterItEnds() async throws {
        let store = try MillionRows.store()
        let early = store.fetchInBackground(RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]))
        early.cancel()
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(early.progress.isCancelled)

        let request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)], limit: 1_000)
        let done = store.fetchInBackground(request)
        #expect(try await done.value.count == 1_000)
        done.cancel()  // too late: nothing happens
        #expect(!done.isCancelled)
        #expect(!done.progress.isCancelled)
        #expect(try await done.value.count == 1_000)
    }

    // MARK: Concurrency

    @Test func writesCommitWhileABackgroundFetchReads() async throws {
        let store = try MillionRows.store()

        // A fetch loading a million whole records takes seconds: a write commits in the middle.
        let long = store.fetchInBackground(RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]))
        for await step in long.progressUpdates where step.completed >= 8_192 { break }
        let start = ContinuousClock.now
        let id = try await store.write { tx in
            var article = Article(title: "Written during a background fetch")
            try tx.insert(&article)
            return article.id!
        }
        let writeTime = ContinuousClock.now - start
        let rowsReadAtCommit = long.progress.completedUnitCount
        #expect(rowsReadAtCommit < MillionRows.count, "the write committed before the fetch ended")
        long.cancel()
        _ = try? await long.value
        print(
            "BACKGROUND FETCH concurrent write: committed in \(milliseconds(writeTime)) ms"
                + " while the fetch had read \(rowsReadAtCommit) of \(MillionRows.count) rows")

        // A fetch reads the database as it was when it counted: a row deleted after that is
        // in its identifiers (and reads as nil), and the count agrees with the rows.
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.title)])
        request.batchSize = 100
        let fetch = store.fetchInBackground(request)
        for await _ in fetch.progressUpdates { break }  // counted: the read transaction is open
        try await store.write { tx in _ = try tx.delete(Article.self, id: id) }
        let results = try await fetch.value
        #expect(results.count == MillionRows.count + 1)
        #expect(fetch.progress.totalUnitCount == Int64(MillionRows.count + 1))
        let position = try #require(results.identifiers.firstIndex(of: id))
        #expect(results[position] == nil)
        #expect(try store.count(RecordRequest<Article>()) == MillionRows.count)
    }

    @MainActor
    @Test func theMainActorKeepsRunningDuringAMillionRowFetch() async throws {
        let store = try MillionRows.store()
        let idle = await MainActorTicker.measure { _ in
            try? await Task.sleep(for: .milliseconds(300))
        }
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.title)])
        request.batchSize = 50
        var count = 0
        var fraction = 0.0
        var intermediateSteps = 0
        let start = ContinuousClock.now
        let busy = await MainActorTicker.measure { _ in
            let fetch = store.fetchInBackground(request)
            for await step in fetch.progressUpdates {  // as a progress bar would
                fraction = step.fractionCompleted
                if fraction > 0 && fraction < 1 { intermediateSteps += 1 }
            }
            count = (try? await fetch.value.count) ?? -1
        }
        let elapsed = ContinuousClock.now - start
        print(
            "BACKGROUND FETCH main actor, batched 1M rows sorted by title in \(milliseconds(elapsed)) ms:"
                + " \(busy.summary) (idle baseline: \(idle.summary))")
        // No timing threshold here (the machine is shared; folio-bench measures stalls against
        // a baseline): the main actor must have run its timer and followed the fetch step by
        // step while it read, which a fetch that blocked it could not allow.
        #expect(count == MillionRows.count)
        #expect(fraction == 1.0)
        #expect(busy.ticks > 0)
        #expect(intermediateSteps > 1)
    }

    /// The whole million records loaded in the background (about 4 s and 400 MB): run with
    /// `FOLIO_LONG=1`.
    @MainActor
    @Test(.enabled(if: TestTier.isLong, "the long tier runs it (FOLIO_LONG=1)"), .tags(Testing.Tag.longTier))
    func theMainActorKeepsRunningWhileAMillionRecordsLoad() async throws {
        let store = try MillionRows.store()
        var results: FetchedRecords<Article>?
        var marks: [String] = []
        let start = ContinuousClock.now
        let busy = await MainActorTicker.measure { ticker in
            let fetch = store.fetchInBackground(RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]))
            for await _ in fetch.progressUpdates {}
            marks.append("last progress step at \(ticker.elapsed) ms")
            results = try? await fetch.value
            marks.append("value at \(ticker.elapsed) ms")
        }
        print(
            "BACKGROUND FETCH main actor, 1M whole records in \(milliseconds(ContinuousClock.now - start)) ms:"
                + " \(busy.summary); \(marks.joined(separator: ", "))")
        #expect(results?.count == MillionRows.count)
    }

    // MARK: Errors

    @Test func anUntranslatablePredicateIsAThrownError() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seedQuickly(store, count: 10)
        let fetch = store.fetchInBackground(RecordRequest<Article>(predicate: #Predicate { $0.score % 2 == 0 }))
        let steps = await collect(fetch.progressUpdates)
        await #expect {
            try await fetch.value
        } throws: { error in
            if case FolioError.unsupportedPredicate = error { return true }
            return false
        }
        #expect(steps.isEmpty)
        #expect(!fetch.progress.isCancelled)
        #expect(fetch.progress.fractionCompleted < 1)
    }

    @Test func aClosedStoreIsAThrownError() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seedQuickly(store, count: 10)
        try store.close()
        let fetch = store.fetchInBackground(RecordRequest<Article>())
        // GRDB's "Connection is closed" misuse error, as a FolioError.
        await #expect(throws: FolioError.self) { try await fetch.value }
    }

    @Test func anUnknownRecordTypeOrANegativeEstimateIsAThrownError() async throws {
        let store = try Store.temporary(records: [Memo.self])
        await #expect(throws: FolioError.unknownEntity("Article")) {
            try await store.fetchInBackground(RecordRequest<Article>()).value
        }
        var request = RecordRequest<Memo>()
        request.estimatedResultCount = -1
        await #expect(throws: FolioError.invalidArgument("estimatedResultCount must not be negative (-1)")) {
            try await store.fetchInBackground(request).value
        }
    }

    @Test func aRowThatCannotBeDecodedIsAThrownError() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seedQuickly(store, count: 10_000)
        try await store.write { tx in
            try tx.database.execute(
                sql: """
                    INSERT INTO article (title, url, published, score, category, isRead)
                    VALUES ('broken', 'broken', 'not a date', 20000, NULL, 0)
                    """)
        }
        let fetch = store.fetchInBackground(RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]))
        let steps = await collect(fetch.progressUpdates)
        await #expect {
            try await fetch.value
        } throws: { error in
            if case FolioError.decoding(column: "published", reason: _) = error { return true }
            return false
        }
        #expect(steps.allSatisfy { !$0.isFinished })
        #expect(steps.last?.completed ?? 0 >= 8_192, "progress advanced before the bad row")
    }
}

// MARK: - Support

/// A record type of its own table.
private struct Memo: PersistentRecord, Equatable {
    var id: RecordID?
    var text = ""
    static let entity = EntityDescription<Memo>("memo", [AttributeDescription(\.text)])
    init() {}
}

/// Articles numbered 0..<count: score = number, published = number hours after 1970,
/// title "Article <number>", url unique and in number order. One `INSERT … SELECT`.
private let seedSQL = """
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
    INSERT INTO article (title, url, published, score, category, isRead)
    SELECT 'Article ' || i, printf('https://example.com/%08d', i), i * 3600.0, i, char(97 + i % 3), 0
    FROM n
    """

/// Inserts `count` articles through the store.
private func seedQuickly(_ store: Store, count: Int) throws {
    try store.write { tx in try tx.database.execute(sql: seedSQL, arguments: [count]) }
}

/// One file store with a million articles, seeded once per test run.
///
/// Seeded through a second connection to the file rather than ``Store/write(_:)``: the
/// same statement, without the store's change hub recording a million row events that no
/// test here observes (in a debug build that is 60 % of the seeding time: about 4.4 s of
/// CPU through the store, 1.7 s this way).
private enum MillionRows {
    static let count = 1_000_000

    private static let shared: Result<Store, any Error> = Result {
        let start = ContinuousClock.now
        let store = try Store.temporary(records: [Article.self])
        let seeder = try DatabaseQueue(path: store.path!)
        try seeder.write { db in try db.execute(sql: seedSQL, arguments: [count]) }
        try seeder.close()
        print("BACKGROUND FETCH seeded \(count) rows in \(milliseconds(ContinuousClock.now - start)) ms")
        return store
    }

    static func store() throws -> Store { try shared.get() }
}

/// Runs `body` with `parent` as the thread's current progress, one pending unit
/// (the `becomeCurrent(withPendingUnitCount:)` pattern).
private func asChild<T>(of parent: Progress, _ body: () -> T) -> T {
    parent.becomeCurrent(withPendingUnitCount: 1)
    defer { parent.resignCurrent() }
    return body()
}

private func collect(_ stream: AsyncStream<FetchProgress>) async -> [FetchProgress] {
    var steps: [FetchProgress] = []
    for await step in stream { steps.append(step) }
    return steps
}

private func expectMonotonic(_ steps: [FetchProgress], sourceLocation: SourceLocation = #_sourceLocation) {
    for (previous, next) in zip(steps, steps.dropFirst()) {
        #expect(next.completed >= previous.completed, "\(previous) → \(next)", sourceLocation: sourceLocation)
        #expect(next.fractionCompleted >= previous.fractionCompleted, "\(previous) → \(next)", sourceLocation: sourceLocation)
    }
}

private func milliseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return String(format: "%.1f", Double(seconds) * 1_000 + Double(attoseconds) / 1e15)
}

/// Measures how long the main actor goes without running a job: a task on it sleeps 1 ms
/// in a loop and records the longest time between two wake-ups.
@MainActor
private final class MainActorTicker {
    private(set) var maxGap = Duration.zero
    private(set) var ticks = 0
    /// Gaps over 16 ms (a frame at 60 Hz): when they ended, from the start, and how long.
    private(set) var longGaps: [(end: Duration, length: Duration)] = []
    private let start = ContinuousClock.now

    var summary: String {
        "longest gap between 1 ms sleeps \(milliseconds(maxGap)) ms over \(ticks) ticks, "
            + "\(longGaps.count) over 16 ms"
            + longGaps.prefix(5).map { " [\(milliseconds($0.length)) ms ending at \(milliseconds($0.end)) ms]" }.joined()
    }

    static func measure(_ body: @MainActor (MainActorTicker) async -> Void) async -> MainActorTicker {
        let ticker = MainActorTicker()
        let task = Task { @MainActor in
            var last = ContinuousClock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(1))
                let now = ContinuousClock.now
                let gap = now - last
                ticker.maxGap = max(ticker.maxGap, gap)
                if gap > .milliseconds(16) { ticker.longGaps.append((now - ticker.start, gap)) }
                ticker.ticks += 1
                last = now
            }
        }
        await body(ticker)
        task.cancel()
        await task.value
        return ticker
    }

    /// Milliseconds since the measure began, to place the long gaps.
    var elapsed: String { milliseconds(ContinuousClock.now - start) }
}
