import Foundation
import Folio
import Testing
@testable import FeedLoader

/// Sources (model version 4): a version-3 file gains one source per feed name and keeps
/// every item; imports create a source once and reuse it; the list leaves out muted
/// sources' items (and keeps items without a source); sectioned by source, it is ordered by
/// the source's name, then by date.
@Suite("FeedLoader's sources")
struct FeedSourceTests {
    /// A copy of Fixtures/v3-feeds.sqlite3-fixture: a `feeds.sqlite` of model version 3.
    static func copyVersion3() throws -> (directory: URL, path: String) {
        let directory = try App.makeDirectory()
        let path = directory.appendingPathComponent("feeds.sqlite").path
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent("v3-feeds.sqlite3-fixture")
        try FileManager.default.copyItem(at: fixture, to: URL(fileURLWithPath: path))
        return (directory, path)
    }

    static func item(_ n: Int, source: String, site: String = "https://example.com") -> FeedItem {
        FeedItem(
            title: "Story \(n)", url: "\(site)/\(n)", published: FeedImporterTests.base.addingTimeInterval(Double(-n) * 600),
            summary: "", source: source, imageURL: nil)
    }

    static func sources(_ store: Store) throws -> [Source] {
        try store.fetch(RecordRequest<Source>(sortBy: [SortDescriptor(\.feedName)])).compactMap { $0 }
    }

    @Test func aVersion3FileKeepsEveryItemAndEachHasItsSource() throws {
        let (directory, path) = try Self.copyVersion3()
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try FeedMigrationTests.rows(path, FeedMigrationTests.itemColumns + " || '|' || starred || '|' || undated")
        #expect(before.count == 42)

        let store = try Feed.openStore(at: path)
        #expect(store.modelVersion == Feed.model.version)
        let items = try store.fetch(RecordRequest<Feed>(sortBy: [SortDescriptor(\.id)])).map { $0! }
        #expect(items.count == 42)
        let sources = try Self.sources(store)
        // One per distinct name, the empty one too ("", then the others in byte order).
        #expect(sources.map(\.feedName) == Set(items.map(\.sourceName)).sorted())
        #expect(sources.count == 12)
        #expect(sources.allSatisfy { $0.name == $0.feedName && !$0.muted })
        let byID = Dictionary(uniqueKeysWithValues: sources.map { ($0.id!, $0) })
        for item in items {
            let source = try #require(item.source.id.flatMap { byID[$0] }, "\(item.title) has no source")
            #expect(source.feedName == item.sourceName)
        }
        // The site: the origin of the source's first web address, as `Source.site(of:)` says.
        for source in sources {
            let first = items.first { $0.sourceName == source.feedName && $0.link != nil }
            #expect(source.siteURL == first.flatMap { Source.site(of: $0.url) }, "\(source.feedName)")
        }
        #expect(sources.first { $0.feedName == "Example Org" }?.siteURL == nil, "its only item has a guid key")
        #expect(sources.first { $0.feedName == "" }?.siteURL == "https://example.net/")
        try store.close()
        let after = try FeedMigrationTests.rows(path, FeedMigrationTests.itemColumns + " || '|' || starred || '|' || undated")
        #expect(after == before, "every item, as it was")
    }

    @Test func siteIsTheOriginOfAnAddress() {
        #expect(Source.site(of: "https://www.theverge.com/2025/1/x?y=1") == "https://www.theverge.com/")
        #expect(Source.site(of: "http://example.com:8080") == "http://example.com:8080/")
        #expect(Source.site(of: "guid:https://example.org/feed g-1") == nil)
        #expect(Source.site(of: "https:///nohost") == nil)
    }

    @Test func importsCreateASourceOnceAndReuseIt() throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let importer = FeedImporter(store: store)
        let first = [Self.item(0, source: "Alpha"), Self.item(1, source: "Beta", site: "https://beta.example")]
        _ = try importer.storeNow(FeedImporterTests.feed(first), source: "one.json")
        var sources = try Self.sources(store)
        #expect(sources.map(\.feedName) == ["Alpha", "Beta"])
        #expect(sources.map(\.siteURL) == ["https://example.com/", "https://beta.example/"])

        // The reader renames and mutes Alpha; the same feed again, with a new Alpha item.
        try store.write { tx in
            _ = try tx.updateAll(
                Source.self, where: #Predicate { $0.feedName == "Alpha" }, set: [.set(\.name, to: "A"), .set(\.muted, to: true)])
        }
        let report = try importer.storeNow(FeedImporterTests.feed(first + [Self.item(2, source: "Alpha")]), source: "one.json")
        #expect(report.inserted == 1 && report.unchanged == 2)
        sources = try Self.sources(store)
        #expect(sources.count == 2, "one source per feed name, however often imported")
        #expect(sources[0].name == "A" && sources[0].muted, "the reader's name and mute stay")
        let items = try FeedImporterTests.all(store)
        #expect(items.count == 3)
        for item in items {
            #expect(item.source == ToOne(sources.first { $0.feedName == item.sourceName }!))
        }
    }

