import MacroTesting
import Testing

@testable import FolioMacrosCore

/// What `@PersistentRecord` and the attribute macros expand to.
@Suite(.macros(folioMacros))
struct RecordExpansionTests {
    @Test func plainRecord() {
        assertMacro {
            """
            @PersistentRecord
            struct Bookmark {
                var id: RecordID?
                var title = ""
                var created = Date()
                var starred = false
                var visits: Int = 0
            }
            """
        } expansion: {
            #"""
            struct Bookmark {
                var id: RecordID?
                var title = ""
                var created = Date()
                var starred = false
                var visits: Int = 0

                static let entity = EntityDescription<Bookmark>(
                    "bookmark",
                    [
                        AttributeDescription(\Bookmark.title, column: "title"),
                        AttributeDescription(\Bookmark.created, column: "created"),
                        AttributeDescription(\Bookmark.starred, column: "starred"),
                        AttributeDescription(\Bookmark.visits, column: "visits"),
                    ]
                )
            }

            extension Bookmark: PersistentRecord {
            }
            """#
        }
    }

    @Test func optionals() {
        assertMacro {
            """
            @PersistentRecord
            struct Contact {
                var id: RecordID?
                var nickname: String?
                var birthday: Date? = nil
                var age: Optional<Int>
                var avatar: Data!
            }
            """
        } expansion: {
            #"""
            struct Contact {
                var id: RecordID?
                var nickname: String?
                var birthday: Date? = nil
                var age: Optional<Int>
                var avatar: Data!

                static let entity = EntityDescription<Contact>(
                    "contact",
                    [
                        AttributeDescription(\Contact.nickname, column: "nickname"),
                        AttributeDescription(\Contact.birthday, column: "birthday"),
                        AttributeDescription(\Contact.age, column: "age"),
                        AttributeDescription(\Contact.avatar, column: "avatar"),
                    ]
                )
            }

            extension Contact: PersistentRecord {
            }
            """#
        }
    }

    @Test func everyOption() {
        assertMacro {
            """
            @PersistentRecord("feed")
            struct Feed {
                var id: RecordID?
                @Stored(.searchable) var title = ""
                @Stored(.unique) var url = ""
                @Stored(.indexed) var published = Date(timeIntervalSince1970: 0)
                @Stored(.folded) var author = ""
                @Stored(.indexed, .unique) var slug = ""
                @Stored(.searchable, column: "source") var sourceName = ""
                @Stored(defaultValue: false) var starred = false
                @Stored(.indexed, defaultValue: 0) var starOrder = 0
            }
            """
        } expansion: {
            #"""
            struct Feed {
                var id: RecordID?
                var title = ""
                var url = ""
                var published = Date(timeIntervalSince1970: 0)
                var author = ""
                var slug = ""
                var sourceName = ""
                var starred = false
                var starOrder = 0

                static let entity = EntityDescription<Feed>(
                    "feed",
                    [
                        AttributeDescription(\Feed.title, column: "title", searchable: true),
                        AttributeDescription(\Feed.url, column: "url", unique: true),
                        AttributeDescription(\Feed.published, column: "published", indexed: true),
                        AttributeDescription(\Feed.author, column: "author", folded: true),
                        AttributeDescription(\Feed.slug, column: "slug", indexed: true, unique: true),
                        AttributeDescription(\Feed.sourceName, column: "source", searchable: true),
                        AttributeDescription(\Feed.starred, column: "starred", defaultValue: false),
                        AttributeDescription(\Feed.starOrder, column: "starOrder", indexed: true, defaultValue: 0),
                    ]
                )
            }

            extension Feed: PersistentRecord {
            }
            """#
        }
    }

    @Test func renamed() {
        assertMacro {
            """
            @PersistentRecord("post", renamedFrom: "article")
            struct Post {
                var id: RecordID?
                @Stored(renamedFrom: "name") var title = ""
                @Stored(.folded, column: "body_text", renamedFrom: "text") var body = ""
                @Stored(column: "author_id", renamedFrom: "writer") var author = ToOne<Author>()
            }
            """
        } expansion: {
            #"""
            struct Post {
                var id: RecordID?
                var title = ""
                var body = ""
                var author = ToOne<Author>()

                static let entity = EntityDescription<Post>(
                    "post",
                    [
                        AttributeDescription(\Post.title, column: "title", renamedFrom: "name"),
                        AttributeDescription(\Post.body, column: "body_text", folded: true, renamedFrom: "text"),
                    ],
                    relationships: [
                        .toOne(\Post.author, column: "author_id", renamedFrom: "writer"),
                    ],
                    renamedFrom: "article"
                )
            }

            extension Post: PersistentRecord {
            }
            """#
        }
    }

    @Test func transientComputedAndStaticPropertiesAreSkipped() {
        assertMacro {
            """
            @PersistentRecord
            struct Note {
                var id: RecordID?
                var text = ""
                @NotStored var isExpanded = false
                @NotStored let draftID = UUID()
                var length: Int { text.count }
                var shouted: String {
                    get { text.uppercased() }
                    set { text = newValue.lowercased() }
                }
                var edits = 0 {
                    didSet { isExpanded = false }
                }
                static let placeholder = "…"
                static var count = 0
                func summary() -> String { text }
            }
            """
        } expansion: {
            #"""
            struct Note {
                var id: RecordID?
                var text = ""
                var isExpanded = false
                let draftID = UUID()
                var length: Int { text.count }
                var shouted: String {
                    get { text.uppercased() }
                    set { text = newValue.lowercased() }
                }
                var edits = 0 {
                    didSet { isExpanded = false }
                }
                static let placeholder = "…"
                static var count = 0
                func summary() -> String { text }

                static let entity = EntityDescription<Note>(
                    "note",
                    [
                        AttributeDescription(\Note.text, column: "text"),
                        AttributeDescription(\Note.edits, column: "edits"),
                    ]
                )
            }

            extension Note: PersistentRecord {
            }
            """#
        }
    }

    @Test func toOne() {
        assertMacro {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                var title = ""
                var source = ToOne<Source>()
                var feed: ToOne<Feed> = ToOne()
                var published = Date()
                @Stored(column: "editor_id") var editor: Folio.ToOne<Person>
                init() {}
            }
            """
        } expansion: {
            #"""
            struct Item {
                var id: RecordID?
                var title = ""
                var source = ToOne<Source>()
                var feed: ToOne<Feed> = ToOne()
                var published = Date()
                var editor: Folio.ToOne<Person>
                init() {}

                static let entity = EntityDescription<Item>(
                    "item",
                    [
                        AttributeDescription(\Item.title, column: "title"),
                        AttributeDescription(\Item.published, column: "published"),
                    ],
                    relationships: [
                        .toOne(\Item.source, column: "source"),
                        .toOne(\Item.feed, column: "feed"),
                        .toOne(\Item.editor, column: "editor_id"),
                    ]
                )
            }

            extension Item: PersistentRecord {
            }
            """#
        }
    }

    @Test func toManyInverseWithItsDeleteRule() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @Stored(.indexed) var name = ""
                @ToMany(\\Item.source, deleteRule: .cascade) var items: RecordRequest<Item>
                @ToMany(\\Subscription.source) var subscriptions: RecordRequest<Subscription>
            }
            """
        } expansion: {
            #"""
            struct Source {
                var id: RecordID?
                var name = ""
                var items: RecordRequest<Item> {
                    get {
                        RecordRequest<Item>(relatedTo: self.id, through: \Item.source)
                    }
                }
                var subscriptions: RecordRequest<Subscription> {
                    get {
                        RecordRequest<Subscription>(relatedTo: self.id, through: \Subscription.source)
                    }
                }

                static let entity = EntityDescription<Source>(
                    "source",
                    [
                        AttributeDescription(\Source.name, column: "name", indexed: true),
                    ],
                    relationships: [
                        .toMany(\Item.source, deleteRule: .cascade),
                        .toMany(\Subscription.source),
                    ]
                )
            }

            extension Source: PersistentRecord {
            }
            """#
        }
    }
}
