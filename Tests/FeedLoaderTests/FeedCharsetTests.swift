import Folio
import Foundation
import Testing
@testable import FeedLoader

/// Feeds declared in the encodings real feeds use (issue 40), RSS and Atom, and the HTTP
/// `charset` as RFC 7303 and browsers read it: a byte order mark first, then the charset,
/// then the XML declaration.
@Suite("Feeds in declared and served encodings")
struct FeedCharsetTests {
    /// A label a feed declares, and its sample's encoding (``EncodingLabelTests/samples``).
    static let declared: [(label: String, encoding: TextEncoding)] = [
        ("cp1252", .windows1252), ("windows_1252", .windows1252), ("ibm866", .ibm866), ("koi8-t", .koi8T),
        ("maccyrillic", .xMacCyrillic), ("x-mac-cyrillic", .xMacCyrillic), ("tcvn", .tcvn5712), ("TCVN-5712", .tcvn5712),
        ("x-mac-roman", .macintosh), ("koi8-u", .koi8U), ("iso-8859-8-i", .iso8859_8I), ("windows-874", .windows874),
        ("Shift_JIS", .shiftJIS), ("ms932", .shiftJIS), ("euc-kr", .eucKR), ("gb18030", .gb18030), ("gb2312", .gbk),
        ("big5-hkscs", .big5), ("EUC-JP", .eucJP), ("csiso2022jp", .iso2022JP), ("iso-8859-16", .iso8859_16),
        ("windows-1258", .windows1258), ("viscii", .viscii), ("cp437", .ibm437), ("x-user-defined", .xUserDefined),
    ]

    static func sample(_ encoding: TextEncoding) -> (text: String, bytes: [UInt8]) {
        EncodingLabelTests.sample(encoding)!
    }

    /// An RSS document declaring `label`, whose channel and item titles are `title` (bytes
    /// in that encoding).
    static func rss(declaring label: String?, title: [UInt8]) -> [UInt8] {
        let declaration = label.map { "<?xml version=\"1.0\" encoding=\"\($0)\"?>\n" } ?? ""
        return Array((declaration + "<rss version=\"2.0\"><channel><title>").utf8) + title
            + Array("</title><link>https://example.com/</link><item><title>".utf8) + title
            + Array("</title><link>https://example.com/1</link><pubDate>Fri, 13 Jun 2025 10:00:00 GMT</pubDate>".utf8)
            + Array("</item></channel></rss>".utf8)
    }

    /// An Atom document declaring `label`, with one entry titled `title`.
    static func atom(declaring label: String, title: [UInt8]) -> [UInt8] {
        let head = "<?xml version='1.0' encoding='\(label)'?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>"
        return Array(head.utf8) + title + Array("</title><id>urn:x</id><entry><title type=\"text\">".utf8) + title
            + Array("</title><link href=\"https://example.com/a\"/><updated>2025-06-13T10:00:00Z</updated></entry></feed>".utf8)
    }

    static func parse(_ bytes: [UInt8], contentType: String? = "application/xml") throws -> ParsedFeed {
        try FeedParser.parse(FeedDocument(data: Data(bytes), contentType: contentType), source: "x")
    }

    @Test(arguments: declared.map { ($0.label, $0.encoding) })
    func aFeedDeclaredInTheEncodingImportsWithItsTitles(label: String, encoding: TextEncoding) throws {
        let sample = Self.sample(encoding)
        // x-user-defined's sample holds a control character XML does not allow.
        let (text, bytes) = encoding == .xUserDefined ? ("A\u{F780}\u{F7FF}", [0x41, 0x80, 0xFF]) : sample
        let rss = try Self.parse(Self.rss(declaring: label, title: bytes))
        #expect(rss.items.map(\.item.title) == [text])
        #expect(rss.items.map(\.item.source) == [text], "the channel's title, in the same encoding")
        let atom = try Self.parse(Self.atom(declaring: label, title: bytes), contentType: "application/atom+xml")
        #expect(atom.items.map(\.item.title) == [text])
    }

