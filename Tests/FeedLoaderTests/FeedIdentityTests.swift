import Folio
import Foundation
import Testing
@testable import FeedLoader

/// What identifies an item from one import to the next: its web address when it has one;
/// else its guid (RSS) or id (Atom, JSON Feed), within its feed; an item with neither is
/// skipped and reported. An item without a date takes the time of its first import, and
/// says so.
@Suite("Items without a link or a date")
struct FeedIdentityTests {
    static func parse(_ text: String, contentType: String? = nil, url: URL? = nil) throws -> ParsedFeed {
        try FeedParser.parse(FeedDocument(data: Data(text.utf8), contentType: contentType, url: url), source: "x")
    }

    static func rss(channelLink: String = "https://blog.example.com/", items: String) -> String {
        """
        <?xml version="1.0"?>
        <rss version="2.0"><channel><title>Guid Blog</title><link>\(channelLink)</link>
        \(items)
        </channel></rss>
        """
    }

    static let guidOnlyItems = """
        <item><title>Guid only</title><guid isPermaLink="false">post-1</guid>
          <pubDate>Fri, 13 Jun 2025 10:00:00 GMT</pubDate></item>
        <item><title>Tag guid</title><guid>tag:blog.example.com,2025:2</guid>
          <pubDate>Fri, 13 Jun 2025 11:00:00 GMT</pubDate></item>
        <item><title>Permalink guid</title><guid>https://blog.example.com/3</guid>
          <pubDate>Fri, 13 Jun 2025 12:00:00 GMT</pubDate></item>
        <item><title>Neither</title><description>Nothing identifies me</description>
          <pubDate>Fri, 13 Jun 2025 12:00:00 GMT</pubDate></item>
        <item><title>No date</title><link>https://blog.example.com/5</link></item>
        """

