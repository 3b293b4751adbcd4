import ArgumentParser
import Foundation
import Folio
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `feedloader export --to FILE`: writes every item as a JSON feed, from a background
/// fetch, with a progress bar; Ctrl-C cancels and leaves no file.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the feed as JSON with a background fetch; Ctrl-C cancels and leaves no partial file.",
        discussion: "The file is written beside the destination under a temporary name and renamed when complete.")

    @OptionGroup var options: StoreOptions

    @Option(name: .customLong("to"), help: ArgumentHelp("The JSON file to write.", valueName: "file"))
    var destination: String

    @Option(help: "Only items whose title or source has these words (or words they begin; case and accents ignored).")
    var filter = ""

    @Flag(help: "Oldest first (newest first by default).")
    var oldestFirst = false

    @MainActor
    mutating func run() async throws {
        let (store, _) = try options.open()
        var request = RecordRequest<Feed>.feedList(filter: filter, newestFirst: !oldestFirst, batchSize: 1_000)
        request.predicate = nil  // the items of muted sources too: an export is the whole feed
        let exporter = FeedExporter(store: store, request: request, destination: URL(fileURLWithPath: destination))
        let fetching = ProgressBar("Fetching ", total: 0)
        let writing = ProgressBar("Exporting", total: 0)
        let task = Task { @MainActor in
            try await exporter.run { phase, completed, total in
                switch phase {
                case .fetching:
                    fetching.setTotal(total)
                    fetching.update(completed)
                case .writing:
                    fetching.finish(total)
                    writing.setTotal(total)
                    writing.update(completed)
                }
            }
        }
        // Ctrl-C cancels the export: the fetch is interrupted and the temporary file removed.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .main)
        interrupt.setEventHandler { task.cancel() }
        interrupt.resume()
        defer {
            interrupt.cancel()
            signal(SIGINT, SIG_DFL)
        }
        do {
            let count = try await task.value
            writing.finish(count)
            print("Exported \(count.formatted()) items to \(destination)")
        } catch is CancellationError {
            fetching.abandon("")
            writing.abandon("Export cancelled; \(destination) was not written.")
            throw ExitCode(130)
        }
    }
}
