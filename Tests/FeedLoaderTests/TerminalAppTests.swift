import Foundation
import Folio
import Testing
@testable import FeedLoader

/// The real binary, full screen in tmux: keys in, screen out.
@Suite(
    "feedloader in a terminal", .serialized,
    .enabled(if: App.isTmuxAvailable, "tmux is not installed: these tests drive feedloader in tmux (CI installs it)"))
struct TerminalAppTests {
    /// Titles are cut to the width of the list; compare their beginnings.
    static func start(of title: String) -> String { String(title.prefix(40)) }

    @Test(TestTier.longOnly) func scrollsToTheOldestOfAHundredThousandItemsWithGLoadingOnlyVisibleBatches() async throws {
        let database = try await App.hundredThousandItems()
        let (oldest, newest) = try {
            let store = try Feed.openStore(at: database.path)
            var request = RecordRequest<Feed>(sortBy: Feed.oldestFirst, limit: 1)
            let oldest = try #require(try store.fetch(request).first ?? nil)
            request.sortBy = Feed.newestFirst
            let newest = try #require(try store.fetch(request).first ?? nil)
            return (oldest, newest)
        }()
        let app = try TmuxSession(
            "'\(try App.binary.get().path)' --db '\(database.path)'", in: database.deletingLastPathComponent())
        var screen = try await app.waitFor("rows 100,000")
        #expect(screen.contains(Self.start(of: newest.title)))
        let opened = try #require(StatusLine(screen))
        #expect(opened.batchSize == 30, "the batch size is the terminal's height")
        #expect(opened.batches == 1, "one screen needs one batch")
        #expect(opened.records <= 30)

        // Titles repeat (they are generated): wait for the oldest item's day as well.
        let oldestDay = DayFormat.dayTitle(DayFormat.dayName(oldest.published))
        try app.press("G")
        screen = try await app.waitFor("the oldest item at the bottom") { screen in
            screen.contains("▌" + oldestDay) && listRows(screen).last?.contains(Self.start(of: oldest.title)) == true
        }
        #expect(listRows(screen).last?.hasPrefix("▶") == true, "the oldest item is the last row, selected")
        let bottom = try #require(StatusLine(screen))
        #expect(bottom.batches <= 3, "only the batches on screen were loaded")
        #expect(bottom.records <= 90, "\(bottom.records) records of 100,000")

        try app.press("PPage")
        let previous = screen
        try await app.waitFor("a page up") { listRows($0).last != listRows(previous).last }
        try app.press("g")
        let newestDay = DayFormat.dayTitle(DayFormat.dayName(newest.published))
        screen = try await app.waitFor("the newest item at the top") { screen in
            screen.contains("▌" + newestDay) && listRows(screen).first?.contains(Self.start(of: newest.title)) == true
        }
        #expect(listRows(screen).first?.hasPrefix("▶") == true)
        try app.press("q")
    }

    /// The items the `/` filter must show for `text`, found without Folio's search: every
    /// word of the text begins a word of the title or source, folded.
    static func expectedMatches(_ store: Store, _ text: String) throws -> [Feed] {
        let words = text.folded.split(separator: " ").map(String.init)
        func wordsOf(_ value: String) -> [String] {
            value.folded.split { !$0.isLetter && !$0.isNumber }.map(String.init)
        }
        return try store.fetch(RecordRequest<Feed>(sortBy: Feed.newestFirst)).map { $0! }.filter { feed in
            let own = wordsOf(feed.title) + wordsOf(feed.sourceName)
            return words.allSatisfy { word in own.contains { $0.hasPrefix(word) } }
        }
    }

    @Test(TestTier.longOnly) func filterSearchesTheLiveControllersTitlesAndSources() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = try TmuxSession("'\(try App.binary.get().path)'", in: directory)
        let screen = try await app.waitFor("rows 420")
        let store = try Feed.openStore(at: directory.appendingPathComponent("feeds.sqlite").path)

