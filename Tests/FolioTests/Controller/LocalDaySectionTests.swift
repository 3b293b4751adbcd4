import Foundation
import GRDB
import Testing
@testable import Folio

/// The sections Foundation's calendar makes of `instants` sorted (`descending` or not):
/// each day's name and count.
func calendarSections(_ instants: [Double], in zone: TimeZone, descending: Bool) -> [String] {
    var runs: [(String, Int)] = []
    for seconds in instants.sorted(by: descending ? (>) : (<)) {
        let day = calendarDay(seconds, in: zone)
        if let last = runs.last, last.0 == day { runs[runs.count - 1].1 += 1 } else { runs.append((day, 1)) }
    }
    return runs.map { "\($0.0)×\($0.1)" }
}

/// Paris, 2026: the clocks go forward on 29 March (02:00 → 03:00 CEST, 01:00Z) and back on
/// 25 October (03:00 → 02:00 CET, 01:00Z).
enum ParisNights {
    static let zone = TimeZone(identifier: "Europe/Paris")!
    /// Local wall-clock time on a day of 2026 as an instant (the first one, for a repeated hour).
    static func local(_ month: Int, _ day: Int, _ hour: Int, _ minute: Int, second: Int = 0) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(
            from: DateComponents(year: 2026, month: month, day: day, hour: hour, minute: minute, second: second))!
    }
}

@Suite("Day sections in a real time zone: controllers")
@MainActor
struct LocalDaySectionTests: LiveListSuite {
    /// Sections read through a controller — SQL's scan, the section boundary seeks on the
    /// index (`stamp`) and row by row without one (`loose`), both directions — are
    /// Foundation's calendar days of the rows, for thousands of instants per zone.
    @Test(arguments: localDayZones)
    func controllerSectionsAreTheCalendarsDays(_ identifier: String) throws {
        let zone = try #require(TimeZone(identifier: identifier))
        let store = try Store.inMemory(records: [SeekItem.self])
        let instants = localDayInstants(zone, random: 2_500, seed: 0x5EC7 ^ UInt64(identifier.utf8.count))
        try store.write { tx in
            for seconds in instants {
                var item = SeekItem()
                item.stamp = Date(timeIntervalSince1970: seconds)
                item.loose = item.stamp
                try tx.insert(&item)
            }
        }
        for descending in [false, true] {
            let expected = calendarSections(instants, in: zone, descending: descending)
            let order: SortOrder = descending ? .reverse : .forward
            let cases: [(RecordRequest<SeekItem>, SectionKey<SeekItem>, indexed: Bool)] = [
                (RecordRequest(sortBy: [SortDescriptor(\.stamp, order: order)]), .day(\.stamp, timeZone: zone), true),
                (RecordRequest(sortBy: [SortDescriptor(\.loose, order: order)]), .day(\.loose, timeZone: zone), false),
            ]
            for (request, key, indexed) in cases {
                let seeks = store.diagnostics.counters.sectionBoundarySeeks
                let controller = FetchedResultsController(request, store: store, sectionBy: key)
                controller.firstScreenRule = nil
                try controller.performFetch()
                let sections = controller.sections.map { "\($0.name)×\($0.numberOfObjects)" }
                #expect(sections == expected, "\(identifier) \(key) descending: \(descending)")
                #expect(controller.sectionTimeZone == zone)
                // The index's seeks found the boundaries, or every row was read.
                let sought = store.diagnostics.counters.sectionBoundarySeeks - seeks
                #expect(indexed ? sought >= expected.count : sought == 0, "\(identifier) \(key)")
            }
        }
    }

