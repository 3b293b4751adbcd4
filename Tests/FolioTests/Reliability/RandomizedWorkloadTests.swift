import Foundation
import Testing
@testable import Folio

/// Randomized workloads: after every commit, every live controller's change set, applied
/// to a strict table-view model, gives exactly what a fresh fetch gives.
///
/// Default: 20 seeds × 500 transactions. `FOLIO_SEED=n` replays one seed,
/// `FOLIO_SEEDS=n` and `FOLIO_FIRST_SEED=n` choose a range, `FOLIO_TRANSACTIONS=n` changes
/// the length, `FOLIO_SOAK=1` runs 200 seeds × 2,000.
@Suite("Randomized workloads")
@MainActor
struct RandomizedWorkloadTests {
    nonisolated static var seeds: [UInt64] {
        if let seed = environmentInt("FOLIO_SEED") { return [UInt64(seed)] }
        let count = environmentInt("FOLIO_SEEDS") ?? (isSoak ? 200 : 20)
        let first = UInt64(environmentInt("FOLIO_FIRST_SEED") ?? 0)
        return (first..<(first + UInt64(count))).map { $0 }
    }

    nonisolated static var transactions: Int { environmentInt("FOLIO_TRANSACTIONS") ?? (isSoak ? 2_000 : 500) }

    @Test(arguments: seeds)
    func workload(seed: UInt64) async throws {
        let workload = try Workload(seed: seed, transactions: Self.transactions)
        do {
            try await workload.run()
        } catch let failure as WorkloadFailure {
            Issue.record(Comment(rawValue: failure.description))
            return
        }
        let stats = workload.stats
        #expect(stats["transactions", default: 0] > Self.transactions * 8 / 10, "most steps are committed writes")
        #expect(stats["change sets applied", default: 0] > 0)
        for (key, value) in stats { WorkloadTotals.shared.add(key, value) }
        print("seed \(seed): " + stats.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
    }
}
