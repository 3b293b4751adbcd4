import Foundation
import GRDB
import Testing
@testable import Folio

/// The zones the local-day tests section in: daylight saving in both hemispheres and with
/// rules that changed (São Paulo), half- and quarter-hour offsets, a 30-minute daylight
/// saving (Lord Howe), a skipped day (Samoa, 30 December 2011), +12:45/+13:45, UTC.
let localDayZones = [
    "Europe/Paris", "America/New_York", "America/Sao_Paulo", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe",
    "Pacific/Apia", "Pacific/Chatham", "UTC",
]

/// Foundation's answer: `YYYY-MM-DD` of `seconds` by a Gregorian calendar in `zone`.
func calendarDay(_ seconds: Double, in zone: TimeZone) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: seconds))
    return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
}

/// 1900-01-01 and 2100-01-01, UTC.
let localDayRange = -2_208_988_800.0..<4_102_444_800.0

/// The instants the local-day tests check in `zone`: random ones from 1900 to 2100 (with
/// fractions of a second), each transition exactly and ±0.5 s, ±1 s, and every local
/// midnight around a transition exactly, ±1 s and the double just before it.
func localDayInstants(_ zone: TimeZone, random count: Int, seed: UInt64) -> [Double] {
    var random = SeededRandom(seed: seed)
    var instants = (0..<count).map { _ in Double.random(in: localDayRange, using: &random) }
    // Whole seconds, and before 1970, too.
    instants += (0..<count / 4).map { _ in Double(Int.random(in: -2_208_988_800..<0, using: &random)) }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    var cursor = Date(timeIntervalSince1970: localDayRange.lowerBound)
    while let transition = zone.nextDaylightSavingTimeTransition(after: cursor),
        transition.timeIntervalSince1970 < localDayRange.upperBound
    {
        let t = transition.timeIntervalSince1970
        instants += [t - 1, t - 0.5, t, t + 0.5, t + 1]
        for day in [calendar.startOfDay(for: transition), calendar.startOfDay(for: transition.addingTimeInterval(86_400))] {
            let midnight = day.timeIntervalSince1970
            instants += [midnight - 1, midnight.nextDown, midnight, midnight + 1]
        }
        cursor = transition
    }
    // As a `Date` stores them: Date counts from 2001, so a number of seconds since 1970 a
    // Date cannot hold (`midnight.nextDown` in 1976) becomes the nearest one it can.
    return instants.map { Date(timeIntervalSince1970: $0).timeIntervalSince1970 }
}

@Suite("Day sections in a real time zone")
struct LocalDayTests {
    /// The day number of every instant — random ones from 1900 to 2100, transitions and
    /// midnights ±1 s — is the date Foundation's Gregorian calendar gives in the zone.
    @Test(arguments: localDayZones)
    func dayNumbersAreTheCalendarsDays(_ identifier: String) throws {
        let zone = try #require(TimeZone(identifier: identifier))
        let table = DayZone.of(zone)
        let instants = localDayInstants(zone, random: 4_000, seed: identifier.utf8.reduce(0xDA75) { $0 &* 31 &+ UInt64($1) })
        var mismatches: [String] = []
        for seconds in instants {
            let folio = DayNumber.name(of: table.day(of: seconds))
            let foundation = calendarDay(seconds, in: zone)
            if folio != foundation { mismatches.append("\(seconds): \(folio), Calendar \(foundation)") }
        }
        #expect(instants.count >= 5_000)
        #expect(mismatches.isEmpty, "\(identifier): \(mismatches.prefix(10))")
    }

    /// A scan's cursor, which keeps the interval of the last date, gives the zone's days for
    /// dates in order, in reverse and at random (the search each time it leaves an interval).
    @Test(arguments: localDayZones + ["America/St_Johns"])
    func aCursorGivesTheZonesDays(_ identifier: String) throws {
        let table = DayZone.of(try #require(TimeZone(identifier: identifier)))
        let instants = localDayInstants(table.timeZone, random: 1_000, seed: 0xC0) + [.nan, .infinity, -.infinity, 5e9, 1e300]
        for order in [instants.sorted(), instants.sorted(by: >), instants] {
            var cursor = DayZone.Cursor(table)
            for seconds in order {
                #expect(cursor.day(of: seconds) == table.day(of: seconds), "\(identifier) \(seconds)")
            }
        }
    }

    /// A day's first instant (what the section boundary seeks bound a day with) is exact for
    /// days of 23 and 25 hours, a day that starts at 01:00 (no midnight), and the day after
    /// a skipped one: the first double of the day, Calendar's `startOfDay`.
    @Test(arguments: localDayZones)
    func firstSecondsOfADayAreExact(_ identifier: String) throws {
        let zone = try #require(TimeZone(identifier: identifier))
        let table = DayZone.of(zone)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        var checked = 0
        var cursor = Date(timeIntervalSince1970: 946_684_800)  // 2000
        var instants = [0.0, -1e9, 1.7e9]
        while let transition = zone.nextDaylightSavingTimeTransition(after: cursor), transition.timeIntervalSince1970 < 2e9 {
            instants += [transition.timeIntervalSince1970 - 86_400, transition.timeIntervalSince1970]
            cursor = transition
        }
        for seconds in instants {
            let day = table.day(of: seconds)
            let first = DayNumber.firstSeconds(ofDay: day, in: table)
            #expect(table.day(of: first) == day && table.day(of: first.nextDown) < day, "\(identifier) \(seconds)")
            #expect(
                first == calendar.startOfDay(for: Date(timeIntervalSince1970: seconds)).timeIntervalSince1970, "\(identifier)")
            #expect(DayNumber.lastSeconds(ofDay: day - 1, in: table) == first.nextDown)
            checked += 1
        }
        #expect(checked >= 3)
    }

