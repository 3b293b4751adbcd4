import ArgumentParser
import Foundation
import Folio

/// `feedloader`: the reference app of "Why You Should Use NSFetchedResultsController?" as a terminal program.
@main
struct FeedLoaderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedloader",
        abstract: "Import a news feed into SQLite and browse it, live, with Folio's fetched results controller.",
        discussion: """
            With no subcommand, opens (or creates) feeds.sqlite in the current directory, imports \
            the sample feed into a new database, and shows the list full screen. When standard \
            output is not a terminal, prints a plain report instead.
            """,
        subcommands: [BrowseCommand.self, ImportCommand.self, GenerateCommand.self, ExportCommand.self],
        defaultSubcommand: BrowseCommand.self)
}

/// The options every subcommand shares.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("db"), help: ArgumentHelp("The database file, created if missing.", valueName: "path"))
    var databasePath = "feeds.sqlite"

    /// Opens the store; `isNew` tells whether the file was created now.
    func open() throws -> (store: Store, isNew: Bool) {
        let isNew = !FileManager.default.fileExists(atPath: databasePath)
        let store = try Feed.openStore(at: databasePath)
        return (store, isNew)
    }
}

/// Writes a line to standard error.
func printError(_ text: String) {
    Terminal.write(text + "\n", to: STDERR_FILENO)
}