    /// A live list by local day across Paris's two daylight-saving nights: rows at 00:30,
    /// 01:59 and 03:00 on the short day, both 02:30s of the long one, rows moved across
    /// midnight and across the missing hour. Every change set, applied to a strict table
    /// model, gives a fresh fetch; the sections are the calendar's.
    @Test(arguments: [false, true])
    func liveSectionsAcrossDaylightSavingNights(descending: Bool) async throws {
        let store = try Store.inMemory(records: [Article.self])
        func local(_ month: Int, _ day: Int, _ hour: Int, _ minute: Int, second: Int = 0) -> Date {
            ParisNights.local(month, day, hour, minute, second: second)
        }
        let request = sorted([SortDescriptor(\.published, order: descending ? .reverse : .forward)])
        let live = try await LiveHarness(store, request, sectionBy: .day(\.published, timeZone: ParisNights.zone))
        func insert(_ title: String, _ date: Date) -> (WriteTransaction) throws -> Void {
            { tx in
                var article = Article(title: title, url: title, published: date)
                try tx.insert(&article)
            }
        }
        try await live.step(insert("28 23:30", local(3, 28, 23, 30)))
        try await live.step(insert("29 00:30", local(3, 29, 0, 30)))
        try await live.step { tx in
            try insert("29 01:59", local(3, 29, 1, 59))(tx)
            try insert("29 03:00", local(3, 29, 3, 0))(tx)
            try insert("29 23:59:59", local(3, 29, 23, 59, second: 59))(tx)
        }
        // The short day holds four rows, 23 hours from its midnight.
        #expect(
            live.controller.sections.map(\.name) == (descending ? ["2026-03-29", "2026-03-28"] : ["2026-03-28", "2026-03-29"]))
        // Across midnight: 00:30 back to the 28th, 23:30 forward to the 30th, one second
        // before 03:00 (01:59:59, just before the jump) and one after.
        try await live.step { tx in
            try tx.database.execute(
                sql: "UPDATE article SET published = ? WHERE url = '29 00:30'",
                arguments: [local(3, 28, 23, 59).timeIntervalSince1970])
            try tx.database.execute(
                sql: "UPDATE article SET published = ? WHERE url = '28 23:30'",
                arguments: [local(3, 30, 0, 10).timeIntervalSince1970])
        }
        try await live.step { tx in
            try tx.database.execute(
                sql: "UPDATE article SET published = published + 1 WHERE url = '29 01:59'")
            try tx.database.execute(
                sql: "UPDATE article SET published = published - 3601 WHERE url = '29 03:00'")
        }
        // The long day: both 02:30s (CEST then CET), and 00:00 and 23:59:59 around it.
        let firstHalfPast = local(10, 25, 2, 30)
        try await live.step { tx in
            try insert("25 02:30 CEST", firstHalfPast)(tx)
            try insert("25 02:30 CET", firstHalfPast.addingTimeInterval(3_600))(tx)
            try insert("25 00:00", local(10, 25, 0, 0))(tx)
            try insert("24 23:59:59", local(10, 24, 23, 59, second: 59))(tx)
            try insert("25 23:59:59", local(10, 25, 23, 59, second: 59))(tx)
        }
        // A move across midnight on the long day, and a row deleted.
        try await live.step { tx in
            try tx.database.execute(sql: "UPDATE article SET published = published + 2 WHERE url = '25 23:59:59'")
            try tx.database.execute(sql: "UPDATE article SET published = published - 1 WHERE url = '25 00:00'")
            try tx.database.execute(sql: "DELETE FROM article WHERE url = '29 23:59:59'")
        }
        let rows = try readNow(store) { db in try Double.fetchAll(db, sql: "SELECT published FROM article") }
        let expected = calendarSections(rows, in: ParisNights.zone, descending: descending)
        #expect(live.controller.sections.map { "\($0.name)×\($0.numberOfObjects)" } == expected)
        #expect(expected.contains("2026-10-25×2") && expected.contains("2026-03-29×2"), "\(expected)")
    }

    /// The user travels: a controller keeps the zone of its fetch — its change sets and a
    /// new request stay in it — and the next performFetch, or a new controller, takes the
    /// zone of that moment.
    @Test func aControllerKeepsItsZoneUntilItFetchesAgain() async throws {
        let store = try Store.inMemory(records: [Article.self])
        let paris = ParisNights.zone
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        // 2026-06-10 02:00 in Paris is 2026-06-09 20:00 in New York.
        let instant = Date(timeIntervalSince1970: 1_781_049_600)
        try writeSync(store) { tx in
            var article = Article(title: "a", url: "a", published: instant)
            try tx.insert(&article)
        }
        let request = sorted([SortDescriptor(\.published)])
        let live = try await DayZone.$currentOverride.withValue(paris) {
            try await LiveHarness(store, request, sectionBy: .day(\.published))
        }
        #expect(live.controller.sectionTimeZone == paris)
        #expect(live.controller.sections.map(\.name) == ["2026-06-10"])
        try await DayZone.$currentOverride.withValue(newYork) {
            // A change set while in New York: still Paris's days.
            let changes = try await live.step { tx in
                var article = Article(title: "b", url: "b", published: instant.addingTimeInterval(60))
                try tx.insert(&article)
            }
            #expect(changes.first?.insertedSections == [])
            #expect(live.controller.sections.map(\.name) == ["2026-06-10"])
            // A new request keeps the zone too.
            try live.controller.setRequest(sorted([SortDescriptor(\.published)], batchSize: 5))
            #expect(live.controller.sectionTimeZone == paris)
            // A new controller, and the next fetch, are in New York.
            let fresh = FetchedResultsController(request, store: store, sectionBy: .day(\.published))
            try Self.fetch(fresh)
            #expect(fresh.sections.map(\.name) == ["2026-06-09"])
            #expect(fresh.sectionTimeZone == newYork)
            try await live.controller.performFetch()
            #expect(live.controller.sectionTimeZone == newYork)
            #expect(live.controller.sections.map(\.name) == ["2026-06-09"])
        }
        // An explicit zone is kept whatever the user's.
        let fixed = FetchedResultsController(request, store: store, sectionBy: .day(\.published, timeZone: paris))
        try await DayZone.$currentOverride.withValue(newYork) { try await fixed.performFetch() }
        #expect(fixed.sections.map(\.name) == ["2026-06-10"])
        #expect(fixed.sectionTimeZone == paris)
        // Without a day key, no zone.
        let plain = FetchedResultsController(
            sorted([SortDescriptor(\.category)]), store: store, sectionBy: .attribute(\.category))
        try Self.fetch(plain)
        #expect(plain.sectionTimeZone == nil)
    }

    /// A persistent cache written in one zone is rebuilt in another (saying so), and when
    /// the zone's rules differ (a new time-zone database), and reused otherwise.
    @Test func theSectionCacheFollowsTheZoneAndItsRules() async throws {
        let directory = try ScratchDirectory()
        let store = try Store(path: directory.url.appendingPathComponent("store.sqlite").path, records: [Article.self])
        try seed(store, count: 300)
        let paris = ParisNights.zone
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        var request = sorted([SortDescriptor(\.published, order: .reverse)])
        request.batchSize = 20
        func fetch(in zone: TimeZone, rules: DayZone? = nil) async throws -> SectionCache.Outcome {
            try await DayZone.$rulesOverride.withValue(rules) {
                try await DayZone.$currentOverride.withValue(zone) {
                    let controller = FetchedResultsController(
                        request, store: store, sectionBy: .day(\.published), cacheName: "days")
                    try await controller.performFetch()
                    await controller.flushCache()
                    let fresh = FetchedResultsController(request, store: store, sectionBy: .day(\.published, timeZone: zone))
                    try await fresh.performFetch()
                    #expect(controller.snapshot == fresh.snapshot)
                    #expect(controller.sections.map(\.name) == fresh.sections.map(\.name))
                    return controller.lastCacheOutcome
                }
            }
        }
        #expect(try await fetch(in: paris) == .rebuilt("no cache file"))
        #expect(try await fetch(in: paris) == .reused)
        #expect(try await fetch(in: newYork) == .rebuilt("time zone differs (Europe/Paris, now America/New_York)"))
        #expect(try await fetch(in: newYork) == .reused)
        #expect(try await fetch(in: paris) == .rebuilt("time zone differs (America/New_York, now Europe/Paris)"))
        // Paris without its transitions from 1996 on: other rules, same identifier.
        let table = DayZone.of(paris)
        let kept = table.starts.firstIndex { $0 > 820_454_400 }!
        let other = DayZone(
            paris, starts: Array(table.starts.prefix(kept)), offsets: Array(table.offsets.prefix(kept + 1)), end: .infinity)
        #expect(other.identifier == table.identifier && other.fingerprint != table.fingerprint)
        #expect(try await fetch(in: paris, rules: other) == .rebuilt("time zone rules differ (Europe/Paris)"))
        #expect(try await fetch(in: paris) == .rebuilt("time zone rules differ (Europe/Paris)"))
        #expect(try await fetch(in: paris) == .reused)
        try store.close()
    }

    /// A SwiftUI model tells its sections' zone too: the user's at its fetch.
    @Test func aModelTellsItsZone() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 30)
        let model = FetchedResultsModel(sorted([SortDescriptor(\.published)]), store: store, sectionBy: .day(\.published))
        #expect(model.sectionTimeZone == nil)
        try await DayZone.$currentOverride.withValue(ParisNights.zone) { try await model.performFetch() }
        #expect(model.sectionTimeZone == ParisNights.zone)
        // 30 hours from 1970-01-01T00:00Z: 00:00–22:59Z is the 1st in Paris (+1), then the 2nd.
        #expect(model.sections.map(\.name) == ["1970-01-01", "1970-01-02"])
        #expect(model.sections.map(\.items.count) == [23, 7])
    }

    /// The default zone is the user's: `TimeZone.current` when nothing stands for it.
    @Test func theDefaultZoneIsTheUsers() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 10)
        let controller = FetchedResultsController(
            sorted([SortDescriptor(\.published)]), store: store, sectionBy: .day(\.published))
        try controller.performFetch()
        #expect(controller.sectionTimeZone?.identifier == TimeZone.current.identifier)
        #expect(SectionKey<Article>.day(\.published).description == "day(\\Article.published, in: current)")
        #expect(
            SectionKey<Article>.day(\.published, timeZone: ParisNights.zone).description
                == "day(\\Article.published, in: Europe/Paris)")
    }
}
