import Foundation
import Testing
@testable import FeedLoader

@Suite("Reading feed JSON")
struct FeedParserTests {
    @Test func malformedJSONNamesTheLineAndColumnAndImportsNothing() throws {
        let text = "[\n  {\"title\": \"A\",\n   \"url\": \"https://example.com/a\",,\n  }\n]"
        #expect {
            try FeedParser.parse(Data(text.utf8), source: "feed.json")
        } throws: { error in
            guard case .malformedJSON(let source, let line, let column, _) = error as? FeedLoaderError else { return false }
            return source == "feed.json" && line == 3 && column == 35
        }
        let error = try #require(throws: FeedLoaderError.self) { try FeedParser.parse(Data(text.utf8), source: "feed.json") }
        #expect(error.description.hasPrefix("feed.json is not valid JSON (line 3, column 35): Invalid value, found \",\""))
        #expect(error.description.hasSuffix("Nothing was imported."))
    }

    @Test func emptyAndTruncatedFilesAreMalformed() throws {
        let empty = try #require(throws: FeedLoaderError.self) { try FeedParser.parse(Data(), source: "empty.json") }
        #expect(empty.description.contains("the file is empty"))
        let truncated = try #require(throws: FeedLoaderError.self) {
            try FeedParser.parse(Data("[{\"title\": \"x\"".utf8), source: "cut.json")
        }
        #expect(truncated.description.contains("cut.json is not valid JSON"))
    }

    @Test func jsonThatIsNotAListIsNotAFeed() throws {
        let error = try #require(throws: FeedLoaderError.self) {
            try FeedParser.parse(Data("{\"title\": \"x\"}".utf8), source: "object.json")
        }
        #expect(error == .notAFeed(source: "object.json", found: "an object"))
    }

    @Test func malformedItemsAreNamedAndTheOthersKept() throws {
        let text = """
            [
              {"title": "Good", "url": "https://example.com/good", "published": "2025-06-13T10:00:00Z"},
              {"title": "No date", "url": "https://example.com/no-date"},
              {"title": "   ", "url": "https://example.com/blank"},
              {"title": "Not the web", "url": "ftp://example.com/x", "published": "2025-06-13T10:00:00Z"},
              42,
              {"title": "Bad date", "url": "https://example.com/bad-date", "published": "last Tuesday"},
              {"title": 7, "url": "https://example.com/seven", "published": "2025-06-13T10:00:00Z"},
              {"url": "https://example.com/untitled", "published": "2025-06-13T10:00:00Z"},
              {"title": "Bad image", "url": "https://example.com/img", "published": "2025-06-13", "imageURL": "nope"},
              {"title": "Also good", "url": "https://example.com/also", "published": "2025-06-13T12:00:00.250+02:00",
               "summary": " Text ", "image_url": "https://example.com/a.jpg"}
            ]
            """
        let parsed = try FeedParser.parse(Data(text.utf8), source: "mixed.json")
        #expect(parsed.total == 10)
        #expect(parsed.items.map(\.index) == [0, 9])
        #expect(parsed.items.map(\.item.title) == ["Good", "Also good"])
        let also = parsed.items[1].item
        #expect(also.source == "example.com", "the source defaults to the url's host")
        #expect(also.summary == "Text")
        #expect(also.imageURL == "https://example.com/a.jpg")
        #expect(also.published == Date(timeIntervalSince1970: 1_749_808_800.25))
        #expect(
            parsed.problems.map(\.description) == [
                #"item 2 ("No date", https://example.com/no-date): "published" is missing"#,
                #"item 3 (https://example.com/blank): "title" is empty"#,
                #"item 4 ("Not the web", ftp://example.com/x): "url" is not an http or https address: "ftp://example.com/x""#,
                "item 5: expected an object, found the number 42",
                #"item 6 ("Bad date", https://example.com/bad-date): "published" is not an ISO 8601 date: "last Tuesday""#,
                #"item 7 (https://example.com/seven): "title" is not text, found the number 7"#,
                #"item 8 (https://example.com/untitled): "title" is missing"#,
                #"item 9 ("Bad image", https://example.com/img): "imageURL" is not an http or https address: "nope""#,
            ])
    }

    @Test func aFeedObjectWithItemsIsAccepted() throws {
        let text = #"{"items": [{"title": "A", "url": "https://example.com/a", "published": "2025-06-13"}]}"#
        let parsed = try FeedParser.parse(Data(text.utf8), source: "wrapped.json")
        #expect(parsed.items.count == 1)
        #expect(parsed.items[0].item.published == Date(timeIntervalSince1970: 1_749_772_800))
    }

    @Test func exportedItemsReadBackTheSame() throws {
        let generator = FeedGenerator(seed: 3, newest: Date(timeIntervalSince1970: 1_750_000_000))
        let items = generator.items(0..<50)
        let parsed = try FeedParser.parse(FeedParser.encode(items), source: "round-trip.json")
        #expect(parsed.problems.isEmpty)
        #expect(parsed.items.map(\.item) == items)
    }

    @Test func theBundledSampleIsAValidFeedOfSeveralHundredItems() async throws {
        guard case .document(let document) = try await FileFeedFetcher.sample.fetchFeed(validators: nil) else {
            Issue.record("a file is always fetched whole")
            return
        }
        #expect(document.contentType == "application/json")
        let parsed = try FeedParser.parse(document.data, source: "sample-feed.json")
        #expect(parsed.problems.isEmpty)
        #expect(parsed.items.count >= 300)
        #expect(Set(parsed.items.map(\.item.url)).count == parsed.items.count)
        let dates = parsed.items.map(\.item.published)
        let weeks = (dates.max()!.timeIntervalSince(dates.min()!)) / (7 * 86_400)
        #expect(weeks >= 4, "the sample spans several weeks")
        #expect(Set(parsed.items.map(\.item.source)).count >= 8)
    }
}
