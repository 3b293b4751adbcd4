import Folio
import Foundation
import Testing
@testable import FeedLoader

/// Dates, text, content types and documents, without a server.
@Suite("Reading RSS, Atom and JSON Feed")
struct FeedFormatTests {
    static let ten = Fixtures.tenUTC.timeIntervalSince1970

    // MARK: Dates

    @Test(arguments: [
        ("Fri, 13 Jun 2025 10:00:00 GMT", ten),
        ("Fri, 13 Jun 2025 10:00:00 +0000", ten),
        ("fri, 13 jun 2025 10:00:00 gmt", ten),
        ("Friday, 13 June 2025 10:00:00 UT", ten),
        ("13 Jun 2025 10:00:00 Z", ten),
        ("13 Jun 2025 10:00 UTC", ten),
        ("Fri, 13 Jun 2025 12:30:00 +0230", ten),
        ("Fri, 13 Jun 2025 12:30:00 +02:30", ten),
        ("Fri, 13 Jun 2025 06:00:00 EDT", ten),
        ("Fri, 13 Jun 2025 05:00:00 EST", ten),
        ("Fri, 13 Jun 2025 03:00:00 PDT", ten),
        ("Fri, 13 Jun 2025 02:00:00 PST", ten),
        ("Fri, 13 Jun 2025 10:00:00", ten),
        ("Fri, 13 Jun 2025 10:00:00 A", ten),
        ("Fri, 13 Jun 2025 10:00:00 GMT (Coordinated Universal Time)", ten),
        ("  Fri,13 Jun 2025 10:00:00 GMT \n", ten),
        ("13-Jun-2025 10:00:00 GMT", ten),
        ("Fri, 13 Jun 25 10:00:00 GMT", ten),
        ("Sun, 13 Jun 99 10:00:00 GMT", 929_268_000),
        ("Thu, 29 Feb 2024 00:00:00 GMT", 1_709_164_800),
        ("Tue, 29 Feb 2000 00:00:00 GMT", 951_782_400),
        ("Thu, 01 Jan 1970 00:00:00 +0100", -3_600),
        ("Sat, 31 Dec 2016 23:59:60 GMT", 1_483_228_800),
        ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
        ("Mon, 9 Sep 2024 9:05:00 GMT", 1_725_872_700),
        ("9 Sept 2024 09:05:00 GMT", 1_725_872_700),
    ])
    func rfc822Dates(text: String, expected: TimeInterval) {
        #expect(FeedDate.rfc822(text) == Date(timeIntervalSince1970: expected), "\(text)")
    }

    @Test(arguments: [
        "", "Friday the 13th", "2025-06-13", "Fri, 13 Jun 2025", "Fri, 30 Feb 2025 10:00:00 GMT",
        "Fri, 31 Apr 2025 10:00:00 GMT", "Fri, 29 Feb 2025 10:00:00 GMT", "Fri, 29 Feb 2100 10:00:00 GMT",
        "Fri, 13 Jun 2025 24:00:00 GMT", "Fri, 13 Jun 2025 10:60:00 GMT", "Fri, 13 Jun 2025 10:00:61 GMT",
        "Fri, 13 Jux 2025 10:00:00 GMT", "Fri, 13 Janx 2025 10:00:00 GMT", "Fri, 0 Jun 2025 10:00:00 GMT",
        "Fri, 13 Jun 2025 10:00:00 XYZ", "Fri, 13 Jun 2025 10:00:00 +2400", "Fri, 13 Jun 2025 10:00:00 +0060",
        "Fri, 13 Jun 2025 10:00:00 GMT garbage", "Fri, 13 Jun 12025 10:00:00 GMT", "Fri, 13 Jun 2025 10:0:00 GMT",
        "Fri, 13 Jun 2025 10:00:00 J", "Fri, 13 Jun 0000 10:00:00 GMT", "Fri, 013 Jun 2025 10:00:00 GMT",
        "Fri, 13 Jun 2025 10:00:00 +123", "Fri, 1\u{0663} Jun 2025 10:00:00 GMT",
    ])
    func notRFC822Dates(text: String) {
        #expect(FeedDate.rfc822(text) == nil, "\(text)")
    }

