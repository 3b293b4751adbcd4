import Foundation
import Folio
import Testing
@testable import FeedLoader

/// Issue 24's acceptance test: on 1,000,000 items, opening the list, `u` (unread) and each
/// keystroke of a search show their first screen at once. In the long tier (`FOLIO_LONG=1`,
/// which CI runs after `swift test`, `.ci/run`), or alone with `FOLIO_LARGE=1`.
///
/// The real binary runs in tmux on ``App/million`` (made in well under a minute by the
/// `sqlite3` shell). What each first screen must show is asked of SQLite in another process,
/// the `sqlite3` shell, never of Folio: its rows in order, its sections' days and counts, and
/// the final count. Each first screen's time, from the key to the first frame that shows it
/// correctly, is printed; the test asserts only a generous bound, ``firstScreenBound``,
/// since the machine is shared (the goal, 20–50 ms, is measured by folio-bench).
@Suite(
    "feedloader on a million items", .serialized,
    .enabled(if: App.isTmuxAvailable, "tmux is not installed: these tests drive feedloader in tmux (CI installs it)"),
    .enabled(if: App.isLarge, "the long tier runs it (FOLIO_LONG=1; CI does)"))
struct TerminalMillionTests {
    /// The most a first screen may take here, in seconds: a debug build on a shared, busy
    /// machine. The times seen are printed.
    static let firstScreenBound: TimeInterval =
        ProcessInfo.processInfo.environment["FEEDLOADER_FIRST_SCREEN_BOUND"].flatMap(TimeInterval.init) ?? 3

    @Test func openingUnreadAndEachKeystrokeOfASearchShowTheirFirstScreenAtOnce() async throws {
        let database = try await App.millionItems()
        let fixture = MillionFixture(path: database.path)
        try fixture.checkFoldedKeysAreASCII()
        let before = try fixture.fileState()
        // The opening is measured without the section cache a previous run may have written
        // (a valid one is read whole at once: no first screen).
        try? FileManager.default.removeItem(atPath: database.path + "-folio-cache")

        let all = try fixture.expected(filter: "", unreadOnly: false)
        #expect(all.count == 1_000_000)
        var times: [(String, TimeInterval)] = []

        // Opening: the newest rows, while the rest is counted.
        let opening = Date()
        let app = try TmuxSession(
            "'\(try App.binary.get().path)' --db '\(database.lastPathComponent)'", in: database.deletingLastPathComponent())
        var shown = try await fixture.firstScreen("the opening", all, on: app, since: opening, after: {})
        times.append(("open", shown.seconds))
        #expect(shown.sawCounting, "the opening showed the first screen before the whole list was counted")
        try await fixture.waitForCount(all, on: app)

        // u: the unread items (one in three), through the index (isRead, published).
        let unread = try fixture.expected(filter: "", unreadOnly: true)
        #expect(unread.count == 333_334)
        shown = try await fixture.firstScreen("u (unread)", unread, on: app, after: { try app.press("u") })
        times.append(("u", shown.seconds))
        #expect(shown.sawCounting, "u showed the first screen before the unread items were counted")
        #expect(shown.screen.contains("· unread"))
        try await fixture.waitForCount(unread, on: app)
        shown = try await fixture.firstScreen("u again (every item)", all, on: app, after: { try app.press("u") })
        times.append(("u again", shown.seconds))

        // `/`, then a word, one letter at a time: each keystroke's first screen, then the count.
        try app.press("/")
        try await app.waitFor("Filter (title or source): ▏")
        var typed = ""
        var counts: [Int] = []
        for letter in "vision" {
            typed.append(letter)
            let expected = try fixture.expected(filter: typed, unreadOnly: false)
            counts.append(expected.count)
            shown = try await fixture.firstScreen(
                "“\(typed)”", expected, on: app, prompt: typed, after: { try app.type(String(letter)) })
            times.append(("/\(typed)", shown.seconds))
            if typed == "v" { #expect(shown.sawCounting, "“v” showed the first screen before its matches were counted") }
        }
        #expect(counts == counts.sorted(by: >) && counts.first! > 100_000, "each letter narrows the list: \(counts)")
        let vision = try fixture.expected(filter: typed, unreadOnly: false)
        try await fixture.waitForCount(vision, on: app)

        // Backspace widens again; Esc restores every item.
        typed.removeLast()
        let visio = try fixture.expected(filter: typed, unreadOnly: false)
        shown = try await fixture.firstScreen(
            "“\(typed)” (backspace)", visio, on: app, prompt: typed, after: { try app.press("BSpace") })
        times.append(("⌫ /\(typed)", shown.seconds))
        try await fixture.waitForCount(visio, on: app)
        shown = try await fixture.firstScreen("Esc (every item)", all, on: app, after: { try app.press("Escape") })
        times.append(("esc", shown.seconds))
        #expect(!shown.screen.contains("filter “"))
        try app.press("q")
        try await app.waitFor("the list to close") { !$0.contains(" rows ") }

        print("feedloader, 1,000,000 items, matches as typed: \(counts) (“vision” \(vision.count), unread \(unread.count))")
        let report = times.map { "\($0.0) \(Int(($0.1 * 1000).rounded())) ms" }.joined(separator: ", ")
        print("feedloader, 1,000,000 items, first screens (key → first correct frame): \(report)")
        for (what, seconds) in times {
            #expect(seconds < Self.firstScreenBound, "\(what): the first screen took \(seconds) s (\(report))")
        }
        // The app opened the file as it was: nothing folded again, no index rebuilt, no migration.
        #expect(try fixture.fileState() == before, "feedloader changed the file's schema or its rows")
    }

    /// `/` filters at each keystroke on 1,000,000 items, as ``TerminalAppTests`` checks on
    /// 100,000. Here, so that it never runs beside the test above on the same file: each
    /// times first screens, and the other's `sqlite3` queries would wait for its opening.
    @Test func typingFiltersAtEachKeystrokeOnAMillionItems() async throws {
        try await TerminalAppTests.typeAndFilter(try await App.millionItems(), items: 1_000_000)
    }
}

/// The million-item file, asked through the `sqlite3` shell (another process).
struct MillionFixture {
    let path: String