    @Test func anItemWithoutASourceGetsOneAtItsNextImport() throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        var orphan = Feed(Self.item(0, source: "Alpha"))
        try store.write { tx in try tx.insert(&orphan) }
        let report = try FeedImporter(store: store).storeNow(FeedImporterTests.feed([Self.item(0, source: "Alpha")]), source: "f")
        #expect(report.updated == 1)
        let stored = try #require(try FeedImporterTests.all(store).first)
        let source = try #require(try Self.sources(store).first)
        #expect(stored.source.id != nil && stored.source.id == source.id)
    }

    @Test func generateGivesEveryItemItsSource() async throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let generator = FeedGenerator(seed: 7, newest: FeedImporterTests.base)
        _ = try await GenerateCommand.insert(generator, count: 300, chunk: 100, into: store) { _ in }
        let items = try FeedImporterTests.all(store)
        let sources = try Self.sources(store)
        #expect(sources.count == Set(items.map(\.sourceName)).count)
        #expect(items.allSatisfy { item in sources.contains { ToOne($0) == item.source && $0.feedName == item.sourceName } })
    }

    /// The list's filter: `$0.source.muted != true` keeps the items of sources not muted and
    /// the items without a source (`== false` would leave those out: NULL is not false).
    @Test func theListLeavesOutMutedSourcesButKeepsItemsWithoutASource() throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        _ = try FeedImporter(store: store).storeNow(
            FeedImporterTests.feed([Self.item(0, source: "Alpha"), Self.item(1, source: "Beta"), Self.item(2, source: "Alpha")]),
            source: "f")
        var orphan = Feed(Self.item(3, source: "Nobody"))
        try store.write { tx in try tx.insert(&orphan) }
        func titles(_ request: RecordRequest<Feed>) throws -> [String] { try store.fetch(request).compactMap { $0?.title } }
        let list = RecordRequest<Feed>.feedList(filter: "", newestFirst: true, batchSize: 0)
        #expect(try titles(list) == ["Story 0", "Story 1", "Story 2", "Story 3"])

        try store.write { tx in
            _ = try tx.updateAll(Source.self, where: #Predicate { $0.feedName == "Alpha" }, set: [.set(\.muted, to: true)])
        }
        #expect(try titles(list) == ["Story 1", "Story 3"], "Alpha's items left; the item without a source stays")
        let equalsFalse = RecordRequest<Feed>(predicate: #Predicate { $0.source.muted == false }, sortBy: Feed.newestFirst)
        #expect(try titles(equalsFalse) == ["Story 1"], "why the list says != true")
        // Filtered by text too: still without Alpha.
        #expect(try titles(.feedList(filter: "story", newestFirst: false, batchSize: 0)) == ["Story 3", "Story 1"])
    }

    /// Sectioned by source: the request sorts by the source's name, then by date; the
    /// controller accepts it (the section key is its first sort) and makes one section per
    /// source, A to Z (in byte order), each newest first.
    @MainActor
    @Test func sectionedBySourceTheListIsOrderedByNameThenDate() throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let items = (0..<12).map { Self.item($0, source: ["Gamma", "Alpha", "Beta"][$0 % 3]) }
        _ = try FeedImporter(store: store).storeNow(FeedImporterTests.feed(items), source: "f")
        let request = RecordRequest<Feed>.feedList(filter: "", newestFirst: true, batchSize: 0, grouping: .source)
        #expect(request.sortBy.count == 2)
        let list = FeedListSource(request, store: store, tracking: false, grouping: .source)
        try list.performFetch()
        let sections = list.currentSections()
        #expect(sections.map(\.name) == ["Alpha", "Beta", "Gamma"])
        let records = try store.fetch(request).compactMap { $0 }
        #expect(
            records.map(\.sourceName) == Array(repeating: "Alpha", count: 4) + Array(repeating: "Beta", count: 4)
                + Array(repeating: "Gamma", count: 4))
        for name in ["Alpha", "Beta", "Gamma"] {
            let dates = records.filter { $0.sourceName == name }.map(\.published)
            #expect(dates == dates.sorted(by: >), "\(name): newest first")
        }
        #expect(sections.flatMap(\.identifiers) == records.compactMap(\.id))

        // Renamed, a source's items move to its new name's section (read again here; a live
        // list follows once controllers follow related rows).
        try store.write { tx in
            _ = try tx.updateAll(Source.self, where: #Predicate { $0.feedName == "Alpha" }, set: [.set(\.name, to: "Zulu")])
        }
        try list.setGrouping(.source, request: request)
        #expect(list.currentSections().map(\.name) == ["Beta", "Gamma", "Zulu"])
        // And by day again.
        try list.setGrouping(.day, request: .feedList(filter: "", newestFirst: true, batchSize: 0))
        #expect(list.currentSections().allSatisfy { $0.name.hasPrefix("2025-") })
    }
}
