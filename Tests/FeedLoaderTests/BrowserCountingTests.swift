import Foundation
import Folio
import Testing
@testable import FeedLoader

/// While a long list is still being counted in the background, the screen says which counts
/// are not final: the status line (`51+ counting…`), the last section read so far (`51+
/// items`) and the detail view's place (`item 1 of 51+`). Found by the million-item test
/// (``TerminalMillionTests``): a search's first section said "51 items" where its day has 61.
///
/// The browser runs in this process, on the main actor, without a terminal: the background
/// read's completion reaches the list on the main actor, so nothing changes between the
/// fetch and the drawing the test reads.
@MainActor
@Suite("The list while it is being counted")
struct BrowserCountingTests {
    @Test func theLastSectionReadAndTheDetailSayTheirCountsAreLowerBounds() async throws {
        let database = try await App.hundredThousandItems()
        let store = try Feed.openStore(at: database.path)
        let request = RecordRequest<Feed>.feedList(filter: "", newestFirst: true, batchSize: 24)
        let source = FeedListSource(request, store: store, tracking: true)
        let browser = Browser(store: store, source: source, terminal: Terminal(), title: "test", refresh: .liveNews)
        try browser.open()

        // "v": more matches than a first screen, fewer than a screen's height of days.
        browser.applyFilter("v")
        try #require(!source.isComplete, "the list of “v” is read in the background")
        let known = try #require(browser.model.sections.last)
        let day = known.name
        let exact = try MillionFixture(path: database.path).count(filter: "v", unreadOnly: false, day: day)
        // Usually the first screen stopped inside the day; on a loaded machine it may have read
        // it whole, and its header still says "+" until the list is complete.
        try #require(exact >= known.identifiers.count, "the day \(day) has at least the matches the first screen read")

        // How many rows the first screen read depends on the machine's speed: scroll to the
        // last section read, so that its header is on screen whatever the count.
        browser.moveCursor(byRows: browser.model.rowCount - known.identifiers.count)
        var lines = browser.screenLines().map(Self.plain)
        let header = try #require(lines.first { $0.hasPrefix("▌" + day) }, "the last section read is on screen")
        #expect(header.hasSuffix(" \(known.identifiers.count.formatted())+ items "), "\(header)")
        #expect(lines.last?.contains(" rows \(source.rowsKnown.formatted())+ counting…") == true)
        browser.moveToTop()
        browser.setMode(.detail)
        lines = browser.screenLines().map(Self.plain)
        #expect(lines.first?.contains("item 1 of \(browser.model.rowCount.formatted())+") == true, "\(lines.first ?? "")")
        browser.setMode(.list)

        // Complete: the same header counts the day's matches exactly, without "+".
        try await source.controller.waitUntilComplete()
        #expect(source.isComplete)
        let index = try #require(browser.model.sections.firstIndex { $0.name == day })
        browser.moveToTop()
        browser.moveCursor(byRows: browser.model.sections[..<index].reduce(0) { $0 + $1.identifiers.count })
        lines = browser.screenLines().map(Self.plain)
        let final = try #require(lines.first { $0.hasPrefix("▌" + day) })
        #expect(final.hasSuffix(" \(exact.formatted()) items "), "\(final)")
        #expect(lines.last?.contains("counting") == false)
        browser.moveToTop()
        browser.setMode(.detail)
        lines = browser.screenLines().map(Self.plain)
        #expect(lines.first?.contains("item 1 of \(browser.model.rowCount.formatted())") == true)
        #expect(lines.first?.contains("+") == false, "\(lines.first ?? "")")
    }

    /// A drawn line without its escape sequences.
    static func plain(_ line: String) -> String {
        line.replacingOccurrences(of: "\u{1B}\\[[0-9;?]*[A-Za-z]", with: "", options: .regularExpression)
    }
}
