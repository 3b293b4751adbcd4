import Foundation
import Folio
import GRDB
import Testing
@testable import FeedLoader

/// `u` shows the unread items only, through the index `(isRead, published)`; leaving an
/// item's detail marks it read, and in the unread view it then leaves the list.
@Suite(
    "feedloader's unread view", .serialized,
    .enabled(if: App.isTmuxAvailable, "tmux is not installed: these tests drive feedloader in tmux (CI installs it)"))
struct TerminalUnreadTests {
    @Test(TestTier.longOnly) func theUnreadViewShowsTheUnreadItemsAndAnItemReadLeavesIt() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("feeds.sqlite").path
        let generated = try App.feedloader(["generate", "--db", path, "3000", "--seed", "3"], in: directory)
        #expect(generated.status == 0, "\(generated.errors)")
        // Ask SQLite, not Folio: the unread items, newest first.
        func unread() throws -> [String] {
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            return try queue.read { db in
                try String.fetchAll(db, sql: "SELECT title FROM feed WHERE isRead = 0 ORDER BY published DESC, id DESC")
            }
        }
        let before = try unread()
        #expect(before.count == 1_000, "one generated item in three is unread")

        let app = try TmuxSession("'\(try App.binary.get().path)' --db feeds.sqlite", in: directory)
        _ = try await app.waitFor("rows 3,000 │")
        try app.press("u")
        var screen = try await app.waitFor("rows 1,000 │")
        #expect(screen.contains("· unread"))
        #expect(listRows(screen).first?.contains(String(before[0].prefix(30))) == true, "\(listRows(screen).first ?? "")")

        // Open the first item, and go back: it is read, and leaves the unread list.
        try app.press("Enter")
        _ = try await app.waitFor("item 1 of 1,000")
        try app.press("Escape")
        screen = try await app.waitFor("rows 999 │")
        let after = try unread()
        #expect(after == Array(before.dropFirst()), "exactly the item opened was marked read")
        #expect(listRows(screen).first?.contains(String(before[1].prefix(30))) == true, "\(listRows(screen).first ?? "")")
        #expect(StatusLine(screen)?.reloads == 0, "the item left as a change set, not a reload")

        // Every item again: 3,000, the read one among them.
        try app.press("u")
        screen = try await app.waitFor("rows 3,000 │")
        #expect(!screen.contains("· unread"))
        try app.press("q")
    }
}
