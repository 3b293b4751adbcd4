import Foundation

/// Days and times as the list shows them, in the time zone of the day sections
/// (``FeedListSource/timeZone``, the user's, daylight saving included), so a row's time
/// agrees with its section. No `Calendar`: the zone's offset at the date, then arithmetic.
enum DayFormat {
    /// The zone the day sections are in, so times agree with their section.
    static let timeZone = FeedListSource.timeZone

    /// The local time of `date` in `zone`, in seconds since 1970 as if it were UTC.
    static func localSeconds(_ date: Date, in zone: TimeZone) -> Double {
        date.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: date))
    }

    /// `17:02`, in the sections' time zone (or `zone`).
    static func time(_ date: Date, in zone: TimeZone = timeZone) -> String {
        let seconds = Int(localSeconds(date, in: zone).rounded(.down))
        let inDay = ((seconds % 86_400) + 86_400) % 86_400
        return String(format: "%02d:%02d", inDay / 3600, inDay % 3600 / 60)
    }

    /// `2025-06-13`, in the sections' time zone (or `zone`).
    static func dayName(_ date: Date, in zone: TimeZone = timeZone) -> String {
        let days = Int((localSeconds(date, in: zone) / 86_400).rounded(.down))
        let (y, m, d) = FeedGenerator.civilFromDays(days)
        return String(format: "%04d-%02d-%02d", y, m, d)
    }

    static let weekdays = ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"]
    static let months = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September",
        "October", "November", "December",
    ]

    /// `2025-06-13` → `2025-06-13  Friday 13 June 2025`.
    static func dayTitle(_ name: String) -> String {
        let long = longDay(name)
        return long == name ? name : "\(name)  \(long)"
    }

    /// `2025-06-13` → `Friday 13 June 2025`.
    static func longDay(_ name: String) -> String {
        let parts = name.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, (1...12).contains(parts[1]), (1...31).contains(parts[2]) else { return name }
        let days = daysFromCivil(parts[0], parts[1], parts[2])
        let weekday = weekdays[((days % 7) + 7) % 7]
        return "\(weekday) \(parts[2]) \(months[parts[1] - 1]) \(parts[0])"
    }

    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