        // Typed in lowercase, without accents: the rows say "iPad", "Café", "Vision Pro".
        for (typed, shown) in [("ipad", ["iPad"]), ("cafe", ["Café", "café"]), ("vision pro", ["Vision Pro", "visionOS"])] {
            let expected = try Self.expectedMatches(store, typed)
            #expect(!expected.isEmpty)
            #expect(expected.allSatisfy { feed in shown.contains { feed.title.contains($0) || feed.sourceName.contains($0) } })
            try app.press("/")
            try app.type(typed)
            try app.press("Enter")
            let filtered = try await app.waitFor("rows \(expected.count) │")
            #expect(filtered.contains("filter “\(typed)”"))
            let rows = listRows(filtered)
            #expect(!rows.isEmpty && rows.count <= expected.count && (expected.count > 10 || rows.count == expected.count))
            #expect(rows.allSatisfy { row in shown.contains { row.contains($0) } }, "\(typed): \(rows)")
            #expect(rows.contains { $0.contains(Self.start(of: expected[0].title).prefix(30)) }, "\(typed): \(rows)")
            try app.press("Escape")
            let cleared = try await app.waitFor("rows 420")
            #expect(listRows(cleared).first == listRows(screen).first)
        }
        try app.press("q")
    }

    /// `/` filters at each keystroke, without Enter, on a list of 100,000 items: each
    /// keystroke's request shows its first screen and stops the previous one's background
    /// read; the status line ends at the exact count. Backspace widens; Esc restores.
    @Test(TestTier.longOnly) func typingFiltersAtEachKeystroke() async throws {
        try await Self.typeAndFilter(try await App.hundredThousandItems(), items: 100_000)
    }

    // The same on 1,000,000 items is in ``TerminalMillionTests``, one test at a time with the
    // other test of that file.

    static func typeAndFilter(_ database: URL, items: Int) async throws {
        let store = try Feed.openStore(at: database.path)
        // Each item's words (title and source, folded), read once in batches.
        let words: [[String]] = try await store.fetch(RecordRequest<Feed>(sortBy: Feed.newestFirst, batchSize: 1_000)).map {
            feed in
            func wordsOf(_ value: String) -> [String] { value.folded.split { !$0.isLetter && !$0.isNumber }.map(String.init) }
            return feed.map { wordsOf($0.title) + wordsOf($0.sourceName) } ?? []
        }
        #expect(words.count == items)
        func matches(_ text: String) -> Int {
            let typed = text.folded.split(separator: " ").map(String.init)
            return words.filter { own in typed.allSatisfy { word in own.contains { $0.hasPrefix(word) } } }.count
        }
        let app = try TmuxSession(
            "'\(try App.binary.get().path)' --db '\(database.path)'", in: database.deletingLastPathComponent())
        let opened = try await app.waitFor("rows \(items.formatted())")
        try app.press("/")
        var typed = ""
        var counts: [Int] = []
        for character in "vision" {
            typed.append(character)
            try app.type(String(character))
            let expected = matches(typed)
            counts.append(expected)
            let screen = try await app.waitFor("rows \(expected.formatted()) │ after “\(typed)”") { screen in
                screen.contains(" rows \(expected.formatted()) │") && screen.contains("Filter (title or source): \(typed)▏")
            }
            #expect(!listRows(screen).isEmpty || expected == 0)
        }
        #expect(counts.first! > counts.last!, "each letter narrows the list: \(counts)")
        try app.press("BSpace")
        typed.removeLast()
        _ = try await app.waitFor("rows \(matches(typed).formatted()) │")
        try app.press("Escape")
        let restored = try await app.waitFor("rows \(items.formatted())")
        #expect(!restored.contains("filter “"))
        #expect(listRows(restored).first == listRows(opened).first)
        try app.press("q")
    }

    @Test(TestTier.longOnly) func aBackgroundImportMakesNewRowsAppearWhileTheListIsOpen() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = try TmuxSession("'\(try App.binary.get().path)'", in: directory)
        let before = try await app.waitFor("rows 420")
        let firstBefore = try #require(listRows(before).first)

        try app.press("r")
        // New items arrive at the top, in today's section, highlighted as inserted.
        let arriving = try await app.waitFor("inserted rows at the top") { screen in
            listRows(screen).prefix(4).contains { $0.dropFirst().hasPrefix("+") }
        }
        #expect(arriving.contains(DayFormat.dayTitle(DayFormat.dayName(Date()))))
        // Five pages of four, one transaction each; from the second page on, a revised item.
        let done = try await app.waitFor("rows 440")
        #expect(done.contains("Updated: "))
        #expect(try #require(StatusLine(done)).sections == 44 || StatusLine(done)?.sections == 45)
        // The row that was first is still there, selected: the list was updated, not reset.
        #expect(done.contains(String(firstBefore.dropFirst(3).prefix(40))))
        #expect(listRows(done).contains { $0.hasPrefix("▶") && $0.contains(String(firstBefore.dropFirst(11).prefix(30))) })
        try app.press("q")
    }

    @Test(TestTier.longOnly) func rImportsTheURLFromALocalServerIntoTheOpenList() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withFeedServer { server in
            // Three stories from a minute ago, so they sort to the top of today.
            let feed = Fixtures.smallRSS(
                0..<3, newest: Date().addingTimeInterval(-60), spacing: 60, title: { "Local server story \($0 + 1)" })
            server.set("/feed.xml", .init(contentType: "application/rss+xml", body: feed, entityTag: #""v1""#))
            let url = server.url("/feed.xml").absoluteString
            let app = try TmuxSession("'\(try App.binary.get().path)' --url '\(url)'", in: directory)
            let before = try await app.waitFor("rows 420")
            #expect(!before.contains("Local server story"))
            #expect(server.requests.isEmpty, "nothing is fetched before r")

            try app.press("r")
            let after = try await app.waitFor("rows 423")
            let rows = listRows(after)
            for n in 1...3 {
                #expect(rows.prefix(4).contains { $0.contains("Local server story \(n)") }, "story \(n) at the top:\n\(after)")
            }
            #expect(after.contains(DayFormat.dayTitle(DayFormat.dayName(Date()))))
            // The message names what was imported, and the new rows are marked as inserted.
            try await app.waitFor("Imported \(url): 3 items, 3 new")
            #expect(rows.filter { $0.dropFirst().hasPrefix("+") }.count == 3, "\(rows.prefix(5))")

            // Again: one conditional request, "304 Not Modified", nothing written.
            try app.press("r")
            let unchanged = try await app.waitFor("not modified since the last import")
            #expect(StatusLine(unchanged)?.rows == 423)
            #expect(server.requests.map(\.status) == [200, 304])
            #expect(server.requests.last?.header("If-None-Match") == #""v1""#)

            // A failing server leaves the list as it was and says why.
            server.update("/feed.xml") { $0.status = 503 }
            try app.press("r")
            let failed = try await app.waitFor("Import failed")
            #expect(failed.contains("503 Service Unavailable"))
            #expect(StatusLine(failed)?.rows == 423)
            try app.press("q")
        }
    }

    @Test(TestTier.longOnly) func enterOpensTheDetailAndDDeletes() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = try TmuxSession("'\(try App.binary.get().path)'", in: directory)
        let list = try await app.waitFor("rows 420")
        let second = try #require(listRows(list).dropFirst().first)
        let title = String(second.dropFirst(11).prefix(40))

        try app.press("j", "Enter")
        let detail = try await app.waitFor("Published")
        #expect(detail.contains("item 2 of 420"))
        #expect(detail.contains(title))
        #expect(detail.contains("https://"))

        try app.press("Escape", "d")
        let deleted = try await app.waitFor("rows 419")
        #expect(deleted.contains("Deleted “"))
        #expect(!listRows(deleted).contains { $0.contains(title) })
        try app.press("q")
        // q leaves the alternate screen: the terminal is as it was.
        try await app.waitFor("the list to close") { !$0.contains("rows 419") }
    }

    @Test(TestTier.longOnly) func sortJumpAndResize() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = try TmuxSession("'\(try App.binary.get().path)'", in: directory)
        try await app.waitFor("rows 420")
        let store = try Feed.openStore(at: directory.appendingPathComponent("feeds.sqlite").path)
        let oldest = try #require(try await store.fetch(RecordRequest<Feed>(sortBy: Feed.oldestFirst, limit: 1)).first ?? nil)

        // s: oldest first, sections reversed.
        try app.press("s")
        var screen = try await app.waitFor("oldest first")
        #expect(listRows(screen).first?.contains(Self.start(of: oldest.title)) == true)
        #expect(screen.split(separator: "\n").dropFirst().first?.hasPrefix("▌2025-05-02") == true)

        // A date prefix jumps to its day: the day's header is at the top, its first row selected.
        try app.press("s")
        try await app.waitFor("newest first")
        try app.type("2025-05-2")
        try await app.waitFor("Go to day")
        try app.press("Enter")
        screen = try await app.waitFor("the jump") {
            $0.split(separator: "\n").dropFirst().first?.hasPrefix("▌2025-05-29") == true
        }
        #expect(listRows(screen).first?.hasPrefix("▶") == true)

        // The batch size follows the terminal's height.
        try app.resize(width: 120, height: 40)
        screen = try await app.waitFor("batch size 40")
        #expect(screen.split(separator: "\n").count == 40)
        try app.press("q")
    }

    @Test(TestTier.longOnly) func ctrlCCancelsAnExportAndLeavesNoFile() async throws {
        let database = try await App.hundredThousandItems()
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = try TmuxSession(
            "'\(try App.binary.get().path)' export --db '\(database.path)' --to out.json; echo EXIT=$?", in: directory)
        try await app.waitFor("Exporting")
        try app.press("C-c")
        let screen = try await app.waitFor("EXIT=")
        #expect(screen.contains("EXIT=130"))
        #expect(screen.contains("Export cancelled"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "no file, no partial file")
    }
}

