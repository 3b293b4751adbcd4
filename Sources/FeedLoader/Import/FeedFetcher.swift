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
/// items, newer than the page before, and every page after the first revises the first
/// item of the previous one (same url and date, changed title), so an import both
/// inserts and updates.
struct LiveNewsFetcher: FeedFetcher {
    /// Which page (0, 1, 2…).
    let page: Int
    /// Items per page.
    let itemsPerPage: Int
    /// Identifies one run of pages, so that every run brings new items.
    let run: UInt64
    /// When the run started: item `k` of the run is dated `k` seconds later.
    let start: Date

    init(page: Int, itemsPerPage: Int = 4, run: UInt64, start: Date) {
        self.page = page
        self.itemsPerPage = itemsPerPage
        self.run = run
        self.start = start
    }

    var name: String { "live news, page \(page + 1)" }

    func fetchFeed() async throws -> Data {
        let generator = FeedGenerator(seed: run, newest: start, spacing: 0, runToken: "live\(String(run, radix: 36))-")
        func item(_ k: Int) -> FeedItem {
            var item = generator.item(k)
            item.published = start.addingTimeInterval(Double(k))
            return item
        }
        var items = (0..<itemsPerPage).map { item(page * itemsPerPage + $0) }.reversed().map { $0 }
        if page > 0 {
            var revised = item((page - 1) * itemsPerPage)
            revised.title = "Updated: " + revised.title
            revised.summary += " This story has been updated."
            items.append(revised)
        }
        return try FeedParser.encode(items)
    }
}
