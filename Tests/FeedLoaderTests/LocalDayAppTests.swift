import Foundation
import Testing
@testable import FeedLoader

/// FeedLoader's days and times are the user's local ones (`TZ`, as `TimeZone.current` reads
/// it), daylight saving included.
@Suite("feedloader in the user's time zone")
struct LocalDayAppTests {
    /// Paris's short night of 2026: the clocks go from 02:00 to 03:00 on 29 March (01:00Z).
    static let items: [(title: String, published: String)] = [
        ("Saturday 23:59 in Paris", "2026-03-28T22:59:00Z"),
        ("Sunday 00:30 in Paris", "2026-03-28T23:30:00Z"),
        ("Sunday 01:59 in Paris", "2026-03-29T00:59:00Z"),
        ("Sunday 03:00 in Paris", "2026-03-29T01:00:00Z"),
    ]

    /// Day names and times against Foundation's calendar, in zones with daylight saving, a
    /// half-hour offset and a skipped day, around their transitions.
    @Test(arguments: ["Europe/Paris", "America/New_York", "Asia/Kolkata", "Pacific/Apia", "Australia/Lord_Howe"])
    func dayNamesAndTimesAreTheCalendars(_ identifier: String) throws {
        let zone = try #require(TimeZone(identifier: identifier))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        var cursor = Date(timeIntervalSince1970: 1_262_304_000)  // 2010
        var checked = 0
        while let transition = zone.nextDaylightSavingTimeTransition(after: cursor), transition.timeIntervalSince1970 < 1.9e9 {
            for delta in [-3_601.0, -1, 0, 1, 1_800, 3_600, 86_399] {
                let date = transition.addingTimeInterval(delta)
                let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
                #expect(
                    DayFormat.dayName(date, in: zone) == String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!))
                #expect(DayFormat.time(date, in: zone) == String(format: "%02d:%02d", parts.hour!, parts.minute!))
                checked += 1
            }
            cursor = transition
        }
        #expect(checked > 0 || identifier == "Asia/Kolkata")
    }

    /// The binary's plain report under `TZ=Europe/Paris`, `TZ=UTC` and
    /// `TZ=America/New_York`, on one file (whose section cache each zone rebuilds): the
    /// days and times of each zone.
    @Test func theReportShowsTheDaysOfTheUsersZone() throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = Self.items.enumerated().map { index, item in
            "{\"title\": \"\(item.title)\", \"url\": \"https://example.com/\(index)\", \"published\": \"\(item.published)\"}"
        }
        try Data(("[" + json.joined(separator: ",\n") + "]").utf8).write(to: directory.appendingPathComponent("night.json"))
        let binary = try App.binary.get().path
        func feedloader(_ zone: String, _ arguments: [String]) throws -> String {
            let result = try App.run(["/usr/bin/env", "TZ=\(zone)", binary] + arguments, in: directory)
            #expect(result.status == 0, "\(result.errors)")
            return result.output
        }
        _ = try feedloader("Europe/Paris", ["import", "night.json"])
        let paris = try feedloader("Europe/Paris", ["--plain"])
        #expect(paris.contains("4 items in 2 days, newest first"), "\(paris)")
        #expect(paris.contains("2026-03-29  Sunday 29 March 2026 — 3 items"), "\(paris)")
        #expect(paris.contains("2026-03-28  Saturday 28 March 2026 — 1 item"), "\(paris)")
        for time in ["03:00  Sunday 03:00", "01:59  Sunday 01:59", "00:30  Sunday 00:30", "23:59  Saturday 23:59"] {
            #expect(paris.contains("  \(time) in Paris"), "\(time): \(paris)")
        }
        let utc = try feedloader("UTC", ["--plain"])
        #expect(utc.contains("2026-03-29  Sunday 29 March 2026 — 2 items"), "\(utc)")
        #expect(utc.contains("2026-03-28  Saturday 28 March 2026 — 2 items"), "\(utc)")
        #expect(utc.contains("  01:00  Sunday 03:00 in Paris"), "\(utc)")
        let newYork = try feedloader("America/New_York", ["--plain"])
        #expect(newYork.contains("4 items in 1 day, newest first"), "\(newYork)")
        #expect(newYork.contains("2026-03-28  Saturday 28 March 2026 — 4 items"), "\(newYork)")
        #expect(newYork.contains("  21:00  Sunday 03:00 in Paris"), "\(newYork)")
        // Back in Paris: Paris's days again, not the cache New York's run left.
        func withoutCounters(_ report: String) -> String {
            report.split(separator: "\n").filter { !$0.hasPrefix("statements ") }.joined(separator: "\n")
        }
        #expect(withoutCounters(try feedloader("Europe/Paris", ["--plain"])) == withoutCounters(paris))
    }
}
