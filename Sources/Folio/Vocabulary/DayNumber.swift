import Foundation

/// Days since 1970-01-01 of a stored date, and their `YYYY-MM-DD` names.
enum DayNumber {
    /// Day numbers are clamped to ±10⁹ (±2.7 million years), so infinities and absurd
    /// dates still get a finite, ordered section.
    static let limit: Int64 = 1_000_000_000

    /// The day of `seconds` at `offsetSeconds` from UTC: `⌊(seconds + offset) / 86400⌋`,
    /// exactly. The whole seconds are taken first, so that neither the sum nor the division
    /// rounds across a midnight: an integer below 2⁵³ plus the offset is exact, and its
    /// quotient by 86,400 is never within rounding of the next integer unless it is one. (A
    /// date just under midnight, `midnight.nextDown`, is in the day before, as for Calendar.)
    @inline(__always)
    static func of(seconds: Double, offsetSeconds: Int) -> Int64 {
        let days = ((seconds.rounded(.down) + Double(offsetSeconds)) / 86_400).rounded(.down)
        if days.isNaN { return 0 }
        if days >= Double(limit) { return limit }
        if days <= -Double(limit) { return -limit }
        return Int64(days)
    }

    /// The day of a stored date in `zone`; a value that is not a number (NULL, or text or
    /// a blob written by raw SQL) is its own section, so sections still follow the sort.
    static func value(of stored: SQLiteValue, in zone: DayZone) -> SQLiteValue {
        switch stored {
        case .real(let seconds): .integer(zone.day(of: seconds))
        case .integer(let seconds): .integer(zone.day(of: Double(seconds)))
        default: stored
        }
    }

    /// `YYYY-MM-DD` of a day number (proleptic Gregorian calendar; Howard Hinnant's
    /// civil-from-days algorithm).
    static func name(of day: Int64) -> String {
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func pad(_ v: Int64, _ width: Int) -> String {
            let text = String(abs(v))
            return (v < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))"
    }
}

extension DayNumber {
    /// The smallest stored number (as SQLite compares numbers) whose day is `day` or later:
    /// rows before it in an ascending order are in earlier days. `-infinity` for the first
    /// day (``limit`` negated), which every number at or below it is in.
    ///
    /// Exact: ``DayZone/day(of:)`` never decreases as the number grows (each of its steps
    /// rounds monotonically, and a local day never goes back: see ``DayZone``), so the
    /// doubles whose day is at least `day` are the ones from some double on, found by
    /// bisecting the doubles in their order — whatever the zone's offsets, so a day that
    /// daylight saving makes 23 or 25 hours long, or one a zone skipped, is bounded exactly. An integer
    /// compares with that double as its conversion to a double does, because the bound is
    /// within ±2⁵³ (days are clamped to ±10⁹), where integers are exact doubles.
    static func firstSeconds(ofDay day: Int64, in zone: DayZone) -> Double {
        if day <= -limit { return -.infinity }
        // Invariant: day(lo) < day <= day(hi).
        var lo = orderKey(-.infinity)
        var hi = orderKey(.infinity)
        while UInt64(bitPattern: hi &- lo) > 1 {
            let mid = lo &+ Int64(bitPattern: UInt64(bitPattern: hi &- lo) / 2)
            if zone.day(of: double(orderKey: mid)) >= day { hi = mid } else { lo = mid }
        }
        return double(orderKey: hi)
    }

    /// The largest stored number whose day is `day` or earlier; `+infinity` for the last
    /// day (``limit``).
    static func lastSeconds(ofDay day: Int64, in zone: DayZone) -> Double {
        if day >= limit { return .infinity }
        return firstSeconds(ofDay: day + 1, in: zone).nextDown
    }

    /// Doubles (NaN aside) as integers in the same order: `-0.0` just before `+0.0`.
    static func orderKey(_ x: Double) -> Int64 {
        let bits = Int64(bitPattern: x.bitPattern)
        return bits >= 0 ? bits : Int64.min &- bits &- 1
    }

    static func double(orderKey key: Int64) -> Double {
        let bits = key >= 0 ? key : Int64.min &- (key &+ 1)
        return Double(bitPattern: UInt64(bitPattern: bits))
    }
}
