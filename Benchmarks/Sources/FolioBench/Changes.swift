import Foundation
import Folio

extension Bench {
    enum ChangeKind: String, CaseIterable {
        case insert = "insert"
        case updateInPlace = "update in place"
        case updateMoving = "update that moves"
        case delete = "delete"
    }

    /// The synchronous write (in an async context the async overload would be chosen).
    func write(_ body: (WriteTransaction) throws -> Void) throws {
        try store.write(body)
    }

    func newArticle() -> Article {
        insertedCount += 1
        return dataset.randomArticle(insertedCount, using: &random)
    }

    func takeRandomID() -> Int64 {
        let i = Int.random(in: 0..<liveIDs.count, using: &random)
        liveIDs.swapAt(i, liveIDs.count - 1)
        return liveIDs.removeLast()
    }

    func randomRecord() throws -> Article {
        let id = liveIDs[Int.random(in: 0..<liveIDs.count, using: &random)]
        return try store.fetchOne(Article.self, id: RecordID(id))!
    }

    // MARK: Live change sets

    func changes() async throws {
        log("commit of a one-row insert with no controller tracking")
        var commit = Samples()
        for _ in 0..<50 {
            var article = newArticle()
            try commit.time { try write { tx in try tx.insert(&article) } }
            liveIDs.append(article.id!.rawValue)
        }
        addBaseline(
            "commit", "store.write of a one-row insert, no controller tracking (the floor of every change below)", commit,
            withP99: true)
        try absorbExternalCommits()
        let recorder = DeliveryRecorder<Article>(at: .snapshot)
        try await oneRowChanges(recorder)
        try await transactions(recorder)
        withExtendedLifetime(recorder) {}
    }

    /// One-row changes of every kind, each delivered to one live controller.
    private func oneRowChanges(_ recorder: DeliveryRecorder<Article>) async throws {
        let live = try liveController(recorder)
        let naive = baselineSamples["naive.change"]
        let n = options.changes
        for kind in ChangeKind.allCases {
            log("\(n) one-row changes: \(kind.rawValue)")
            var samples = Samples()
            var unexpected = 0
            for k in 0..<n {
                let watch: Stopwatch
                switch kind {
                case .insert:
                    var article = newArticle()
                    watch = Stopwatch()
                    try write { tx in try tx.insert(&article) }
                    liveIDs.append(article.id!.rawValue)
                case .updateInPlace:
                    var record = try randomRecord()
                    record.title += " (edited)"
                    watch = Stopwatch()
                    try write { tx in try tx.update(record) }
                case .updateMoving:
                    var record = try randomRecord()
                    record.published = dataset.randomDate(using: &random)
                    watch = Stopwatch()
                    try write { tx in try tx.update(record) }
                case .delete:
                    let id = takeRandomID()
                    watch = Stopwatch()
                    try write { tx in try tx.delete(Article.self, id: RecordID(id)) }
                }
                guard let delivered = await recorder.next() else {
                    throw BenchError.noDelivery("\(kind.rawValue): no change set within 30 s")
                }
                samples.add(watch.lap(until: delivered.at))
                if !Self.hasExpectedShape(delivered.change, kind: kind, rows: 1) { unexpected += 1 }
                if k % 50 == 49 { try verify(live) }
            }
            report.results.append(
                ResultRow(
                    id: "change.\(kind)", what: "one-row \(kind.rawValue) → change set delivered", samples: samples,
                    withP99: true,
                    baseline: naive.map { ("naive.change", $0) }, asSpeedup: true,
                    target: Targets.oneRowChange,
                    check: { $0.median <= Targets.oneRowChangeMedian && $0.p99 <= Targets.oneRowChangeP99 },
                    detail: unexpected == 0 ? nil : "\(unexpected) change sets of an unexpected shape"))
        }
        try verify(live)
        live.delegate = nil
    }

