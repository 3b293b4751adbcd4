import Foundation

/// The errors FeedLoader reports to its user. Each description is the message printed.
enum FeedLoaderError: Error, Equatable, CustomStringConvertible {
    /// The feed is not JSON at all: nothing was imported.
    case malformedJSON(source: String, line: Int, column: Int, detail: String)
    /// The feed is JSON but not a list of items.
    case notAFeed(source: String, found: String)
    /// The feed could not be read.
    case unreadable(String, reason: String)
    /// The sample feed is missing from the program's resources.
    case missingSample
    /// An output file could not be written.
    case cannotWrite(String, reason: String)

    var description: String {
        switch self {
        case .malformedJSON(let source, let line, let column, let detail):
            "\(source) is not valid JSON (line \(line), column \(column)): \(detail). Nothing was imported."
        case .notAFeed(let source, let found):
            "\(source) is not a feed: expected a list of items (or an object with an \"items\" list), found \(found). Nothing was imported."
        case .unreadable(let name, let reason):
            "Cannot read \(name): \(reason)"
        case .missingSample:
            "The sample feed is missing from FeedLoader's resources (sample-feed.json)"
        case .cannotWrite(let name, let reason):
            "Cannot write \(name): \(reason)"
        }
    }
}
