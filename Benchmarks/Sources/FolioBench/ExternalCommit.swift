import Folio
import Foundation
import GRDB

extension Bench {
    /// How the store learns of another connection's commit.
    enum ExternalSignal: String {
        /// Nothing called: the store is woken by the file system (inotify on Linux) and
        /// follows the change log on its own.
        case woken
        /// `store.synchronize()` called right after the commit, as an app does when it
        /// knows another process wrote.
        case synchronize
        /// A second store on the file opened with `FOLIO_CHANGE_DETECTION=polling`: the
        /// fallback where no notification can be had (every 100 ms).
        case polling
    }

    /// A one-row commit by a connection the store does not own (SQLite reports it to the
    /// store exactly as another process's), timed from just before it to the last callback
    /// of a live controller's change set: woken, through `store.synchronize()`, and polling;
    /// then a 1,000-row transaction, woken; then the local one-row write with the change log's
    /// triggers against the same write without them; a few commits by the `sqlite3` shell, a
    /// real second process, check that path too.
    func externalCommit() async throws {
        try absorbExternalCommits()
        let n = Swift.max(10, options.changes / 10)
        for signal in [ExternalSignal.woken, .synchronize, .polling] {
            var polled: Store?
            if signal == .polling {
                setenv("FOLIO_CHANGE_DETECTION", "polling", 1)
                polled = try Store(path: store.path!, records: [Article.self])
                unsetenv("FOLIO_CHANGE_DETECTION")
            }
            let target = polled ?? store
            let recorder = DeliveryRecorder<Article>(at: .snapshot)
            let live = controller(sectioned: true, store: target)
            live.delegate = recorder
            try performFetch(live)
            let how: String
            switch signal {
            case .woken: how = "woken (\(target.externalChangeDetection)), nothing called"
            case .synchronize: how = "store.synchronize() right after"
            case .polling: how = "\(target.externalChangeDetection) (the fallback)"
            }
            log("another connection's one-row commit → change set, \(how) (\(n) commits)")
            var samples = Samples()
            var reloads = 0
            for rep in 0...n {
                let id = liveIDs[Int.random(in: 0..<liveIDs.count, using: &random)]
                let date = dataset.randomDate(using: &random)
                if signal == .polling {
                    // A commit lands at any point of the poll's period, not right after the
                    // poll that delivered the one before.
                    try await Task.sleep(for: .microseconds(Int.random(in: 0..<100_000, using: &random)))
                }
                let watch = Stopwatch()
                try baselines.updatePublished(id: id, to: date)
                if signal == .synchronize { try store.synchronize() }
                guard let delivery = await recorder.next() else {
                    throw BenchError.noDelivery("another connection's commit (\(signal)): no change set within 30 s")
                }
                guard rep > 0 else { continue }  // warm-up
                samples.add(watch.lap(until: delivery.at))
                if delivery.change.isReload { reloads += 1 }
            }
            try verify(live)
            var detail =
                "a one-row update that moves, committed by a second GRDB connection to the same file (to SQLite exactly another "
                + "process's commit), followed through the change log; \(reloads) of \(samples.count) change sets were a reload"
            detail += "; the live snapshot equal to a fresh fetch's afterwards"
            if signal == .polling {
                detail +=
                    "; each commit after a random pause of 0–100 ms, so that it lands at any point of the poll's period "
                    + "(the files' stamps are compared every 10 ms, the database checked every 100 ms)"
            }
            if signal == .woken {
                detail += try await shellCommits(recorder: recorder, live: live)
            }
            report.results.append(
                ResultRow(
                    id: "externalCommit.\(signal)", what: "another connection's one-row commit, \(how) → change set",
                    samples: samples, withP99: true, target: Targets.externalCommitDelivery,
                    check: { $0.median <= Targets.externalCommitMedian && reloads == 0 }, detail: detail))
            if signal == .woken { try await externalTransaction(recorder: recorder, live: live) }
            live.delegate = nil
            withExtendedLifetime(recorder) {}
            try polled?.close()
        }
        try localWriteWithAndWithoutLog()
        try localWriteWithAndWithoutConflictTriggers()
    }

    /// A 1,000-row transaction by another connection → one change set, woken.
    private func externalTransaction(recorder: DeliveryRecorder<Article>, live: FetchedResultsController<Article>) async throws {
        log("another connection's 1,000-row transaction → change set, woken")
        var samples = Samples()
        var sets = 0
        for rep in 0...Swift.max(3, repetitions) {
            let first = insertedCount
            let rows = (0..<1_000).map { i -> StatementArguments in
                let a = newArticle()
                return [a.title, "\(a.url)-x\(first + i)", a.published.timeIntervalSince1970, a.score, a.category]
            }
            let watch = Stopwatch()
            try insertRows(rows)
            guard let delivery = await recorder.next() else {
                throw BenchError.noDelivery("another connection's 1,000-row transaction: no change set within 30 s")
            }
            guard rep > 0 else { continue }
            samples.add(watch.lap(until: delivery.at))
            if !delivery.change.isReload && delivery.change.insertedItems.count + delivery.change.insertedSections.count > 0 {
                sets += 1
            }
        }
        try verify(live)
        report.results.append(
            ResultRow(
                id: "externalCommit.transaction1000",
                what: "another connection's 1,000-row insert transaction → change set, woken",
                samples: samples, target: Targets.externalCommitDelivery,
                check: { _ in sets == samples.count },
                detail:
                    "each transaction arrived as one change set of inserts (\(sets) of \(samples.count)), not a reload; the live snapshot equal to a fresh fetch's"
            ))
    }