    /// 1,000-row transactions of each kind, each against the same kind of write with no
    /// controller following the store, the two alternated: a baseline measured once, minutes
    /// before, moved by a quarter between runs. Each tracked write goes to a controller
    /// fetched after the last bare write, and warmed by a one-row commit (its first commit
    /// builds the list's chunk summaries).
    private func transactions(_ recorder: DeliveryRecorder<Article>) async throws {
        for kind in [ChangeKind.insert, .updateMoving, .delete] {
            log("1,000-row transactions: \(kind.rawValue), alternated with the same write with no controller")
            var samples = Samples(), writes = Samples(), alone = Samples()
            var ratios: [Double] = []
            var unexpected = 0
            for rep in 0...(repetitions + 1) {
                // The write alone: no controller follows the store.
                let bare = try prepareTransaction(kind)
                let bareWatch = Stopwatch()
                try write(bare)
                let bareLap = bareWatch.lap()

                let live = try await warmedLiveController(recorder)
                let transaction = try prepareTransaction(kind)
                let watch = Stopwatch()
                try write(transaction)
                let written = watch.lap()
                guard let delivered = await recorder.next() else {
                    throw BenchError.noDelivery("1,000-row \(kind.rawValue): no change set within 30 s")
                }
                let tracked = watch.lap(until: delivered.at)
                if rep > 0 {  // the first pair is a warm-up
                    samples.add(tracked)
                    writes.add(written)
                    alone.add(bareLap)
                    ratios.append(Double(tracked.wall) / Double(max(1, bareLap.wall)))
                }
                if !Self.hasExpectedShape(delivered.change, kind: kind, rows: 1_000) { unexpected += 1 }
                try verify(live)
                live.delegate = nil
            }
            addBaseline(
                "commit1000.\(kind)",
                "store.write of 1,000 rows (\(kind.rawValue)), no controller tracking, alternated with the tracked write",
                alone)
            let what =
                kind == .updateMoving
                ? "1,000-row transaction (updates that move) → change set"
                : "1,000-row transaction (\(kind.rawValue)s) → change set"
            let part = samples.median - alone.median, cpuPart = samples.cpuMedian - alone.cpuMedian
            var detail = String(
                format: "store.write returned after %.1f ms (CPU %.1f ms), the tracker's work included; "
                    + "median of the %d paired ratios %.2f ×",
                writes.median, writes.cpuMedian, ratios.count, ratios.sorted()[ratios.count / 2])
            detail +=
                part > 0 && cpuPart > 0
                ? "; Folio's part (tracking and delivery) beyond the same write with no controller (`commit1000.\(kind)`) "
                    + String(format: "is about %.1f ms (CPU %.1f ms)", part, cpuPart)
                : "; Folio's part (tracking and delivery) is within the noise of the write itself"
            if unexpected > 0 { detail += "; \(unexpected) change sets of an unexpected shape" }
            report.results.append(
                ResultRow(
                    id: "transaction1000.\(kind)", what: what, samples: samples,
                    baseline: ("commit1000.\(kind)", alone),
                    target: Targets.transaction,
                    check: { ($0.ratio ?? .infinity) <= Targets.transactionRatio }, detail: detail))
        }
        report.notes.append(
            "Live change sets were checked along the way: \(verifiedSnapshots) times (every 50 one-row changes and after every 1,000-row transaction) "
                + "the live controller's snapshot was equal to a fresh fetch's.")
    }

    /// A live controller by day, its delegate `recorder`, fetched.
    private func liveController(_ recorder: DeliveryRecorder<Article>) throws -> FetchedResultsController<Article> {
        let live = controller(sectioned: true)
        live.delegate = recorder
        try performFetch(live)
        return live
    }

    /// ``liveController(_:)`` whose first commit (a one-row moving update) has been delivered.
    private func warmedLiveController(_ recorder: DeliveryRecorder<Article>) async throws -> FetchedResultsController<Article> {
        let live = try liveController(recorder)
        var record = try randomRecord()
        record.published = dataset.randomDate(using: &random)
        try write { tx in try tx.update(record) }
        guard await recorder.next() != nil else { throw BenchError.noDelivery("warm-up: no change set within 30 s") }
        return live
    }

    /// Lets the store notice what the baselines' own connection did before a live controller
    /// starts: writes, and checkpoints, since a TRUNCATE checkpoint by another connection
    /// also changes `PRAGMA data_version` (SQLite 3.40), which the store takes for another
    /// process's commit (and tracking controllers reload).
    func absorbExternalCommits() throws {
        try store.synchronize()
    }

