import Foundation

/// Where a feed comes from: a file now, a server later (seeds/003's `FeedFetcher`).
///
/// A fetcher only fetches bytes; ``FeedParser`` reads them and ``FeedImporter``
/// stores them, so a `ServerFeedFetcher` can replace ``FileFeedFetcher`` without
/// anything else changing.
protocol FeedFetcher: Sendable {
    /// What the feed is called in messages: a path or an address.
    var name: String { get }
    /// The feed document (JSON).
    func fetchFeed() async throws -> Data
}

/// Reads a feed from a JSON file.
struct FileFeedFetcher: FeedFetcher {
    let url: URL

    init(url: URL) { self.url = url }
    init(path: String) { self.url = URL(fileURLWithPath: path) }

    /// The sample feed that ships with FeedLoader.
    static var sample: FileFeedFetcher {
        get throws {
            guard let url = Bundle.module.url(forResource: "sample-feed", withExtension: "json") else {
                throw FeedLoaderError.missingSample
            }
            return FileFeedFetcher(url: url)
        }
    }

    var name: String { url.path }

    func fetchFeed() async throws -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            throw FeedLoaderError.unreadable(name, reason: Self.reason(error))
        }
    }

    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain,
            let code = POSIXErrorCode(rawValue: Int32(underlying.code))
        {
            return String(cString: strerror(code.rawValue))
        }
        if nsError.code == NSFileReadNoSuchFileError { return "no such file" }
        return nsError.localizedDescription
    }
}

/// A stand-in for a news server that publishes as you watch: each page is a few new
/// items dated now, and later pages revise an item of an earlier page (same URL,
/// changed title), so an import both inserts and updates.
struct LiveNewsFetcher: FeedFetcher {
    /// Which page (0, 1, 2…).
    let page: Int
    /// Items per page.
    let itemsPerPage: Int
    /// Identifies one run of pages, so that every run brings new items.
    let run: UInt64
    /// The time the page is published.
    let now: Date

    init(page: Int, itemsPerPage: Int = 4, run: UInt64, now: Date = Date()) {
        self.page = page
        self.itemsPerPage = itemsPerPage
        self.run = run
        self.now = now
    }

    var name: String { "live news, page \(page + 1)" }

    func fetchFeed() async throws -> Data {
        let generator = FeedGenerator(seed: run, newest: now, spacing: 20, runToken: "live\(String(run, radix: 36))")
        var items: [FeedItem] = []
        for slot in 0..<itemsPerPage {
            var item = generator.item(page * itemsPerPage + slot)
            item.published = now.addingTimeInterval(-Double(slot) * 7)
            items.append(item)
        }
        if page > 0 {
            // Revise the first item of the previous page.
            var revised = generator.item((page - 1) * itemsPerPage)
            revised.published = now.addingTimeInterval(-Double(itemsPerPage) * 7)
            revised.title = "Updated: " + revised.title
            revised.summary += " This story has been updated."
            items.append(revised)
        }
        return try FeedParser.encode(items)
    }
}
