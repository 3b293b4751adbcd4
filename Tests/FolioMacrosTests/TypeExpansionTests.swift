import MacroTesting
import Testing

@testable import FolioMacrosCore

/// Every type Folio stores, as `@PersistentRecord` reads it from an annotation or an initial
/// value: each becomes an `AttributeDescription`, whose overloads (``AttributeValue``,
/// `Codable`) the compiler picks.
@Suite(.macros(folioMacros))
struct TypeExpansionTests {
    @Test func everyStoredTypeByAnnotation() {
        assertMacro {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                var tiny: Int8 = 0
                var small: UInt16 = 0
                var views: UInt32 = 0
                var hash: UInt64 = 0
                var ratio: Float = 1
                var link: URL?
                var home: Foundation.URL = URL(filePath: "/")
                var status: Status = .draft
                var priority: Priority? = nil
                var size: Dimensions = Dimensions()
                var tags: [String] = []
                var counts: [String: Int] = [:]
                var labels: Set<String> = []
            }
            """
        } expansion: {
            #"""
            struct Post {
                var id: RecordID?
                var tiny: Int8 = 0
                var small: UInt16 = 0
                var views: UInt32 = 0
                var hash: UInt64 = 0
                var ratio: Float = 1
                var link: URL?
                var home: Foundation.URL = URL(filePath: "/")
                var status: Status = .draft
                var priority: Priority? = nil
                var size: Dimensions = Dimensions()
                var tags: [String] = []
                var counts: [String: Int] = [:]
                var labels: Set<String> = []

                static let entity = EntityDescription<Post>(
                    "post",
                    [
                        AttributeDescription(\Post.tiny, column: "tiny"),
                        AttributeDescription(\Post.small, column: "small"),
                        AttributeDescription(\Post.views, column: "views"),
                        AttributeDescription(\Post.hash, column: "hash"),
                        AttributeDescription(\Post.ratio, column: "ratio"),
                        AttributeDescription(\Post.link, column: "link"),
                        AttributeDescription(\Post.home, column: "home"),
                        AttributeDescription(\Post.status, column: "status"),
                        AttributeDescription(\Post.priority, column: "priority"),
                        AttributeDescription(\Post.size, column: "size"),
                        AttributeDescription(\Post.tags, column: "tags"),
                        AttributeDescription(\Post.counts, column: "counts"),
                        AttributeDescription(\Post.labels, column: "labels"),
                    ]
                )
            }

            extension Post: PersistentRecord {
            }
            """#
        }
    }

    @Test func everyStoredTypeByInitialValue() {
        assertMacro {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                var status = Status.draft
                var published = Date.now
                var homepage = URL(string: "https://example.com")!
                var offset = -1
                var scale = -0.5
                var level = 3 as Int8
                var names = [String]()
                var scores = [String: Double]()
                var size = Dimensions(width: 1, height: 2)
                var created = Foundation.Date.distantPast
            }
            """
        } expansion: {
            #"""
            struct Post {
                var id: RecordID?
                var status = Status.draft
                var published = Date.now
                var homepage = URL(string: "https://example.com")!
                var offset = -1
                var scale = -0.5
                var level = 3 as Int8
                var names = [String]()
                var scores = [String: Double]()
                var size = Dimensions(width: 1, height: 2)
                var created = Foundation.Date.distantPast

                static let entity = EntityDescription<Post>(
                    "post",
                    [
                        AttributeDescription(\Post.status, column: "status"),
                        AttributeDescription(\Post.published, column: "published"),
                        AttributeDescription(\Post.homepage, column: "homepage"),
                        AttributeDescription(\Post.offset, column: "offset"),
                        AttributeDescription(\Post.scale, column: "scale"),
                        AttributeDescription(\Post.level, column: "level"),
                        AttributeDescription(\Post.names, column: "names"),
                        AttributeDescription(\Post.scores, column: "scores"),
                        AttributeDescription(\Post.size, column: "size"),
                        AttributeDescription(\Post.created, column: "created"),
                    ]
                )
            }

            extension Post: PersistentRecord {
            }
            """#
        }
    }

    /// Options on the new types: an enum indexed and unique, a URL folded, a JSON value with
    /// a default for a migration.
    @Test func optionsOnTheNewTypes() {
        assertMacro {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                @Stored(.indexed) var status = Status.draft
                @Stored(.unique, .folded) var link: URL? = nil
                @Stored(defaultValue: Dimensions()) var size = Dimensions()
                @Stored(.indexed, renamedFrom: "rank") var priority: Priority = .normal
            }
            """
        } expansion: {
            #"""
            struct Post {
                var id: RecordID?
                var status = Status.draft
                var link: URL? = nil
                var size = Dimensions()
                var priority: Priority = .normal

                static let entity = EntityDescription<Post>(
                    "post",
                    [
                        AttributeDescription(\Post.status, column: "status", indexed: true),
                        AttributeDescription(\Post.link, column: "link", unique: true, folded: true),
                        AttributeDescription(\Post.size, column: "size", defaultValue: Dimensions()),
                        AttributeDescription(\Post.priority, column: "priority", indexed: true, renamedFrom: "rank"),
                    ]
                )
            }

            extension Post: PersistentRecord {
            }
            """#
        }
    }

    /// A type the macro cannot judge by its name (a class, an enum without `Codable`) is left
    /// to the compiler: `AttributeDescription`'s unavailable overload names what to do, at the
    /// generated line that names the property.
    @Test func aTypeOnlyTheCompilerCanJudgeIsLeftToIt() {
        assertMacro {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                var cache: NSCache<NSString, NSData>? = nil
            }
            """
        } expansion: {
            #"""
            struct Post {
                var id: RecordID?
                var cache: NSCache<NSString, NSData>? = nil

                static let entity = EntityDescription<Post>(
                    "post",
                    [
                        AttributeDescription(\Post.cache, column: "cache"),
                    ]
                )
            }

            extension Post: PersistentRecord {
            }
            """#
        }
    }
}
