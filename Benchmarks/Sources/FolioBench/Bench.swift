import Foundation
import Folio
import GRDB

/// Runs every measurement in one process and collects the report.
@MainActor
final class Bench {
    let options: Options
    let dataset: Dataset
    let store: Store
    let baselines: Baselines
    var report: Report
    var random = SeededGenerator(seed: 0x5EED_F011_0BEC)
    /// Identifiers of rows that exist, for updates and deletes.
    var liveIDs: [Int64]
    var insertedCount = 0

    var repetitions: Int { options.repetitions }
    var rows: Int { dataset.rows }

    init(options: Options, machine: Machine) throws {
        self.options = options
        self.dataset = Dataset(rows: options.rows, days: options.days)
        log("generating \(Report.count(options.rows)) rows over \(options.days) days")
        let start = now()
        store = try Store.temporary(records: [Article.self])
        try dataset.fill(store)
        baselines = try Baselines(path: store.path!)
        try baselines.checkpoint()
        let seconds = Double(now() - start) / 1e9
        log(String(format: "generated in %.1f s", seconds))
        liveIDs = Array(1...Int64(options.rows))
        report = Report(
            machine: machine, rows: options.rows, mode: options.quick ? "quick" : "full",
            repetitions: options.repetitions, changesPerKind: options.changes,
            generationSeconds: seconds, totalSeconds: 0)
    }

    func request(batchSize: Int) -> Folio.FetchRequest<Article> {
        var request = Folio.FetchRequest<Article>(sortBy: [SortDescriptor(\Article.published, order: .reverse)])
        request.batchSize = batchSize
        return request
    }

    func controller(batchSize: Int = 50, sectioned: Bool, cacheName: String? = nil) -> FetchedResultsController<Article> {
        FetchedResultsController(
            request(batchSize: batchSize), store: store,
            sectionBy: sectioned ? .day(\.published) : nil, cacheName: cacheName)
    }

    func run() async throws {
        if options.wants("fetches") { try fetches() }
        if options.wants("memory") { try fetchMemory() }
        if options.wants("firstBatch") { try firstBatch() }
        if options.wants("randomAccess") { try randomAccess() }
        if options.wants("scroll") { try scrollAndFetchAll() }
        if options.wants("changes") { try await changes() }
        if options.wants("naiveChange") { try naiveChange() }
        if options.wants("reopen") { try await reopenWithCache() }
        if options.wants("backgroundFetch") { backgroundFetch() }
        report.totalSeconds = Double(now() - processStart) / 1e9
    }

    // MARK: Helpers

    /// Memory retained by what `body` returns, and the peak while it ran.
    func retained<T>(_ body: () throws -> T) rethrows -> (T, MemoryFigures) {
        let before = Memory.settled()
        var sampler = PeakSampler()
        let value = try body()
        let peak = sampler.finish()
        let after = Memory.settled()
        return (value, MemoryFigures(
            residentDelta: after.resident - before.resident, heapDelta: after.heap - before.heap,
            peakDelta: peak - before.resident))
    }

    func perRow(_ m: MemoryFigures, rows: Int) -> MemoryFigures {
        var m = m
        m.residentBytesPerRow = m.residentDelta.map { Double($0) / Double(rows) }
        m.heapBytesPerRow = m.heapDelta.map { Double($0) / Double(rows) }
        return m
    }

    func counters() -> Diagnostics.Counters { store.diagnostics.counters }

    // MARK: performFetch against `limit`, and the identifier snapshot