    /// The largest rowid ever used in the table (rowids are never reused: AUTOINCREMENT).
    func maximumRowID() throws -> Int64 {
        try store.read { db in try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'article'") ?? 0 }
    }

    /// A 1,000-row transaction of one kind, its records prepared beforehand.
    func prepareTransaction(_ kind: ChangeKind) throws -> (WriteTransaction) throws -> Void {
        switch kind {
        case .insert:
            // Rowids are never reused and grow by one: the new rows take the next 1,000.
            let articles = (0..<1_000).map { _ in newArticle() }
            let next = (try maximumRowID()) + 1
            liveIDs += (next..<(next + 1_000))
            return { tx in
                for var article in articles { try tx.insert(&article) }
            }
        case .updateMoving, .updateInPlace:
            var records: [Article] = []
            var picked = Set<Int64>()
            while records.count < 1_000 {
                var record = try randomRecord()
                guard picked.insert(record.id!.rawValue).inserted else { continue }
                if kind == .updateMoving {
                    record.published = dataset.randomDate(using: &random)
                } else {
                    record.title += " (edited)"
                }
                records.append(record)
            }
            return { tx in for record in records { try tx.update(record) } }
        case .delete:
            let ids = (0..<1_000).map { _ in takeRandomID() }
            return { tx in for id in ids { try tx.delete(Article.self, id: RecordID(id)) } }
        }
    }

    /// Checks that a live controller shows exactly what a fresh fetch gives.
    func verify(_ live: FetchedResultsController<Article>) throws {
        let fresh = FetchedResultsController(live.fetchRequest, store: store, sectionBy: live.sectionKey)
        fresh.completesInBackground = false
        try performFetch(fresh)
        guard live.snapshot == fresh.snapshot else {
            throw BenchError.wrongResults("the live controller's snapshot differs from a fresh fetch's")
        }
        verifiedSnapshots += 1
    }

    /// Whether a change set looks like what `kind` of `rows` rows should give.
    static func hasExpectedShape(_ c: ChangeSet, kind: ChangeKind, rows: Int) -> Bool {
        if c.isReload { return false }
        switch kind {
        case .insert:
            return c.deletedItems.isEmpty && c.movedItems.isEmpty
                && c.insertedItems.count + c.insertedSections.count >= (rows == 1 ? 1 : 1)
                && c.insertedItems.count <= rows
        case .updateInPlace:
            return c.updatedItems.count == rows && c.movedItems.isEmpty && c.insertedItems.isEmpty && c.deletedItems.isEmpty
        case .updateMoving:
            return c.movedItems.count + c.updatedItems.count + c.insertedItems.count >= (rows == 1 ? 1 : rows / 2)
        case .delete:
            return c.insertedItems.isEmpty && c.movedItems.isEmpty && c.deletedItems.count + c.deletedSections.count >= 1
                && c.deletedItems.count <= rows
        }
    }

    // MARK: naive after a change

    func naiveChange() throws {
        log("naive: one-row insert, refetch everything, difference(from:) (\(repetitions) repetitions)")
        var previous = try baselines.fetchAll().map(\.id)
        var samples = Samples()
        for _ in 0..<repetitions {
            let article = newArticle()
            let watch = Stopwatch()
            let (ids, differences) = try baselines.insertRefetchAndDiff(article, previous: previous)
            samples.add(watch.lap())
            precondition(differences == 1, "naive diff found \(differences) changes")
            previous = ids
        }
        addBaseline(
            "naive.change", "one-row insert, then fetchAll again and `difference(from:)` of the identifier arrays", samples)
    }

    // MARK: Persistent section cache

    func reopenWithCache() async throws {
        log("reopen with a valid section cache against an uncached performFetch")
        let name = "bench-\(UUID().uuidString.prefix(8))"
        do {
            let first = try fetched(sectioned: true, cacheName: name)
            await first.flushCache()
        }
        var cached = Samples(), uncached = Samples()
        var outcomes: [String] = []
        for rep in 0...repetitions {
            let plain = controller(sectioned: true)
            let plainWatch = Stopwatch()
            try performFetch(plain)
            let plainLap = plainWatch.lap()

            let reopened = controller(sectioned: true, cacheName: name)
            let watch = Stopwatch()
            try performFetch(reopened)
            let lap = watch.lap()
            precondition(reopened.snapshot.numberOfItems == plain.snapshot.numberOfItems)
            outcomes.append("\(reopened.lastCacheOutcome)")
            guard rep > 0 else { continue }
            uncached.add(plainLap)
            cached.add(lap)
        }
        let reused = outcomes.allSatisfy { $0 == "\(SectionCache.Outcome.reused)" }
        addBaseline("uncached", "Folio's own performFetch with sections, no cache (measured beside the reopen)", uncached)
        report.results.append(
            ResultRow(
                id: "reopen", what: "reopen with a valid section cache (new controller, same cacheName)", samples: cached,
                baseline: ("uncached", uncached),
                target: Targets.reopen, check: { $0.ratio! <= Targets.reopenRatio && reused },
                detail: reused ? "lastCacheOutcome == .reused every time" : "cache outcomes: \(outcomes.joined(separator: ", "))")
        )
        try FetchedResultsController<Article>.deleteCache(withName: name, in: store)
    }
}

enum BenchError: Error, CustomStringConvertible {
    case noDelivery(String)
    case wrongResults(String)
    var description: String {
        switch self {
        case .noDelivery(let message), .wrongResults(let message): message
        }
    }
}
