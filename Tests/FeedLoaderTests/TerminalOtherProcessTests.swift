import Foundation
import Folio
import Testing
@testable import FeedLoader

extension TerminalAppTests {
    /// Two terminals, as a user would have them: the list open in the top pane, and in the
    /// pane below `feedloader import` of a feed file, then `feedloader generate`, on the
    /// same database. With no key pressed in the list, the new items animate in as
    /// inserts (`+` markers, rows counted up, the list never reloaded), each import woken by
    /// the file system; the status line says how the list is woken.
    @Test(TestTier.longOnly) func anotherTerminalsImportAndGenerateAnimateIntoTheOpenList() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = try App.binary.get().path
        // Five stories of the last minutes: the newest of the list.
        let now = Date()
        let stories = (1...5).map { n in
            """
            {"title": "Second terminal story \(n)", "url": "https://example.com/second-terminal/\(n)", \
            "published": "\(ISO8601DateFormatter().string(from: now.addingTimeInterval(Double(-60 * n))))"}
            """
        }
        try Data(("[" + stories.joined(separator: ",\n") + "]").utf8).write(to: directory.appendingPathComponent("new.json"))

        // The markers stay for the whole test: a loaded machine may read the screen late.
        let app = try TmuxSession(
            "FEEDLOADER_HIGHLIGHT_SECONDS=600 '\(binary)' --db feeds.sqlite", in: directory, width: 150, height: 40)
        let list = try app.firstPane()
        let opened = try await list.waitFor("rows 420")
        let status = try #require(StatusLine(opened))
        #if os(Linux)
        // inotify — or, should another program hold every inotify instance of the user,
        // the polling fallback, which the status line names as well.
        #expect(status.watching == "inotify" || status.watching == "polling", "\(opened)")
        #else
        #expect(status.watching == "dispatch source")
        #endif
        let terminal = try app.split("sh", lines: 8)

        /// Every screen of the list read while waiting: none may show a reload.
        var screens: [String] = []
        func waitInList(_ what: String, _ condition: (String) -> Bool) async throws -> String {
            try await list.waitFor(what) { screen in
                screens.append(screen)
                return condition(screen)
            }
        }

        try terminal.type("'\(binary)' import new.json --db feeds.sqlite; echo IMPORT=$?")
        try terminal.press("Enter")
        let imported = try await waitInList("the five stories, marked as inserted") { screen in
            let marked = listRows(screen).filter { $0.dropFirst().hasPrefix("+") && $0.contains("Second terminal story") }
            return marked.count == 5 && StatusLine(screen)?.rows == 425
        }
        let importOutput = try await terminal.waitFor("the import's exit status") {
            $0.range(of: #"IMPORT=\d"#, options: .regularExpression) != nil
        }
        #expect(importOutput.contains("IMPORT=0") && importOutput.contains("5 items, 5 new"), "\(importOutput)")
        // Newest first, at the top of today's section; the rows that were there are not marked.
        let rows = listRows(imported)
        #expect(rows.prefix(5).allSatisfy { $0.dropFirst().hasPrefix("+") }, "\(rows.prefix(6))")
        #expect(rows.dropFirst(5).allSatisfy { !$0.dropFirst().hasPrefix("+") }, "\(rows.prefix(8))")
        #expect(rows.first?.contains("Second terminal story 1") == true)
        // The selection stays on its record: the row that was first, now below them.
        let selected = try #require(listRows(opened).first)
        #expect(rows.dropFirst(5).first == selected, "\(rows.prefix(6))")
        #expect(imported.contains(DayFormat.dayTitle(DayFormat.dayName(now))))

        // 3,000 generated items, dated from now backwards: two transactions, each a change
        // set of inserts.
        try terminal.type("'\(binary)' generate 3000 --db feeds.sqlite --seed 11; echo GENERATE=$?")
        try terminal.press("Enter")
        let generated = try await waitInList("3,425 rows") { StatusLine($0)?.rows == 3_425 }
        let generateOutput = try await terminal.waitFor("generate's exit status") {
            $0.range(of: #"GENERATE=\d"#, options: .regularExpression) != nil
        }
        #expect(generateOutput.contains("GENERATE=0"), "\(generateOutput)")
        // The screen follows the selected row, now below the 3,005 new ones: every other row
        // on screen is new.
        let after = listRows(generated)
        #expect(after.filter { $0.hasPrefix("▶") } == [selected], "\(after)")
        #expect(after.filter { $0 != selected }.allSatisfy { $0.dropFirst().hasPrefix("+") }, "\(after)")
        #expect(after.count > 10)

        // Never a reload: not in the status line, not as a message, on any screen read.
        let reloaded = screens.filter { StatusLine($0).map { $0.reloads > 0 } == true || $0.contains("Reloaded the list") }
        #expect(reloaded.isEmpty, "the list reloaded:\n\(reloaded.first ?? "")")
        #expect(StatusLine(generated)?.reloads == 0)
        try list.press("q")
        try await list.waitFor("the list to close") { !$0.contains("rows 3,425") }
    }
}

extension TerminalAppTests {
    /// What the test above checks never appears is visible when it happens: the `sqlite3`
    /// shell in the second pane empties the change log and changes a title in one
    /// transaction, so the list cannot tell which rows changed and reloads — which the status line counts and the
    /// message explains.
    @Test(
        TestTier.longOnly,
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "the sqlite3 shell is needed"))
    func aReloadForcedByAnEmptiedChangeLogIsShown() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = try TmuxSession("'\(try App.binary.get().path)' --db feeds.sqlite", in: directory, width: 150, height: 30)
        let list = try app.firstPane()
        let opened = try await list.waitFor("rows 420")
        #expect(StatusLine(opened)?.reloads == 0)
        let first = try #require(listRows(opened).first)
        let terminal = try app.split("sh", lines: 6)
        try terminal.type(
            "/usr/bin/sqlite3 feeds.sqlite \"BEGIN; DELETE FROM folio_changes; "
                + "UPDATE feed SET title = 'Edited in the shell' WHERE id = (SELECT max(id) FROM feed); COMMIT;\"")
        try terminal.press("Enter")
        let reloaded = try await list.waitFor("the reload") { StatusLine($0)?.reloads == 1 }
        #expect(reloaded.contains("Reloaded the list: the change log"), "\(reloaded)")
        #expect(listRows(reloaded).allSatisfy { !$0.dropFirst().hasPrefix("+") && !$0.dropFirst().hasPrefix("~") })
        #expect(listRows(reloaded).first == first, "the selection stays")
        try list.press("q")
    }
}
