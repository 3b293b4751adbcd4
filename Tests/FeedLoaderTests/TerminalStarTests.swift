import Foundation
import Folio
import Testing
@testable import FeedLoader

extension TerminalAppTests {
    /// The f4075a8 `feeds.sqlite` opens in the list (migrated on the way), `*` stars the
    /// selected item — shown in the list and the detail, stored in the file — and again
    /// takes the star away.
    @Test func anOldFeedsFileOpensMigratedAndStarToggles() async throws {
        let (directory, path) = try FeedMigrationTests.copyFixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = try TmuxSession("'\(try App.binary.get().path)' --db '\(path)'", in: directory)
        let list = try await app.waitFor("rows 119")
        let selected = try #require(listRows(list).first)
        #expect(selected.hasPrefix("▶  "), "not starred: \(selected)")
        let title = String(selected.dropFirst(11).prefix(40))

        try app.press("*")
        // The star (the list's change set) and the message (after the write returns) may
        // come in either order.
        let starred = try await app.waitFor("the star") { screen in
            (listRows(screen).first?.hasPrefix("▶ ★") == true || listRows(screen).first?.hasPrefix("▶~★") == true)
                && screen.contains("Starred “")
        }
        #expect(starred.contains("Starred “"))
        #expect(StatusLine(starred)?.rows == 119)
        let store = try Feed.openStore(at: path)
        let stored = try {
            try store.fetch(RecordRequest<Feed>(predicate: #Predicate { $0.starred == true })).compactMap { $0 }
        }()
        #expect(stored.count == 1)
        #expect(stored.first.map { title.hasPrefix(String($0.title.prefix(20))) } == true, "\(stored) vs \(title)")

        try app.press("Enter")
        try await app.waitFor("★ yes (* to unstar)")
        try app.press("*")
        try await app.waitFor("no (* to star)")
        try app.press("Escape")
        let unstarred = try await app.waitFor("the star gone") { screen in
            listRows(screen).first.map { !$0.contains("★") && $0.hasPrefix("▶") } == true
        }
        #expect(unstarred.contains("Unstarred “"))
        let remaining = try { try store.count(RecordRequest<Feed>(predicate: #Predicate { $0.starred == true })) }()
        #expect(remaining == 0)
        try app.press("q")
    }
}
