import MacroTesting
import Testing

@testable import FolioMacrosCore

/// The diagnostics of `@PersistentRecord` about types: common types Folio cannot store, with
/// the type to declare instead; initial values of the new types; options that need text.
@Suite(.macros(folioMacros))
struct TypeDiagnosticTests {
    @Test func textAndFoundationClassesHaveASwiftTypeToDeclare() {
        assertMacro {
            """
            @PersistentRecord
            struct Note {
                var id: RecordID?
                var excerpt: Substring = ""
                var initial: Character? = nil
                var body: NSString = ""
                var blob: NSData? = nil
                var when: NSDate? = nil
                var link: NSURL? = nil
                var key: NSUUID? = nil
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Note {
                var id: RecordID?
                var excerpt: Substring = ""
                             ┬────────
                             ╰─ 🛑 'excerpt' cannot be a column (Substring): Folio stores text as 'String'; declare it 'String', or mark it @NotStored
                                ✏️ Declare 'excerpt' as 'String'
                                ✏️ Mark 'excerpt' @NotStored
                var initial: Character? = nil
                             ┬─────────
                             ╰─ 🛑 'initial' cannot be a column (Character?): Folio stores text as 'String'; declare it 'String?', or mark it @NotStored
                                ✏️ Declare 'initial' as 'String?'
                                ✏️ Mark 'initial' @NotStored
                var body: NSString = ""
                          ┬───────
                          ╰─ 🛑 'body' cannot be a column (NSString): Folio stores text as 'String'; declare it 'String', or mark it @NotStored
                             ✏️ Declare 'body' as 'String'
                             ✏️ Mark 'body' @NotStored
                var blob: NSData? = nil
                          ┬──────
                          ╰─ 🛑 'blob' cannot be a column (NSData?): Folio stores bytes as 'Data'; declare it 'Data?', or mark it @NotStored
                             ✏️ Declare 'blob' as 'Data?'
                             ✏️ Mark 'blob' @NotStored
                var when: NSDate? = nil
                          ┬──────
                          ╰─ 🛑 'when' cannot be a column (NSDate?): Folio stores dates as 'Date'; declare it 'Date?', or mark it @NotStored
                             ✏️ Declare 'when' as 'Date?'
                             ✏️ Mark 'when' @NotStored
                var link: NSURL? = nil
                          ┬─────
                          ╰─ 🛑 'link' cannot be a column (NSURL?): Folio stores URLs as 'URL'; declare it 'URL?', or mark it @NotStored
                             ✏️ Declare 'link' as 'URL?'
                             ✏️ Mark 'link' @NotStored
                var key: NSUUID? = nil
                         ┬──────
                         ╰─ 🛑 'key' cannot be a column (NSUUID?): Folio stores UUIDs as 'UUID'; declare it 'UUID?', or mark it @NotStored
                            ✏️ Declare 'key' as 'UUID?'
                            ✏️ Mark 'key' @NotStored
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Note {
                var id: RecordID?
                var excerpt: String = ""
                var initial: String? = nil
                var body: String = ""
                var blob: Data? = nil
                var when: Date? = nil
                var link: URL? = nil
                var key: UUID? = nil
            }
            """
        } expansion: {
            #"""
            struct Note {
                var id: RecordID?
                var excerpt: String = ""
                var initial: String? = nil
                var body: String = ""
                var blob: Data? = nil
                var when: Date? = nil
                var link: URL? = nil
                var key: UUID? = nil

                static let entity = EntityDescription<Note>(
                    "note",
                    [
                        AttributeDescription(\Note.excerpt, column: "excerpt"),
                        AttributeDescription(\Note.initial, column: "initial"),
                        AttributeDescription(\Note.body, column: "body"),
                        AttributeDescription(\Note.blob, column: "blob"),
                        AttributeDescription(\Note.when, column: "when"),
                        AttributeDescription(\Note.link, column: "link"),
                        AttributeDescription(\Note.key, column: "key"),
                    ]
                )
            }

            extension Note: PersistentRecord {
            }
            """#
        }
    }

    @Test func imagesColorsAndUntypedValuesAreRefused() {
        assertMacro {
            """
            @PersistentRecord
            struct Note {
                var id: RecordID?
                var thumbnail: UIImage? = nil
                var tint: NSColor? = nil
                var styled: NSAttributedString? = nil
                var anything: Any = 0
                var object: AnyObject? = nil
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Note {
                var id: RecordID?
                var thumbnail: UIImage? = nil
                               ┬───────
                               ╰─ 🛑 'thumbnail' cannot be a column (UIImage?): an image is not a value SQLite can store; store its encoded bytes (PNG, JPEG) in a 'Data' property, or mark it @NotStored
                                  ✏️ Mark 'thumbnail' @NotStored
                var tint: NSColor? = nil
                          ┬───────
                          ╰─ 🛑 'tint' cannot be a column (NSColor?): a color is not a value SQLite can store; store its components (Double properties) or a hex String, or mark it @NotStored
                             ✏️ Mark 'tint' @NotStored
                var styled: NSAttributedString? = nil
                            ┬──────────────────
                            ╰─ 🛑 'styled' cannot be a column (NSAttributedString?): it is not Codable; store its text as 'String', or its encoded form as 'Data', or mark it @NotStored
                               ✏️ Mark 'styled' @NotStored
                var anything: Any = 0
                              ┬──
                              ╰─ 🛑 'anything' cannot be a column (Any): 'Any' has no single column type; declare the concrete type, or mark it @NotStored
                                 ✏️ Mark 'anything' @NotStored
                var object: AnyObject? = nil
                            ┬─────────
                            ╰─ 🛑 'object' cannot be a column (AnyObject?): 'AnyObject' has no single column type; declare the concrete type, or mark it @NotStored
                               ✏️ Mark 'object' @NotStored
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Note {
                var id: RecordID?
                @NotStored var thumbnail: UIImage? = nil
                @NotStored var tint: NSColor? = nil
                @NotStored var styled: NSAttributedString? = nil
                @NotStored var anything: Any = 0
                @NotStored var object: AnyObject? = nil
            }
            """
        }
    }

    @Test func aRequestWithoutToManyIsRefused() {
        assertMacro {
            """
            @PersistentRecord
            struct Shelf {
                var id: RecordID?
                var volumes: RecordRequest<Volume> = RecordRequest()
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Shelf {
                var id: RecordID?
                var volumes: RecordRequest<Volume> = RecordRequest()
                             ┬────────────────────
                             ╰─ 🛑 'volumes' cannot be a column (RecordRequest<Volume>): a request is not a value SQLite can store; declare a to-many '@ToMany(\Child.toOne) var children: RecordRequest<Child>', or mark it @NotStored
                                ✏️ Mark 'volumes' @NotStored
            }
            """#
        } fixes: {
            """
            @PersistentRecord
            struct Shelf {
                var id: RecordID?
                @NotStored var volumes: RecordRequest<Volume> = RecordRequest()
            }
            """
        }
    }

    /// The new types without an initial value: collections get theirs, any type can be made
    /// optional.
    @Test func theNewTypesWithoutInitialValue() {
        assertMacro {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                var views: UInt32
                var ratio: Float
                var tags: [String]
                var counts: [String: Int]
                var link: URL
                var status: Status
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                var views: UInt32
                    ┬────
                    ╰─ 🛑 'views' needs an initial value: Folio creates records with init() before it sets their attributes; give it one, declare it optional, or declare init() yourself
                       ✏️ Give 'views' the initial value 0
                       ✏️ Declare 'views' as 'UInt32?'
                var ratio: Float
                    ┬────
                    ╰─ 🛑 'ratio' needs an initial value: Folio creates records with init() before it sets their attributes; give it one, declare it optional, or declare init() yourself
                       ✏️ Give 'ratio' the initial value 0
                       ✏️ Declare 'ratio' as 'Float?'
                var tags: [String]
                    ┬───
                    ╰─ 🛑 'tags' needs an initial value: Folio creates records with init() before it sets their attributes; give it one, declare it optional, or declare init() yourself
                       ✏️ Give 'tags' the initial value []
                       ✏️ Declare 'tags' as '[String]?'
                var counts: [String: Int]
                    ┬─────
                    ╰─ 🛑 'counts' needs an initial value: Folio creates records with init() before it sets their attributes; give it one, declare it optional, or declare init() yourself
                       ✏️ Give 'counts' the initial value [:]
                       ✏️ Declare 'counts' as '[String: Int]?'
                var link: URL
                    ┬───
                    ╰─ 🛑 'link' needs an initial value: Folio creates records with init() before it sets their attributes; give it one, declare it optional, or declare init() yourself
                       ✏️ Declare 'link' as 'URL?'
                var status: Status
                    ┬─────
                    ╰─ 🛑 'status' needs an initial value: Folio creates records with init() before it sets their attributes; give it one, declare it optional, or declare init() yourself
                       ✏️ Declare 'status' as 'Status?'
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                var views: UInt32 = 0
                var ratio: Float = 0
                var tags: [String] = []
                var counts: [String: Int] = [:]
                var link: URL?
                var status: Status?
            }
            """
        } expansion: {
            #"""
            struct Post {
                var id: RecordID?
                var views: UInt32 = 0
                var ratio: Float = 0
                var tags: [String] = []
                var counts: [String: Int] = [:]
                var link: URL?
                var status: Status?

                static let entity = EntityDescription<Post>(
                    "post",
                    [
                        AttributeDescription(\Post.views, column: "views"),
                        AttributeDescription(\Post.ratio, column: "ratio"),
                        AttributeDescription(\Post.tags, column: "tags"),
                        AttributeDescription(\Post.counts, column: "counts"),
                        AttributeDescription(\Post.link, column: "link"),
                        AttributeDescription(\Post.status, column: "status"),
                    ]
                )
            }

            extension Post: PersistentRecord {
            }
            """#
        }
    }

    @Test func foldedAndSearchableNeedText() {
        assertMacro {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                @Stored(.folded) var views: UInt8 = 0
                @Stored(.searchable) var ratio: Float = 0
                @Stored(.folded) var tags: [String] = []
                @Stored(.searchable) var scores = [String: Double]()
                @Stored(.folded) var link: URL? = nil
                @Stored(.searchable) var status = Status.draft
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                @Stored(.folded) var views: UInt8 = 0
                ┬───────────────
                ╰─ 🛑 'views' is declared folded, which applies to text attributes only (String, URL, an enum with String raw values); it is 'UInt8'
                @Stored(.searchable) var ratio: Float = 0
                ┬───────────────────
                ╰─ 🛑 'ratio' is declared searchable, which applies to text attributes only (String, URL, an enum with String raw values); it is 'Float'
                @Stored(.folded) var tags: [String] = []
                ┬───────────────
                ╰─ 🛑 'tags' is declared folded, which applies to text attributes only (String, URL, an enum with String raw values); it is '[String]'
                @Stored(.searchable) var scores = [String: Double]()
                ┬───────────────────
                ╰─ 🛑 'scores' is declared searchable, which applies to text attributes only (String, URL, an enum with String raw values); it is 'Dictionary'
                @Stored(.folded) var link: URL? = nil
                @Stored(.searchable) var status = Status.draft
            }
            """
        }
    }

    /// An implicit member (`.draft`) tells no type: an annotation is needed.
    @Test func anImplicitMemberNeedsAnAnnotation() {
        assertMacro {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                var status = .draft
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                var status = .draft
                    ┬─────
                    ╰─ 🛑 'status' needs a type annotation: @PersistentRecord cannot tell the type of '.draft', and must know whether the property is an attribute or a to-one (ToOne)
                       ✏️ Add the type annotation ': <#Type#>'
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Post {
                var id: RecordID?
                var status: <#Type#> = .draft
            }
            """
        } expansion: {
            #"""
            struct Post {
                var id: RecordID?
                var status: <#Type#> = .draft

                static let entity = EntityDescription<Post>(
                    "post",
                    [
                        AttributeDescription(\Post.status, column: "status"),
                    ]
                )
            }

            extension Post: PersistentRecord {
            }
            """#
        }
    }
}
