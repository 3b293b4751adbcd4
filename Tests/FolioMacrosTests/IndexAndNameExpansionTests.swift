import MacroTesting
import Testing

@testable import FolioMacrosCore

/// What `@PersistentRecord` expands to for compound indexes, access levels and table names.
@Suite(.macros(folioMacros))
struct IndexAndNameExpansionTests {
    @Test func compoundIndexes() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                @Stored(.folded) var title = ""
                var isRead = false
                var published = Date()
                var feed = ToOne<Feed>()
                #CompoundIndex<Article>(\\.isRead, \\.published)
                #CompoundIndex<Article>(.key(\\.feed), .key(\\.published, order: .reverse))
                #CompoundIndex<Article>(\\.title.folded, \\.id)
            }
            """
        } expansion: {
            #"""
            struct Article {
                var id: RecordID?
                var title = ""
                var isRead = false
                var published = Date()
                var feed = ToOne<Feed>()

                static let entity = EntityDescription<Article>(
                    "article",
                    [
                        AttributeDescription(\Article.title, column: "title", folded: true),
                        AttributeDescription(\Article.isRead, column: "isRead"),
                        AttributeDescription(\Article.published, column: "published"),
                    ],
                    relationships: [
                        .toOne(\Article.feed, column: "feed"),
                    ],
                    indexes: [
                        IndexDescription<Article>([\.isRead, \.published]),
                        IndexDescription<Article>([.key(\.feed), .key(\.published, order: .reverse)]),
                        IndexDescription<Article>([\.title.folded, \.id]),
                    ]
                )
            }

            extension Article: PersistentRecord {
            }
            """#
        }
    }

    @Test func accessLevelAndAnExistingConformance() {
        assertMacro {
            """
            @PersistentRecord
            public struct Tag: PersistentRecord, Equatable {
                public var id: RecordID?
                public var name = ""
            }
            """
        } expansion: {
            #"""
            public struct Tag: PersistentRecord, Equatable {
                public var id: RecordID?
                public var name = ""

                public static let entity = EntityDescription<Tag>(
                    "tag",
                    [
                        AttributeDescription(\Tag.name, column: "name"),
                    ]
                )
            }

            extension Tag: PersistentRecord {
            }
            """#
        }
    }

    @Test func theDefaultTableIsTheTypeNameInSnakeCase() {
        #expect(RecordNames.snakeCase("FeedEndpoint") == "feed_endpoint")
        #expect(RecordNames.snakeCase("PhotoTag") == "photo_tag")
        #expect(RecordNames.snakeCase("Article") == "article")
        #expect(RecordNames.snakeCase("URLCache") == "url_cache")
        #expect(RecordNames.snakeCase("Item2Tag") == "item2_tag")
        #expect(RecordNames.snakeCase("HTTPRequest") == "http_request")
        assertMacro {
            """
            @PersistentRecord
            struct FeedEndpoint {
                var id: RecordID?
                @Stored(.unique) var address = ""
                var `default` = false
            }
            """
        } expansion: {
            #"""
            struct FeedEndpoint {
                var id: RecordID?
                var address = ""
                var `default` = false

                static let entity = EntityDescription<FeedEndpoint>(
                    "feed_endpoint",
                    [
                        AttributeDescription(\FeedEndpoint.address, column: "address", unique: true),
                        AttributeDescription(\FeedEndpoint.`default`, column: "default"),
                    ]
                )
            }

            extension FeedEndpoint: PersistentRecord {
            }
            """#
        }
    }
}
