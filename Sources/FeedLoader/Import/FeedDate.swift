import Foundation

/// The dates feeds carry, read by hand: RSS's RFC 822 (`Fri, 13 Jun 2025 10:00:00 GMT`)
/// and Atom's and JSON Feed's RFC 3339 (`2025-06-13T10:00:00Z`).
///
/// No `DateFormatter`: these parsers are exact about ranges (no 30 February, no hour
/// 24), take every zone form the RFCs allow, and are plain functions, safe anywhere.
enum FeedDate {
    // MARK: RFC 822

    /// An RFC 822 date as RFC 2822 (and real feeds) write it:
    /// `[Day,] D Mon YYYY hh:mm[:ss] zone`.
    ///
    /// The day name is optional and not checked; the month may be written out (`June`);
    /// a two-digit year is 19xx from 50 on and 20xx below; the zone is `±hhmm` (or
    /// `±hh:mm`), `GMT`, `UT`, `UTC`, `Z`, a US zone (`EST`, `EDT`, `CST`, `CDT`, `MST`,
    /// `MDT`, `PST`, `PDT`), or missing or another military letter, read as UTC (RFC 2822
    /// §4.3 makes those "-0000", unknown).
    static func rfc822(_ text: String) -> Date? {
        var scanner = Tokens(text)
        // An optional day name with its comma (`Fri,`), or without one (`Fri`).
        if let word = scanner.peekWord(), Int(word) == nil {
            guard dayNames.contains(where: { word.lowercased().hasPrefix($0) }) else { return nil }
            scanner.skipWord()
            scanner.skip(",")
        }
        guard let day = scanner.number(maxDigits: 2) else { return nil }
        scanner.skip("-")
        guard let monthName = scanner.word(), let month = month(monthName) else { return nil }
        scanner.skip("-")
        guard let yearDigits = scanner.digits(), (2...4).contains(yearDigits.count), var year = Int(yearDigits) else {
            return nil
        }
        if yearDigits.count == 2 { year += year >= 50 ? 1900 : 2000 }
        if yearDigits.count == 3 { year += 1900 }
        guard let hour = scanner.number(maxDigits: 2), scanner.skip(":"), let minute = scanner.number(maxDigits: 2, exactly: 2)
        else { return nil }
        var second = 0
        if scanner.skip(":") {
            guard let value = scanner.number(maxDigits: 2, exactly: 2) else { return nil }
            second = value
        }
        var offset = 0
        if !scanner.isAtEnd {
            guard let zone = zoneOffset(&scanner) else { return nil }
            offset = zone
        }
        // A comment after the zone (`(PDT)`) is allowed by RFC 2822; anything else is not.
        guard scanner.isAtEnd else { return nil }
        return date(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offsetSeconds: offset)
    }

    private static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func month(_ word: String) -> Int? {
        let lower = word.lowercased()
        guard lower.count >= 3, let index = monthNames.firstIndex(where: { lower.hasPrefix($0) }) else { return nil }
        // `June`, `Sept` are fine; `Janx` is not a month.
        let full = [
            "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
            "december",
        ][index]
        guard full.hasPrefix(lower) || (index == 8 && lower == "sept") else { return nil }
        return index + 1
    }

    private static let namedZones: [String: Int] = [
        "gmt": 0, "ut": 0, "utc": 0, "z": 0,
        "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6, "pst": -8, "pdt": -7,
    ]

    private static func zoneOffset(_ scanner: inout Tokens) -> Int? {
        if let sign = scanner.sign() {
            guard let digits = scanner.digits() else { return nil }
            var hours: Int, minutes: Int
            if digits.count == 4 {
                hours = Int(digits.prefix(2))!
                minutes = Int(digits.suffix(2))!
            } else if digits.count <= 2, let value = Int(digits) {
                hours = value
                minutes = 0
                if scanner.skip(":") {
                    guard let more = scanner.number(maxDigits: 2, exactly: 2) else { return nil }
                    minutes = more
                }
            } else {
                return nil
            }
            guard hours < 24, minutes < 60 else { return nil }
            return sign * (hours * 3600 + minutes * 60)
        }
        guard let word = scanner.word() else { return nil }
        if let hours = namedZones[word.lowercased()] { return hours * 3600 }
        // Military zones: RFC 2822 reads them as unknown, that is UTC.
        if word.count == 1, word.first!.isLetter, word.lowercased() != "j" { return 0 }
        return nil
    }

