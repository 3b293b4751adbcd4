import Foundation

/// Makes realistic synthetic news items about Apple products, as many as asked for:
/// item `i` is a pure function of the seed and `i`, dated `i × spacing` (jittered)
/// before `newest`, so any slice can be made on its own and large runs stream in chunks.
struct FeedGenerator: Sendable {
    let seed: UInt64
    /// The date of item 0.
    let newest: Date
    /// Average seconds between consecutive items.
    let spacing: Double
    /// Makes this run's urls unique, so that every run adds new items.
    let runToken: String

    init(seed: UInt64, newest: Date, spacing: Double = 150, runToken: String? = nil) {
        self.seed = seed
        self.newest = newest
        self.spacing = spacing
        self.runToken = runToken ?? String(seed, radix: 36)
    }

    /// Item `index`.
    func item(_ index: Int) -> FeedItem {
        var random = SplitMix64(seed: seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        let outlet = Self.outlets[random.below(Self.outlets.count)]
        let words = Words(random: &random)
        let template = Self.stories[random.below(Self.stories.count)]
        let title = words.fill(template.title)
        let summary = words.fill(template.summary)
        let jitter = spacing > 0 ? Double(random.below(Int(spacing * 0.8) + 1)) : 0
        let published = Date(timeIntervalSince1970: (newest.timeIntervalSince1970 - Double(index) * spacing - jitter).rounded())
        let path = Self.datePath(published)
        let slug = Self.slug(title)
        let token = "\(runToken)\(String(index, radix: 36))"
        let url = "https://\(outlet.domain)/\(path)/\(slug)-\(token)/"
        let image: String? =
            random.below(10) == 0
            ? nil : "https://\(outlet.imageHost)/\(path.prefix(7))/\(slug.prefix(48))-\(token).jpg"
        return FeedItem(title: title, url: url, published: published, summary: summary, source: outlet.name, imageURL: image)
    }

    /// Items `range`, in order.
    func items(_ range: Range<Int>) -> [FeedItem] { range.map(item) }

    // MARK: Text

    /// `Apple's M5 chip, tested` → `apple-s-m5-chip-tested` (ASCII letters and digits only).
    static func slug(_ title: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(72)
        var dash = false
        for byte in title.utf8 {
            guard bytes.count < 72 else { break }
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                bytes.append(byte)
                dash = false
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                bytes.append(byte + 32)
                dash = false
            default:
                if !dash, !bytes.isEmpty {
                    bytes.append(UInt8(ascii: "-"))
                    dash = true
                }
            }
        }
        while bytes.last == UInt8(ascii: "-") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `2025/06/13`, in UTC.
    static func datePath(_ date: Date) -> String {
        let days = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
        let (y, m, d) = civilFromDays(days)
        return String(format: "%04d/%02d/%02d", y, m, d)
    }

    /// Howard Hinnant's days-from-civil inverse: no Calendar, so it is fast and Sendable.
    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    struct Outlet: Sendable {
        var name: String
        var domain: String
        var imageHost: String
    }

    static let outlets: [Outlet] = [
        Outlet(name: "9to5Mac", domain: "9to5mac.com", imageHost: "9to5mac.com/wp-content/uploads"),
        Outlet(name: "MacRumors", domain: "www.macrumors.com", imageHost: "images.macrumors.com/article-new"),
        Outlet(name: "AppleInsider", domain: "appleinsider.com", imageHost: "photos5.appleinsider.com/gallery"),
        Outlet(name: "Macworld", domain: "www.macworld.com", imageHost: "www.macworld.com/wp-content/uploads"),
        Outlet(name: "The Verge", domain: "www.theverge.com", imageHost: "cdn.vox-cdn.com/uploads"),
        Outlet(name: "Six Colors", domain: "sixcolors.com", imageHost: "sixcolors.com/images"),
        Outlet(name: "TechCrunch", domain: "techcrunch.com", imageHost: "techcrunch.com/wp-content/uploads"),
        Outlet(name: "Ars Technica", domain: "arstechnica.com", imageHost: "cdn.arstechnica.net/wp-content/uploads"),
        Outlet(name: "iMore", domain: "www.imore.com", imageHost: "cdn.mos.cms.futurecdn.net"),
        Outlet(name: "Apple Newsroom", domain: "www.apple.com/newsroom", imageHost: "www.apple.com/newsroom/images"),
        Outlet(name: "Daring Fireball", domain: "daringfireball.net", imageHost: "daringfireball.net/misc"),
        Outlet(name: "Engadget", domain: "www.engadget.com", imageHost: "s.yimg.com/os/creatr-uploaded-images"),
    ]

    struct Story: Sendable {
        var title: String
        var summary: String
    }

    /// Placeholders: {device} {os} {service} {feature} {part} {n} {beta} {city} {price} {percent} {country} {weeks}
    static let stories: [Story] = [
        Story(
            title: "Apple seeds {os} beta {beta} to developers",
            summary:
                "The new beta arrives a week after the last one and focuses on {feature}, along with the usual bug fixes and performance improvements."
        ),
        Story(
            title: "{os} is now available with {feature} improvements",
            summary:
                "The update can be downloaded from Settings on supported devices. Apple says it also fixes {n} security issues."),
        Story(
            title: "Hands-on: {feature} in {os}",
            summary:
                "We spent a few days with {feature} on the {device}. Here's what works, what doesn't, and what Apple still needs to fix."
        ),
        Story(
            title: "Review: the {device}, {weeks} weeks later",
            summary:
                "After {weeks} weeks of daily use, the {device} has settled into a routine. Battery life and {part} stand out; the price still stings."
        ),
        Story(
            title: "{device} drops to its lowest price ever",
            summary: "Retailers are discounting the {device} by {price} this week, the best price we have tracked since launch."),
        Story(
            title: "Report: Apple testing {device} with {part}",
            summary:
                "Supply-chain sources say Apple is evaluating {part} for a future {device}, though the feature may not ship until next year."
        ),
        Story(
            title: "How to use {feature} on your {device}",
            summary:
                "{feature} is easy to miss. This step-by-step guide shows where to find it in {os} and how to make the most of it."
        ),
        Story(
            title: "{service} adds {n} new features in latest update",
            summary:
                "The update brings {n} changes to {service}, including better search, offline support and a redesigned home screen."
        ),
        Story(
            title: "Analyst: {device} shipments up {percent}% this quarter",
            summary:
                "Demand for the {device} beat expectations, with strong sales in {country} offsetting a slower quarter in Europe."
        ),
        Story(
            title: "{service} price increase rolls out to more countries",
            summary:
                "Subscribers in {country} and other markets will pay {price} more each month starting with their next billing cycle."
        ),
        Story(
            title: "Tim Cook talks {feature} and privacy in new interview",
            summary:
                "Apple's CEO said {feature} was years in the making and that privacy remained the company's guiding principle."),
        Story(
            title: "Everything we know about {os}",
            summary: "From {feature} to a refreshed design, here is a roundup of every rumor about {os} ahead of its unveiling."),
        Story(
            title: "Deals: save {price} on the {device} today",
            summary:
                "The {device} is {price} off at major retailers, matching the lowest price of the year. The deal ends Sunday."),
        Story(
            title: "Apple opens new store in {city}",
            summary:
                "The new store in {city} features a forum for Today at Apple sessions and a dedicated pickup area for online orders."
        ),
        Story(
            title: "{device} teardown reveals {part}",
            summary: "A teardown of the {device} shows {part}, a modest repairability improvement over the previous model."),
        Story(
            title: "Apple expands {service} to {n} new countries",
            summary:
                "{service} is now available in {n} more countries, including {country}, bringing its total reach to over 170 markets."
        ),
        Story(
            title: "Tip: {n} hidden {os} settings worth changing",
            summary:
                "Some of the best options in {os} are buried several menus deep. These {n} settings make your {device} faster and quieter."
        ),
        Story(
            title: "Apple fixes {feature} bug in {os} update",
            summary: "A bug that caused {feature} to stop working for some users on the {device} is fixed in today's update."),
        Story(
            title: "Developers can now build for {feature} with new APIs",
            summary:
                "New frameworks in {os} let third-party apps adopt {feature}. Apple published sample code and updated its design guidelines."
        ),
        Story(
            title: "{device} vs. the competition: which should you buy?",
            summary: "We compare the {device} with its closest rivals on performance, display, battery life and price."),
        Story(
            title: "Apple's {service} gets {feature} integration",
            summary:
                "{service} now works with {feature}, a change first spotted in the {os} beta and now rolling out to everyone."),
        Story(
            title: "Rumor: {device} to launch with {part} this fall",
            summary:
                "A new report claims the {device} will get {part}, a feature Apple has reportedly been testing for two years."),
        Story(
            title: "Apple confirms {os} release date",
            summary: "{os} will be released next week with {feature}, Apple confirmed in a press release this morning."),
        Story(
            title: "Podcast: {device} first impressions and {service} news",
            summary:
                "This week we share first impressions of the {device}, discuss the latest {service} changes and answer listener questions."
        ),
    ]

    static let devices = [
        "iPhone 16 Pro", "iPhone 16 Pro Max", "iPhone 16e", "iPhone 16", "iPad Air", "iPad Pro", "iPad mini",
        "MacBook Air", "MacBook Pro", "Mac mini", "Mac Studio", "iMac", "Apple Watch Ultra 2", "Apple Watch Series 10",
        "AirPods Pro 2", "AirPods 4", "AirPods Max", "Vision Pro", "Apple TV 4K", "HomePod mini", "AirTag",
    ]
    static let systems = [
        "iOS 18.5", "iOS 19", "iPadOS 18.5", "macOS Sequoia 15.5", "macOS 16", "watchOS 11.5", "visionOS 2.4",
        "tvOS 18.5", "iOS 18.4", "macOS Sequoia 15.4", "Xcode 16.3",
    ]
    static let services = [
        "Apple Music", "Apple TV+", "iCloud+", "Apple Pay", "Apple Arcade", "Apple Fitness+", "App Store",
        "Apple News+", "Apple Maps", "Apple One", "Apple Card",
    ]
    static let features = [
        "Apple Intelligence", "Siri", "Genmoji", "Image Playground", "Live Activities", "StandBy", "Stage Manager",
        "Continuity Camera", "iPhone Mirroring", "Focus modes", "the Passwords app", "satellite messaging",
        "the Journal app", "Visual Intelligence", "Writing Tools", "Clean Up", "Live Translation", "Control Center",
    ]
    static let parts = [
        "a thinner design", "an OLED display", "the M5 chip", "a new camera system", "a larger battery",
        "a titanium frame", "under-display Face ID", "a 120Hz display", "Wi-Fi 7", "an in-house modem",
        "a redesigned hinge", "more RAM", "a periscope lens",
    ]
    static let cities = [
        "Mumbai", "Milan", "Seoul", "Osaka", "Riyadh", "Kuala Lumpur", "Stockholm", "Miami", "Shenzhen", "Madrid",
        "Toronto", "São Paulo",
    ]
    static let countries = ["Japan", "India", "Brazil", "Germany", "Mexico", "South Korea", "Australia", "Canada", "France"]
    static let prices = ["$50", "$100", "$150", "$200", "$250", "$1", "$2", "$3", "$30", "$70"]

    /// The words one item uses, drawn once so a title and its summary agree.
    struct Words {
        var values: [String: String]

        init(random: inout SplitMix64) {
            func pick(_ list: [String]) -> String { list[random.below(list.count)] }
            values = [
                "device": pick(FeedGenerator.devices), "os": pick(FeedGenerator.systems),
                "service": pick(FeedGenerator.services), "feature": pick(FeedGenerator.features),
                "part": pick(FeedGenerator.parts), "city": pick(FeedGenerator.cities),
                "country": pick(FeedGenerator.countries), "price": pick(FeedGenerator.prices),
                "n": String(3 + random.below(12)), "beta": String(2 + random.below(5)),
                "percent": String(4 + random.below(28)), "weeks": String(2 + random.below(10)),
            ]
        }

        func fill(_ template: String) -> String {
            var result = ""
            var rest = Substring(template)
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                result += rest[..<open]
                let key = String(rest[rest.index(after: open)..<close])
                result += values[key] ?? key
                rest = rest[rest.index(after: close)...]
            }
            result += rest
            // A sentence may start with "the Passwords app" (but not with "iOS").
            let firstWord = result.prefix { $0 != " " }
            if firstWord.allSatisfy({ !$0.isUppercase }), let first = result.first {
                result = first.uppercased() + result.dropFirst()
            }
            return result
        }
    }
}

/// A small, fast, seedable generator (Steele, Lea and Flood's SplitMix64).
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
}
