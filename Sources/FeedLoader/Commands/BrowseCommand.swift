import ArgumentParser
import Foundation
import Folio

/// `feedloader` (or `feedloader browse`): the list, full screen; a plain report when
/// standard output is not a terminal.
struct BrowseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browse",
        abstract: "Show the feed, newest first, sectioned by day (the default command).",
        discussion: """
            Keys: ↑/↓ or j/k move, PgUp/PgDn page, g/G top/bottom, / filter, a digit jumps to \
            a day (type a date prefix, Enter), s toggles the sort, t sections by day or by source, \
            Enter opens an item, * stars or unstars it, m mutes its source (its items leave the list), \
            M unmutes every source, n renames its source, d deletes it, r imports in the background (new items appear live), q quits. r imports the \
            --url feed (a conditional GET each time: an unchanged feed writes nothing), else the \
            --refresh-from file, else pages of simulated live news.
            """)

    @OptionGroup var options: StoreOptions

    @Flag(name: .customLong("sample"), inversion: .prefixedNo, help: "Import the bundled sample feed into a new database.")
    var importSample = true

    @Option(name: .customLong("generate"), help: ArgumentHelp("First add N synthetic items (see `generate`).", valueName: "N"))
    var generateCount: Int?

    @Option(
        name: .customLong("refresh-from"),
        help: ArgumentHelp("The feed file `r` imports; simulated live news by default.", valueName: "file"))
    var refreshFile: String?

    @Option(
        name: .customLong("url"),
        help: ArgumentHelp(
            "The feed address `r` fetches and imports (JSON Feed, RSS or Atom over http or https).", valueName: "url"))
    var refreshURL: String?

    @OptionGroup var http: HTTPOptions

    @Flag(help: "Print the plain report even on a terminal.")
    var plain = false

    @Option(help: "How many items the plain report lists.")
    var limit = 20

    func validate() throws {
        if let generateCount, generateCount < 0 { throw ValidationError("--generate must not be negative.") }
        guard limit >= 0 else { throw ValidationError("--limit must not be negative.") }
        if refreshURL != nil, refreshFile != nil { throw ValidationError("Give --url or --refresh-from, not both.") }
        if let refreshURL, ServerFeedFetcher.address(refreshURL) == nil {
            throw ValidationError("--url must be an http or https address with a host: \(refreshURL)")
        }
    }

    /// What `r` imports.
    var refreshSource: Browser.RefreshSource {
        if let refreshURL, let url = ServerFeedFetcher.address(refreshURL) {
            return .server(ServerFeedFetcher(url: url, timeout: http.timeout), conditional: !http.force)
        }
        if let refreshFile { return .file(refreshFile) }
        return .liveNews
    }

    @MainActor
    mutating func run() async throws {
        let (store, isNew) = try options.open()
        var imported: ImportReport?
        if isNew && importSample {
            imported = try await FeedImporter(store: store).importFeed(from: try FileFeedFetcher.sample)
            if let imported { printProblems(imported) }
        }
        if let generateCount, generateCount > 0 {
            let bar = ProgressBar("Generating", total: generateCount)
            let done = try await GenerateCommand.insert(
                FeedGenerator(seed: UInt64.random(in: 1...UInt64.max >> 1), newest: Date()), count: generateCount,
                into: store
            ) { bar.update($0) }
            bar.finish(done)
        }
        let interactive = Terminal.isInteractive && !plain
        let size = Terminal.size() ?? Terminal.Size(rows: 24, columns: 80)
        let request = RecordRequest<Feed>.feedList(filter: "", newestFirst: true, batchSize: Browser.batchSize(for: size))
        if interactive {
            let source = FeedListSource(request, store: store, tracking: true, cacheName: "feedloader-list")
            let browser = Browser(
                store: store, source: source, terminal: Terminal(), title: options.databasePath, refresh: refreshSource)
            try await browser.run()
        } else {
            let source = FeedListSource(request, store: store, tracking: false)
            var report = PlainReport(store: store, source: source, title: options.databasePath, limit: limit)
            report.imported = imported
            print(try report.text(), terminator: "")
        }
    }
}
