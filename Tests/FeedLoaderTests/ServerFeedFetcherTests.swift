import Foundation
import Folio
import Testing
@testable import FeedLoader

/// Imports over HTTP from a server on 127.0.0.1 that each test starts and stops, one test at
/// a time (each server's event loop waits on a thread of its own).
@Suite("Fetching feeds over HTTP", .serialized)
struct ServerFeedFetcherTests {
    /// A store with FeedLoader's record types, and the SQL it runs.
    struct Harness {
        let store: Store
        let sql = Recorder()

        init() throws {
            store = try Store.temporary(records: Feed.recordTypes)
            let sql = self.sql
            store.diagnostics.logSQL { sql.append($0) }
        }

        var importer: FeedImporter { FeedImporter(store: store) }

        func items() throws -> [FeedItem] {
            try store.fetch(RecordRequest<Feed>(sortBy: Feed.newestFirst)).compactMap { $0?.item }
        }

        func endpoints() throws -> [FeedEndpoint] {
            try store.fetch(RecordRequest<FeedEndpoint>(sortBy: [SortDescriptor(\.address)])).compactMap { $0 }
        }

        /// What proves the store unchanged: both tables' change tokens, their rows.
        struct Snapshot: Equatable {
            var feedToken: ChangeToken
            var endpointToken: ChangeToken
            var items: [FeedItem]
            var endpoints: [FeedEndpoint]
        }

        func snapshot() throws -> Snapshot {
            Snapshot(
                feedToken: try store.changeToken(for: Feed.self), endpointToken: try store.changeToken(for: FeedEndpoint.self),
                items: try items(), endpoints: try endpoints())
        }

        /// The statements that write (or open a write transaction), since `mark` statements
        /// were logged. Reads run in `BEGIN DEFERRED` transactions; writes in `BEGIN IMMEDIATE`.
        func writes(since mark: Int) -> [String] {
            let writing = [
                "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE", "INSERT", "UPDATE", "DELETE", "REPLACE", "-- INSERT", "-- UPDATE",
                "-- DELETE", "CREATE", "DROP", "ALTER",
            ]
            return sql.lines.dropFirst(mark).filter { line in writing.contains { line.uppercased().hasPrefix($0) } }
        }
    }

    static func sorted(_ items: [FeedItem]) -> [FeedItem] {
        items.sorted { ($0.published, $0.url) > ($1.published, $1.url) }
    }

    // MARK: Formats