    @Test func anRSSItemWithOnlyAGuidIsIdentifiedByItWithinItsFeed() throws {
        let parsed = try Self.parse(Self.rss(items: Self.guidOnlyItems))
        #expect(parsed.total == 5)
        let items = parsed.items.map(\.item)
        #expect(items.map(\.title) == ["Guid only", "Tag guid", "Permalink guid", "No date"])
        #expect(items[0].url == "guid:https://blog.example.com/ post-1" && items[0].guid == "post-1")
        #expect(items[1].url == "guid:https://blog.example.com/ tag:blog.example.com,2025:2")
        // A guid that is a web address (and not said not to be) is the item's address.
        #expect(items[2].url == "https://blog.example.com/3" && items[2].guid == nil)
        #expect(items[0].source == "Guid Blog")
        #expect(
            parsed.problems.map(\.description) == [
                #"item 4 ("Neither"): <link> and <guid> are missing: nothing identifies the item from one import to the next"#
            ])
    }

    @Test func anItemWithoutADateHasTheTimeOfImportAndSaysSo() throws {
        let before = Date()
        let parsed = try Self.parse(Self.rss(items: Self.guidOnlyItems))
        let undated = try #require(parsed.items.last?.item)
        #expect(undated.undated && !parsed.items[0].item.undated)
        #expect(undated.published >= before.addingTimeInterval(-1) && undated.published <= Date())
        #expect(undated.published.timeIntervalSince1970 == undated.published.timeIntervalSince1970.rounded())
        var feed = Feed(undated)
        #expect(feed.shownPublished.hasPrefix("not given (imported "))
        feed.undated = false
        #expect(!feed.shownPublished.contains("not given"))
    }

    @Test func theDetailViewSaysWhichGuidIdentifiesAnItemWithoutALink() throws {
        let parsed = try Self.parse(Self.rss(items: Self.guidOnlyItems))
        let feed = Feed(parsed.items[0].item)
        #expect(feed.link == nil)
        #expect(feed.shownAddress == "none (identified by its guid post-1)")
        #expect(Feed(parsed.items[2].item).shownAddress == "https://blog.example.com/3")
    }

    @Test func reimportingGuidItemsAndUndatedItemsChangesNothing() throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let importer = FeedImporter(store: store)
        let first = try importer.storeNow(try Self.parse(Self.rss(items: Self.guidOnlyItems)), source: "x")
        #expect(first.inserted == 4 && first.problems.count == 1)
        #expect(first.description == "x: 5 items, 4 new, 0 updated, 0 unchanged, 1 skipped")
        let stored = try store.fetch(RecordRequest<Feed>(sortBy: [SortDescriptor(\.id)])).compactMap { $0 }
        Thread.sleep(forTimeInterval: 0.01)
        let second = try importer.storeNow(try Self.parse(Self.rss(items: Self.guidOnlyItems)), source: "x")
        #expect(second.inserted == 0 && second.updated == 0 && second.unchanged == 4)
        let again = try store.fetch(RecordRequest<Feed>(sortBy: [SortDescriptor(\.id)])).compactMap { $0 }
        #expect(again == stored, "the undated item keeps the time of its first import")

        // A changed title updates the item its guid names, in place.
        let edited = Self.guidOnlyItems.replacingOccurrences(of: "Guid only", with: "Guid only, edited")
        let third = try importer.storeNow(try Self.parse(Self.rss(items: edited)), source: "x")
        #expect(third.updated == 1 && third.inserted == 0)
        #expect(try store.count(RecordRequest<Feed>()) == 4)

        // The date given later replaces the time of import.
        let dated = edited.replacingOccurrences(
            of: "<link>https://blog.example.com/5</link>",
            with: "<link>https://blog.example.com/5</link><pubDate>Sat, 14 Jun 2025 10:00:00 GMT</pubDate>")
        #expect(try importer.storeNow(try Self.parse(Self.rss(items: dated)), source: "x").updated == 1)
        let five = "https://blog.example.com/5"
        let item = try #require(try store.fetch(RecordRequest<Feed>(predicate: #Predicate { $0.url == five })).first ?? nil)
        #expect(!item.undated && item.published == Date(timeIntervalSince1970: 1_749_895_200))
    }

    @Test func theSameGuidInTwoFeedsIsTwoItems() throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let importer = FeedImporter(store: store)
        let item = #"<item><title>One</title><guid isPermaLink="false">1</guid></item>"#
        _ = try importer.storeNow(try Self.parse(Self.rss(channelLink: "https://a.example.com/", items: item)), source: "a")
        _ = try importer.storeNow(try Self.parse(Self.rss(channelLink: "https://b.example.com/", items: item)), source: "b")
        let urls = try store.fetch(RecordRequest<Feed>(sortBy: [SortDescriptor(\.id)])).compactMap { $0?.url }
        #expect(urls == ["guid:https://a.example.com/ 1", "guid:https://b.example.com/ 1"])
    }

    @Test func aFeedWithoutALinkOrTitleIsNamedByItsAddressOrSource() throws {
        let rss = #"<rss version="2.0"><channel><item><title>T</title><guid isPermaLink="false">g</guid></item></channel></rss>"#
        #expect(try Self.parse(rss).items.first?.item.url == "guid:x g")
        #expect(try Self.parse(rss).items.first?.item.source == "x")
        let fetched = try Self.parse(rss, url: URL(string: "https://feeds.example.com/a%20feed.xml"))
        #expect(fetched.items.first?.item.url == "guid:https://feeds.example.com/a%2520feed.xml g")
        #expect(fetched.items.first?.item.source == "feeds.example.com", "the feed's host, as for an item with a link")
        #expect(FeedItem.guidKey(feed: "My blog", guid: "1 2") == "guid:My%20blog 1 2")
    }

    @Test func anAtomEntryWithOnlyAnIdIsIdentifiedByIt() throws {
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>Atom</title><id>urn:uuid:feed</id>
            <entry><title>Id only</title><id>urn:uuid:1</id><updated>2025-06-13T10:00:00Z</updated></entry>
            <entry><title>Id is the web</title><id>https://atom.example.com/2</id></entry>
            <entry><title>Nothing</title><summary>no id</summary></entry>
            </feed>
            """
        let parsed = try Self.parse(atom)
        let items = parsed.items.map(\.item)
        #expect(items.map(\.url) == ["guid:urn:uuid:feed urn:uuid:1", "https://atom.example.com/2"])
        #expect(items.map(\.guid) == ["urn:uuid:1", nil])
        #expect(items.map(\.undated) == [false, true])
        #expect(
            parsed.problems.map(\.description) == [
                #"item 3 ("Nothing"): <link rel="alternate"> and <id> are missing: nothing identifies the entry from one import to the next"#
            ])
    }

    @Test func aJSONFeedItemWithOnlyAnIdIsIdentifiedByIt() throws {
        let json = """
            {"version": "https://jsonfeed.org/version/1.1", "title": "J", "feed_url": "https://j.example.com/feed.json",
             "items": [
               {"id": "a1", "title": "Id only", "date_published": "2025-06-13T10:00:00Z"},
               {"id": 42, "content_text": "A number id, no date"},
               {"title": "No id at all"},
               {"id": "x", "url": "https://j.example.com/x", "title": "With url"}
             ]}
            """
        let parsed = try Self.parse(json)
        let items = parsed.items.map(\.item)
        #expect(
            items.map(\.url) == [
                "guid:https://j.example.com/feed.json a1", "guid:https://j.example.com/feed.json 42", "https://j.example.com/x",
            ])
        #expect(items.map(\.undated) == [false, true, true])
        #expect(items[1].title == "A number id, no date")
        #expect(
            parsed.problems.map(\.description) == [
                #"item 3 ("No id at all"): "url" and "id" are missing: nothing identifies the item from one import to the next"#
            ])
    }

    @Test func anExportOfGuidItemsImportsAsTheSameItems() throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let importer = FeedImporter(store: store)
        _ = try importer.storeNow(try Self.parse(Self.rss(items: Self.guidOnlyItems)), source: "x")
        let items = try store.fetch(RecordRequest<Feed>(sortBy: [SortDescriptor(\.id)])).compactMap { $0?.item }
        let exported = try FeedParser.encode(items)
        let text = String(decoding: exported, as: UTF8.self)
        #expect(text.contains(#""guid" : "post-1""#) && text.contains(#""undated" : true"#))
        let reread = try FeedParser.parse(FeedDocument(data: exported, contentType: "application/json"), source: "export")
        #expect(reread.problems.isEmpty)
        #expect(reread.items.map(\.item) == items)
        let report = try importer.storeNow(reread, source: "export")
        #expect(report.unchanged == 4 && report.inserted == 0)
    }
}
