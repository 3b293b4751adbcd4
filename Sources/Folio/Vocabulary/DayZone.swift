import Foundation

/// A time zone's offsets from UTC over time, as day sections use them: the local calendar
/// day of a stored date, following the zone's daylight-saving and other transitions.
///
/// The zone's transitions are read from Foundation once (``of(_:)`` keeps one table per
/// zone), from its first transition to the end of ``tableEnd`` (2100): a sorted table of
/// instants and the offset in force from each. A day number is computed while stepping
/// the raw date column (``day(of:)``: a binary search, about ten comparisons for a zone
/// with daylight saving; a scan's ``Cursor`` keeps the last interval, two comparisons a
/// row), never by SQL, so that no custom SQL function is needed and any process can write
/// the file. Before the first transition the zone's first offset holds
/// (Foundation knows no earlier one); from 2101 on, Foundation is asked for each date (its
/// rules go on repeating), and from the year 10000 on the offset of that year's start holds.
///
/// Local days are not always in the order of the instants: where the clocks go back across
/// midnight (Newfoundland's 00:01 fall-backs of 1987–2010, Casey 2010), the minutes between
/// the first midnight and the fall-back read as the next day, then the clock shows the
/// previous day again. Sections must be contiguous in a sort by date, so a day begins at
/// the last time the clock passes its midnight: those minutes are in the previous day.
/// Everywhere else ``day(of:)`` is the date `Calendar` gives in the zone.
struct DayZone: Sendable, Hashable {
    /// The zone's identifier (`Europe/Paris`, `GMT+0530`).
    let identifier: String
    /// The instants at which the offset changes, ascending (seconds since 1970).
    let starts: [Double]
    /// The offset in force before `starts[0]`, then from each of `starts`: one more than them.
    let offsets: [Int]
    /// For each of `offsets`' intervals, the lowest local day of every later instant: a day
    /// never goes back (see the type's discussion). `Int64.max` when none is lower.
    let caps: [Int64]
    /// Where the table ends: from here on Foundation is asked; `+infinity` when the zone has
    /// no transition after its last.
    let end: Double
    /// What tells these offsets from another table's: the identifier and a digest of every
    /// instant and offset, for persistent caches' fingerprints.
    let fingerprint: String
    /// The zone itself.
    let timeZone: TimeZone

    /// The first instant past the table: 2101-01-01T00:00:00Z.
    static let tableEnd: Double = 4_133_980_800
    /// The year 10000 (UTC): past it the offset no longer changes.
    static let farFuture: Double = 253_402_300_800

    /// The table of `zone`, built once per zone and process.
    static func of(_ zone: TimeZone) -> DayZone {
        // By identifier: an autoupdating zone stands for the zone it is now.
        let zone = TimeZone(identifier: zone.identifier) ?? zone
        if let rules = rulesOverride, rules.identifier == zone.identifier { return rules }
        if let known = tables.withLock({ $0[zone] }) { return known }
        let table = DayZone(zone)
        tables.withLock { $0[zone] = table }
        return table
    }

    private static let tables = Locked<[TimeZone: DayZone]>([:])

    /// The user's time zone, where a key follows it (`TimeZone.current`, or the test's).
    static var current: TimeZone { currentOverride ?? TimeZone.current }

    /// A time zone that stands for the user's own in the current task: tests move a user
    /// between zones without touching the process's.
    @TaskLocal static var currentOverride: TimeZone?

    /// Other rules for the zone of that identifier in the current task: tests stand for a
    /// new time-zone database.
    @TaskLocal static var rulesOverride: DayZone?

    init(_ zone: TimeZone) {
        var starts: [Double] = []
        var offsets = [zone.secondsFromGMT(for: .distantPast)]
        var cursor = Date.distantPast
        while let next = zone.nextDaylightSavingTimeTransition(after: cursor), next.timeIntervalSince1970 < Self.tableEnd {
            let offset = zone.secondsFromGMT(for: next)
            if offset != offsets.last {
                starts.append(next.timeIntervalSince1970)
                offsets.append(offset)
            }
            cursor = next
        }
        let end = zone.nextDaylightSavingTimeTransition(after: cursor) == nil ? Double.infinity : Self.tableEnd
        self.init(zone, starts: starts, offsets: offsets, end: end)
    }