    /// The rows of a list as SQLite finds them: the first ones, each with its title and its
    /// section's day; every day's count; the total.
    struct Expected {
        /// Each with its day and time as the list shows them (`2025-06-13`, `11:58`).
        var rows: [(title: String, day: String, time: String)]
        var dayCounts: [String: Int]
        var count: Int
    }

    /// The sections' day: SQLite's local time (the C library's, from the same `TZ` as
    /// `FeedListSource.timeZone`, daylight saving included), independently of Folio's.
    var dayExpression: String {
        "date(published, 'unixepoch', 'localtime')"
    }

    /// The list's predicate in SQL, independently of Folio's: not muted, unread when asked,
    /// and each word of `filter` beginning a word of the folded title or source. The folded
    /// keys are ASCII (``checkFoldedKeysAreASCII()``), so a word begins after anything that
    /// is not a lowercase letter or a digit.
    func predicate(filter: String, unreadOnly: Bool) -> String {
        var terms = ["NOT EXISTS (SELECT 1 FROM source WHERE source.id = feed.source_id AND source.muted = 1)"]
        if unreadOnly { terms.append("isRead = 0") }
        for word in filter.folded.split(separator: " ") {
            let pattern = "*[^a-z0-9]" + word.replacingOccurrences(of: "'", with: "''") + "*"
            terms.append(
                "((' ' || folio_title_folded) GLOB '\(pattern)' OR (' ' || folio_source_folded) GLOB '\(pattern)')")
        }
        return terms.joined(separator: " AND ")
    }

    func expected(filter: String, unreadOnly: Bool) throws -> Expected {
        let predicate = predicate(filter: filter, unreadOnly: unreadOnly)
        let rows = try App.sqlite(
            path,
            "SELECT \(dayExpression), published, title FROM feed WHERE \(predicate) ORDER BY published DESC, id DESC LIMIT 60"
        ).map { line in
            let parts = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            let published = Date(timeIntervalSince1970: parts.count == 3 ? Double(parts[1]) ?? 0 : 0)
            return (title: parts.last ?? "", day: parts.first ?? "", time: DayFormat.time(published))
        }
        // The days of the first rows only (those a first screen shows), each read through
        // the index of `published`.
        var dayCounts: [String: Int] = [:]
        for day in Set(rows.map(\.day)) { dayCounts[day] = try count(filter: filter, unreadOnly: unreadOnly, day: day) }
        let count = try App.sqlite(path, "SELECT count(*) FROM feed WHERE \(predicate)").first.flatMap { Int($0) } ?? -1
        return Expected(rows: rows, dayCounts: dayCounts, count: count)
    }

    /// The items of the list on `day` (`2025-06-13`, in the sections' time zone), read
    /// through the index of `published`.
    func count(filter: String, unreadOnly: Bool, day: String) throws -> Int {
        // The day's local midnight and the next one, as UTC instants (a day of 23 or 25 hours
        // when the clocks change).
        let start = "CAST(strftime('%s', '\(day)', 'utc') AS INTEGER)"
        let end = "CAST(strftime('%s', '\(day)', '+1 day', 'utc') AS INTEGER)"
        let sql =
            "SELECT count(*) FROM feed WHERE \(predicate(filter: filter, unreadOnly: unreadOnly))"
            + " AND published >= \(start) AND published < \(end)"
        return try App.sqlite(path, sql).first.flatMap { Int($0) } ?? -1
    }

    /// Fails when a folded key is not ASCII: ``predicate(filter:unreadOnly:)`` would not find
    /// its words as Folio does.
    func checkFoldedKeysAreASCII() throws {
        let wide = try App.sqlite(
            path,
            "SELECT count(*) FROM feed WHERE folio_title_folded GLOB '*[^ -~]*' OR folio_source_folded GLOB '*[^ -~]*'")
        #expect(wide == ["0"], "folded keys beyond ASCII: the test's own matching would not be Folio's")
    }

