import Foundation
import GRDB
import Testing
@testable import Folio

/// One writer, several readers and live controllers at once, for a bounded time.
///
/// Every write transaction keeps two invariants — the number of rows and the sum of
/// their scores — so any read that sees part of a transaction (a torn read) breaks one.
/// Controllers apply every change set to a strict table-view model as it arrives, and
/// must converge to a fresh fetch once the writer stops. `FOLIO_SOAK=1` runs 30 s
/// instead of 3 s. The suite also runs under the thread sanitizer in CI.
/// Runs `body(1)`, `body(2)`… (just `body(1)` when `once`) on a thread of its own until `stop` is set, and returns
/// when the thread is done. Blocking work stays off Swift's cooperative pool, which has
/// only as many threads as cores (two here): blocking loops there starve every task.
func loopOnThread(until stop: Locked<Bool>, once: Bool = false, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            var n = 0
            while !stop.current {
                n += 1
                body(n)
                if once { break }
            }
            continuation.resume()
        }
        thread.start()
    }
}

@Suite("Concurrency", .tags(Testing.Tag.threadSanitized, Testing.Tag.longTier))
@MainActor
struct ConcurrencyTests {
    nonisolated static let rowCount = 300
    nonisolated static let scoreSum = 300 * 7

    /// Errors and counts from the tasks, gathered under a lock.
    final class Report: @unchecked Sendable {
        // @unchecked Sendable: every field is read and written under `lock`.
        private let lock = NSLock()
        private var errors: [String] = []
        private var counts: [String: Int] = [:]

        func fail(_ text: String) { lock.lock(); errors.append(text); lock.unlock() }
        func count(_ key: String, _ n: Int = 1) { lock.lock(); counts[key, default: 0] += n; lock.unlock() }
        var allErrors: [String] { lock.lock(); defer { lock.unlock() }; return errors }
        var allCounts: [String: Int] { lock.lock(); defer { lock.unlock() }; return counts }
    }

    /// Applies each change set, as it is delivered, to a strict table-view model.
    final class ModelDelegate: FetchedResultsControllerDelegate {
        var model: TableViewModel
        var changeSets = 0
        var errors: [String] = []
        let name: String

        init(_ name: String, _ controller: FetchedResultsController<Article>) {
            self.name = name
            model = TableViewModel(controller.snapshot)
        }

        func controller(_ controller: FetchedResultsController<Article>, didChangeContentWith changes: ChangeSet) {
            changeSets += 1
            do {
                try model.apply(changes, dataSource: controller.snapshot)
                if model != TableViewModel(controller.snapshot) {
                    errors.append("\(name): after change set \(changeSets) the model differs from the controller's snapshot")
                }
            } catch {
                errors.append("\(name): change set \(changeSets) \(changes): \(error)")
                model = TableViewModel(controller.snapshot)
            }
        }
    }

    static var duration: Duration { isSoak ? .seconds(30) : .seconds(3) }

    func seedStore() throws -> Store {
        let store = try Store.temporary(records: [Article.self])
        try store.write { tx in
            for i in 0..<Self.rowCount {
                var a = Article(
                    title: "t\(i % 17)", url: "seed-\(i)", published: Date(timeIntervalSince1970: Double(i % 40) * 3_600),
                    score: 7, category: ["a", "b", "c", nil][i % 4])
                try tx.insert(&a)
            }
        }
        return store
    }