    func fetches() throws {
        log("performFetch without and with sections, against limit (\(repetitions) repetitions after a warm-up)")
        var limit = Samples(), plain = Samples(), sectioned = Samples(), snapshot = Samples()
        var recordsLoaded = 0, batchesLoaded = 0, sections = 0, snapshotBatches = 0
        for rep in 0...repetitions {
            let scanStart = now()
            let ids = try baselines.identifiers()
            let scanTime = now() - scanStart
            precondition(ids.count == rows, "the limit scan read \(ids.count) identifiers")

            let a = controller(sectioned: false)
            let aStart = now()
            try a.performFetch()
            let aTime = now() - aStart
            precondition(a.fetchedObjects?.count == rows)

            let b = controller(sectioned: true)
            let before = counters()
            let bStart = now()
            try b.performFetch()
            let bTime = now() - bStart
            let afterFetch = counters()
            let sStart = now()
            let snap = b.snapshot
            let sTime = now() - sStart
            let afterSnapshot = counters()
            precondition(snap.numberOfItems == rows)

            guard rep > 0 else { continue }  // warm-up
            limit.add(scanTime)
            plain.add(aTime)
            sectioned.add(bTime)
            snapshot.add(sTime)
            recordsLoaded += afterFetch.recordsMaterialized - before.recordsMaterialized
            batchesLoaded += afterFetch.batchesLoaded - before.batchesLoaded
            snapshotBatches += afterSnapshot.batchesLoaded - afterFetch.batchesLoaded
                + afterSnapshot.recordsMaterialized - afterFetch.recordsMaterialized
            sections = snap.numberOfSections
        }
        report.baselines.append(ResultRow(
            id: "limit", what: "SQLite steps the identifiers in sort order (C API, into an array)",
            median: limit.median, samples: limit.count))
        report.results.append(ResultRow(
            id: "performFetch", what: "performFetch, no sections", median: plain.median, samples: plain.count,
            baseline: "limit", baselineMedian: limit.median, ratio: plain.median / limit.median,
            target: "≤ 1.5 × limit; ≤ 24 B/row", met: plain.median <= 1.5 * limit.median))
        report.results.append(ResultRow(
            id: "performFetch.sections", what: "performFetch, \(Report.count(sections)) sections (by day)",
            median: sectioned.median, samples: sectioned.count,
            baseline: "limit", baselineMedian: limit.median, ratio: sectioned.median / limit.median,
            target: "≤ 2.5 × limit; zero records loaded",
            met: sectioned.median <= 2.5 * limit.median && recordsLoaded == 0 && batchesLoaded == 0,
            detail: "\(recordsLoaded) records and \(batchesLoaded) batches loaded over \(sectioned.count) fetches"))
        report.results.append(ResultRow(
            id: "snapshot", what: "identifier snapshot (controller.snapshot, \(Report.count(sections)) sections)",
            median: snapshot.median, samples: snapshot.count,
            target: "≤ 20 ms; zero batches loaded", met: snapshot.median <= 20 && snapshotBatches == 0,
            detail: "taken right after performFetch (no section list cached yet); \(snapshotBatches) batches or records loaded"))
    }

    /// Memory retained by performFetch: the resident set, free heap trimmed, before a
    /// fetch and after it with the controller alive (after warm-up fetches, so SQLite's
    /// page cache and the allocator's arenas already exist).
    func fetchMemory() throws {
        log("memory retained by the limit scan and by performFetch")
        let (ids, limitMemory) = try retained { try baselines.identifiers() }
        withExtendedLifetime(ids) {}
        let (a, plainMemory) = try retained { () throws -> FetchedResultsController<Article> in
            let c = controller(sectioned: false)
            try c.performFetch()
            return c
        }
        withExtendedLifetime(a) {}
        let (b, sectionedMemory) = try retained { () throws -> FetchedResultsController<Article> in
            let c = controller(sectioned: true)
            try c.performFetch()
            return c
        }
        withExtendedLifetime(b) {}
        if let i = report.baselines.firstIndex(where: { $0.id == "limit" }) {
            report.baselines[i].memory = perRow(limitMemory, rows: rows)
        } else {
            report.baselines.append(ResultRow(
                id: "limit", what: "SQLite steps the identifiers in sort order (C API, into an array)",
                memory: perRow(limitMemory, rows: rows)))
        }
        if let i = report.results.firstIndex(where: { $0.id == "performFetch" }) {
            let m = perRow(plainMemory, rows: rows)
            report.results[i].memory = m
            report.results[i].met = report.results[i].met == true && (m.residentBytesPerRow ?? .infinity) <= 24
            report.results[i].detail = "memory: resident-set growth retained with the controller alive, free heap trimmed (malloc_trim) before both readings, after warm-up fetches; heap = glibc mallinfo2 bytes in use"
        }
        if let i = report.results.firstIndex(where: { $0.id == "performFetch.sections" }) {
            report.results[i].memory = perRow(sectionedMemory, rows: rows)
        }
    }

    // MARK: Batches

    func firstBatch() throws {
        log("first batch of 50 after performFetch")
        var folio = Samples(), limit = Samples()
        var batches = 0
        let ids = try baselines.identifiers()
        for rep in 0...(repetitions + 2) {
            let c = controller(sectioned: false)
            try c.performFetch()
            let before = counters()
            let start = now()
            let first = c.object(at: IndexPath(item: 0, section: 0))
            let time = now() - start
            precondition(first?.id?.rawValue == ids[0])
            let limitStart = now()
            let rows = try baselines.batch(ids[0..<50])
            let limitTime = now() - limitStart
            precondition(rows.count == 50)
            guard rep > 0 else { continue }
            folio.add(time)
            limit.add(limitTime)
            batches += counters().batchesLoaded - before.batchesLoaded
        }
        report.results.append(ResultRow(
            id: "firstBatch", what: "first batch of 50 after performFetch (object(at: [0, 0]))",
            median: folio.median, samples: folio.count,
            baseline: "limit.batch.first", baselineMedian: limit.median, ratio: folio.median / limit.median,
            target: "≤ 3 ms", met: folio.median <= 3,
            detail: "\(batches) batches loaded for \(folio.count) first accesses"))
    }