    /// Samoa skipped 30 December 2011: no instant is in it, the 29th is followed by the 31st.
    @Test func aSkippedDayHasNoInstant() throws {
        let table = DayZone.of(try #require(TimeZone(identifier: "Pacific/Apia")))
        // 2011-12-30T10:00:00Z: the last instant of the 29th (23:59:59 at -10:00) is 09:59:59.
        #expect(DayNumber.name(of: table.day(of: 1_325_239_199)) == "2011-12-29")
        #expect(DayNumber.name(of: table.day(of: 1_325_239_200)) == "2011-12-31")
        let skipped = table.day(of: 1_325_239_199) + 1
        #expect(DayNumber.firstSeconds(ofDay: skipped, in: table) == 1_325_239_200)
    }

    /// Newfoundland's clocks went back at 00:01 (1987–2010): the minute after midnight read
    /// as the 28th, then the clock showed 23:01 on the 27th again. A day begins the last time
    /// the clock passes its midnight, so that minute is in the 27th, and the days stay in
    /// the order of the instants; every other instant is Calendar's day.
    @Test func aFallBackAcrossMidnightKeepsTheDaysInOrder() throws {
        let zone = try #require(TimeZone(identifier: "America/St_Johns"))
        let table = DayZone.of(zone)
        let fallBack = 657_081_060.0  // 1990-10-28T02:31:00Z: 00:01 NDT becomes 23:01 NST
        #expect(zone.secondsFromGMT(for: Date(timeIntervalSince1970: fallBack - 1)) == -9_000)
        #expect(zone.secondsFromGMT(for: Date(timeIntervalSince1970: fallBack)) == -12_600)
        #expect(calendarDay(fallBack - 30, in: zone) == "1990-10-28", "Calendar: the minute after the first midnight")
        #expect(DayNumber.name(of: table.day(of: fallBack - 30)) == "1990-10-27")
        #expect(DayNumber.name(of: table.day(of: fallBack - 61)) == "1990-10-27")
        #expect(DayNumber.name(of: table.day(of: fallBack + 3_539)) == "1990-10-27")
        #expect(DayNumber.name(of: table.day(of: fallBack + 3_540)) == "1990-10-28", "the second midnight")
        #expect(DayNumber.firstSeconds(ofDay: table.day(of: fallBack + 3_540), in: table) == fallBack + 3_540)
        // Days never go back, in any zone, from 1900 to 2100.
        for identifier in ["America/St_Johns", "America/Goose_Bay", "America/Moncton", "Antarctica/Casey", "Pacific/Guam"] {
            let other = DayZone.of(try #require(TimeZone(identifier: identifier)))
            for (index, start) in other.starts.enumerated() where other.offsets[index + 1] < other.offsets[index] {
                #expect(other.day(of: start.nextDown) <= other.day(of: start), "\(identifier) \(start)")
                #expect(other.day(of: start - 7_200) <= other.day(of: start), "\(identifier) \(start)")
            }
        }
        // Outside those minutes, Calendar's day.
        for seconds in localDayInstants(zone, random: 2_000, seed: 0x57) {
            let folio = DayNumber.name(of: table.day(of: seconds))
            if folio != calendarDay(seconds, in: zone) {
                let next = table.starts.first { $0 > seconds }
                #expect(
                    next.map { $0 - seconds <= 60 } == true, "\(seconds): \(folio), Calendar \(calendarDay(seconds, in: zone))")
            }
        }
    }

    /// A fixed offset (`TimeZone(secondsFromGMT:)`) is one offset for all time, as before.
    @Test func aFixedOffsetIsOneOffset() throws {
        let table = DayZone.of(try #require(TimeZone(secondsFromGMT: 19_800)))
        #expect(table.starts.isEmpty && table.end == .infinity)
        for seconds in [-1e12, -86_400.5, -19_800, -19_800.5, 0, 1e12, .infinity, -.infinity, .nan] {
            #expect(table.day(of: seconds) == DayNumber.of(seconds: seconds, offsetSeconds: 19_800))
        }
    }

    /// Past the table (2101 on) Foundation is asked; NaN, infinities and absurd numbers still
    /// get finite, ordered days.
    @Test func datesPastTheTableAndAbsurdOnes() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Paris"))
        let table = DayZone.of(zone)
        #expect(table.end == DayZone.tableEnd)
        for seconds in [4_133_980_800.0, 4_150_000_000, 4_165_000_000.5, 9e9, 32_503_680_000] {
            #expect(DayNumber.name(of: table.day(of: seconds)) == calendarDay(seconds, in: zone), "\(seconds)")
        }
        #expect(table.day(of: .nan) == 0)
        #expect(table.day(of: .infinity) == DayNumber.limit)
        #expect(table.day(of: -.infinity) == -DayNumber.limit)
        #expect(table.day(of: 1e300) == DayNumber.limit)
        #expect(table.day(of: -1e300) == -DayNumber.limit)
        #expect(table.day(of: 1e15) <= table.day(of: 1e16))
    }
}