    /// What must not change while the app has the file open: its schema (a migration, an
    /// index made again, a trigger repaired; not `PRAGMA schema_version`, which GRDB's
    /// database pool moves at each opening, making and dropping a table `grdb_issue_102`), the items' change token (a key folded again),
    /// and the full-text index's segments (rebuilt).
    func fileState() throws -> [String] {
        try App.sqlite(
            path,
            """
            SELECT type, name, sql FROM sqlite_master ORDER BY type, name;
            SELECT change_token FROM folio_entities WHERE name = 'feed';
            SELECT count(*), max(id) FROM folio_feed_fts_data;
            SELECT key, quote(value) FROM folio_metadata WHERE key NOT IN ('database_identity') ORDER BY key;
            """)
    }

    /// A first screen that was shown, with the time from the key to the first frame that
    /// showed it, and whether that frame said the list was still being counted.
    struct Shown {
        var screen: String
        var seconds: TimeInterval
        var sawCounting: Bool
    }

    /// Does `action` (a key), then reads the screen as often as tmux answers until it shows
    /// the first screen of `expected` (``mismatch(_:_:prompt:)``); fails after 60 seconds with
    /// the last screen and what was wrong with it.
    func firstScreen(
        _ what: String, _ expected: Expected, on app: TmuxSession, prompt: String? = nil, since start: Date = Date(),
        after action: () throws -> Void
    ) async throws -> Shown {
        try action()
        while true {
            // Read after every wake-up before the limit counts (this task may be starved).
            let last = try app.screen()
            guard let problem = mismatch(last, expected, prompt: prompt) else {
                let seconds = Date().timeIntervalSince(start)
                let headers = headerProblem(last, expected)
                #expect(headers == nil, "\(what): \(headers ?? "")\n\(last)")
                return Shown(screen: last, seconds: seconds, sawCounting: last.contains("counting…"))
            }
            if Date().timeIntervalSince(start) >= 60 {
                throw App.Failure(description: "\(what): no correct first screen in 60 s: \(problem); the screen was:\n\(last)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// What is wrong with `screen` as the first screen of `expected`, or `nil`: the status
    /// line's count is the total, or a lower bound of it with "counting…"; the rows are the
    /// list's first ones, in order (time, and title as far as the row shows it).
    func mismatch(_ screen: String, _ expected: Expected, prompt: String?) -> String? {
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if let prompt, !screen.contains("Filter (title or source): \(prompt)▏") { return "no prompt “\(prompt)”" }
        guard let status = lines.last(where: { $0.hasPrefix(" rows ") }) else { return "no status line" }
        let counting = status.contains("counting…")
        let statusCount = Int(
            status.dropFirst(" rows ".count).prefix { $0.isNumber || $0 == "," }.replacingOccurrences(of: ",", with: ""))
        guard let statusCount else { return "no count in the status line" }
        if counting ? statusCount > expected.count : statusCount != expected.count {
            return "the status line says \(statusCount)\(counting ? "+" : ""), SQLite counts \(expected.count)"
        }
        let rows = listRows(screen)
        if expected.count == 0 { return rows.isEmpty ? nil : "rows shown where nothing matches" }
        guard rows.count >= min(expected.rows.count, 10) else { return "\(rows.count) rows shown" }
        for (index, (row, want)) in zip(rows, expected.rows).enumerated() {
            let title = want.time + "  " + want.title.prefix(40)
            if !row.contains(title) { return "row \(index + 1) is “\(row)”, SQLite's is “\(want.title)”" }
        }
        return nil
    }

    /// What is wrong with the section headers of a first screen, or `nil`: each names a day
    /// of its rows and counts them exactly — or, for the last section shown while the list is
    /// being counted, a lower bound shown as one ("51+ items").
    func headerProblem(_ screen: String, _ expected: Expected) -> String? {
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let counting = screen.contains("counting…")
        let headers = lines.dropFirst().filter { $0.hasPrefix("▌") }
        guard !headers.isEmpty else { return "no section header" }
        for (index, header) in headers.enumerated() {
            let day = String(header.dropFirst().prefix(10))
            guard let exact = expected.dayCounts[day] else { return "a header of the day \(day), which no first row has" }
            let words = header.split(separator: " ")
            guard words.count >= 2, words.last!.hasPrefix("item") else { return "header “\(header)” has no count" }
            let shown = String(words[words.count - 2])
            let isLowerBound = shown.hasSuffix("+")
            guard let number = Int(shown.replacingOccurrences(of: ",", with: "").replacingOccurrences(of: "+", with: ""))
            else { return "header “\(header)” has no count" }
            let isLast = index == headers.count - 1
            if isLowerBound {
                if !(counting && isLast) || number > exact { return "header “\(header)”: SQLite counts \(exact)" }
            } else if number != exact {
                return "header “\(header)” counts \(number) items, SQLite \(exact)"
            }
        }
        return nil
    }

    /// Waits until the status line shows the list's count, exact.
    func waitForCount(_ expected: Expected, on app: TmuxSession) async throws {
        try await app.waitFor("rows \(expected.count.formatted()) │", timeout: 120)
    }
}
