import Foundation
import Folio
import Testing
@testable import FeedLoader

extension TerminalAppTests {
    /// `m` mutes the selected item's source: every item of it leaves the open list (420 →
    /// 420 minus the source's items), the file says it is muted; `t` sections the list by
    /// source; `n` renames the source of the selected item, whose section moves; `M`
    /// unmutes every source and the items come back.
    @Test(TestTier.longOnly) func mMutesTheSourceTSectionsBySourceNRenamesAndMUnmutes() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = try TmuxSession("'\(try App.binary.get().path)'", in: directory, width: 120)
        let list = try await app.waitFor("rows 420")
        let selected = try #require(listRows(list).first)
        let sourceName = String(selected.split(separator: " ").last ?? "")
        let store = try Feed.openStore(at: directory.appendingPathComponent("feeds.sqlite").path)
        let count = try store.count(RecordRequest<Feed>(predicate: #Predicate { $0.sourceName == sourceName }))
        #expect(count > 1, "\(sourceName) has several items")

        try app.press("m")
        // The list's change set and the action's message come as two events, in either order.
        let muted = try await app.waitFor("rows \(420 - count) and the message") {
            $0.contains("rows \(420 - count)") && $0.contains("Muted \(sourceName)")
        }
        #expect(muted.contains("1 muted"))
        #expect(!listRows(muted).contains { $0.hasSuffix(sourceName) }, "no row of \(sourceName) is left on screen")
        let stored = try await store.fetch(RecordRequest<Source>(predicate: #Predicate { $0.muted == true })).compactMap { $0 }
        #expect(stored.map(\.feedName) == [sourceName])

        // Sectioned by source; at the top, the first name's section, its rows with their day.
        try app.press("t")
        try await app.waitFor("by source")
        try app.press("g")
        let names = try await store.fetch(RecordRequest<Source>(sortBy: [SortDescriptor(\.name)])).compactMap { $0 }.map(\.name)
        var screen = try await app.waitFor("the first source at the top") {
            $0.split(separator: "\n").dropFirst().first?.hasPrefix("▌\(names[0])") == true
        }
        #expect(listRows(screen).first?.hasPrefix("▶") == true)

        // The selected item's source, renamed so that it sorts last: its section moves to
        // the end, and the next name's is at the top.
        try app.press("n")
        try await app.waitFor("Rename the source")
        try app.press("C-u")
        try app.type("zz Renamed")
        try app.press("Enter")
        try await app.waitFor("Renamed \(names[0]) to zz Renamed")
        try app.press("g")
        try await app.waitFor("the next source at the top") {
            $0.split(separator: "\n").dropFirst().first?.hasPrefix("▌\(names[1])") == true
        }
        try app.press("G")
        try await app.waitFor("the renamed source at the bottom") {
            $0.split(separator: "\n").dropFirst().first?.hasPrefix("▌zz Renamed") == true
        }

        try app.press("M")
        // The change set and the message, in either order (as for the mute above).
        screen = try await app.waitFor("rows 420 and the message") {
            $0.contains("rows 420") && $0.contains("Unmuted \(sourceName)")
        }
        #expect(screen.contains("Unmuted \(sourceName)"))
        try app.press("t")
        try await app.waitFor("the day sections") { $0.split(separator: "\n").dropFirst().first?.hasPrefix("▌2025-") == true }
        try app.press("q")
    }
}
