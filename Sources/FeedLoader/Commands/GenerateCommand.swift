import ArgumentParser
import Foundation
import Folio

/// `feedloader generate N`: adds N synthetic items, for large-list use.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Add N realistic synthetic items, with a progress bar (a million: under a minute in a release build).",
        discussion: """
            Items are dated from now backwards, one every --spacing seconds on average (a \
            million at the default spacing covers about five years). With --json, writes a \
            feed file instead of touching the database.
            """)

    @OptionGroup var options: StoreOptions

    @Argument(help: "How many items.")
    var count: Int

    @Option(help: "Seed of the generator: the same seed makes the same items.")
    var seed: UInt64?

    @Option(help: "Average seconds between items.")
    var spacing: Double = 150

    @Option(help: ArgumentHelp("The date of the newest item (ISO 8601); now by default.", valueName: "date"))
    var newest: String?

    @Option(help: ArgumentHelp("Write the items to this JSON feed file instead of the database.", valueName: "file"))
    var json: String?

    @Option(
        help: ArgumentHelp(
            "Items per transaction: a list open on the database animates each one in (see the README).", valueName: "n"))
    var chunk = GenerateCommand.defaultChunk

    func validate() throws {
        guard count >= 0 else { throw ValidationError("The count must not be negative.") }
        guard spacing >= 0 else { throw ValidationError("--spacing must not be negative.") }
        guard chunk > 0 else { throw ValidationError("--chunk must be positive.") }
        if let newest, FeedParser.parseDate(newest) == nil {
            throw ValidationError("--newest is not an ISO 8601 date: \(newest)")
        }
    }

    /// Items per transaction (see ``insert(_:count:chunk:into:progress:)``).
    static let defaultChunk = 2_000

    @MainActor
    mutating func run() async throws {
        let generator = FeedGenerator(
            seed: seed ?? UInt64.random(in: 1...UInt64.max >> 1),
            newest: newest.flatMap(FeedParser.parseDate) ?? Date(), spacing: spacing,
            runToken: seed.map { String($0, radix: 36) + "-" })
        if let json {
            let data = try FeedParser.encode(generator.items(0..<count))
            do {
                try data.write(to: URL(fileURLWithPath: json), options: .atomic)
            } catch {
                throw FeedLoaderError.cannotWrite(json, reason: error.localizedDescription)
            }
            print("Wrote \(count.formatted()) items to \(json)")
            return
        }
        let (store, _) = try options.open()
        let bar = ProgressBar("Generating", total: count)
        let inserted = try await Self.insert(generator, count: count, chunk: chunk, into: store) { done in
            bar.update(done)
        }
        bar.finish(inserted)
        print("Added \(inserted.formatted()) items to \(options.databasePath)")
    }

    /// Inserts `count` generated items in transactions of `chunk` items, reporting
    /// progress after each; the next chunk is made while the current one is written.
    ///
    /// A list open on the file in another process (or another store) receives each
    /// transaction as a change set of inserts, which it animates. The chunk is kept well
    /// under the change log's rows always kept (10,000; see Folio's "Stores and Files"):
    /// a list that only reads follows the log row by row as long as it is less than that
    /// many rows behind when the next transaction trims the log, so it may fall five
    /// transactions behind under load and still animate; and transactions it follows
    /// together stay one change set under the 50,000 rows past which a list reloads.
    /// Whether the generated item at `index` (0 the newest) is read: two in three are, as
    /// a reader leaves some unread (`u` shows the third that is not).
    static func isRead(index: Int) -> Bool { index % 3 != 0 }

    static func insert(
        _ generator: FeedGenerator, count: Int, chunk: Int = defaultChunk, into store: Store,
        progress: @MainActor (Int) -> Void
    ) async throws -> Int {
        var done = 0
        var next: Task<[FeedItem], Never>? =
            count > 0
            ? Task.detached { generator.items(0..<min(chunk, count)) } : nil
        while let pending = next {
            let items = await pending.value
            let start = done + items.count
            next = start < count ? Task.detached { generator.items(start..<min(start + chunk, count)) } : nil
            try await store.write { [done] tx in
                let sources = try FeedImporter.sources(for: items, in: tx)
                for (offset, item) in items.enumerated() {
                    var record = Feed(item, source: sources[item.source] ?? ToOne())
                    record.isRead = Self.isRead(index: done + offset)
                    try tx.insert(&record)
                }
            }
            done += items.count
            await progress(done)
        }
        return done
    }
}
