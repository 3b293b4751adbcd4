import Foundation
import Folio

/// Wakes on the main actor every millisecond and notes the longest gap between wake-ups:
/// the longest time the main actor was kept from running (or the machine kept it from a core).
@MainActor
final class StallMonitor {
    private(set) var longestGap: UInt64 = 0
    /// CPU time the main thread itself used during the longest gap: near zero when the
    /// thread was waiting for a core, close to the gap when the main actor was busy.
    private(set) var longestGapBusy: UInt64 = 0
    /// The most CPU time the main thread used within any one gap: how long the main actor
    /// itself was kept busy, whatever the machine did.
    private(set) var longestBusy: UInt64 = 0
    private(set) var ticks = 0
    /// Wake-ups that came more than 16 ms late.
    private(set) var stalls = 0
    /// Wake-ups on another thread than the previous one (their gap's CPU time is unknown).
    private(set) var threadChanges = 0
    private var task: Task<Void, Never>?

    func start() {
        longestGap = 0
        longestGapBusy = 0
        longestBusy = 0
        ticks = 0
        stalls = 0
        threadChanges = 0
        task = Task { @MainActor [weak self] in
            var last = now()
            var lastBusy = threadCPUNow()
            var lastThread = pthread_self()
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 1_000_000)
                let t = now(), busy = threadCPUNow(), thread = pthread_self()
                guard let self else { return }
                // Thread CPU time of whichever thread runs this job. On Linux, once the
                // top-level code has awaited, main-actor jobs run on a dispatch worker thread,
                // not the process's main thread (checked), and nothing keeps it the same one:
                // across a change the difference is between two threads' clocks and means
                // nothing (a full run once read 24 s). It counts only on the same thread, and
                // never more than the gap.
                let sameThread = pthread_equal(thread, lastThread) != 0
                if !sameThread { self.threadChanges += 1 }
                let ran = sameThread && busy >= lastBusy ? Swift.min(busy - lastBusy, t - last) : 0
                if t - last > self.longestGap {
                    self.longestGap = t - last
                    self.longestGapBusy = ran
                }
                self.longestBusy = Swift.max(self.longestBusy, ran)
                self.ticks += 1
                if t - last > 17_000_000 { self.stalls += 1 }
                last = t
                lastBusy = busy
                lastThread = thread
            }
        }
    }

    /// Stops, and returns the longest stall in milliseconds (the longest gap less the 1 ms sleep).
    func stop() async -> Double {
        task?.cancel()
        await task?.value
        task = nil
        return Swift.max(0, Double(longestGap) / 1e6 - 1)
    }
}

extension Bench {
    /// `store.fetchInBackground`: how fast `cancel()` makes `value` throw, and the longest
    /// main-actor stall while background fetches run (against the same monitor on an idle
    /// main actor, which shows what the shared machine alone does).
    func backgroundFetch() async throws {
        log("background fetch: main-actor stalls and cancel latency")
        let monitor = StallMonitor()

        // A full background fetch of every record (no batch size: the longest fetch there is),
        // with the main actor following its progress as a progress bar would.
        var everything = request(batchSize: 0)
        everything.batchSize = 0
        let expected = try countAll()  // SQLite's own count: rows other connections inserted are in it too
        monitor.start()
        let full = Stopwatch()
        let fetch = store.fetchInBackground(everything)
        var steps = 0
        for await _ in fetch.progressUpdates { steps += 1 }
        let results = try await fetch.value
        let fullLap = full.lap()
        let fullStall = await monitor.stop()
        let (fullStalls, fullTicks, fullBusy) = (monitor.stalls, monitor.ticks, Double(monitor.longestGapBusy) / 1e6)
        let fullLongestBusy = Double(monitor.longestBusy) / 1e6
        let fullThreadChanges = monitor.threadChanges
        guard results.count == expected else {
            throw BenchError.wrongResults("background fetch read \(results.count) records; the table holds \(expected)")
        }
        _ = consume results

        // Cancel in the middle of such a fetch.
        var cancel = Samples()
        var cancelledCleanly = 0
        monitor.start()
        for _ in 0..<(repetitions + 2) {
            let fetch = store.fetchInBackground(everything)
            let deadline = now() + 30_000_000_000
            while fetch.progress.completedUnitCount < 4_096 && now() < deadline {
                try await Task.sleep(nanoseconds: 2_000_000)
            }
            let watch = Stopwatch()
            fetch.cancel()
            do {
                _ = try await fetch.value
            } catch is CancellationError {
                cancelledCleanly += 1
            }
            cancel.add(watch.lap())
        }
        let cancelStall = await monitor.stop()
        let cancelBusy = Double(monitor.longestGapBusy) / 1e6
        let threadChanges = fullThreadChanges + monitor.threadChanges
        let busiest = Swift.max(fullLongestBusy, Double(monitor.longestBusy) / 1e6)
        let stall = Swift.max(fullStall, cancelStall)
        let stallBusy = fullStall >= cancelStall ? fullBusy : cancelBusy
        let remaining = try countAll()  // the store is still usable (counted on the main actor, so after the monitor stopped)
        precondition(remaining > 0)

        // The same timer with nothing running, as long as the full fetch took: what the
        // shared machine does to a main actor on its own.
        monitor.start()
        try await Task.sleep(nanoseconds: fullLap.wall)
        let idleStall = await monitor.stop()
        let (idleStalls, idleTicks) = (monitor.stalls, monitor.ticks)
        let attempts = cancel.count
        report.results.append(
            ResultRow(
                id: "backgroundFetch.cancel", what: "cancel a background fetch of every record → value throws", samples: cancel,
                target: Targets.cancel, clause: 0,
                check: { $0.median <= Targets.cancelMilliseconds && cancelledCleanly == attempts },
                detail:
                    "\(cancelledCleanly) of \(attempts) fetches ended with CancellationError, each cancelled after at least 4,096 rows had been read"
            ))
        var stallRow = ResultRow(
            id: "backgroundFetch.stall", what: "longest main-actor stall during background fetches",
            target: Targets.cancel, clause: 1)
        stallRow.met = stall <= Targets.stallMilliseconds
        stallRow.metOnCPU = busiest <= Targets.stallMilliseconds
        stallRow.detail = String(
            format:
                "a 1 ms timer on the main actor during a full background fetch (%.0f ms, %d progress steps followed on the main actor; "
                + "%d of %d wake-ups more than 16 ms late) and the cancelled ones; during the longest stall the main thread itself ran %.1f ms "
                + "(the rest it waited for a core), and the main thread never ran more than %.1f ms within one gap (the CPU column); the same timer with nothing running for as long: "
                + "longest %.1f ms, %d of %d wake-ups more than 16 ms late (the machine's own noise)",
            Double(fullLap.wall) / 1e6, steps, fullStalls, fullTicks, stallBusy, busiest, idleStall, idleStalls, idleTicks)
        stallRow.detail! +=
            "; \(threadChanges) wake-ups were on another thread than the one before (main-actor jobs run on dispatch worker "
            + "threads here): their gaps count no CPU time"
        stallRow.median = stall
        stallRow.cpuMedian = busiest
        report.results.append(stallRow)
    }

    func countAll() throws -> Int { try store.count(request(batchSize: 0)) }
}