    /// The table of these transitions and offsets (see the properties), for `zone` past `end`.
    init(_ zone: TimeZone, starts: [Double], offsets: [Int], end: Double) {
        // The lowest day of each interval is its first instant's; past the table, the day of
        // its first instant (Foundation's days are in order there).
        var caps = [Int64](repeating: .max, count: offsets.count)
        var lowest =
            end.isFinite
            ? DayNumber.of(seconds: end, offsetSeconds: zone.secondsFromGMT(for: Date(timeIntervalSince1970: end))) : .max
        for index in stride(from: offsets.count - 1, through: 0, by: -1) {
            caps[index] = lowest
            if index > 0 { lowest = Swift.min(lowest, DayNumber.of(seconds: starts[index - 1], offsetSeconds: offsets[index])) }
        }
        self.identifier = zone.identifier
        self.starts = starts
        self.offsets = offsets
        self.caps = caps
        self.end = end
        self.timeZone = zone
        self.fingerprint = Self.fingerprint(identifier: zone.identifier, starts: starts, offsets: offsets, end: end)
    }

    /// The day number (``DayNumber``) of a date stored as seconds since 1970, in this zone.
    @inline(__always)
    func day(of seconds: Double) -> Int64 {
        if starts.isEmpty && end == .infinity { return DayNumber.of(seconds: seconds, offsetSeconds: offsets[0]) }
        if seconds.isNaN { return 0 }
        if seconds >= end { return farDay(of: seconds) }
        // The interval: how many starts are at or before `seconds`.
        var low = 0
        var high = starts.count
        while low < high {
            let middle = (low &+ high) >> 1
            if starts[middle] <= seconds { low = middle &+ 1 } else { high = middle }
        }
        return Swift.min(DayNumber.of(seconds: seconds, offsetSeconds: offsets[low]), caps[low])
    }

    /// ``day(of:)`` past the table: Foundation's offset, up to the year 10000.
    private func farDay(of seconds: Double) -> Int64 {
        let instant = Swift.min(seconds, Self.farFuture)
        return DayNumber.of(seconds: seconds, offsetSeconds: timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: instant)))
    }

    /// Day numbers of dates read in order, as a scan reads them: the interval of the last
    /// date is kept, so that a date in it costs two comparisons and no search (and no copy
    /// of the zone's tables a row).
    struct Cursor {
        let zone: DayZone
        /// The interval of the last date looked up: `low..<high`, its offset and cap.
        private var low = Double.infinity
        private var high = -Double.infinity
        private var offset = 0
        private var cap = Int64.max

        init(_ zone: DayZone) { self.zone = zone }

        /// ``DayZone/day(of:)``.
        @inline(__always)
        mutating func day(of seconds: Double) -> Int64 {
            if seconds >= low && seconds < high {
                return Swift.min(DayNumber.of(seconds: seconds, offsetSeconds: offset), cap)
            }
            return dayOutside(seconds)
        }

        private mutating func dayOutside(_ seconds: Double) -> Int64 {
            guard !seconds.isNaN, seconds < zone.end else { return zone.day(of: seconds) }
            let starts = zone.starts
            var index = 0
            var upper = starts.count
            while index < upper {
                let middle = (index &+ upper) >> 1
                if starts[middle] <= seconds { index = middle &+ 1 } else { upper = middle }
            }
            low = index == 0 ? -.infinity : starts[index - 1]
            high = index == starts.count ? zone.end : starts[index]
            offset = zone.offsets[index]
            cap = zone.caps[index]
            return Swift.min(DayNumber.of(seconds: seconds, offsetSeconds: offset), cap)
        }
    }

    /// `Europe/Paris 307 3f2a…`: FNV-1a over the instants' bits, the offsets and the end.
    private static func fingerprint(identifier: String, starts: [Double], offsets: [Int], end: Double) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) {
                hash = (hash ^ ((value >> UInt64(shift)) & 0xff)) &* 0x0000_0100_0000_01b3
            }
        }
        for start in starts { mix(start.bitPattern) }
        for offset in offsets { mix(UInt64(bitPattern: Int64(offset))) }
        mix(end.bitPattern)
        return "\(identifier) \(starts.count) \(String(hash, radix: 16))"
    }

    static func == (lhs: DayZone, rhs: DayZone) -> Bool { lhs.fingerprint == rhs.fingerprint }
    func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }
}
