import Foundation

/// Which reader a feed document goes to.
extension FeedParser {
    /// The syntax a document is in.
    enum Syntax: Equatable {
        case json
        case xml
    }

    /// Reads a fetched document in whichever format it is.
    ///
    /// The content type decides the syntax: JSON types (`application/feed+json`,
    /// `application/json`, any `+json`) or XML types (`application/rss+xml`,
    /// `application/atom+xml`, `application/xml`, `text/xml`, any `+xml`). A generic or
    /// missing type (`text/plain`, `application/octet-stream`, none) is decided by the
    /// first character of the content; any other type (`text/html`, an image) is not a
    /// feed. Then the content decides the format: a JSON object whose `version` is a
    /// jsonfeed.org address is a JSON Feed, other JSON is FeedLoader's own; an XML root
    /// `<rss>` is RSS 2.0, `<rdf:RDF>` RSS 1.0, `<feed>` Atom.
    ///
    /// XML is read in the encoding RFC 7303 says: a byte order mark, else the `charset` of
    /// the content type (``FeedDocument/charset``), else the XML declaration (see
    /// ``XMLEncoding``). JSON is UTF-8, UTF-16 or UTF-32 (RFC 8259), told by its bytes: a
    /// charset does not change it.
    ///
    /// - Throws: ``FeedLoaderError`` when the document is empty, of a type that is not a
    ///   feed, malformed, or not a feed. Items that are malformed are not errors: they
    ///   are skipped and listed in ``ParsedFeed/problems``.
    static func parse(_ document: FeedDocument, source: String) throws -> ParsedFeed {
        // UTF-16 and UTF-32 (told by a byte order mark or the first bytes) become UTF-8
        // before anything looks at a byte, for JSON and XML alike.
        let (family, bomLength) = XMLEncoding.detect(Array(document.data.prefix(4)))
        let data = try XMLEncoding.unicodeAsUTF8(document.data, source: source)
        guard let first = firstSignificantByte(data) else { throw FeedLoaderError.emptyFeed(source: source) }
        let syntax: Syntax
        if let type = document.contentType, let declared = try Self.syntax(ofContentType: type, source: source) {
            syntax = declared
        } else {
            switch first {
            case UInt8(ascii: "{"), UInt8(ascii: "["): syntax = .json
            case UInt8(ascii: "<"): syntax = .xml
            default: throw FeedLoaderError.notAFeed(source: source, found: "text that is neither JSON nor XML")
            }
        }
        switch syntax {
        case .json:
            let root = try json(data, source: source)
            if let object = root as? [String: Any], JSONFeedReader.isJSONFeed(object) {
                return try JSONFeedReader.read(object, source: source, baseURL: document.url)
            }
            return try parseItems(root, source: source)
        case .xml:
            // What a byte order mark or the first bytes told is UTF-8 now, whatever the
            // HTTP charset or the declaration say; else the charset decides over the declaration.
            let told = family != .utf8 || bomLength > 0
            let root = try XMLTree.parse(data, source: source, charset: told ? "UTF-8" : document.charset)
            return try XMLFeedReader.read(root, source: source, baseURL: document.url)
        }
    }

    /// The syntax a content type declares; `nil` for a generic type, whose content decides.
    /// - Throws: ``FeedLoaderError/wrongContentType(source:contentType:)`` for a type that
    ///   is not a feed's.
    static func syntax(ofContentType type: String, source: String) throws -> Syntax? {
        switch type {
        case "application/json", "text/json", "application/feed+json", "application/x-json":
            return .json
        case "application/xml", "text/xml", "application/rss+xml", "application/atom+xml", "application/rdf+xml",
            "application/x-rss+xml":
            return .xml
        case "text/plain", "application/octet-stream", "binary/octet-stream", "application/unknown":
            return nil
        default:
            if type.hasSuffix("+json") { return .json }
            if type.hasSuffix("+xml") { return .xml }
            throw FeedLoaderError.wrongContentType(source: source, contentType: type)
        }
    }

    /// The first byte that is not white space or a UTF-8 byte order mark; `nil` for a
    /// blank document.
    static func firstSignificantByte(_ data: Data) -> UInt8? {
        var bytes = data[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.first { !(($0 == 0x20) || ($0 == 0x09) || ($0 == 0x0A) || ($0 == 0x0D)) }
    }
}

/// What the readers of JSON Feed, RSS and Atom share: turning what an item says into a
/// ``FeedItem``, or an ``ItemProblem`` that says what is missing.
enum FeedItemBuilder {
    /// Summaries longer than this are cut (with an ellipsis): the list shows a line, the
    /// detail a paragraph, not a whole article.
    static let summaryLimit = 2_000
    /// A title made from the summary, for an item without one, is cut to this.
    static let derivedTitleLimit = 100

    /// `text` as an absolute http or https address, resolved against `base` when relative;
    /// `nil` when it is not one.
    static func webAddress(_ text: String?, base: URL?) -> String? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        if FeedParser.webHost(trimmed) != nil { return trimmed }
        guard let base, let resolved = URL(string: trimmed, relativeTo: base)?.absoluteURL.absoluteString,
            FeedParser.webHost(resolved) != nil
        else { return nil }
        return resolved
    }

    /// The date of an item whose feed gives none: now, to the second (as `export` writes
    /// dates, so that an export imports as the same item).
    static func importTime() -> Date {
        Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    }

    /// The title to show: `title`, or the start of the summary when there is none.
    static func title(_ title: String?, summary: String) -> String? {
        if let title, !title.isEmpty { return title }
        guard !summary.isEmpty else { return nil }
        return summary.truncated(to: derivedTitleLimit)
    }

    /// The summary to store: plain text, one paragraph, cut to ``summaryLimit``.
    static func summary(_ text: String) -> String {
        text.truncated(to: summaryLimit)
    }

    /// The source to show: the item's or the feed's name, else the host without `www.`
    /// (for an item identified by its guid, the feed's host, or what names the feed).
    static func source(_ name: String?, url: String) -> String {
        if let name, !name.isEmpty { return name }
        var address = url
        if FeedItem.isGuidKey(url) {
            // The feed part of the key: its address, id or title.
            let feed = String(url.dropFirst(5).prefix { $0 != " " }).removingPercentEncoding ?? ""
            guard FeedParser.webHost(feed) != nil else { return feed }
            address = feed
        }
        let host = FeedParser.webHost(address) ?? ""
        return host.hasPrefix("www.") ? String(host.dropFirst(4)) : host
    }
}
