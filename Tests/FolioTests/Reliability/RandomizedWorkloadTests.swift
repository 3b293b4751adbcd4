import Foundation
import Testing
@testable import Folio

/// Randomized workloads that try to break the live engine: after every operation, every
/// live controller's change sets, applied to a strict table-view model, give exactly what
/// SQL written in the test gives; moves follow the rules and are minimal; records read
/// through the controller are the stored ones. See ``WorkloadProfile`` for what each seed
/// stresses and ``WorkloadGenerator`` for the operations.
///
/// The long tier (`FOLIO_LONG=1`): 34 seeds (about 18,000 transactions), each in a child
/// process, two at a time; the quick tier runs the first 3, each with a third of its transactions.
/// `FOLIO_SEED=n` runs one seed; `FOLIO_FIRST_SEED=n FOLIO_SEEDS=k` a range;
/// `FOLIO_TRANSACTIONS=n` sets the steps per seed; `FOLIO_SOAK=1` runs 300 seeds, each five
/// times longer. A failure is shrunk by delta debugging (`FOLIO_SHRINK=0` skips it,
/// `FOLIO_SHRINK_SECONDS` bounds it) and printed as readable steps, Swift code and a replay
/// file: `FOLIO_REPLAY=<file> swift test --filter RandomizedWorkloadTests/replay`.
/// `FOLIO_IN_PROCESS=1` runs the workloads in the test process (no trap protection).
@Suite("Randomized workloads", .tags(Testing.Tag.longTier))
struct RandomizedWorkloadTests {
    nonisolated static var seeds: [UInt64] {
        if WorkloadChild.requestPath != nil || replayPath != nil { return [] }
        return workloadSeeds(defaultCount: isSoak ? 300 : 34, quick: 3)
    }

    nonisolated static func steps(_ profile: WorkloadProfile) -> Int {
        // The quick tier runs a third of each seed's transactions (its first seeds' profiles).
        environmentInt("FOLIO_TRANSACTIONS")
            ?? (isSoak
                ? profile.defaultSteps * 5 : TestTier.pick(quick: max(profile.defaultSteps / 3, 9), long: profile.defaultSteps))
    }

    nonisolated static var replayPath: String? { ProcessInfo.processInfo.environment["FOLIO_REPLAY"] }

    @Test(arguments: seeds)
    func workload(seed: UInt64) async throws {
        let profile = WorkloadProfile.of(seed: seed)
        let request = WorkloadRequest(
            seed: seed, steps: Self.steps(profile), fileStore: WorkloadRunner.defaultFileStore(seed: seed))
        let outcome = await WorkloadChild.run(request, timeout: .seconds(isSoak ? 3_600 : 600))
        WorkloadTotals.shared.add(seed: seed, profile: profile, outcome)
        defer { WorkloadTotals.shared.finished(of: Self.seeds.count) }
        guard let failure = outcome.failure else {
            #expect(outcome.stats["change sets checked", default: 0] > 0, "seed \(seed) checked no change set")
            return
        }
        Issue.record(Comment(rawValue: await Self.report(seed: seed, profile: profile, outcome, failure)))
    }

    /// The failure, shrunk when this is the first of its kind in the run.
    static func report(seed: UInt64, profile: WorkloadProfile, _ outcome: WorkloadOutcome, _ failure: WorkloadFailure) async
        -> String
    {
        var text =
            "seed \(seed) (\(profile), \(outcome.fileStore ? "file" : "memory") store) failed at step \(failure.step) of \(outcome.ops.count): [\(failure.kind)]\n  \(failure.message)\n"
        text += "  replay the seed: FOLIO_SEED=\(seed) swift test --filter RandomizedWorkloadTests\n"
        let budget = environmentInt("FOLIO_SHRINK_SECONDS") ?? 150
        let shrink = ProcessInfo.processInfo.environment["FOLIO_SHRINK"] != "0"
        if shrink, await WorkloadTotals.shrinkGate.claim(failure.kind),
            let shrunk = await WorkloadShrinker.shrink(outcome, seed: seed, budget: .seconds(budget))
        {
            let file = WorkloadChild.directory.deletingLastPathComponent().appendingPathComponent("folio-repro-seed\(seed).json")
            try? JSONEncoder().encode(WorkloadRequest(seed: seed, steps: 0, fileStore: outcome.fileStore, ops: shrunk.ops)).write(
                to: file)
            text +=
                "SHRUNK to \(shrunk.ops.count) operations (\(shrunk.runs) replays, \(Int(shrunk.seconds)) s\(shrunk.complete ? "" : ", budget spent: may shrink further")):\n"
            text += WorkloadShrinker.describe(shrunk.ops, fileStore: outcome.fileStore)
            text += "  fails with [\(shrunk.failure.kind)] at step \(shrunk.failure.step): \(shrunk.failure.message)\n"
            text +=
                "  as Swift:\n"
                + WorkloadShrinker.swiftCode(shrunk.ops, fileStore: outcome.fileStore).split(separator: "\n").map { "    " + $0 }
                .joined(separator: "\n") + "\n"
            text += "  replay: FOLIO_REPLAY=\(file.path) swift test --filter RandomizedWorkloadTests/replay\n"
        } else {
            text += "  not shrunk (another seed's failure of this kind was, or FOLIO_SHRINK=0); its last operations:\n"
            text += WorkloadShrinker.describe(Array(outcome.ops.suffix(4)), fileStore: outcome.fileStore)
        }
        print(text)
        return text
    }

