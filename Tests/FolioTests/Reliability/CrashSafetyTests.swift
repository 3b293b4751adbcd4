import Foundation
import GRDB
import Testing
@testable import Folio

/// The record FolioCrashImporter imports (the same entity, declared again here).
struct CrashItem: PersistentRecord {
    var id: RecordID?
    var batch = 0
    var sequence = 0
    var title = ""
    var category: String? = nil

    static let entity = EntityDescription<CrashItem>(
        "item",
        [
            AttributeDescription(\.batch, indexed: true),
            AttributeDescription(\.sequence),
            AttributeDescription(\.title),
            AttributeDescription(\.category),
        ])
}

/// The importer's batch sizes (Sources/FolioCrashImporter/main.swift).
enum CrashBatch {
    static func size(_ batch: Int) -> Int { batch % 10 == 0 ? 1_500 : 40 + batch % 11 }
}

/// A child process importing in transactions is killed with SIGKILL at random points,
/// many times. After each kill the store opens, passes `PRAGMA integrity_check`, holds
/// every committed transaction whole and no partial one, and a controller fetches it
/// correctly; the persistent section cache the child keeps is reused only when still
/// valid, and a controller using it always equals a fresh uncached fetch.
///
/// The child keeps two `Store` instances open on the file and writes through both. Kills
/// that land during a cache write leave only Folio's temporary files, which
/// `deleteCache(withName: nil)` removes.
///
/// `FOLIO_SOAK=1` kills 500 times instead of 100, `FOLIO_CRASH_KILLS` sets the number;
/// `FOLIO_CRASH_SEED` replays a schedule.
@Suite("Crash safety", .tags(Testing.Tag.longTier))
struct CrashSafetyTests {
    static var importer: URL? {
        var candidates: [URL] = []
        if let path = ProcessInfo.processInfo.environment["FOLIO_CRASH_IMPORTER"] {
            candidates.append(URL(fileURLWithPath: path))
        }
        let test = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = test.deletingLastPathComponent()
        for _ in 0..<4 {  // the binary sits beside the test bundle (or above it on Apple platforms)
            candidates.append(directory.appendingPathComponent("FolioCrashImporter"))
            directory = directory.deletingLastPathComponent()
        }
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent("FolioCrashImporter"))
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The complete lines of a file a child writes its standard output to. (A file, not a
    /// pipe: a pipe's readability handler uses a dispatch source, and closing the pipe of a
    /// killed child under it has crashed libdispatch's event loop on Linux.)
    static func lines(of url: URL) -> [String] {
        guard let data = try? Data(contentsOf: url) else { return [] }
        var lines = String(decoding: data, as: UTF8.self).components(separatedBy: "\n")
        lines.removeLast()  // an unfinished line, or "" after the last newline
        return lines
    }

    /// Waits until the lines a child printed to `output` satisfy `condition`; false if it
    /// ended without, or printed nothing new for 120 s (hung). The output is read again
    /// after every wake-up before any time limit counts, and the limit runs from the last
    /// new line: this task can be kept from running for minutes while the child goes on
    /// printing (a loaded 2-core machine starved every test of this process for 137 s), and
    /// then what the child printed meanwhile decides, not the clock.
    static func waitForOutput(
        of process: ChildProcess, in output: URL, until condition: ([String]) -> Bool
    ) async throws -> Bool {
        var printed = -1
        var deadline = ContinuousClock.now
        while true {
            let current = lines(of: output)
            if condition(current) { return true }
            if !process.isRunning { return condition(lines(of: output)) }
            if current.count != printed {
                printed = current.count
                deadline = ContinuousClock.now + .seconds(120)
            } else if ContinuousClock.now >= deadline {
                return false
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    enum KillPoint: String { case startup, midImport, rightAfterCacheWrite, rightAfterACommitWithoutCacheWrite }

    struct Tally {
        var kills = 0
        var killsAfterACommit = 0
        var batchesCommitted = 0
        var unprintedCommitsFound = 0
        var cacheReused = 0
        var cacheRebuilt = 0
        /// Rounds where the cache on disk was known stale (so reuse would have been wrong).
        var knownStale = 0
        /// Rounds killed right after a valid cache write (so reuse was required).
        var knownValid = 0
        /// Temporary cache files that kills during a cache write left behind.
        var temporaryFilesLeft = 0
    }

    @Test func importerKilledAtRandomPoints() async throws {
        let importer = try #require(Self.importer, "FolioCrashImporter was not built next to the tests (swift build builds it)")
        let seed = UInt64(environmentInt("FOLIO_CRASH_SEED") ?? Int.random(in: 0..<1_000_000))
        var rng = SplitMix64(seed: seed)
        let kills = environmentInt("FOLIO_CRASH_KILLS") ?? (isSoak ? 500 : TestTier.pick(quick: 2, long: 100))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("import.sqlite").path

        var tally = Tally()
        // The store's last batch after the previous round: where this round's child resumes,
        // and what the cache was valid for when it started (the previous round's checks
        // rewrote it). Not the highest batch printed: a kill between a commit and its line
        // leaves a commit no line announces.
        var storeLast = 0
        for round in 1...kills {
            let point: KillPoint =
                round == 1
                ? .midImport
                : {
                    let roll = Double.random(in: 0..<1, using: &rng)
                    return roll < 0.15
                        ? .startup
                        : roll < 0.4 ? .rightAfterCacheWrite : roll < 0.6 ? .rightAfterACommitWithoutCacheWrite : .midImport
                }()
            let delay = Int.random(in: 0..<250, using: &rng)
            let context =
                "crash seed \(seed), round \(round), kill point \(point), delay \(delay) ms (replay: FOLIO_CRASH_SEED=\(seed))"

            // Run the child and kill it.
            let outputURL = directory.appendingPathComponent("round-\(round).out")
            let errorURL = directory.appendingPathComponent("round-\(round).err")
            let process = try ChildProcess(importer.path, [path], output: outputURL.path, errors: errorURL.path)
            func waitUntil(_ condition: ([String]) -> Bool) async throws -> Bool {
                try await Self.waitForOutput(of: process, in: outputURL, until: condition)
            }
            func isReady(_ lines: [String]) -> Bool { lines.first?.hasPrefix("ready") == true }
            switch point {
            case .startup:
                try await Task.sleep(for: .milliseconds(delay))
            case .midImport:
                let ready = try await waitUntil(isReady)
                #expect(ready, "the importer never became ready — \(context)")
                try await Task.sleep(for: .milliseconds(delay / 2))
            case .rightAfterACommitWithoutCacheWrite:
                // The last line says a batch that is not a multiple of 4 was committed: no
                // cache write follows it.
                let committed = try await waitUntil { lines in
                    isReady(lines)
                        && lines.last.flatMap { $0.hasPrefix("committed ") ? Int($0.dropFirst(10)) : nil }.map { $0 % 4 != 0 }
                            == true
                }
                #expect(committed, "the importer never committed — \(context)")
            case .rightAfterCacheWrite:
                let cached = try await waitUntil { lines in isReady(lines) && lines.dropFirst().contains { $0.hasPrefix("cache") }
                }
                #expect(cached, "the importer never wrote its cache — \(context)")
            }
            let wasRunning = process.isRunning
            process.kill(SIGKILL)
            let ended = process.wait()
            let errors = (try? String(contentsOf: errorURL, encoding: .utf8)) ?? ""
            try #require(
                wasRunning && ended == .signaled(SIGKILL), "the importer ended by itself (\(ended)): \(errors) — \(context)")
            tally.kills += 1

            let lines = Self.lines(of: outputURL)
            let printed = lines.compactMap { line -> Int? in
                line.hasPrefix("committed ") ? Int(line.dropFirst("committed ".count)) : nil
            }
            if !printed.isEmpty { tally.killsAfterACommit += 1 }
            #expect(
                printed == Array(printed.indices.map { storeLast + 1 + $0 }),
                "commits out of order: \(printed) after batch \(storeLast) — \(context)")
            let lastPrinted = printed.last ?? storeLast

            // After the kill: a cache write the kill cut short left a temporary file, which
            // opening the store removes (its writer is gone).
            let cachesNow = URL(fileURLWithPath: path + "-folio-cache")
            func temporaries() -> [String] {
                ((try? FileManager.default.contentsOfDirectory(atPath: cachesNow.path)) ?? []).filter {
                    $0.hasSuffix(".folio-cache-tmp")
                }
            }
            tally.temporaryFilesLeft += temporaries().count
            let store = try Store(path: path, records: [CrashItem.self])
            #expect(temporaries().isEmpty, "opening the store removes a killed writer's temporary cache files — \(context)")
            let integrity = try store.readSync { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            #expect(integrity == ["ok"], "\(context)")
            let batches = try store.readSync { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT batch, COUNT(*), MIN(sequence), MAX(sequence), COUNT(DISTINCT sequence),
                               SUM(category = 'new'), SUM(category = 'seen')
                        FROM item GROUP BY batch ORDER BY batch
                        """)
            }
            let numbers = batches.map { $0[0] as Int }
            let last = numbers.last ?? 0
            // Every committed transaction is there, whole; nothing else is.
            #expect(
                numbers == Array(stride(from: 1, through: last, by: 1)),
                "batches missing: \(numbers.count) of \(last) — \(context)")
            // At most one commit is unprinted: the one the kill landed after.
            #expect(
                last == lastPrinted || last == lastPrinted + 1,
                "the store ends at batch \(last); the importer resumed after \(storeLast), printed up to \(lastPrinted) — \(context)"
            )
            if last == lastPrinted + 1 { tally.unprintedCommitsFound += 1 }
            for row in batches {
                let batch: Int = row[0], size = CrashBatch.size(batch)
                let complete =
                    (row[1] as Int) == size && (row[2] as Int) == 0 && (row[3] as Int) == size - 1 && (row[4] as Int) == size
                #expect(complete, "batch \(batch) is partial: \(row) — \(context)")
                // The next transaction's update of this batch is all-or-nothing too.
                let expectedNew = batch == last ? size : 0
                #expect(
                    (row[5] as Int) == expectedNew && (row[6] as Int) == size - expectedNew,
                    "batch \(batch) half updated: \(row) — \(context)")
            }
            tally.batchesCommitted = last

            // Controllers over it, on the main actor.
            let outcome = try await Self.checkControllers(
                store, numbers: numbers,
                expectedIDs: try store.readSync { db in
                    try Int64.fetchAll(db, sql: "SELECT id FROM item ORDER BY batch DESC, sequence, id")
                }, context: context)
            // This round's child committed `last` (printed or not) after any cache write of its own.
            let committedThisRound = last > storeLast
            if committedThisRound && last % 4 != 0 { tally.knownStale += 1 }
            let killedRightAfterValidWrite = point == .rightAfterCacheWrite && lines.last?.hasPrefix("cache \(last) ") == true
            if killedRightAfterValidWrite { tally.knownValid += 1 }
            switch outcome {
            case .reused:
                tally.cacheReused += 1
                // The child writes its cache only after batches that are multiples of 4: a
                // later commit of this round left it stale, so it must not be reused.
                #expect(!(committedThisRound && last % 4 != 0), "a stale cache was reused (store at batch \(last)) — \(context)")
            case .rebuilt:
                tally.cacheRebuilt += 1
                // Killed in the pause right after the child wrote a valid cache: it must be reused.
                if killedRightAfterValidWrite {
                    Issue.record("a valid cache was not reused: \(outcome) — \(context)")
                }
            case .notUsed:
                Issue.record("a controller with a cache name did not use the cache — \(context)")
            }
            storeLast = last
        }
        // Cache writes cut short left temporary files, removed when the store opened; what
        // is left is the cache, which deleteCache removes, leaving nothing behind.
        let caches = URL(fileURLWithPath: path + "-folio-cache")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: caches.path)) ?? []
        #expect(left.allSatisfy { $0 == "crash.folio-cache" }, "\(left)")
        let store = try Store(path: path, records: [CrashItem.self])
        try await MainActor.run { try FetchedResultsController<CrashItem>.deleteCache(withName: nil, in: store) }
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: caches.path)) ?? []) == [])
        #expect(tally.kills == kills)
        #expect(tally.killsAfterACommit >= kills / 2, "most kills land while importing: \(tally)")
        #expect(tally.batchesCommitted > kills, "\(tally)")
        // Which paths a few kills take is chance: the long tier's hundred take them all.
        if kills >= 50 {
            #expect(tally.cacheReused > 0 && tally.cacheRebuilt > 0, "both cache paths taken: \(tally)")
            #expect(tally.knownStale > 0 && tally.knownValid > 0, "both cache checks exercised: \(tally)")
        }
        print("crash safety (seed \(seed)): \(tally)")
    }

    /// A sectioned controller fetches exactly what SQL returns, and a controller with the
    /// child's cache name equals it, whatever it did with the cache (returned).
    @MainActor
    static func checkControllers(_ store: Store, numbers: [Int], expectedIDs: [Int64], context: String) async throws
        -> SectionCache.Outcome
    {
        var request = RecordRequest<CrashItem>(sortBy: [SortDescriptor(\.batch, order: .reverse), SortDescriptor(\.sequence)])
        request.batchSize = 100
        let plain = FetchedResultsController(request, store: store, sectionBy: .attribute(\.batch))
        try await plain.performFetch()
        #expect(plain.snapshot.identifiers.map(\.rawValue) == expectedIDs, "\(context)")
        #expect(plain.sections.map(\.name) == numbers.reversed().map(String.init), "\(context)")
        #expect(plain.sections.map(\.numberOfObjects) == numbers.reversed().map(CrashBatch.size), "\(context)")
        // Not on an empty store (killed before its first commit): an index path past the
        // sections traps, as NSFetchedResultsController's raises.
        if let last = numbers.last {
            let first = plain.object(at: IndexPath(item: 0, section: 0))
            #expect(first?.batch == last && first?.sequence == 0, "\(context)")
        }
        let cached = FetchedResultsController(request, store: store, sectionBy: .attribute(\.batch), cacheName: "crash")
        try await cached.performFetch()
        #expect(
            cached.snapshot == plain.snapshot,
            "the cached controller differs from a fresh fetch (\(cached.lastCacheOutcome)) — \(context)")
        #expect(cached.sections == plain.sections, "\(context)")
        await cached.flushCache()
        return cached.lastCacheOutcome
    }
}