    // MARK: RFC 3339

    /// An RFC 3339 date-time: `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)`.
    ///
    /// The `T` may be `t` or a space and `Z` may be `z` (RFC 3339 §5.6); any number of
    /// fraction digits; `-00:00` (unknown offset) is UTC; an offset without its colon
    /// (`+0200`) is read too. A date alone (`2025-06-13`) is midnight UTC; a date-time
    /// without an offset is not accepted (it would be a guess).
    static func rfc3339(_ text: String) -> Date? {
        let bytes = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        var index = 0
        func number(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2) else { return nil }
        if index == bytes.count {
            return date(year: year, month: month, day: day, hour: 0, minute: 0, second: 0, offsetSeconds: 0)
        }
        guard expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2)
        else { return nil }
        var fraction = 0.0
        if expect(".") {
            // Digits past the 15th are below a Date's precision: read, not counted.
            var numerator = 0, denominator = 1
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                if index - start < 15 {
                    numerator = numerator * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                    denominator *= 10
                }
                index += 1
            }
            guard index > start else { return nil }
            fraction = Double(numerator) / Double(denominator)
        }
        var offset = 0
        if expect("Zz") {
            offset = 0
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2) else { return nil }
            _ = expect(":")
            guard let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        return date(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, offsetSeconds: offset,
            fraction: fraction)
    }

    // MARK: Calendar

    /// The instant of a civil date and time at a UTC offset, or `nil` when a field is out
    /// of range (a leap second, `:60`, is the next minute's first second).
    static func date(
        year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offsetSeconds: Int, fraction: Double = 0
    ) -> Date? {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Howard Hinnant's days-from-civil: days since 1970-01-01 of a proleptic Gregorian date.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

/// Words, numbers and punctuation of a date, with spaces between them skipped.
private struct Tokens {
    let characters: [Character]
    var index = 0

    init(_ text: String) { characters = Array(text.trimmingCharacters(in: .whitespacesAndNewlines)) }

    var isAtEnd: Bool {
        mutating get {
            skipSpaces()
            return index >= characters.count || characters[index] == "("
        }
    }

    mutating func skipSpaces() {
        while index < characters.count, characters[index] == " " || characters[index] == "\t" { index += 1 }
    }

    /// Skips `character` if it is next; tells whether it was.
    @discardableResult
    mutating func skip(_ character: Character) -> Bool {
        skipSpaces()
        guard index < characters.count, characters[index] == character else { return false }
        index += 1
        return true
    }

    mutating func peekWord() -> String? {
        let saved = index
        defer { index = saved }
        return word()
    }

    mutating func skipWord() { _ = word() }

    /// Letters.
    mutating func word() -> String? {
        skipSpaces()
        let start = index
        while index < characters.count, characters[index].isASCII, characters[index].isLetter { index += 1 }
        return index > start ? String(characters[start..<index]) : nil
    }

    /// ASCII digits.
    mutating func digits() -> String? {
        skipSpaces()
        let start = index
        while index < characters.count, characters[index].isASCII, characters[index].isNumber { index += 1 }
        return index > start ? String(characters[start..<index]) : nil
    }

    mutating func number(maxDigits: Int, exactly: Int? = nil) -> Int? {
        let saved = index
        guard let digits = digits(), digits.count <= maxDigits, exactly == nil || digits.count == exactly else {
            index = saved
            return nil
        }
        return Int(digits)
    }

    /// `+` → 1, `-` → -1, else `nil`.
    mutating func sign() -> Int? {
        if skip("+") { return 1 }
        if skip("-") { return -1 }
        return nil
    }
}
