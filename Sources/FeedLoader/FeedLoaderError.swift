import Foundation

/// The errors FeedLoader reports to its user. Each description is the message printed.
///
/// Every error that ends an import says that nothing was imported: an import is one
/// transaction, and nothing is written before the whole feed was fetched and read.
enum FeedLoaderError: Error, Equatable, CustomStringConvertible {
    /// The feed is not JSON at all: nothing was imported.
    case malformedJSON(source: String, line: Int, column: Int, detail: String)
    /// The feed is not well-formed XML: nothing was imported.
    case malformedXML(source: String, line: Int, column: Int, detail: String)
    /// The feed is JSON or XML, but not a feed FeedLoader reads.
    case notAFeed(source: String, found: String)
    /// The feed declares an encoding FeedLoader cannot decode (named as the feed writes it).
    case unsupportedEncoding(source: String, encoding: String)
    /// The feed declares an encoding the WHATWG Encoding Standard reads as one replacement
    /// character, U+FFFD (ISO-2022-KR, ISO-2022-CN, HZ-GB-2312): nothing of it can be read.
    case replacementEncoding(source: String, encoding: String)
    /// The feed's bytes are not valid in the encoding it is in (declared, or told by its
    /// byte order mark or first bytes).
    case undecodable(source: String, encoding: String)
    /// The feed is empty: no bytes at all.
    case emptyFeed(source: String)
    /// The feed could not be read.
    case unreadable(String, reason: String)
    /// The sample feed is missing from the program's resources.
    case missingSample
    /// An output file could not be written.
    case cannotWrite(String, reason: String)
    /// An address that FeedLoader cannot fetch (not http or https, or no host).
    case unsupportedAddress(String)
    /// The server answered with a status other than success or "not modified".
    case httpStatus(source: String, status: Int, reason: String)
    /// The server did not answer in time.
    case timedOut(source: String, seconds: Double)
    /// The server could not be reached.
    case unreachable(source: String, reason: String)
    /// The server answered with something that is not a feed (a web page, an image…).
    case wrongContentType(source: String, contentType: String)
    /// The server redirected more times than allowed (or in a loop).
    case tooManyRedirects(source: String, limit: Int)
    /// The answer was larger than FeedLoader accepts.
    case tooLarge(source: String, limit: Int)
    /// The server answered "304 Not Modified" to a request that was not conditional.
    case unexpectedNotModified(source: String)

    var description: String {
        switch self {
        case .malformedJSON(let source, let line, let column, let detail):
            "\(source) is not valid JSON (line \(line), column \(column)): \(detail). Nothing was imported."
        case .malformedXML(let source, let line, let column, let detail):
            "\(source) is not well-formed XML (line \(line), column \(column)): \(detail). Nothing was imported."
        case .notAFeed(let source, let found):
            "\(source) is not a feed: expected a list of items (or an object with an \"items\" list), a JSON Feed, "
                + "an RSS or an Atom feed, found \(found). Nothing was imported."
        case .unsupportedEncoding(let source, let encoding):
            "\(source) is in the encoding \"\(encoding)\", which FeedLoader does not know or cannot read on "
                + "this system (it reads every encoding of the WHATWG Encoding Standard by any of its labels — UTF-8, "
                + "UTF-16, the ISO-8859 and windows code pages, KOI8, Mac, Shift_JIS, EUC-JP, ISO-2022-JP, GBK, "
                + "gb18030, Big5, EUC-KR — and UTF-32, IBM437, KOI8-T, TCVN 5712 and VISCII). Nothing was imported."
        case .replacementEncoding(let source, let encoding):
            "\(source) is in the encoding \"\(encoding)\", which the Encoding Standard reads as a single "
                + "replacement character (U+FFFD), as browsers do: none of its text can be read safely. "
                + "Nothing was imported."
        case .undecodable(let source, let encoding):
            "\(source) is not valid \(encoding): some of its bytes are not characters of that encoding. "
                + "Nothing was imported."
        case .emptyFeed(let source):
            "\(source) is empty: there is no feed to import. Nothing was imported."
        case .unreadable(let name, let reason):
            "Cannot read \(name): \(reason)"
        case .missingSample:
            "The sample feed is missing from FeedLoader's resources (sample-feed.json)"
        case .cannotWrite(let name, let reason):
            "Cannot write \(name): \(reason)"
        case .unsupportedAddress(let address):
            "Cannot fetch \(address): only http and https addresses (or a file path) can be imported."
        case .httpStatus(let source, let status, let reason):
            "\(source): the server answered \(status) \(reason). Nothing was imported."
        case .timedOut(let source, let seconds):
            "\(source): no complete answer within \(seconds.formatted()) second\(seconds == 1 ? "" : "s") "
                + "(the timeout; see --timeout). Nothing was imported."
        case .unreachable(let source, let reason):
            "Cannot reach \(source): \(reason). Nothing was imported."
        case .wrongContentType(let source, let contentType):
            "\(source) is \(contentType), not a feed: expected JSON Feed (application/feed+json), "
                + "RSS (application/rss+xml) or Atom (application/atom+xml). Nothing was imported."
        case .tooManyRedirects(let source, let limit):
            "\(source): more than \(limit) redirect\(limit == 1 ? "" : "s") (a redirect loop?). Nothing was imported."
        case .tooLarge(let source, let limit):
            "\(source) is larger than \(FeedLoaderError.size(limit)), too large for a feed. "
                + "Nothing was imported."
        case .unexpectedNotModified(let source):
            "\(source): the server answered 304 Not Modified to a request that was not conditional. "
                + "Nothing was imported."
        }
    }

    /// `16 MiB`, `512 KiB`, `100 bytes`.
    static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) byte\(bytes == 1 ? "" : "s")"
    }
}
