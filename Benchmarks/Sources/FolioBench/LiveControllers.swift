import Foundation
import Folio

extension Bench {
    /// A record that exists and is unread, so that every controller below (some of which
    /// show only unread rows) holds it.
    func randomUnreadRecord() throws -> Article {
        while true {
            let record = try randomRecord()
            if !record.isRead { return record }
        }
    }

    /// Many live controllers on one table, as an app with several lists open has: one-row
    /// updates that move, each timed from just before `store.write` to the last callback
    /// of the last controller. Twice: 20 controllers, then 100.
    func liveControllers() async throws {
        try await liveControllers(
            count: Targets.liveControllersCount, id: "liveControllers", target: Targets.liveControllers,
            milliseconds: Targets.liveControllersMilliseconds)
        try await liveControllers(
            count: Targets.manyLiveControllersCount, id: "liveControllers100", target: Targets.manyLiveControllers,
            milliseconds: Targets.manyLiveControllersMilliseconds)
    }

    /// `count` live controllers, each with its own filter and sort (of five kinds, in turn),
    /// and one delegate for all.
    func liveControllers(count: Int, id: String, target: Target, milliseconds: Double) async throws {
        try absorbExternalCommits()
        let recorder = DeliveryRecorder<Article>(at: .snapshot)
        var controllers: [FetchedResultsController<Article>] = []
        var kinds = (sectioned: 0, plain: 0, unread: 0)
        log("\(count) live controllers: setting up")
        for i in 0..<count {
            let c: FetchedResultsController<Article>
            switch i % 5 {
            case 0, 2:
                c = controller(sectioned: true)
                kinds.sectioned += 1
            case 1, 3:
                c = FetchedResultsController(request(batchSize: [20, 50, 100][i % 3]), store: store)
                kinds.plain += 1
            default:
                c = FetchedResultsController(
                    request(batchSize: 50, predicate: #Predicate<Article> { $0.isRead == false }), store: store,
                    sectionBy: .day(\.published))
                kinds.unread += 1
            }
            c.delegate = recorder
            try performFetch(c)
            controllers.append(c)
        }
        let n = Swift.max(20, options.changes / 2)
        log("\(count) live controllers: \(n) one-row updates that move")
        var all = Samples(), first = Samples()
        var unexpected = 0
        for _ in 0..<n {
            var record = try randomUnreadRecord()
            record.published = dataset.randomDate(using: &random)
            let watch = Stopwatch()
            try write { tx in try tx.update(record) }
            var firstAt: UInt64?
            var lastAt: UInt64 = 0
            for delivered in 0..<count {
                guard let delivery = await recorder.next() else {
                    throw BenchError.noDelivery("\(count) live controllers: \(delivered) change sets within 30 s")
                }
                firstAt = firstAt ?? delivery.at
                lastAt = delivery.at
                if !Self.hasExpectedShape(delivery.change, kind: .updateMoving, rows: 1) { unexpected += 1 }
            }
            all.add(watch.lap(until: lastAt))
            first.add(watch.lap(until: firstAt!))
        }
        try await Task.sleep(nanoseconds: 20_000_000)  // late or extra change sets would show here
        if recorder.backlog > 0 {
            throw BenchError.wrongResults(
                "\(count) live controllers: \(recorder.backlog) change sets more than one per controller")
        }
        for c in controllers { try verify(c) }
        var detail =
            "\(kinds.sectioned) controllers by day, \(kinds.plain) without sections (batch 20, 50, 100), \(kinds.unread) of unread "
            + "rows by day, one delegate for all; every update is of an unread row, so each commit changes all \(count); "
            + "the first controller's change set was delivered after \(Report.ms(first.median)) (median); every controller's "
            + "snapshot equal to a fresh fetch's afterwards"
        if unexpected > 0 { detail += "; \(unexpected) change sets of an unexpected shape" }
        report.results.append(
            ResultRow(
                id: id, what: "\(count) live controllers, one-row update that moves → all \(count) delivered",
                samples: all, withP99: true, target: target, check: { $0.median <= milliseconds }, detail: detail))
        for c in controllers { c.delegate = nil }
        withExtendedLifetime(recorder) {}
    }
}
