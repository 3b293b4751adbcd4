import ArgumentParser
import Foundation
import Folio

/// `feedloader import FILE`: imports a feed file, de-duplicating by url.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a JSON feed: new urls are added, changed items updated, in one transaction.",
        discussion: """
            Malformed items are skipped and listed (by position, title and url); the valid ones \
            are still imported. A file that is not JSON imports nothing.
            """)

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("The feed file (a JSON list of items), or 'sample' for the bundled sample.", valueName: "file"))
    var file: String

    @MainActor
    mutating func run() async throws {
        let (store, _) = try options.open()
        let fetcher = file == "sample" ? try FileFeedFetcher.sample : FileFeedFetcher(path: file)
        let report = try await FeedImporter(store: store).importFeed(from: fetcher)
        print(report)
        printProblems(report)
    }
}

/// Lists an import's skipped items on standard error.
func printProblems(_ report: ImportReport, limit: Int = 20) {
    guard !report.problems.isEmpty else { return }
    printError("Skipped \(report.problems.count) malformed item\(report.problems.count == 1 ? "" : "s"):")
    for problem in report.problems.prefix(limit) { printError("  \(problem)") }
    if report.problems.count > limit { printError("  … and \(report.problems.count - limit) more") }
}