/// The binary without a terminal.
@Suite("feedloader, plainly")
struct PlainAppTests {
    @Test func withoutATerminalItPrintsAReportAndImportsTheSampleOnce() throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try App.feedloader([], in: directory)
        #expect(first.status == 0)
        #expect(first.output.contains("Imported the sample feed: sample-feed.json: 420 items, 420 new"))
        #expect(first.output.contains("420 items in 43 days, newest first"))
        #expect(first.output.contains("2025-06-13  Friday 13 June 2025"))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("feeds.sqlite").path))
        let second = try App.feedloader(["--limit", "3"], in: directory)
        #expect(!second.output.contains("Imported"))
        #expect(second.output.contains("… 417 more"))
    }

    @Test func importReportsMalformedItemsAndRejectsMalformedJSON() throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(
            """
            [{"title": "Fine", "url": "https://example.com/fine", "published": "2025-06-13T10:00:00Z"},
             {"title": "Undated", "url": "https://example.com/undated"}]
            """.utf8
        ).write(to: directory.appendingPathComponent("mixed.json"))
        let mixed = try App.feedloader(["import", "mixed.json"], in: directory)
        #expect(mixed.status == 0)
        #expect(mixed.output.contains("mixed.json: 2 items, 1 new, 0 updated, 0 unchanged, 1 skipped"))
        #expect(mixed.errors.contains(#"item 2 ("Undated", https://example.com/undated): "published" is missing"#))

        try Data("[{\"title\": ".utf8).write(to: directory.appendingPathComponent("broken.json"))
        let broken = try App.feedloader(["import", "broken.json"], in: directory)
        #expect(broken.status != 0)
        #expect(broken.errors.contains("broken.json is not valid JSON (line 1, column 12)"))
        #expect(broken.errors.contains("Nothing was imported."))
    }

    @Test func exportWritesTheFeedThatImportReadsBack() throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try App.feedloader(["import", "sample"], in: directory)
        let export = try App.feedloader(["export", "--to", "out.json"], in: directory)
        #expect(export.status == 0)
        #expect(export.output.contains("Exported 420 items to out.json"))
        #expect(export.errors.contains("420 / 420"), "the progress bar shows the exact total")
        let parsed = try FeedParser.parse(Data(contentsOf: directory.appendingPathComponent("out.json")), source: "out.json")
        #expect(parsed.items.count == 420 && parsed.problems.isEmpty)
        let again = try App.feedloader(["import", "out.json"], in: directory)
        #expect(again.output.contains("420 items, 0 new, 0 updated, 420 unchanged"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".partial") }.isEmpty)
    }
}