    @Test func rss20WithRFC822DatesNamespacesCDATAAndEntities() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set("/feed.xml", .init(contentType: "application/rss+xml; charset=utf-8", body: Fixtures.rss))
            let report = try await harness.importer.importFeed(from: ServerFeedFetcher(url: server.url("/feed.xml")))
            #expect(report.total == 6 && report.inserted == 4 && report.problems.count == 2)
            #expect(report.problems.map(\.description) == Fixtures.rssProblems)
            #expect(try harness.items() == Self.sorted(Fixtures.rssItems(base: server.url("/feed.xml"))))
            let request = try #require(server.requests.first)
            #expect(request.header("Accept")?.hasPrefix("application/feed+json") == true)
            #expect(request.header("If-None-Match") == nil && request.header("If-Modified-Since") == nil)
        }
    }

    @Test func atomWithRFC3339DatesUnderAPrefixWithXMLBaseAndTextConstructs() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set("/atom", .init(contentType: "application/atom+xml", body: Fixtures.atom))
            let report = try await harness.importer.importFeed(from: ServerFeedFetcher(url: server.url("/atom")))
            #expect(report.problems.map(\.description) == Fixtures.atomProblems)
            #expect(report.total == 4 && report.inserted == 3)
            #expect(try harness.items() == Self.sorted(Fixtures.atomItems))
        }
    }

    @Test func jsonFeed11() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set("/feed.json", .init(contentType: "application/feed+json", body: Fixtures.jsonFeed))
            let report = try await harness.importer.importFeed(from: ServerFeedFetcher(url: server.url("/feed.json")))
            #expect(report.problems.map(\.description) == Fixtures.jsonFeedProblems)
            #expect(report.total == 6 && report.inserted == 3)
            #expect(try harness.items() == Self.sorted(Fixtures.jsonFeedItems))
        }
    }

    @Test(arguments: [
        ("text/plain", Fixtures.rss), (nil, Fixtures.atom), ("application/octet-stream", Fixtures.jsonFeed),
        ("application/xml", Fixtures.atom), ("text/xml; charset=iso-8859-1", Fixtures.rss),
        ("application/json", Fixtures.jsonFeed),
    ])
    func aGenericOrMissingContentTypeIsDecidedByTheContent(contentType: String?, body: String) async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set("/feed", .init(contentType: contentType, body: "\u{FEFF}\n  " + body))
            let report = try await harness.importer.importFeed(from: ServerFeedFetcher(url: server.url("/feed")))
            #expect(report.inserted == 3 || report.inserted == 4, "\(report)")
            #expect(server.requests.last?.status == 200)
        }
    }

    // MARK: Conditional GET

    @Test func anUnchangedFeedCostsOneRequestAndNoWrite() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set(
                "/feed.xml",
                .init(
                    contentType: "application/rss+xml", body: Fixtures.smallRSS(0..<5), entityTag: #""v1""#,
                    lastModified: "Fri, 13 Jun 2025 10:00:00 GMT"))
            let fetcher = ServerFeedFetcher(url: server.url("/feed.xml"))
            let first = try await harness.importer.importFeed(from: fetcher)
            #expect(first.inserted == 5)
            #expect(
                try harness.endpoints().map(\.validators) == [
                    FeedValidators(entityTag: #""v1""#, lastModified: "Fri, 13 Jun 2025 10:00:00 GMT")
                ])
            #expect(try harness.endpoints().first?.address == server.url("/feed.xml").absoluteString)

            let before = try harness.snapshot()
            let mark = harness.sql.lines.count
            let requests = server.requests.count
            let second = try await harness.importer.importFeed(from: fetcher)
            #expect(second.notModified)
            #expect(second.description == "\(server.url("/feed.xml")): not modified since the last import; nothing written")
            #expect(server.requests.count == requests + 1, "exactly one request")
            let request = try #require(server.requests.last)
            #expect(request.status == 304)
            #expect(request.header("If-None-Match") == #""v1""#)
            #expect(request.header("If-Modified-Since") == "Fri, 13 Jun 2025 10:00:00 GMT")
            #expect(harness.writes(since: mark).isEmpty, "no transaction, no write: \(harness.writes(since: mark))")
            #expect(try harness.snapshot() == before)
        }
    }

    @Test func lastModifiedAloneIsSentBackAsIfModifiedSince() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set(
                "/feed.xml",
                .init(
                    contentType: "application/rss+xml", body: Fixtures.smallRSS(0..<2),
                    lastModified: "Thu, 12 Jun 2025 08:00:00 GMT"))
            let fetcher = ServerFeedFetcher(url: server.url("/feed.xml"))
            _ = try await harness.importer.importFeed(from: fetcher)
            let before = try harness.snapshot()
            #expect(try await harness.importer.importFeed(from: fetcher).notModified)
            #expect(server.requests.count == 2)
            #expect(server.requests.last?.header("If-Modified-Since") == "Thu, 12 Jun 2025 08:00:00 GMT")
            #expect(server.requests.last?.header("If-None-Match") == nil)
            #expect(try harness.snapshot() == before)
        }
    }

    @Test func aChangedFeedIsImportedAndItsNewValidatorsStoredWithTheItems() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set(
                "/feed.xml", .init(contentType: "application/rss+xml", body: Fixtures.smallRSS(0..<3), entityTag: #"W/"a""#))
            let fetcher = ServerFeedFetcher(url: server.url("/feed.xml"))
            _ = try await harness.importer.importFeed(from: fetcher)
            server.update("/feed.xml") {
                $0.body = Data(Fixtures.smallRSS(0..<5, title: { $0 == 1 ? "Story 1, corrected" : "Story \($0)" }).utf8)
                $0.entityTag = #"W/"b""#
            }
            let mark = harness.sql.lines.count
            let report = try await harness.importer.importFeed(from: fetcher)
            #expect(report.inserted == 2 && report.updated == 1 && report.unchanged == 2)
            #expect(server.requests.last?.header("If-None-Match") == #"W/"a""#)
            #expect(try harness.endpoints().map(\.entityTag) == [#"W/"b""#])
            // The items and the validators went in one transaction.
            let writes = harness.writes(since: mark)
            #expect(writes.filter { $0.hasPrefix("BEGIN IMMEDIATE") }.count == 1, "\(writes)")
            #expect(writes.contains { $0.contains("feed_endpoint") })
            // And the third fetch is not modified again.
            #expect(try await harness.importer.importFeed(from: fetcher).notModified)
        }
    }

    @Test func withoutConditionalTheFeedIsFetchedWhole() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set("/f", .init(contentType: "application/rss+xml", body: Fixtures.smallRSS(0..<3), entityTag: #""x""#))
            let fetcher = ServerFeedFetcher(url: server.url("/f"))
            _ = try await harness.importer.importFeed(from: fetcher)
            let report = try await harness.importer.importFeed(from: fetcher, conditional: false)
            #expect(!report.notModified && report.unchanged == 3)
            #expect(server.requests.last?.header("If-None-Match") == nil)
            #expect(server.requests.last?.status == 200)
        }
    }

    @Test func validatorsAreKeptPerAddress() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set("/a", .init(contentType: "application/rss+xml", body: Fixtures.smallRSS(0..<2), entityTag: #""a""#))
            server.set("/b", .init(contentType: "application/rss+xml", body: Fixtures.smallRSS(2..<4), entityTag: #""b""#))
            _ = try await harness.importer.importFeed(from: ServerFeedFetcher(url: server.url("/a")))
            // /b has never been imported: its first fetch is not conditional, though /a's was stored.
            let b = try await harness.importer.importFeed(from: ServerFeedFetcher(url: server.url("/b")))
            #expect(b.inserted == 2)
            #expect(server.requests.last?.header("If-None-Match") == nil)
            #expect(try harness.endpoints().map(\.entityTag) == [#""a""#, #""b""#])
        }
    }

    // MARK: Redirects

    @Test func redirectsAreFollowedAndTheValidatorsFollowThem() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set("/old", .redirect(301, to: "/moved"))
            server.set("/moved", .redirect(307, to: server.url("/feed.xml").absoluteString))
            server.set("/feed.xml", .init(contentType: "application/rss+xml", body: Fixtures.rss, entityTag: #""r1""#))
            let fetcher = ServerFeedFetcher(url: server.url("/old"))
            let first = try await harness.importer.importFeed(from: fetcher)
            #expect(first.inserted == 4)
            #expect(server.requests.map(\.path) == ["/old", "/moved", "/feed.xml"])
            // A relative link resolves against where the feed was found, not where it was asked for.
            #expect(try harness.items().contains { $0.url == server.url("/2025/06/13/relative").absoluteString })
            // The validators are kept under the address that was asked for.
            #expect(try harness.endpoints().map(\.address) == [server.url("/old").absoluteString])

            let before = try harness.snapshot()
            #expect(try await harness.importer.importFeed(from: fetcher).notModified)
            #expect(server.requests.map(\.path).suffix(3) == ["/old", "/moved", "/feed.xml"])
            #expect(server.requests.last?.header("If-None-Match") == #""r1""#, "the conditional header survived two redirects")
            #expect(server.requests.last?.status == 304)
            #expect(try harness.snapshot() == before)
        }
    }

    @Test func aRedirectLoopStopsAfterTheLimitAndStoresNothing() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set("/loop", .redirect(302, to: "/loop"))
            let before = try harness.snapshot()
            let error = await #expect(throws: FeedLoaderError.self) {
                try await harness.importer.importFeed(from: ServerFeedFetcher(url: server.url("/loop"), maximumRedirects: 3))
            }
            #expect(error == .tooManyRedirects(source: server.url("/loop").absoluteString, limit: 3))
            #expect(error?.description.contains("more than 3 redirects") == true)
            #expect(server.requests.count == 4, "the request and three redirects")
            #expect(try harness.snapshot() == before)
        }
    }

    @Test func aRedirectToAnotherSchemeIsRefused() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set("/ftp", .redirect(302, to: "ftp://127.0.0.1/feed.xml"))
            let error = await #expect(throws: FeedLoaderError.self) {
                try await harness.importer.importFeed(from: ServerFeedFetcher(url: server.url("/ftp")))
            }
            #expect(error == .unsupportedAddress("ftp://127.0.0.1/feed.xml"))
            #expect(server.requests.count == 1)
        }
    }

    // MARK: Errors: each leaves the store as it was

    /// Imports a feed, then breaks the server with `change`, imports again, and checks
    /// that the second import threw `expected` and left the store exactly as it was.
    func expectFailure(
        _ change: @escaping (FeedServer) throws -> Void,
        fetcher makeFetcher: (FeedServer) -> ServerFeedFetcher = {
            ServerFeedFetcher(url: $0.url("/feed.xml"))
        }, _ check: (FeedLoaderError, FeedServer) throws -> Void
    ) async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set(
                "/feed.xml", .init(contentType: "application/rss+xml", body: Fixtures.smallRSS(0..<3), entityTag: #""good""#))
            _ = try await harness.importer.importFeed(from: ServerFeedFetcher(url: server.url("/feed.xml")))
            try change(server)
            let before = try harness.snapshot()
            let mark = harness.sql.lines.count
            // Fetched whole, so that a 304 cannot hide the failure.
            let error = await #expect(throws: FeedLoaderError.self) {
                try await harness.importer.importFeed(from: makeFetcher(server), conditional: false)
            }
            let failure = try #require(error)
            try check(failure, server)
            #expect(failure.description.hasSuffix("Nothing was imported."), "\(failure)")
            #expect(harness.writes(since: mark).isEmpty, "\(harness.writes(since: mark))")
            #expect(try harness.snapshot() == before)
            #expect(try harness.endpoints().map(\.entityTag) == [#""good""#], "the old validators stay")
        }
    }

    @Test func notFound() async throws {
        try await expectFailure({ $0.set("/feed.xml", .init(status: 404, contentType: "text/html", body: "<h1>Not here</h1>")) })
        {
            error, server in
            #expect(error == .httpStatus(source: server.url("/feed.xml").absoluteString, status: 404, reason: "Not Found"))
            #expect(error.description == "\(server.url("/feed.xml")): the server answered 404 Not Found. Nothing was imported.")
        }
    }

    @Test func serverError() async throws {
        try await expectFailure({ $0.update("/feed.xml") { $0.status = 500 } }) { error, server in
            #expect(
                error == .httpStatus(source: server.url("/feed.xml").absoluteString, status: 500, reason: "Internal Server Error")
            )
        }
    }

    @Test func anUnusualStatusIsNamedByItsClass() async throws {
        try await expectFailure({ $0.update("/feed.xml") { $0.status = 418 } }) { error, _ in
            #expect(error.description.contains("the server answered 418 (a client error)"))
        }
    }

    @Test func timeout() async throws {
        let started = Date()
        try await expectFailure(
            { $0.update("/feed.xml") { $0.delay = .seconds(600) } },
            fetcher: { ServerFeedFetcher(url: $0.url("/feed.xml"), timeout: 0.5) }
        ) { error, server in
            #expect(error == .timedOut(source: server.url("/feed.xml").absoluteString, seconds: 0.5))
            #expect(error.description.contains("no complete answer within 0.5 seconds"))
        }
        // The fetcher's timeout ended the wait, not the server (which would answer after ten
        // minutes). The bound is loose on purpose: on a loaded 2-core machine this test has
        // waited minutes for a thread of Swift's cooperative pool before and after the fetch.
        #expect(Date().timeIntervalSince(started) < 590)
    }

    @Test func aWebPageIsTheWrongContentType() async throws {
        try await expectFailure({
            $0.set(
                "/feed.xml", .init(contentType: "text/html; charset=utf-8", body: "<!doctype html><html><body>Hi</body></html>"))
        }) { error, server in
            #expect(error == .wrongContentType(source: server.url("/feed.xml").absoluteString, contentType: "text/html"))
            #expect(error.description.contains("is text/html, not a feed"))
        }
    }

    @Test func anImageIsTheWrongContentTypeEvenIfItLooksLikeXML() async throws {
        try await expectFailure({ $0.set("/feed.xml", .init(contentType: "image/svg", body: Fixtures.rss)) }) { error, _ in
            guard case .wrongContentType(_, "image/svg") = error else {
                Issue.record("\(error)")
                return
            }
        }
    }

    @Test func malformedXML() async throws {
        let broken = """
            <?xml version="1.0"?>
            <rss version="2.0"><channel><title>Broken</title>
              <item><title>One</title><link>https://example.com/1</link></item>
              <item><title>Two</title></channel></rss>
            """
        try await expectFailure({ $0.set("/feed.xml", .init(contentType: "application/rss+xml", body: broken)) }) { error, _ in
            guard case .malformedXML(_, let line, _, let detail) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(line == 4, "the line where <item> is left open")
            #expect(detail == "an end tag does not match its start tag", "\(error)")
            #expect(error.description.contains("is not well-formed XML (line 4, column"))
        }
    }

    @Test func anHTMLEntityInXMLIsMalformed() async throws {
        let body = "<rss version=\"2.0\"><channel><title>A&nbsp;B</title></channel></rss>"
        try await expectFailure({ $0.set("/feed.xml", .init(contentType: "application/rss+xml", body: body)) }) { error, _ in
            guard case .malformedXML(_, 1, _, let detail) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(detail.contains("&nbsp;"), "\(detail)")
        }
    }

    @Test func malformedJSON() async throws {
        let broken = #"{"version": "https://jsonfeed.org/version/1.1", "title": "X", "items": [{"id": "1",, }]}"#
        try await expectFailure({ $0.set("/feed.xml", .init(contentType: "application/feed+json", body: broken)) }) {
            error, server in
            guard case .malformedJSON(let source, 1, let column, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(source == server.url("/feed.xml").absoluteString)
            #expect(column == 84)
        }
    }

    @Test func anEmptyBody() async throws {
        try await expectFailure({ $0.set("/feed.xml", .init(contentType: "application/rss+xml", body: " \n")) }) {
            error, server in
            #expect(error == .emptyFeed(source: server.url("/feed.xml").absoluteString))
        }
    }

    @Test func xmlThatIsNotAFeed() async throws {
        try await expectFailure({
            $0.set("/feed.xml", .init(contentType: "application/xml", body: "<html xmlns=\"http://www.w3.org/1999/xhtml\"/>"))
        }) { error, _ in
            #expect(error.description.contains("found an XML document whose root element is <html>"), "\(error)")
        }
    }

    @Test func aJSONFeedWithoutItems() async throws {
        try await expectFailure({
            $0.set(
                "/feed.xml",
                .init(contentType: "application/feed+json", body: #"{"version": "https://jsonfeed.org/version/1.1", "items": 3}"#)
            )
        }) { error, _ in
            #expect(error.description.contains("a JSON Feed whose \"items\" is the number 3"), "\(error)")
        }
    }

    @Test func aBodyLargerThanTheLimit() async throws {
        try await expectFailure(
            { $0.set("/feed.xml", .init(contentType: "application/rss+xml", body: Fixtures.smallRSS(0..<200))) },
            fetcher: { ServerFeedFetcher(url: $0.url("/feed.xml"), maximumBytes: 4_096) }
        ) { error, server in
            #expect(error == .tooLarge(source: server.url("/feed.xml").absoluteString, limit: 4_096))
            #expect(error.description.contains("larger than 4 KiB"))
        }
    }

    @Test func aNotModifiedAnswerToAnUnconditionalRequest() async throws {
        try await expectFailure({ $0.update("/feed.xml") { $0.alwaysNotModified = true } }) { error, server in
            #expect(error == .unexpectedNotModified(source: server.url("/feed.xml").absoluteString))
        }
    }

    @Test func connectionRefused() async throws {
        // A port held by a socket that is bound but not listening: connecting is refused,
        // and no other test's server can be given the port meanwhile.
        let port = try ReservedPort()
        let closed = URL(string: "http://127.0.0.1:\(port.number)/feed.xml")!
        let harness = try Harness()
        let before = try harness.snapshot()
        let error = await #expect(throws: FeedLoaderError.self) {
            try await harness.importer.importFeed(from: ServerFeedFetcher(url: closed, timeout: 10))
        }
        guard case .unreachable(let source, let reason) = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(source == closed.absoluteString)
        #expect(reason.contains("refused"), "\(reason)")
        #expect(error?.description.hasPrefix("Cannot reach \(closed): ") == true)
        #expect(try harness.snapshot() == before)
    }

    @Test func cancellingTheImportCancelsTheRequest() async throws {
        let harness = try Harness()
        try await withFeedServer { server in
            server.set("/slow", .init(contentType: "application/rss+xml", body: Fixtures.smallRSS(0..<2), delay: .seconds(600)))
            let task = Task { try await harness.importer.importFeed(from: ServerFeedFetcher(url: server.url("/slow"))) }
            try await Task.sleep(for: .milliseconds(200))
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(try harness.items().isEmpty)
        }
    }
}
