import Foundation
import Folio
import Testing
@testable import FeedLoader

extension TerminalAppTests {
    /// `*` stars three items (each goes last in the starred order), `v` shows the starred
    /// items in that order, `K` and `J` move the selected one up and down as a drag would
    /// (`moveObject(at:to:)`: the screen first, then the file), and the list stays right —
    /// equal to the file's order, the selection on its item — while `r` imports in the
    /// background.
    @Test(TestTier.longOnly) func vShowsTheStarredItemsInTheReadersOrderAndKJMoveThem() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = try TmuxSession("'\(try App.binary.get().path)'", in: directory, width: 120)
        try await app.waitFor("rows 420")
        for starred in 1...3 {
            try app.press("*")
            try await app.waitFor("\(starred) stars") { screen in
                listRows(screen).filter { $0.contains("★") }.count == starred
            }
            try app.press("j")
        }
        let store = try Feed.openStore(at: directory.appendingPathComponent("feeds.sqlite").path)
        let request = RecordRequest<Feed>.feedList(filter: "", newestFirst: true, batchSize: 0, grouping: .starred)
        func order() throws -> [String] { try store.fetch(request).map { String($0!.title.prefix(24)) } }
        let starredOrder = try order()
        #expect(starredOrder.count == 3)

        try app.press("v")
        try await app.waitFor("the starred view") { $0.contains("starred, in your order") && StatusLine($0)?.rows == 3 }
        func shown(_ screen: String) -> [String] {
            listRows(screen).compactMap { row in starredOrder.first { row.contains($0) } }
        }
        try await app.waitFor("the starred order") { shown($0) == starredOrder }

        // The last item, up twice: first.
        try app.press("G")
        try app.press("K")
        try app.press("K")
        let moved = [starredOrder[2], starredOrder[0], starredOrder[1]]
        let screen = try await app.waitFor("the moved order") { shown($0) == moved && listRows($0).first?.hasPrefix("▶") == true }
        #expect(!screen.contains("Cannot move"))
        try await waitForOrder(moved, order)

        // While a background import writes pages of news: down once (second), and the list
        // still shows the file's order.
        try app.press("r")
        try await app.waitFor("Live news 1/5")
        try app.press("J")
        let again = [starredOrder[0], starredOrder[2], starredOrder[1]]
        try await app.waitFor("the order after J") { shown($0) == again }
        try await app.waitFor("Live news 5/5")
        let final = try await app.waitFor("the file's order") { screen in
            (try? order()).map { shown(screen) == $0 } == true && StatusLine(screen)?.rows == 3
        }
        #expect(shown(final) == again)
        #expect(listRows(final)[1].hasPrefix("▶"), "the selection stays on the moved item")
        try await waitForOrder(again, order)

        // Back to the feed by day.
        try app.press("v")
        try await app.waitFor("the day sections") { screen in
            !screen.contains("starred, in your order")
                && screen.split(separator: "\n").dropFirst().first?.hasPrefix("▌20") == true
        }
        try app.press("q")
    }

    /// Waits until the file holds `expected` (the write is committed before the screen shows
    /// it, but the store here is another connection).
    private func waitForOrder(_ expected: [String], _ order: () throws -> [String]) async throws {
        for _ in 0..<100 {
            if try order() == expected { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try order() == expected)
    }
}
