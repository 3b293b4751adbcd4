import ArgumentParser
import Foundation
import Folio

/// `feedloader import FILE|URL`: imports a feed file or fetches a feed over HTTP(S),
/// de-duplicating by url.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Import a feed from a file or an http(s) address: new urls are added, changed items updated, in one transaction.",
        discussion: """
            Reads JSON Feed 1.1, RSS 2.0, Atom, and FeedLoader's own JSON list, told apart by \
            content type and content; RSS and Atom in any encoding of the WHATWG Encoding Standard, \
            by any of its labels (a byte order mark, else the server's charset, else the XML \
            declaration decides). A feed without items imports as 0 items. An address is \
            fetched with a conditional GET: the ETag and Last-Modified of the last import of that \
            address are sent back, and an unchanged feed ("304 Not Modified") writes nothing. Malformed items are skipped and listed (by \
            position, title and url); the valid ones are still imported. A feed that cannot be \
            fetched or read imports nothing.
            """)

    @OptionGroup var options: StoreOptions

    @Argument(
        help: ArgumentHelp(
            "A feed file, an http(s) address, or 'sample' for the bundled sample.", valueName: "file-or-url"))
    var file: String

    @OptionGroup var http: HTTPOptions

    @MainActor
    mutating func run() async throws {
        let fetcher = try http.fetcher(for: file)
        let (store, _) = try options.open()
        let report = try await FeedImporter(store: store).importFeed(from: fetcher, conditional: !http.force)
        print(report)
        printProblems(report)
    }
}

/// The options of a fetch over HTTP.
struct HTTPOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Seconds a fetch over HTTP may take in all.", valueName: "seconds"))
    var timeout: Double = ServerFeedFetcher.defaultTimeout

    @Flag(help: "Fetch the feed whole even if it has not changed since the last import (no conditional GET).")
    var force = false

    func validate() throws {
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds.") }
    }

    /// The fetcher for a command-line argument: `sample`, an http(s) address, or a file path.
    /// - Throws: ``FeedLoaderError/unsupportedAddress(_:)`` for an address of another scheme.
    func fetcher(for argument: String) throws -> any FeedFetcher {
        if argument == "sample" { return try FileFeedFetcher.sample }
        if let url = ServerFeedFetcher.address(argument) { return ServerFeedFetcher(url: url, timeout: timeout) }
        if ServerFeedFetcher.looksLikeAddress(argument) {
            if argument.lowercased().hasPrefix("file://"), let url = URL(string: argument), url.isFileURL {
                return FileFeedFetcher(url: url)
            }
            throw FeedLoaderError.unsupportedAddress(argument)
        }
        return FileFeedFetcher(path: argument)
    }
}

/// Lists an import's skipped items on standard error.
func printProblems(_ report: ImportReport, limit: Int = 20) {
    guard !report.problems.isEmpty else { return }
    printError("Skipped \(report.problems.count) malformed item\(report.problems.count == 1 ? "" : "s"):")
    for problem in report.problems.prefix(limit) { printError("  \(problem)") }
    if report.problems.count > limit { printError("  … and \(report.problems.count - limit) more") }
}
