import Foundation
import Testing

/// The two tiers of the suite (as in FolioTests): `swift test` runs one terminal session
/// (tmux) of FeedLoader; `FOLIO_LONG=1 swift test` runs every terminal test and FeedLoader on a
/// million items.
enum TestTier {
    /// Whether the long tier runs (`FOLIO_LONG` set, and not `0`).
    static let isLong = ProcessInfo.processInfo.environment["FOLIO_LONG"].map { $0 != "0" && !$0.isEmpty } ?? false

    /// The trait of a test that only the long tier runs.
    static var longOnly: ConditionTrait { .enabled(if: isLong, "the long tier runs it (FOLIO_LONG=1 swift test)") }
}