    /// One transaction: moves score between rows, inserts a row and deletes another
    /// (handing its score on), sometimes reshuffles many rows. Count and sum stay.
    nonisolated static func writeOne(_ tx: WriteTransaction, _ n: Int) throws {
        let db = tx.database
        let ids = try Int64.fetchAll(db, sql: "SELECT id FROM article ORDER BY random() LIMIT 3")
        guard ids.count == 3 else { return }
        let amount = Int.random(in: 1...5)
        try db.execute(sql: "UPDATE article SET score = score - ? WHERE id = ?", arguments: [amount, ids[0]])
        try db.execute(sql: "UPDATE article SET score = score + ? WHERE id = ?", arguments: [amount, ids[1]])
        // Delete one row, hand its score to another, insert a row with score 0.
        let doomedScore = try Int.fetchOne(db, sql: "SELECT score FROM article WHERE id = ?", arguments: [ids[2]]) ?? 0
        try tx.delete(Article.self, id: RecordID(ids[2]))
        try db.execute(sql: "UPDATE article SET score = score + ? WHERE id = ?", arguments: [doomedScore, ids[0]])
        var a = Article(
            title: "w\(n % 13)", url: "w-\(n)", published: Date(timeIntervalSince1970: Double(n % 40) * 3_600),
            score: 0, category: ["a", "b", "c", nil][n % 4])
        a.isRead = n % 3 == 0
        try tx.insert(&a)
        if n % 25 == 0 {
            // Many rows at once: a point from each of fifty rows to each of fifty others.
            let many = try Int64.fetchAll(db, sql: "SELECT id FROM article ORDER BY random() LIMIT 100")
            let half = many.count / 2
            let json = { (ids: ArraySlice<Int64>) in "[" + ids.map(String.init).joined(separator: ",") + "]" }
            try db.execute(
                sql: "UPDATE article SET score = score + 1 WHERE id IN (SELECT value FROM json_each(?))",
                arguments: [json(many[..<half])])
            try db.execute(
                sql: "UPDATE article SET score = score - 1 WHERE id IN (SELECT value FROM json_each(?))",
                arguments: [json(many[half..<(2 * half)])])
        }
        if n % 40 == 0 {
            try tx.updateAll(Article.self, where: #Predicate { $0.isRead }, set: [.set(\.isRead, to: false)])
        }
    }

    @Test func oneWriterReadersAndControllers() async throws {
        let store = try seedStore()
        let report = Report()
        let stop = Locked(false)

        // Controllers: unsectioned, sectioned with a predicate, windowed — all tracked.
        var byScore = RecordRequest<Article>(sortBy: [SortDescriptor(\.score), SortDescriptor(\.title)])
        byScore.batchSize = 20
        var byCategory = RecordRequest<Article>(
            predicate: #Predicate { $0.score >= 5 },
            sortBy: [SortDescriptor(\.category), SortDescriptor(\.published, order: .reverse)])
        byCategory.batchSize = 20
        var window = RecordRequest<Article>(sortBy: [SortDescriptor(\.published, order: .reverse)], limit: 30, offset: 10)
        window.batchSize = 10
        let controllers = [
            FetchedResultsController(byScore, store: store),
            FetchedResultsController(byCategory, store: store, sectionBy: .attribute(\.category)),
            FetchedResultsController(window, store: store, sectionBy: .day(\.published, timeZone: .gmt)),
        ]
        var delegates: [ModelDelegate] = []
        for (i, controller) in controllers.enumerated() {
            try await controller.performFetch()
            let delegate = ModelDelegate("controller \(i)", controller)
            controller.delegate = delegate
            delegates.append(delegate)
        }

        // The writer: synchronous writes on its own thread, alternating with async writes.
        let writer = Task.detached {
            await loopOnThread(until: stop) { n in
                do {
                    if n % 5 == 0 {
                        let done = DispatchSemaphore(value: 0)
                        Task {
                            do { try await store.write { tx in try Self.writeOne(tx, n) } } catch {
                                report.fail("async writer: \(error)")
                            }
                            done.signal()
                        }
                        done.wait()
                    } else {
                        try store.write { tx in try Self.writeOne(tx, n) }
                    }
                    report.count("write transactions")
                } catch {
                    report.fail("writer: \(error)")
                }
            }
        }
        var readers: [Task<Void, Never>] = []
        // Raw reads: count and sum in one read transaction.
        readers.append(
            Task.detached {
                await loopOnThread(until: stop) { _ in
                    do {
                        let (count, sum) = try store.read { db in
                            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), SUM(score) FROM article")!
                            return (row[0] as Int, row[1] as Int)
                        }
                        if count != Self.rowCount || sum != Self.scoreSum {
                            report.fail("torn raw read: \(count) rows, sum \(sum)")
                        }
                        report.count("raw reads")
                    } catch { report.fail("raw reader: \(error)") }
                }
            })
        // Whole fetches (one query, so one consistent state) and counts, async.
        readers.append(
            Task.detached {
                let all = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
                while !stop.current {
                    do {
                        let results = try await store.fetch(all)
                        var count = 0, sum = 0
                        for article in results {
                            guard let article else { report.fail("a fetch without batching returned a missing record"); continue }
                            count += 1
                            sum += article.score
                        }
                        if count != Self.rowCount || sum != Self.scoreSum {
                            report.fail("torn fetch: \(count) records, sum \(sum)")
                        }
                        let counted = try store.count(all)
                        if counted != Self.rowCount { report.fail("count \(counted)") }
                        report.count("fetches and counts")
                    } catch { report.fail("fetch reader: \(error)") }
                }
            })
        // Batched results read while rows change under them: never a wrong record.
        readers.append(
            Task.detached {
                let request: RecordRequest<Article> = {
                    var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.published), SortDescriptor(\.title)])
                    request.batchSize = 16
                    request.maxBatchesInMemory = 2
                    return request
                }()
                await loopOnThread(until: stop) { _ in
                    do {
                        let results = try store.fetch(request)
                        let ids = try store.fetchIdentifiers(request)
                        if ids.count != Self.rowCount { report.fail("fetchIdentifiers: \(ids.count) identifiers") }
                        if results.count != Self.rowCount { report.fail("batched fetch: \(results.count) identifiers") }
                        var index = 0
                        var missing = 0
                        for article in results {
                            if let article {
                                if article.id != results.identifiers[index] {
                                    report.fail(
                                        "batched fetch: position \(index) holds \(String(describing: article.id)), expected \(results.identifiers[index])"
                                    )
                                }
                            } else {
                                missing += 1
                            }
                            index += 1
                        }
                        if index != results.count { report.fail("batched iteration visited \(index) of \(results.count)") }
                        if let error = results.lastError { report.fail("batched fetch: a batch failed to load: \(error)") }
                        report.count("batched iterations")
                        report.count("records deleted while iterating", missing)
                    } catch { report.fail("batched reader: \(error)") }
                }
            })

        // Meanwhile, on the main actor: change a live controller's request now and then.
        let clock = ContinuousClock()
        let deadline = clock.now + Self.duration
        // At least twenty request changes, and the least work of every writer, reader and
        // controller checked below, however busy the machine and the main actor are with
        // other suites (a starved reader can do less in the time than the checks ask),
        // within a generous bound: the loop ends as soon as that is done, and the bound only
        // stops a hang (a dry run of CI beside two soaks gave this loop 19 turns in 120 s).
        let bound = deadline + .seconds(600)
        func everyTaskDidItsShare() -> Bool {
            let counts = report.allCounts
            return counts["write transactions", default: 0] > 20 && counts["raw reads", default: 0] > 20
                && counts["fetches and counts", default: 0] > 5 && counts["batched iterations", default: 0] > 5
                && delegates.allSatisfy { $0.changeSets > 5 }
        }
        var flip = false
        var requestChanges = 0
        while (clock.now < deadline || requestChanges < 20 || !everyTaskDidItsShare()) && clock.now < bound {
            try await Task.sleep(for: .milliseconds(40))
            flip.toggle()
            var changed = byScore
            changed.predicate = flip ? #Predicate<Article> { $0.score != 7 } : nil
            changed.sortBy = flip ? [SortDescriptor(\.score, order: .reverse)] : byScore.sortBy
            let change = try controllers[0].setRequest(changed)
            _ = change  // also delivered to the delegate, which applies it
            requestChanges += 1
        }
        stop.withLock { $0 = true }
        await writer.value
        for reader in readers { await reader.value }

        // Every controller converges to a fresh fetch.
        for (i, controller) in controllers.enumerated() {
            await controller.waitForChanges()
            let fresh = FetchedResultsController(controller.fetchRequest, store: store, sectionBy: controller.sectionKey)
            fresh.firstScreenRule = nil
            try await fresh.performFetch()
            #expect(controller.snapshot == fresh.snapshot, "controller \(i) did not converge")
            #expect(delegates[i].model == TableViewModel(fresh.snapshot), "controller \(i)'s model did not converge")
            #expect(controller.sections == fresh.sections)
        }
        for delegate in delegates { #expect(delegate.errors.isEmpty, "\(delegate.errors.prefix(5))") }
        #expect(report.allErrors.isEmpty, "\(report.allErrors.prefix(10))")
        let counts = report.allCounts
        #expect(counts["write transactions", default: 0] > 20)
        #expect(counts["raw reads", default: 0] > 20)
        #expect(counts["fetches and counts", default: 0] > 5)
        #expect(counts["batched iterations", default: 0] > 5)
        #expect(delegates.allSatisfy { $0.changeSets > 5 })
        #expect(requestChanges >= 20)
        let racedRounds = try await commitsRacingRequestChanges(
            store, controllers[1], rounds: isSoak ? 500 : TestTier.pick(quick: 8, long: 60))
        print(
            "concurrency: \(racedRounds) rounds of a commit racing setRequest, \(counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")), change sets \(delegates.map(\.changeSets)), request changes \(requestChanges)"
        )
    }

    /// One commit on another thread at a varying moment while the main actor changes a
    /// controller's request or refetches, then no more writes: each time the controller must converge
    /// once `waitForChanges()` returns, whichever side of its read the commit fell on.
    func commitsRacingRequestChanges(_ store: Store, _ controller: FetchedResultsController<Article>, rounds: Int) async throws
        -> Int
    {
        let base = controller.fetchRequest
        // Widen the window: each identifier scan (a fetch's read, after its snapshot began)
        // pauses 4 ms before stepping.
        store.diagnostics.logSQL { line in
            if line.hasPrefix("SELECT"), line.contains("ORDER BY"), !line.contains("json_each") {
                Thread.sleep(forTimeInterval: 0.004)
            }
        }
        defer { store.diagnostics.logSQL(nil) }
        for round in 0..<rounds {
            let delay = Double(round % 10) * 0.000_5
            let writer = Task.detached {
                await loopOnThread(until: Locked(false), once: true) { _ in
                    Thread.sleep(forTimeInterval: delay)
                    try? store.write { tx in try Self.writeOne(tx, 10_000 + round) }
                }
            }
            if round % 3 == 2 {
                try await controller.performFetch()  // the asynchronous read
            } else {
                var request = base
                request.sortBy = round % 2 == 0 ? [SortDescriptor(\.category), SortDescriptor(\.score)] : base.sortBy
                try controller.setRequest(request)
            }
            await writer.value
            await controller.waitForChanges()
            let fresh = FetchedResultsController(controller.fetchRequest, store: store, sectionBy: controller.sectionKey)
            fresh.firstScreenRule = nil
            try await fresh.performFetch()
            guard controller.snapshot == fresh.snapshot else {
                Issue.record(
                    "round \(round): a commit racing setRequest was lost (\(controller.snapshot.numberOfItems) items shown, \(fresh.snapshot.numberOfItems) in the store)"
                )
                return round
            }
        }
        return rounds
    }
}
