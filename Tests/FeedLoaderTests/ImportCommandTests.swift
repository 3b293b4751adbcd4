import Folio
import Foundation
import Testing
@testable import FeedLoader

/// `feedloader import <url>`: the real binary against a server the test runs on 127.0.0.1.
@Suite("feedloader import over HTTP")
struct ImportCommandTests {
    @Test func importsThenIsNotModifiedThenForced() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withFeedServer { server in
            server.set("/feed.xml", .init(contentType: "application/rss+xml", body: Fixtures.rss, entityTag: #""1""#))
            let url = server.url("/feed.xml").absoluteString
            let first = try await App.feedloaderOffPool(["import", url], in: directory)
            #expect(first.status == 0, "\(first.errors)")
            #expect(first.output == "\(url): 6 items, 4 new, 0 updated, 0 unchanged, 2 skipped\n")
            #expect(
                first.errors.contains(
                    #"item 6 ("No link"): <link> and <guid> are missing: nothing identifies the item from one import to the next"#
                ))

            let second = try await App.feedloaderOffPool(["import", url], in: directory)
            #expect(second.status == 0)
            #expect(second.output == "\(url): not modified since the last import; nothing written\n")
            #expect(second.errors.isEmpty)
            #expect(server.requests.map(\.status) == [200, 304])

            let forced = try await App.feedloaderOffPool(["import", "--force", url], in: directory)
            #expect(forced.output.contains("6 items, 0 new, 0 updated, 4 unchanged, 2 skipped"))
            #expect(server.requests.last?.header("If-None-Match") == nil)
        }
    }

    @Test func failuresAreNamedAndExitNonZero() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withFeedServer { server in
            server.set("/gone", .init(status: 404))
            server.set("/slow", .init(contentType: "application/rss+xml", body: Fixtures.smallRSS(0..<1), delay: .seconds(600)))
            server.set("/page", .init(contentType: "text/html", body: "<html></html>"))
            let gone = try await App.feedloaderOffPool(["import", server.url("/gone").absoluteString], in: directory)
            #expect(gone.status != 0)
            #expect(gone.errors.contains("\(server.url("/gone")): the server answered 404 Not Found. Nothing was imported."))
            let slow = try await App.feedloaderOffPool(
                ["import", "--timeout", "0.5", server.url("/slow").absoluteString], in: directory)
            #expect(slow.status != 0)
            #expect(slow.errors.contains("no complete answer within 0.5 seconds (the timeout; see --timeout)"))
            let page = try await App.feedloaderOffPool(["import", server.url("/page").absoluteString], in: directory)
            #expect(page.errors.contains("is text/html, not a feed"))
        }
        let ftp = try await App.feedloaderOffPool(["import", "ftp://127.0.0.1/feed.xml"], in: directory)
        #expect(ftp.status != 0)
        #expect(ftp.errors.contains("Cannot fetch ftp://127.0.0.1/feed.xml: only http and https addresses"))
        let zero = try await App.feedloaderOffPool(["import", "--timeout", "0", "http://127.0.0.1:1/"], in: directory)
        #expect(zero.status != 0 && zero.errors.contains("--timeout must be a positive number of seconds"))
        // Nothing was written by any of them.
        let store = try Feed.openStore(at: directory.appendingPathComponent("feeds.sqlite").path)
        #expect(try store.count(RecordRequest<Feed>()) == 0)
        #expect(try store.count(RecordRequest<FeedEndpoint>()) == 0)
    }

    @Test func aDatabaseMadeBeforeValidatorsExistedGainsTheirTable() async throws {
        let directory = try App.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("feeds.sqlite").path
        try {
            let old = try Store(path: path, records: Feed.recordTypes)
            try old.write { tx in
                var feed = Feed(Fixtures.atomItems[0])
                try tx.insert(&feed)
            }
            try old.close()
        }()
        try await withFeedServer { server in
            server.set(
                "/atom",
                .init(contentType: "application/atom+xml", body: Fixtures.atom, lastModified: "Fri, 13 Jun 2025 10:00:00 GMT"))
            let result = try await App.feedloaderOffPool(["import", server.url("/atom").absoluteString], in: directory)
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.contains("4 items, 2 new, 0 updated, 1 unchanged, 1 skipped"))
        }
        let store = try Feed.openStore(at: path)
        let endpoints = try await store.fetch(RecordRequest<FeedEndpoint>()).compactMap { $0?.lastModified }
        #expect(endpoints == ["Fri, 13 Jun 2025 10:00:00 GMT"])
    }
}
