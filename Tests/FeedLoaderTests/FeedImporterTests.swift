import Foundation
import Folio
import Testing
@testable import FeedLoader

@Suite("Importing feeds")
struct FeedImporterTests {
    static let base = Date(timeIntervalSince1970: 1_749_808_800)

    static func item(_ n: Int, title: String? = nil) -> FeedItem {
        FeedItem(
            title: title ?? "Story \(n)", url: "https://example.com/\(n)", published: base.addingTimeInterval(Double(-n) * 600),
            summary: "Summary \(n)", source: "Example", imageURL: nil)
    }

    static func feed(_ items: [FeedItem]) -> ParsedFeed {
        ParsedFeed(items: items.enumerated().map { ($0.offset, $0.element) }, problems: [], total: items.count)
    }

    static func all(_ store: Store) throws -> [Feed] {
        try store.fetch(RecordRequest<Feed>(sortBy: Feed.newestFirst)).compactMap { $0 }
    }

    @Test func reimportingTheSameFeedChangesNothing() async throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let importer = FeedImporter(store: store)
        let first = try await importer.importFeed(from: FileFeedFetcher.sample)
        #expect(first.inserted == first.total)
        #expect(first.updated == 0 && first.unchanged == 0)
        let before = try Self.all(store)
        let second = try await importer.importFeed(from: FileFeedFetcher.sample)
        #expect(second.inserted == 0 && second.updated == 0)
        #expect(second.unchanged == first.total)
        #expect(try Self.all(store) == before, "same rows, same identifiers")
    }

    @Test func changedItemsAreUpdatedInPlaceAndNewOnesAdded() throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let importer = FeedImporter(store: store)
        _ = try importer.storeNow(Self.feed((0..<5).map { Self.item($0) }), source: "one.json")
        let before = Dictionary(uniqueKeysWithValues: try Self.all(store).map { ($0.url, $0.id!) })

        var next = (0..<5).map { Self.item($0) }
        next[2].title = "Story 2, corrected"
        next[4].summary = "A longer summary"
        next.append(Self.item(5))
        let report = try importer.storeNow(Self.feed(next), source: "two.json")
        #expect(report.inserted == 1)
        #expect(report.updated == 2)
        #expect(report.unchanged == 3)
        let after = try Self.all(store)
        #expect(after.count == 6)
        for feed in after where feed.url != Self.item(5).url {
            #expect(before[feed.url] == feed.id, "an updated item keeps its identifier")
        }
        #expect(after.first { $0.url == Self.item(2).url }?.title == "Story 2, corrected")
    }

    @Test func anItemRepeatedInOneFeedIsStoredOnceWithItsLastContent() throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let report = try FeedImporter(store: store).storeNow(
            Self.feed([Self.item(1), Self.item(2), Self.item(1, title: "Story 1, revised")]), source: "repeat.json")
        #expect(report.inserted == 2)
        #expect(report.repeated == 1)
        #expect(try store.count(RecordRequest<Feed>()) == 2)
        #expect(try Self.all(store).map(\.title).sorted() == ["Story 1, revised", "Story 2"])
    }

    @Test func malformedItemsAreSkippedAndTheValidOnesImported() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("feedloader-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("mixed.json")
        try Data(
            """
            [{"title": "Kept", "url": "https://example.com/kept", "published": "2025-06-13T10:00:00Z"},
             {"title": "Dropped", "url": "https://example.com/dropped", "published": "soon"},
             {"title": "Kept too", "url": "https://example.com/kept-too", "published": "2025-06-13T11:00:00Z"}]
            """.utf8
        ).write(to: file)
        let store = try Store.temporary(records: Feed.recordTypes)
        let report = try await FeedImporter(store: store).importFeed(from: FileFeedFetcher(url: file))
        #expect(report.inserted == 2)
        #expect(report.problems.count == 1)
        #expect(report.problems.first?.index == 1)
        #expect(report.problems.first?.url == "https://example.com/dropped")
        #expect(report.description == "mixed.json: 3 items, 2 new, 0 updated, 0 unchanged, 1 skipped")
        #expect(try Self.all(store).map(\.title) == ["Kept too", "Kept"])
    }

    @Test func malformedJSONStoresNothing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("feedloader-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("broken.json")
        try Data(#"[{"title": "A", "url": "https://example.com/a", "published": "2025-06-13"}, {"#.utf8).write(to: file)
        let store = try Store.temporary(records: Feed.recordTypes)
        await #expect(throws: FeedLoaderError.self) {
            try await FeedImporter(store: store).importFeed(from: FileFeedFetcher(url: file))
        }
        #expect(try store.count(RecordRequest<Feed>()) == 0)
    }

    @Test func aMissingFileIsNamed() async throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let error = await #expect(throws: FeedLoaderError.self) {
            try await FeedImporter(store: store).importFeed(from: FileFeedFetcher(path: "/nonexistent/feed.json"))
        }
        #expect(error?.description.hasPrefix("Cannot read /nonexistent/feed.json") == true)
    }

    @Test func anImportIsOneTransaction() throws {
        struct Abort: Error {}
        let store = try Store.temporary(records: Feed.recordTypes)
        let recorder = Recorder()
        store.diagnostics.logSQL { recorder.append($0) }
        _ = try FeedImporter(store: store).storeNow(Self.feed((0..<1_200).map { Self.item($0) }), source: "big.json")
        #expect(recorder.lines.filter { $0.hasPrefix("BEGIN") }.count == 1)
        #expect(recorder.lines.filter { $0.hasPrefix("COMMIT") }.count == 1)
        // A failure part way leaves nothing behind.
        #expect(throws: Abort.self) {
            try store.write { tx in
                _ = try FeedImporter.store(Self.feed((2_000..<2_100).map { Self.item($0) }), source: "x", in: tx)
                throw Abort()
            }
        }
        #expect(try store.count(RecordRequest<Feed>()) == 1_200)
    }

    @Test func liveNewsPagesInsertAndThenUpdate() async throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let importer = FeedImporter(store: store)
        let first = try await importer.importFeed(from: LiveNewsFetcher(page: 0, run: 9, start: Self.base))
        #expect(first.inserted == 4 && first.updated == 0)
        let second = try await importer.importFeed(from: LiveNewsFetcher(page: 1, run: 9, start: Self.base))
        #expect(second.inserted == 4 && second.updated == 1)
        let all = try Self.all(store)
        #expect(all.count == 8)
        #expect(all.map(\.published) == (0..<8).reversed().map { Self.base.addingTimeInterval(Double($0)) })
        #expect(all.last?.title.hasPrefix("Updated: ") == true, "revised in place: same url, same date")
    }
}

final class Recorder: @unchecked Sendable {
    // @unchecked Sendable: `storage` is only touched with `lock` held.
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ line: String) { lock.withLock { storage.append(line) } }
    var lines: [String] { lock.withLock { storage } }
}
