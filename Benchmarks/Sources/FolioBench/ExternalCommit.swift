import Foundation
import Folio

extension Bench {
    /// How the store learns of another connection's commit (SQLite tells no one).
    enum ExternalSignal: String {
        /// `store.synchronize()` called right after the commit, as an app does when it
        /// knows another process wrote (a notification, a file watcher).
        case synchronize
        /// `store.observeExternalChanges(every:)` polling `PRAGMA data_version`.
        case observe
    }

    /// The polling interval of `observeExternalChanges(every:)` in this measurement.
    static let externalPollMilliseconds = 10

    /// A one-row commit by a connection the store does not own, timed from just before it
    /// to the last callback of a live controller's change set: through `store.synchronize()`
    /// right after the commit, and through `store.observeExternalChanges(every: 10 ms)`.
    /// SQLite signals such commits to no one but `PRAGMA data_version`, exactly as it does
    /// another process's; a few commits by the `sqlite3` shell, a real second process,
    /// check that path too.
    func externalCommit() async throws {
        try absorbExternalCommits()
        let recorder = DeliveryRecorder<Article>(at: .snapshot)
        let live = controller(sectioned: true)
        live.delegate = recorder
        try performFetch(live)
        let n = Swift.max(10, options.changes / 10)
        for signal in [ExternalSignal.synchronize, .observe] {
            let how =
                signal == .synchronize
                ? "store.synchronize() right after"
                : "store.observeExternalChanges(every: \(Self.externalPollMilliseconds) ms)"
            log("another connection's one-row commit → change set, \(how) (\(n) commits)")
            let observer =
                signal == .observe
                ? store.observeExternalChanges(every: .milliseconds(Self.externalPollMilliseconds)) : nil
            var samples = Samples()
            var reloads = 0
            for rep in 0...n {
                let id = liveIDs[Int.random(in: 0..<liveIDs.count, using: &random)]
                let date = dataset.randomDate(using: &random)
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
            observer?.cancel()
            await observer?.value
            try verify(live)
            var detail =
                "a one-row update that moves, committed by a second GRDB connection to the same file (SQLite reports it to the store "
                + "exactly as another process's commit: only through PRAGMA data_version); \(reloads) of \(samples.count) change sets "
                + "were a reload (the controller refetched every identifier and section)"
            detail += "; slowest \(Report.ms(samples.p99)); the live snapshot equal to a fresh fetch's afterwards"
            if signal == .observe {
                detail += try await shellCommits(recorder: recorder, live: live)
            }
            report.results.append(
                ResultRow(
                    id: "externalCommit.\(signal)", what: "another connection's one-row commit, \(how) → change set",
                    samples: samples, target: Targets.externalCommit,
                    check: { $0.median <= Targets.externalCommitMedian }, detail: detail))
        }
        live.delegate = nil
        withExtendedLifetime(recorder) {}
    }

    /// A few commits by the `sqlite3` shell, a separate process, with the store polling
    /// (`observeExternalChanges(every:)`); a sentence for the report's notes.
    private func shellCommits(recorder: DeliveryRecorder<Article>, live: FetchedResultsController<Article>) async throws -> String
    {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard
            let shell = path.split(separator: ":").map({ "\($0)/sqlite3" })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            return "; the sqlite3 shell is not installed, so no commit by a separate process was measured"
        }
        let observer = store.observeExternalChanges(every: .milliseconds(Self.externalPollMilliseconds))
        defer { observer.cancel() }
        var samples = Samples()
        var reloads = 0
        let n = 5
        for rep in 0...n {
            let id = liveIDs[Int.random(in: 0..<liveIDs.count, using: &random)]
            let date = dataset.randomDate(using: &random)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: shell)
            process.arguments = [
                "-cmd", ".timeout 10000", store.path!,
                "UPDATE article SET published = \(date.timeIntervalSince1970) WHERE id = \(id);",
            ]
            let errors = Pipe()
            process.standardError = errors
            let exit = AsyncStream<Int32>.makeStream()
            process.terminationHandler = { process in
                exit.continuation.yield(process.terminationStatus)
                exit.continuation.finish()
            }
            let watch = Stopwatch()
            try process.run()
            guard let delivery = await recorder.next() else {
                process.waitUntilExit()
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                throw BenchError.noDelivery("sqlite3 shell commit: no change set within 30 s (\(message))")
            }
            var status: Int32 = -1
            for await code in exit.stream { status = code }
            guard status == 0 else {
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                throw BenchError.wrongResults("sqlite3 shell exited with \(status): \(message)")
            }
            guard rep > 0 else { continue }
            samples.add(watch.lap(until: delivery.at))
            if delivery.change.isReload { reloads += 1 }
        }
        observer.cancel()
        await observer.value
        try verify(live)
        return
            "; the same through the sqlite3 shell, a separate process, \(samples.count) commits: median \(Report.ms(samples.median)) "
            + "from launching it (its start-up included), \(reloads) reloads"
    }
}