    func randomAccess() throws {
        log("random access of 1,000 indexes against limit batch loads")
        let ids = try baselines.identifiers()
        var limit = Samples()
        for _ in 0..<1_000 {
            let start = Int.random(in: 0...(ids.count - 50), using: &random)
            let rows = try limit.time { try baselines.batch(ids[start..<(start + 50)]) }
            precondition(rows.count == 50)
        }
        let c = controller(sectioned: false)
        try c.performFetch()
        let results = c.fetchedObjects!
        var folio = Samples()
        var missing = 0
        let before = counters()
        for _ in 0..<1_000 {
            let index = Int.random(in: 0..<results.count, using: &random)
            let record = folio.time { results[index] }
            if record?.id?.rawValue != ids[index] { missing += 1 }
        }
        let batches = counters().batchesLoaded - before.batchesLoaded
        let total = folio.nanoseconds.reduce(0, +)
        report.baselines.append(ResultRow(
            id: "limit.batch", what: "load one batch of 50 records by identifiers (random positions; C API)",
            median: limit.median, p99: limit.p99, samples: limit.count))
        report.results.append(ResultRow(
            id: "randomAccess", what: "random access, 1,000 indexes (batch 50), per access",
            median: folio.median, p99: folio.p99, samples: folio.count,
            baseline: "limit.batch", baselineMedian: limit.median, ratio: folio.median / limit.median,
            detail: String(format: "%.0f ms for all 1,000; %d batches loaded; %d wrong records", Double(total) / 1e6, batches, missing)))
        report.baselines.append(ResultRow(
            id: "limit.batch.first", what: "load the first 50 records by identifiers (C API)",
            median: report.results.first { $0.id == "firstBatch" }?.baselineMedian))
    }

    // MARK: Scrolling against `naive` fetchAll

    func scrollAndFetchAll() throws {
        log("full sequential scroll (batch 100) against naive fetchAll (\(repetitions) each, interleaved)")
        var naive = Samples(), scroll = Samples()
        var naiveMemory: MemoryFigures?
        var scrollPeak = 0
        var seen = 0
        var batches = 0
        for rep in 0..<repetitions {
            let (records, memory) = try retained { try naive.time { try baselines.fetchAll() } }
            precondition(records.count == rows)
            if rep == 0 { naiveMemory = memory }
            _ = consume records

            let base = Memory.settled().resident
            var sampler = PeakSampler()
            let before = counters()
            let start = now()
            let c = controller(batchSize: 100, sectioned: false)
            try c.performFetch()
            var count = 0, index = 0
            for record in c.fetchedObjects! {
                if record != nil { count += 1 }
                index += 1
                if index & 0x3FFF == 0 { sampler.sample() }
            }
            scroll.add(now() - start)
            scrollPeak = Swift.max(scrollPeak, sampler.finish() - base)
            seen = count
            batches = counters().batchesLoaded - before.batchesLoaded
        }
        report.baselines.append(ResultRow(
            id: "naive", what: "GRDB fetchAll of every record (FetchableRecord, init(row:))",
            median: naive.median, samples: naive.count, memory: naiveMemory))
        let bounded = scrollPeak < 64 * 1_048_576
        report.results.append(ResultRow(
            id: "scroll", what: "full sequential scroll, batch 100 (performFetch + iterate fetchedObjects)",
            median: scroll.median, samples: scroll.count,
            baseline: "naive", baselineMedian: naive.median, ratio: scroll.median / naive.median,
            memory: MemoryFigures(peakDelta: scrollPeak),
            target: "≤ 1.5 × naive; memory bounded", met: scroll.median <= 1.5 * naive.median && bounded,
            detail: "\(Report.count(seen)) records read in \(Report.count(batches)) batches; peak resident growth \(Report.bytes(scrollPeak)) (bounded: at most 8 batches are kept)"))
    }

    // MARK: Background fetch

    func backgroundFetch() {
        report.results.append(ResultRow(
            id: "backgroundFetch", what: "cancel a background fetch; longest main-actor stall",
            target: "cancel ≤ 50 ms; no stall > 16 ms", met: nil,
            detail: "not measured: `store.fetchInBackground` is not on main yet"))
    }
}