    /// One transaction of `rows` inserts on the baselines' own connection (synchronous).
    private func insertRows(_ rows: [StatementArguments]) throws {
        try baselines.queue.write { db in
            for arguments in rows {
                try db.execute(
                    sql: "INSERT INTO article (title, url, published, score, category, isRead) VALUES (?, ?, ?, ?, ?, 0)",
                    arguments: arguments)
            }
        }
    }

    /// The local one-row insert with no controller tracking, with the change log's triggers
    /// and with the entity's change triggers replaced by the same ones without the log
    /// (another connection swaps them), alternated; the ratio is the log's cost.
    private func localWriteWithAndWithoutLog() throws {
        log("local one-row insert with the change log's triggers against the same insert without them")
        let triggers = try baselines.queue.read { db in
            try Row.fetchAll(
                db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name GLOB 'folio_article_*'"
            ).map { ($0[0] as String, $0[1] as String) }
        }
        let plain = triggers.compactMap { name, sql -> String? in
            if name.hasSuffix("_changed") { return nil }
            guard let start = sql.range(of: " INSERT INTO folio_changes"), let end = sql.range(of: " END", options: .backwards)
            else { return sql }
            return String(sql[..<start.lowerBound]) + String(sql[end.lowerBound...])
        }
        func install(_ statements: [String]) throws {
            try baselines.queue.write { db in
                for (name, _) in triggers { try db.execute(sql: "DROP TRIGGER IF EXISTS \"\(name)\"") }
                for sql in statements { try db.execute(sql: sql) }
            }
            try store.synchronize()
        }
        var with = Samples(), without = Samples()
        // Many short alternated rounds: a checkpoint or a neighbour's burst lands in both.
        // Round 0 warms up (the first writes after the triggers changed) and is not counted.
        let rounds = 16
        for round in 0...rounds {
            let logging = round % 2 == 0
            try install(logging ? triggers.map(\.1) : plain)
            for rep in 0...30 {
                var article = newArticle()
                let watch = Stopwatch()
                try write { tx in try tx.insert(&article) }
                let lap = watch.lap()
                if rep > 0 && round > 0 { logging ? with.add(lap) : without.add(lap) }
                liveIDs.append(article.id!.rawValue)
            }
        }
        try install(triggers.map(\.1))
        addBaseline(
            "commit.withoutLog", "store.write of a one-row insert, the change triggers without the log", without, withP99: true)
        report.results.append(
            ResultRow(
                id: "commit.withLog", what: "store.write of a one-row insert with the change log, no controller tracking",
                samples: with, withP99: true, baseline: ("commit.withoutLog", without), target: Targets.changeLogCost,
                check: { ($0.ratio ?? .infinity) <= Targets.changeLogCostRatio },
                detail:
                    "alternated in \(rounds) rounds of 30 writes after one warm-up round; the same write, the log's INSERT in the triggers or not"
            ))
    }

    /// A few commits by the `sqlite3` shell, a separate process, the store woken; a sentence
    /// for the report's notes.
    private func shellCommits(recorder: DeliveryRecorder<Article>, live: FetchedResultsController<Article>) async throws -> String
    {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard
            let shell = path.split(separator: ":").map({ "\($0)/sqlite3" })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            return "; the sqlite3 shell is not installed, so no commit by a separate process was measured"
        }
        var samples = Samples()
        var reloads = 0
        let n = 5
        for rep in 0...n {
            let id = liveIDs[Int.random(in: 0..<liveIDs.count, using: &random)]
            let date = dataset.randomDate(using: &random)
            let errors = FileManager.default.temporaryDirectory.appendingPathComponent("folio-bench-sqlite3-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: errors) }
            func printed() -> String { String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self) }
            let watch = Stopwatch()
            let process = try Child(
                shell,
                [
                    "-cmd", ".timeout 10000", store.path!,
                    "UPDATE article SET published = \(date.timeIntervalSince1970) WHERE id = \(id);",
                ], errors: errors.path)
            guard let delivery = await recorder.next() else {
                _ = await process.exitStatus()
                throw BenchError.noDelivery("sqlite3 shell commit: no change set within 30 s (\(printed()))")
            }
            let status = await process.exitStatus()
            guard status == 0 else {
                throw BenchError.wrongResults("sqlite3 shell exited with \(status): \(printed())")
            }
            guard rep > 0 else { continue }
            samples.add(watch.lap(until: delivery.at))
            if delivery.change.isReload { reloads += 1 }
        }
        try verify(live)
        return
            "; the same through the sqlite3 shell, a separate process, \(samples.count) commits: median \(Report.ms(samples.median)) "
            + "from launching it (its start-up included), \(reloads) reloads"
    }
}