    /// The child-process side of ``workload(seed:)``: runs when the parent asks.
    @Test(.enabled(if: WorkloadChild.requestPath != nil))
    @MainActor
    func workloadChild() async throws {
        try await WorkloadChild.serve(WorkloadChild.requestPath!)
    }

    /// `object(at:)` inside a closure of its own store, on a batch not loaded yet, returns
    /// the stored record — or stops with a message naming the misuse — never a silent `nil`
    /// Run in a child process, in case it traps.
    @Test(.enabled(if: WorkloadChild.executable != nil && WorkloadChild.requestPath == nil))
    func objectInsideWriteIsTheRecordOrStops() async throws {
        let request = WorkloadRequest(seed: 0, steps: 0, fileStore: true, misuse: true)
        let outcome = await WorkloadChild.run(request, timeout: .seconds(120))
        guard let failure = outcome.failure else { return }  // the record, as stored
        #expect(failure.kind.hasPrefix("crash: ") && failure.message.contains("inside"), "\(failure.kind): \(failure.message)")
    }

    /// Replays a reproduction file in this process.
    @Test(.enabled(if: replayPath != nil))
    @MainActor
    func replay() async throws {
        let request = try JSONDecoder().decode(
            WorkloadRequest.self, from: Data(contentsOf: URL(fileURLWithPath: Self.replayPath!)))
        let outcome = await WorkloadRunner.run(request)
        print(WorkloadShrinker.describe(request.ops ?? [], fileStore: request.fileStore))
        if let failure = outcome.failure { Issue.record(Comment(rawValue: failure.description)) }
    }
}

/// Totals over every seed of the run, printed when the last one finishes.
final class WorkloadTotals: @unchecked Sendable {
    // @unchecked Sendable: every field is read and written under `lock`.
    private let lock = NSLock()
    private var values: [String: Int] = [:]
    private var seeds = 0, failed = 0, finishedSeeds = 0
    private var seconds = 0.0
    private let start = ContinuousClock.now
    private var profiles: [WorkloadProfile: (seeds: Int, transactions: Int, seconds: Double)] = [:]
    static let shared = WorkloadTotals()

    /// Failure kinds already shrunk in this run (each kind is shrunk once).
    actor ShrinkGate {
        private var kinds = Set<String>()
        func claim(_ kind: String) -> Bool { kinds.insert(kind).inserted }
    }
    static let shrinkGate = ShrinkGate()

    func add(seed: UInt64, profile: WorkloadProfile, _ outcome: WorkloadOutcome) {
        lock.withLock {
            seeds += 1
            if outcome.failure != nil { failed += 1 }
            seconds += outcome.seconds
            for (key, value) in outcome.stats { values[key, default: 0] += value }
            var p = profiles[profile] ?? (0, 0, 0)
            p.seeds += 1
            p.transactions += outcome.stats["transactions", default: 0]
            p.seconds += outcome.seconds
            profiles[profile] = p
        }
        print(
            "seed \(seed) (\(profile)): \(outcome.failure == nil ? "passed" : "FAILED [\(outcome.failure!.kind)]") in \(String(format: "%.1f", outcome.seconds)) s, \(outcome.stats["transactions", default: 0]) transactions, \(outcome.stats["change sets checked", default: 0]) change sets"
        )
    }

    func finished(of total: Int) {
        let report: String? = lock.withLock {
            finishedSeeds += 1
            guard finishedSeeds == total else { return nil }
            let wall = (ContinuousClock.now - start) / .seconds(1)
            var text =
                "Randomized workloads: \(seeds) seeds (\(failed) failed), \(values["transactions", default: 0]) transactions, \(values["change sets checked", default: 0]) change sets checked, \(values["moves checked for minimality", default: 0]) moves checked for minimality in \(values["sections checked for minimal moves", default: 0]) sections; \(String(format: "%.0f", wall)) s wall, \(String(format: "%.0f", seconds)) s in workloads\n"
            for (profile, p) in profiles.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                text += "  \(profile): \(p.seeds) seeds, \(p.transactions) transactions, \(String(format: "%.0f", p.seconds)) s\n"
            }
            text += "  " + values.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return text
        }
        if let report { print(report) }
    }
}
