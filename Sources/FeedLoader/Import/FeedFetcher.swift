import Foundation

/// Where a feed comes from: a file, a server (the reference app's `FeedFetcher` and its
/// planned `ServerFeedFetcher`), or simulated live news.
///
/// A fetcher only fetches bytes; ``FeedParser`` reads them (detecting the format from
/// the content type and the content) and ``FeedImporter`` stores them, so one fetcher
/// replaces another without anything else changing.
protocol FeedFetcher: Sendable {
    /// What the feed is called in messages: a path or an address.
    var name: String { get }
    /// The key under which ``FeedImporter`` keeps the validators of the last fetch
    /// (``FeedEndpoint/address``), or `nil` for a fetcher that makes no conditional requests.
    var validatorKey: String? { get }
    /// Fetches the feed document.
    /// - Parameter validators: what the last successful fetch of this feed answered; a
    ///   fetcher that makes conditional requests sends them, and returns
    ///   ``FetchResult/notModified`` when the feed has not changed since.
    func fetchFeed(validators: FeedValidators?) async throws -> FetchResult
}

extension FeedFetcher {
    var validatorKey: String? { nil }
}

/// The HTTP validators of a response: what a later request sends back to be told
/// "304 Not Modified" instead of the whole feed again.
struct FeedValidators: Sendable, Equatable {
    /// The `ETag` header, sent back as `If-None-Match`.
    var entityTag: String?
    /// The `Last-Modified` header, sent back as `If-Modified-Since`.
    var lastModified: String?

    init(entityTag: String? = nil, lastModified: String? = nil) {
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// Whether there is nothing to send back.
    var isEmpty: Bool { entityTag == nil && lastModified == nil }
}

/// A feed document as fetched: its bytes and what is known about them.
struct FeedDocument: Sendable, Equatable {
    /// The body.
    var data: Data
    /// The media type, lowercased and without parameters (`application/rss+xml`), or
    /// `nil` when nothing says (a file of unknown extension, a server that sends none).
    var contentType: String?
    /// The `charset` parameter of the content type, as the server wrote it (`windows-1252`),
    /// `nil` when there is none. It decides the encoding of an XML feed over the XML
    /// declaration (see ``XMLEncoding/utf8Document(_:source:charset:)``).
    var charset: String?
    /// Where the document was found in the end, after redirects: relative links in it
    /// resolve against this.
    var url: URL?
    /// The response's validators (none for a file).
    var validators = FeedValidators()

    init(data: Data, contentType: String?, url: URL? = nil, validators: FeedValidators = FeedValidators()) {
        self.data = data
        self.contentType = contentType.flatMap(Self.mediaType)
        self.charset = contentType.flatMap(Self.charset)
        self.url = url
        self.validators = validators
    }

    /// `Application/RSS+XML; charset=utf-8` → `application/rss+xml`; `nil` when empty.
    static func mediaType(_ header: String) -> String? {
        let type = header.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        let trimmed = type.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// `text/xml; Charset="windows-1252"` → `windows-1252`: the first `charset` parameter
    /// (its name in any case, its value quoted or not, white space around it dropped);
    /// `nil` when there is none or it is empty.
    static func charset(_ header: String) -> String? {
        for parameter in header.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else { continue }
            var value = parts[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            value = value.trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        return nil
    }
}

/// What a fetch brought back.
enum FetchResult: Sendable, Equatable {
    /// The feed document.
    case document(FeedDocument)
    /// The feed has not changed since the fetch whose validators were sent (HTTP 304).
    case notModified
}

/// Reads a feed from a file: JSON, JSON Feed, RSS or Atom (the extension is a hint;
/// the content decides).
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

    func fetchFeed(validators: FeedValidators?) async throws -> FetchResult {
        do {
            let data = try Data(contentsOf: url)
            return .document(FeedDocument(data: data, contentType: Self.contentType(of: url), url: url))
        } catch {
            throw FeedLoaderError.unreadable(name, reason: Self.reason(error))
        }
    }

    /// The media type a file's extension suggests, `nil` when it suggests none.
    static func contentType(of url: URL) -> String? {
        switch url.pathExtension.lowercased() {
        case "json": "application/json"
        case "rss": "application/rss+xml"
        case "atom": "application/atom+xml"
        case "xml": "application/xml"
        default: nil
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

    func fetchFeed(validators: FeedValidators?) async throws -> FetchResult {
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
        return .document(FeedDocument(data: try FeedParser.encode(items), contentType: "application/json"))
    }
}
