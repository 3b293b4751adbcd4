import Foundation
import Testing

/// The two tiers of the suite. `swift test` runs the quick tier: every kind of test — a few
/// seeds of each randomized workload, one process kill, one terminal session — in two to
/// three and a half minutes on two cores (134 s to 205 s on 2026-12-07, with the machine's
/// load; at most four tests at a time: `Tests/TestRunWidth`).
/// `FOLIO_LONG=1 swift test` runs the long tier, which CI runs too: every
/// default seed, a hundred kills, the hand-over races at length, FeedLoader on a million items.
/// Soaks (`FOLIO_SOAK=1`) and ten-million-row runs are outside both.
enum TestTier {
    /// Whether the long tier runs (`FOLIO_LONG` set, and not `0`).
    static let isLong = ProcessInfo.processInfo.environment["FOLIO_LONG"].map { $0 != "0" && !$0.isEmpty } ?? false

    /// `quick` in the quick tier, `long` in the long one.
    static func pick<T>(quick: T, long: T) -> T { isLong ? long : quick }
}

extension Testing.Tag {
    /// Tests CI also runs under the thread sanitizer (`swift test --sanitize=thread --filter
    /// tag:threadSanitized`): the concurrency suites and the live lists' edge cases.
    @Tag static var threadSanitized: Self

    /// Tests whose work depends on the tier (``TestTier``: seeds, kills, rounds, sizes).
    /// CI's long tier runs only these with `FOLIO_LONG=1`: every other test runs the same in
    /// both tiers, and the quick tier has just run it. A file that asks ``TestTier`` or
    /// `workloadSeeds` must tag its suites so (`.ci/tagged-tests.py --check` fails otherwise).
    @Tag static var longTier: Self
}
