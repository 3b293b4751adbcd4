import Foundation

/// Days and times as the list shows them, in the fixed offset of the day sections, so a
/// row's time always agrees with its section. No `Calendar`: fast and `Sendable`.
enum DayFormat {
    /// The fixed offset that sections by day use, so times agree with their section.
    static let offsetSeconds = FeedListSource.timeZone.secondsFromGMT()

    /// `17:02`, in the sections' time zone.
    static func time(_ date: Date) -> String {
        let seconds = Int((date.timeIntervalSince1970 + Double(offsetSeconds)).rounded(.down))
        let inDay = ((seconds % 86_400) + 86_400) % 86_400
        return String(format: "%02d:%02d", inDay / 3600, inDay % 3600 / 60)
    }

    /// `2025-06-13`, in the sections' time zone.
    static func dayName(_ date: Date) -> String {
        let days = Int(((date.timeIntervalSince1970 + Double(offsetSeconds)) / 86_400).rounded(.down))
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
