import Foundation
import Testing

import Folio

@testable import FeedLoader

/// FeedLoader's records are declared with `@PersistentRecord`; their entities must be the
/// ones FeedLoader declared by hand before (model version 6), so that every file it made
/// opens without a migration. The hand-written declarations are kept here, as they were.
@Suite("FeedLoader's macro entities")
struct FeedModelEntityTests {
    static let handWrittenFeed = EntityDescription<Feed>(
        "feed",
        [
            AttributeDescription(\.title, searchable: true),
            AttributeDescription(\.url, unique: true),
            AttributeDescription(\.published, indexed: true),
            AttributeDescription(\.summary),
            AttributeDescription(\.sourceName, column: "source", searchable: true),
            AttributeDescription(\.imageURL),
            AttributeDescription(\.starred, defaultValue: false),
            AttributeDescription(\.guid),
            AttributeDescription(\.undated, defaultValue: false),
            AttributeDescription(\.starOrder, indexed: true, defaultValue: 0),
            AttributeDescription(\.isRead, defaultValue: false),
        ],
        relationships: [.toOne(\.source, column: "source_id")],
        indexes: [IndexDescription([\.isRead, \.published])])

    static let handWrittenSource = EntityDescription<Source>(
        "source",
        [
            AttributeDescription(\.feedName, unique: true),
            AttributeDescription(\.name, indexed: true),
            AttributeDescription(\.siteURL),
            AttributeDescription(\.muted, defaultValue: false),
        ],
        relationships: [.toMany(\Feed.source, deleteRule: .cascade)])

    static let handWrittenEndpoint = EntityDescription<FeedEndpoint>(
        "feed_endpoint",
        [
            AttributeDescription(\.address, unique: true),
            AttributeDescription(\.entityTag),
            AttributeDescription(\.lastModified),
            AttributeDescription(\.fetched),
        ])

    @Test func feed() { expectSame(Feed.entity, Self.handWrittenFeed) }
    @Test func source() { expectSame(Source.entity, Self.handWrittenSource) }
    @Test func feedEndpoint() { expectSame(FeedEndpoint.entity, Self.handWrittenEndpoint) }

    /// The version hashes FeedLoader's files of model version 6 record.
    @Test func versionHashesAreUnchanged() {
        #expect(Feed.entity.versionHash == Self.handWrittenFeed.versionHash)
        #expect(Source.entity.versionHash == Self.handWrittenSource.versionHash)
        #expect(FeedEndpoint.entity.versionHash == Self.handWrittenEndpoint.versionHash)
    }

    /// A source's `items` is the request of its items, through their to-one.
    @Test func aSourcesItemsAreARequest() throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let source = try store.write { tx -> Source in
            var source = Source(feedName: "A", siteURL: nil)
            try tx.insert(&source)
            for number in 0..<3 {
                var feed = Feed()
                feed.url = "https://example.com/\(number)"
                feed.source = ToOne(source)
                try tx.insert(&feed)
            }
            var other = Feed()
            other.url = "https://example.com/other"
            try tx.insert(&other)
            return source
        }
        #expect(try store.count(source.items) == 3)
    }

    private func expectSame<R: PersistentRecord>(
        _ actual: EntityDescription<R>, _ expected: EntityDescription<R>, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(actual.name == expected.name, sourceLocation: sourceLocation)
        #expect(actual.schema == expected.schema, sourceLocation: sourceLocation)
        #expect(actual.versionHash == expected.versionHash, sourceLocation: sourceLocation)
        #expect(actual.attributes.map(\.keyPath) == expected.attributes.map(\.keyPath), sourceLocation: sourceLocation)
        #expect(actual.attributes.map(\.defaultValue) == expected.attributes.map(\.defaultValue), sourceLocation: sourceLocation)
        #expect(actual.attributes.map(\.renamedFrom) == expected.attributes.map(\.renamedFrom), sourceLocation: sourceLocation)
        #expect(
            actual.relationships.map(\.deleteRule) == expected.relationships.map(\.deleteRule), sourceLocation: sourceLocation)
    }
}
