import Folio
import Foundation
import Testing
@testable import FeedLoader

/// A feed with nothing in it yet is a feed of 0 items, in every format (issue 40), for
/// the parser, `import` and the browser alike.
@Suite("Empty feeds")
struct EmptyFeedTests {
    /// An empty feed of each format, with a file name whose extension gives its type.
    static let documents: [(file: String, text: String)] = [
        ("rss-bare.rss", "<rss></rss>"),
        ("rss-self-closed.rss", #"<?xml version="1.0"?><rss version="2.0"/>"#),
        ("rss-empty-channel.rss", "<rss><channel></channel></rss>"),
        ("rss-titled-channel.rss", #"<rss version="2.0"><channel><title>Nothing yet</title></channel></rss>"#),
        ("rss10.xml", #"<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"/>"#),
        ("atom-bare.atom", "<feed/>"),
        ("atom.atom", #"<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><id>urn:t</id></feed>"#),
        ("jsonfeed.json", #"{"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": []}"#),
        ("own-list.json", "[]"),
        ("own-object.json", #"{"items": []}"#),
    ]

    @Test(arguments: documents.map { ($0.file, $0.text) })
    func anEmptyFeedIsAFeedOfNoItems(file: String, text: String) throws {
        let type = FileFeedFetcher.contentType(of: URL(fileURLWithPath: file))
        // By its type, and sniffed from its content.
        for contentType in [type, nil] {
            let parsed = try FeedParser.parse(FeedDocument(data: Data(text.utf8), contentType: contentType), source: file)
            #expect(parsed == ParsedFeed(items: [], problems: [], total: 0), "\(contentType ?? "sniffed")")
        }
        let report = try Store.temporary(records: Feed.recordTypes).write { tx in
            try FeedImporter.store(
                FeedParser.parse(FeedDocument(data: Data(text.utf8), contentType: type), source: file),
                source: file, in: tx)
        }
        #expect(report.description == "\(file): 0 items, 0 new, 0 updated, 0 unchanged")
    }

    @Test func importPrintsZeroItemsForAnEmptyFeedOfEveryFormat() throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (file, text) in Self.documents {
            try Data(text.utf8).write(to: directory.appendingPathComponent(file))
        }
        // `import` of several files is several runs: one per format family is enough
        // to show what it prints (the parser test covers every document).
        for file in ["rss-bare.rss", "rss-empty-channel.rss", "atom-bare.atom", "jsonfeed.json"] {
            let result = try App.feedloader(["import", file], in: directory)
            #expect(result.status == 0, "\(file): \(result.errors)")
            #expect(result.output == "\(file): 0 items, 0 new, 0 updated, 0 unchanged\n")
            #expect(result.errors.isEmpty, "\(file): \(result.errors)")
        }
    }

    @Test func anEmptyFeedOverHTTPImportsAsZeroItemsAndKeepsItsValidators() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withFeedServer { server in
            server.set("/empty", .init(contentType: "application/rss+xml", body: "<rss></rss>", entityTag: #""e""#))
            let url = server.url("/empty").absoluteString
            let first = try await App.feedloaderOffPool(["import", url], in: directory)
            #expect(first.output == "\(url): 0 items, 0 new, 0 updated, 0 unchanged\n", "\(first.errors)")
            let second = try await App.feedloaderOffPool(["import", url], in: directory)
            #expect(second.output == "\(url): not modified since the last import; nothing written\n")
        }
    }

    @Test func aDocumentWithNoBytesIsStillEmptyNotAFeedOfNoItems() {
        // Nothing at all is not a feed that has nothing in it yet.
        #expect(throws: FeedLoaderError.emptyFeed(source: "x")) {
            try FeedParser.parse(FeedDocument(data: Data(), contentType: "application/rss+xml"), source: "x")
        }
        #expect(throws: FeedLoaderError.notAFeed(source: "x", found: "an XML document whose root element is <html>")) {
            try FeedParser.parse(FeedDocument(data: Data("<html/>".utf8), contentType: "application/xml"), source: "x")
        }
    }
}

extension TerminalAppTests {
    @Test(TestTier.longOnly) func rImportsAnEmptyFeedAndSaysZeroItems() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("empty.rss")
        try Data("<rss version=\"2.0\"></rss>".utf8).write(to: file)
        let app = try TmuxSession("'\(try App.binary.get().path)' --refresh-from '\(file.path)'", in: directory)
        try await app.waitFor("rows 420")
        try app.press("r")
        let screen = try await app.waitFor("Imported empty.rss: 0 items, 0 new, 0 updated, 0 unchanged")
        #expect(!screen.contains("not a feed") && !screen.contains("Import failed"))
        #expect(StatusLine(screen)?.rows == 420)
        try app.press("q")
    }
}