    @Test(arguments: [
        ("2025-06-13T10:00:00Z", ten),
        ("2025-06-13t10:00:00z", ten),
        ("2025-06-13 10:00:00Z", ten),
        ("2025-06-13T12:00:00+02:00", ten),
        ("2025-06-13T12:00:00+0200", ten),
        ("2025-06-13T10:00:00-00:00", ten),
        ("2025-06-13T04:30:00-05:30", ten),
        ("2025-06-13T10:00:00.5Z", ten + 0.5),
        ("2025-06-13T12:00:00.250+02:00", ten + 0.25),
        ("2025-06-13T10:00:00.123456789012345678Z", ten + 0.123456789012345),
        ("2025-06-13", ten - 36_000),
        ("2016-12-31T23:59:60Z", 1_483_228_800),
        ("1969-12-31T23:59:59Z", -1),
        ("0001-01-01T00:00:00Z", -62_135_596_800),
    ])
    func rfc3339Dates(text: String, expected: TimeInterval) {
        #expect(FeedDate.rfc3339(text) == Date(timeIntervalSince1970: expected), "\(text)")
    }

    @Test(arguments: [
        "", "2025-06-13T10:00:00", "2025-06-13T10:00Z", "2025-13-01T10:00:00Z", "2025-02-29T10:00:00Z",
        "2025-06-31T10:00:00Z", "2025-06-13T24:00:00Z", "2025-06-13T10:00:00.Z", "2025-06-13T10:00:00+25:00",
        "2025-06-13T10:00:00Zjunk", "25-06-13T10:00:00Z", "2025/06/13T10:00:00Z", "Fri, 13 Jun 2025 10:00:00 GMT",
        "2025-06-13X10:00:00Z", "0000-01-01T00:00:00Z", "+2025-06-13T10:00:00Z",
    ])
    func notRFC3339Dates(text: String) {
        #expect(FeedDate.rfc3339(text) == nil, "\(text)")
    }

    @Test func civilDaysAgreeWithTheGeneratorsInverse() {
        for days in stride(from: -800_000, through: 3_000_000, by: 997) {
            let (y, m, d) = FeedGenerator.civilFromDays(days)
            #expect(FeedDate.daysFromCivil(year: y, month: m, day: d) == days)
        }
    }

    // MARK: Text

    @Test(arguments: [
        ("AT&T &amp; friends", "AT&T & friends"),
        ("caf&eacute; &#233; &#xE9; &#XE9;", "café é é é"),
        ("&unknown; &amp &;", "&unknown; &amp &;"),
        (
            "NUL &#0; and a surrogate &#xD800; and too big &#x110000;",
            "NUL \u{FFFD} and a surrogate \u{FFFD} and too big \u{FFFD}"
        ),
        ("&#128512;", "😀"),
        ("&amp;amp;", "&amp;"),
        ("x &#99999999999999999999; y", "x &#99999999999999999999; y"),
    ])
    func characterReferences(html: String, text: String) {
        #expect(HTMLText.decode(html) == text)
    }

    @Test(arguments: [
        ("<p>One</p><p>Two</p>", "One Two"),
        ("a<br/>b", "a b"),
        ("<b>bold</b>face", "boldface"),
        ("1 < 2 and 3 > 2", "1 < 2 and 3 > 2"),
        ("<script>var x = '<p>';</script>After", "After"),
        ("<STYLE>p { }</STYLE>Shown", "Shown"),
        ("<!-- hidden <p> -->Visible", "Visible"),
        ("<a href=\"x\">link</a>\n\n\t text", "link text"),
        ("Unclosed <b", "Unclosed"),
        ("<p>&lt;p&gt; is a tag</p>", "<p> is a tag"),
        ("", ""),
    ])
    func htmlToPlainText(html: String, text: String) {
        #expect(HTMLText.plain(html) == text)
    }

    // MARK: Content types