    @Test func aFeedInALegacyEncodingIsStoredWithItsTitles() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("koi8t.rss")
        try Data(Self.rss(declaring: "koi8-t", title: Self.sample(.koi8T).bytes)).write(to: file)
        let store = try Store.temporary(records: Feed.recordTypes)
        let report = try await FeedImporter(store: store).importFeed(from: FileFeedFetcher(url: file))
        #expect(report.inserted == 1)
        let stored = try await store.fetch(RecordRequest<Feed>()).compactMap { $0 }
        #expect(stored.map(\.title) == ["Тоҷикӣ"])
    }

    @Test func invalidBytesInADeclaredEncodingAreANamedErrorNotACrash() {
        // Each cut in the middle of a character, or a byte the encoding leaves undefined.
        let cases: [(String, [UInt8])] = [
            ("ms932", [0x82]), ("cp949", [0xBE]), ("gb18030", [0x81, 0x30]), ("big5", [0xA4]), ("euc-jp", [0x8F, 0xB0]),
            ("windows-1253", [0xAA]), ("iso-8859-6", [0xA1]), ("csiso2022jp", [0x1B, 0x24, 0x42, 0x30]),
        ]
        for (label, bytes) in cases {
            #expect(throws: FeedLoaderError.undecodable(source: "x", encoding: label)) {
                try Self.parse(Self.rss(declaring: label, title: bytes))
            }
        }
    }

    @Test(arguments: ["iso-2022-kr", "csiso2022kr", "hz-gb-2312", "iso-2022-cn", "iso-2022-cn-ext", "replacement"])
    func aFeedInAReplacementEncodingIsANamedError(label: String) {
        let document = Self.rss(declaring: label, title: Array("Title".utf8))
        #expect(throws: FeedLoaderError.replacementEncoding(source: "x", encoding: label)) { try Self.parse(document) }
        let message = FeedLoaderError.replacementEncoding(source: "x", encoding: label).description
        #expect(message.contains("\"\(label)\"") && message.contains("U+FFFD") && message.hasSuffix("Nothing was imported."))
    }

    // MARK: The HTTP charset

    @Test func aCharsetParameterIsReadInAnyCaseQuotedOrNot() {
        func charset(_ header: String) -> String? { FeedDocument(data: Data(), contentType: header).charset }
        #expect(charset("text/xml; charset=windows-1252") == "windows-1252")
        #expect(charset("text/xml;CHARSET=\"KOI8-R\"") == "KOI8-R")
        #expect(charset("application/rss+xml ; type=feed ; Charset = 'x' ; charset=utf-8") == "'x'")
        #expect(charset("application/rss+xml; charset=\"\"") == nil)
        #expect(charset("application/rss+xml; charset=") == nil)
        #expect(charset("application/rss+xml") == nil)
        #expect(charset("application/rss+xml; foo=charset") == nil)
        #expect(FeedDocument(data: Data(), contentType: nil).charset == nil)
    }

    /// `bytes` served with `contentType` from a local server, fetched and read as an import
    /// reads them.
    static func served(_ bytes: [UInt8], contentType: String) async throws -> ParsedFeed {
        try await withFeedServer { server in
            var resource = FeedServer.Resource(contentType: contentType)
            resource.body = Data(bytes)
            server.set("/feed", resource)
            let fetcher = ServerFeedFetcher(url: server.url("/feed"), timeout: 30)
            guard case .document(let document) = try await fetcher.fetchFeed(validators: nil) else {
                throw FeedServer.ServerError(description: "no document")
            }
            return try FeedParser.parse(document, source: fetcher.name)
        }
    }

    static let smart = sample(.windows1252)

    @Test func theHTTPCharsetWinsOverAnXMLDeclarationOfUTF8() async throws {
        // windows-1252 bytes (0x93 is not UTF-8) in a document that says UTF-8.
        let bytes = Self.rss(declaring: "utf-8", title: Self.smart.bytes)
        for type in [
            "application/rss+xml; charset=windows-1252", "text/xml;charset=\"CP1252\"", "application/xml; charset=latin1",
        ] {
            let parsed = try await Self.served(bytes, contentType: type)
            #expect(parsed.items.map(\.item.title) == [Self.smart.text], "\(type)")
        }
    }

    @Test func theHTTPCharsetOfUTF8WinsOverAnXMLDeclarationOfALegacyEncoding() async throws {
        // UTF-8 bytes in a document that says windows-1252: read as declared, "Grüße"
        // would be "GrÃ¼ÃŸe".
        let bytes = Self.rss(declaring: "windows-1252", title: Array("Grüße “€”".utf8))
        let parsed = try await Self.served(bytes, contentType: "application/atom+xml; charset=UTF-8")
        #expect(parsed.items.map(\.item.title) == ["Grüße “€”"])
        // And a charset of another legacy encoding wins as well.
        let koi8 = Self.rss(declaring: "windows-1251", title: Self.sample(.koi8R).bytes)
        let russian = try await Self.served(koi8, contentType: "text/xml; charset=koi8-r")
        #expect(russian.items.map(\.item.title) == ["Привет"])
    }

    @Test func theHTTPCharsetDecidesWhenTheDocumentDeclaresNothing() async throws {
        let bytes = Self.rss(declaring: nil, title: Self.sample(.shiftJIS).bytes)
        let parsed = try await Self.served(bytes, contentType: "application/rss+xml; charset=Shift_JIS")
        #expect(parsed.items.map(\.item.title) == [Self.sample(.shiftJIS).text])
    }

    @Test func aByteOrderMarkWinsOverTheHTTPCharsetAndTheDeclaration() async throws {
        // A UTF-8 mark on UTF-8 bytes served as windows-1252 and declaring KOI8-R.
        let utf8 = [0xEF, 0xBB, 0xBF] + Self.rss(declaring: "koi8-r", title: Array("Grüße".utf8))
        let marked = try await Self.served(utf8, contentType: "application/rss+xml; charset=windows-1252")
        #expect(marked.items.map(\.item.title) == ["Grüße"])
        // A UTF-16 mark on a document served as ISO-8859-1.
        let text = String(decoding: Self.rss(declaring: "utf-16", title: Array("Grüße 𝄞".utf8)), as: UTF8.self)
        let utf16 = FeedEncodingTests.Form.utf16LE.encode(text, mark: true)
        let sixteen = try await Self.served(utf16, contentType: "text/xml; charset=iso-8859-1")
        #expect(sixteen.items.map(\.item.title) == ["Grüße 𝄞"])
    }

    @Test func utf16ToldByTheFirstBytesWinsOverAnEightBitHTTPCharset() throws {
        // No mark, but "<" as two bytes: the bytes cannot be read in an eight-bit encoding.
        let text = String(decoding: Self.rss(declaring: "windows-1252", title: Array("Grüße".utf8)), as: UTF8.self)
        let bytes = FeedEncodingTests.Form.utf16BE.encode(text, mark: false)
        let document = FeedDocument(data: Data(bytes), contentType: "application/rss+xml; charset=windows-1252")
        #expect(try FeedParser.parse(document, source: "x").items.map(\.item.title) == ["Grüße"])
    }

    @Test func anHTTPCharsetOfUTF16OnASCIIBytesIsWrongAndTheBytesDecide() throws {
        let bytes = Self.rss(declaring: nil, title: Array("Grüße".utf8))
        let document = FeedDocument(data: Data(bytes), contentType: "application/rss+xml; charset=utf-16")
        #expect(try FeedParser.parse(document, source: "x").items.map(\.item.title) == ["Grüße"])
    }

    @Test func anUnknownHTTPCharsetIsIgnoredAsBrowsersDoAndTheDeclarationDecides() throws {
        let bytes = Self.rss(declaring: "koi8-r", title: Self.sample(.koi8R).bytes)
        for type in ["text/xml; charset=x-bogus", "text/xml; charset=none", "text/xml; charset=\"utf-8, iso-8859-1\""] {
            let document = FeedDocument(data: Data(bytes), contentType: type)
            #expect(try FeedParser.parse(document, source: "x").items.map(\.item.title) == ["Привет"], "\(type)")
        }
    }

    @Test func theHTTPCharsetDecidesForXMLSniffedFromAGenericType() throws {
        let bytes = Self.rss(declaring: "utf-8", title: Self.smart.bytes)
        let document = FeedDocument(data: Data(bytes), contentType: "text/plain; charset=windows-1252")
        #expect(try FeedParser.parse(document, source: "x").items.map(\.item.title) == [Self.smart.text])
    }

    @Test func aJSONFeedIsUTF8WhateverTheHTTPCharsetSays() throws {
        let json =
            #"{"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": [{"id": "1", "url": "https://example.com/j", "title": "Grüße €", "date_published": "2025-06-13T10:00:00Z"}]}"#
        let document = FeedDocument(data: Data(json.utf8), contentType: "application/feed+json; charset=windows-1252")
        #expect(try FeedParser.parse(document, source: "x").items.map(\.item.title) == ["Grüße €"])
    }
}