    @Test(arguments: [
        ("application/json", FeedParser.Syntax?.some(.json)), ("application/feed+json", .json), ("text/json", .json),
        ("application/vnd.api+json", .json), ("application/rss+xml", .xml), ("application/atom+xml", .xml),
        ("application/xml", .xml), ("text/xml", .xml), ("application/rdf+xml", .xml), ("image/svg+xml", .xml),
        ("text/plain", nil), ("application/octet-stream", nil),
    ])
    func contentTypesDeclareASyntax(type: String, syntax: FeedParser.Syntax?) throws {
        #expect(try FeedParser.syntax(ofContentType: type, source: "x") == syntax)
    }

    @Test(arguments: ["text/html", "image/png", "application/pdf", "video/mp4", "application/javascript"])
    func otherContentTypesAreNotFeeds(type: String) {
        #expect(throws: FeedLoaderError.wrongContentType(source: "x", contentType: type)) {
            try FeedParser.syntax(ofContentType: type, source: "x")
        }
    }

    @Test func aContentTypeIsReadWithoutParametersOrCase() {
        #expect(
            FeedDocument(data: Data(), contentType: " Application/RSS+XML ; charset=UTF-8").contentType == "application/rss+xml")
        #expect(FeedDocument(data: Data(), contentType: "").contentType == nil)
        #expect(FeedDocument(data: Data(), contentType: ";").contentType == nil)
    }

    @Test func theContentDecidesWhenTheTypeDoesNot() throws {
        let rss = try FeedParser.parse(FeedDocument(data: Data(Fixtures.rss.utf8), contentType: nil), source: "x")
        #expect(rss.items.count == 3)
        // Without the feed's own address, a relative link cannot be resolved.
        #expect(
            rss.problems.first?.description
                == #"item 2 ("Relative link, +0200 zone", /2025/06/13/relative): <link> is not an http or https address: "/2025/06/13/relative""#
        )
        let json = try FeedParser.parse(FeedDocument(data: Data(Fixtures.jsonFeed.utf8), contentType: "text/plain"), source: "x")
        #expect(json.items.count == 3)
        let legacy = try FeedParser.parse(
            FeedDocument(data: try FeedParser.encode([Fixtures.jsonFeedItems[0]]), contentType: "application/json"), source: "x")
        #expect(legacy.items.map(\.item) == [Fixtures.jsonFeedItems[0]])
        #expect(throws: FeedLoaderError.notAFeed(source: "x", found: "text that is neither JSON nor XML")) {
            try FeedParser.parse(FeedDocument(data: Data("hello".utf8), contentType: nil), source: "x")
        }
        #expect(throws: FeedLoaderError.emptyFeed(source: "x")) {
            try FeedParser.parse(
                FeedDocument(data: Data([0xEF, 0xBB, 0xBF, 0x0A, 0x20]), contentType: "application/rss+xml"), source: "x")
        }
    }

    // MARK: Documents

    @Test func rss10IsReadToo() throws {
        let rdf = """
            <?xml version="1.0"?>
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
                     xmlns:dc="http://purl.org/dc/elements/1.1/">
              <channel rdf:about="https://old.example.com/"><title>Old School</title></channel>
              <item rdf:about="https://old.example.com/1">
                <title>RDF item</title><link>https://old.example.com/1</link>
                <description>From 2003.</description><dc:date>2025-06-13T10:00:00Z</dc:date>
              </item>
            </rdf:RDF>
            """
        let parsed = try FeedParser.parse(FeedDocument(data: Data(rdf.utf8), contentType: "application/rdf+xml"), source: "rdf")
        #expect(
            parsed.items.map(\.item) == [
                FeedItem(
                    title: "RDF item", url: "https://old.example.com/1", published: Fixtures.tenUTC, summary: "From 2003.",
                    source: "Old School", imageURL: nil)
            ])
    }

    @Test func anItemWithoutTitleOrTextIsSkipped() throws {
        let rss = """
            <rss version="2.0"><channel><title>T</title>
            <item><link>https://example.com/a</link><pubDate>Fri, 13 Jun 2025 10:00:00 GMT</pubDate></item>
            <item><title>A very long description follows</title><link>https://example.com/b</link>
              <pubDate>Fri, 13 Jun 2025 10:00:00 GMT</pubDate>
              <description>\(String(repeating: "word ", count: 1_000))</description></item>
            </channel></rss>
            """
        let parsed = try FeedParser.parse(FeedDocument(data: Data(rss.utf8), contentType: "application/rss+xml"), source: "x")
        #expect(
            parsed.problems.map(\.description) == [
                "item 1 (https://example.com/a): <title> is missing (and there is no <description> to make one from)"
            ])
        let long = try #require(parsed.items.first?.item)
        #expect(long.summary.count == FeedItemBuilder.summaryLimit && long.summary.hasSuffix("…"))
    }

    @Test func anRSSDocumentWithoutAChannelIsAFeedOfNoItems() throws {
        // A feed with nothing in it yet (issue 40): 0 items, not "not a feed".
        let parsed = try FeedParser.parse(
            FeedDocument(data: Data("<rss version=\"2.0\"/>".utf8), contentType: "application/rss+xml"), source: "x")
        #expect(parsed == ParsedFeed(items: [], problems: [], total: 0))
    }

    @Test func aDocumentNestedDeeperThanAnyFeedIsRefused() {
        let depth = 10_000
        let xml = "<rss>" + String(repeating: "<x>", count: depth) + String(repeating: "</x>", count: depth) + "</rss>"
        let error = #expect(throws: FeedLoaderError.self) {
            try FeedParser.parse(FeedDocument(data: Data(xml.utf8), contentType: "application/xml"), source: "deep")
        }
        #expect(error?.description.contains("nested more than 100 deep") == true, "\(String(describing: error))")
    }

    @Test func entityExpansionIsRefused() throws {
        // "Billion laughs": entities of entities. Nothing may blow up; nothing is expanded.
        var dtd = "<!ENTITY l0 \"lol\">"
        for level in 1...9 { dtd += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">" }
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [\(dtd)]>
            <rss version="2.0"><channel><title>&l9;</title>
            <item><title>Laugh &l9;</title><link>https://example.com/l</link><pubDate>Fri, 13 Jun 2025 10:00:00 GMT</pubDate></item>
            </channel></rss>
            """
        // libxml2 refuses the amplification: the feed is malformed, and nothing was expanded.
        let error = #expect(throws: FeedLoaderError.self) {
            try FeedParser.parse(FeedDocument(data: Data(xml.utf8), contentType: "application/rss+xml"), source: "x")
        }
        #expect(error?.description.contains("expand too much") == true, "\(String(describing: error))")
    }

    @Test func anExternalEntityIsNeverRead() throws {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("feedloader-secret-\(UUID()).txt")
        try Data("TOP SECRET".utf8).write(to: secret)
        defer { try? FileManager.default.removeItem(at: secret) }
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY xxe SYSTEM "\(secret.absoluteString)">]>
            <rss version="2.0"><channel><title>T</title>
            <item><title>Leak &xxe;</title><link>https://example.com/x</link><pubDate>Fri, 13 Jun 2025 10:00:00 GMT</pubDate></item>
            </channel></rss>
            """
        let parsed = try? FeedParser.parse(FeedDocument(data: Data(xml.utf8), contentType: "application/rss+xml"), source: "x")
        #expect(parsed?.items.contains { $0.item.title.contains("SECRET") } != true)
    }

    @Test func aLocalXMLFileImportsThroughTheSameReaders() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("feed.atom")
        try Data(Fixtures.atom.utf8).write(to: file)
        let store = try Store.temporary(records: Feed.recordTypes)
        let report = try await FeedImporter(store: store).importFeed(from: FileFeedFetcher(url: file))
        #expect(report.inserted == 3 && report.problems.count == 1)
        #expect(try store.count(RecordRequest<FeedEndpoint>()) == 0, "a file keeps no validators")
    }
}
