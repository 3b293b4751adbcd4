import MacroTesting
import Testing

@testable import FolioMacrosCore

/// Every diagnostic of `@PersistentRecord` about a property, with its fix-its.
@Suite(.macros(folioMacros))
struct PropertyDiagnosticTests {
    @Test func aLetIsRefused() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                let title: String = ""
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                let title: String = ""
                ┬──
                ╰─ 🛑 'title' is a 'let': Folio sets a record's attributes when it reads one, through writable key paths; declare it 'var', or mark it @NotStored if it is no column
                   ✏️ Change 'let' to 'var'
                   ✏️ Mark 'title' @NotStored
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var title: String = ""
            }
            """
        } expansion: {
            #"""
            struct Article {
                var id: RecordID?
                var title: String = ""

                static let entity = EntityDescription<Article>(
                    "article",
                    [
                        AttributeDescription(\Article.title, column: "title"),
                    ]
                )
            }

            extension Article: PersistentRecord {
            }
            """#
        }
    }

    @Test func aLazyPropertyIsRefused() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                lazy var words = 0
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                lazy var words = 0
                ┬───
                ╰─ 🛑 'words' is 'lazy': a lazy property cannot be a column (reading it changes the record); drop 'lazy', or mark it @NotStored
                   ✏️ Remove 'lazy'
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var words = 0
            }
            """
        } expansion: {
            #"""
            struct Article {
                var id: RecordID?
                var words = 0

                static let entity = EntityDescription<Article>(
                    "article",
                    [
                        AttributeDescription(\Article.words, column: "words"),
                    ]
                )
            }

            extension Article: PersistentRecord {
            }
            """#
        }
    }

    @Test func aTypeTheSyntaxCannotTellNeedsAnAnnotation() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var published = Calendar.current.startOfDay(for: .now)
                var score = makeScore()
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var published = Calendar.current.startOfDay(for: .now)
                    ┬────────
                    ╰─ 🛑 'published' needs a type annotation: @PersistentRecord cannot tell the type of 'Calendar.current.startOfDay(for: .now)', and must know whether the property is an attribute or a to-one (ToOne)
                       ✏️ Add the type annotation ': <#Type#>'
                var score = makeScore()
                    ┬────
                    ╰─ 🛑 'score' needs a type annotation: @PersistentRecord cannot tell the type of 'makeScore()', and must know whether the property is an attribute or a to-one (ToOne)
                       ✏️ Add the type annotation ': <#Type#>'
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var published: <#Type#> = Calendar.current.startOfDay(for: .now)
                var score: <#Type#> = makeScore()
            }
            """
        } expansion: {
            #"""
            struct Article {
                var id: RecordID?
                var published: <#Type#> = Calendar.current.startOfDay(for: .now)
                var score: <#Type#> = makeScore()

                static let entity = EntityDescription<Article>(
                    "article",
                    [
                        AttributeDescription(\Article.published, column: "published"),
                        AttributeDescription(\Article.score, column: "score"),
                    ]
                )
            }

            extension Article: PersistentRecord {
            }
            """#
        }
    }

    @Test func closureTupleMetatypeAndExistentialTypesAreRefused() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var onChange: () -> Void = {}
                var handler: (@Sendable (Int) -> Void)?
                var location: (Double, Double) = (0, 0)
                var kind: Any.Type = Int.self
                var payload: any Codable = 0
                var format = { (text: String) in text }
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var onChange: () -> Void = {}
                              ┬─────────
                              ╰─ 🛑 'onChange' cannot be a column (() -> Void): a closure is code, not a value SQLite can store; declare a type Folio stores (a number, Bool, String, URL, Date, Data, UUID, an enum with raw values, a Codable value), or mark it @NotStored
                                 ✏️ Mark 'onChange' @NotStored
                var handler: (@Sendable (Int) -> Void)?
                             ┬─────────────────────────
                             ╰─ 🛑 'handler' cannot be a column ((@Sendable (Int) -> Void)?): a closure is code, not a value SQLite can store; declare a type Folio stores (a number, Bool, String, URL, Date, Data, UUID, an enum with raw values, a Codable value), or mark it @NotStored
                                ✏️ Mark 'handler' @NotStored
                var location: (Double, Double) = (0, 0)
                              ┬───────────────
                              ╰─ 🛑 'location' cannot be a column ((Double, Double)): a tuple has no column type; declare one property per element, or mark it @NotStored
                                 ✏️ Mark 'location' @NotStored
                var kind: Any.Type = Int.self
                          ┬───────
                          ╰─ 🛑 'kind' cannot be a column (Any.Type): a metatype is a type, not a value SQLite can store; declare a type Folio stores (a number, Bool, String, URL, Date, Data, UUID, an enum with raw values, a Codable value), or mark it @NotStored
                             ✏️ Mark 'kind' @NotStored
                var payload: any Codable = 0
                             ┬──────────
                             ╰─ 🛑 'payload' cannot be a column (any Codable): an existential ('any') type has no single column type; declare the concrete type, or mark it @NotStored
                                ✏️ Mark 'payload' @NotStored
                var format = { (text: String) in text }
                    ┬──────────────────────────────────
                    ╰─ 🛑 'format' cannot be a column (closure): a closure is code, not a value SQLite can store; declare a type Folio stores (a number, Bool, String, URL, Date, Data, UUID, an enum with raw values, a Codable value), or mark it @NotStored
                       ✏️ Mark 'format' @NotStored
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                @NotStored var onChange: () -> Void = {}
                @NotStored var handler: (@Sendable (Int) -> Void)?
                @NotStored var location: (Double, Double) = (0, 0)
                @NotStored var kind: Any.Type = Int.self
                @NotStored var payload: any Codable = 0
                @NotStored var format = { (text: String) in text }
            }
            """
        }
    }

    @Test func aPropertyWithoutInitialValueNeedsOne() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var title: String
                var rating: Double
                var source: ToOne<Source>
                var note: String?
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var title: String
                    ┬────
                    ╰─ 🛑 'title' needs an initial value: Folio creates records with init() before it sets their attributes; give it one, declare it optional, or declare init() yourself
                       ✏️ Give 'title' the initial value ""
                       ✏️ Declare 'title' as 'String?'
                var rating: Double
                    ┬─────
                    ╰─ 🛑 'rating' needs an initial value: Folio creates records with init() before it sets their attributes; give it one, declare it optional, or declare init() yourself
                       ✏️ Give 'rating' the initial value 0
                       ✏️ Declare 'rating' as 'Double?'
                var source: ToOne<Source>
                    ┬─────
                    ╰─ 🛑 'source' needs an initial value: Folio creates records with init() before it sets their attributes; give it ToOne() (empty), or declare init() yourself
                       ✏️ Give 'source' the initial value ToOne()
                var note: String?
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var title: String = ""
                var rating: Double = 0
                var source: ToOne<Source> = ToOne()
                var note: String?
            }
            """
        } expansion: {
            #"""
            struct Article {
                var id: RecordID?
                var title: String = ""
                var rating: Double = 0
                var source: ToOne<Source> = ToOne()
                var note: String?

                static let entity = EntityDescription<Article>(
                    "article",
                    [
                        AttributeDescription(\Article.title, column: "title"),
                        AttributeDescription(\Article.rating, column: "rating"),
                        AttributeDescription(\Article.note, column: "note"),
                    ],
                    relationships: [
                        .toOne(\Article.source, column: "source"),
                    ]
                )
            }

            extension Article: PersistentRecord {
            }
            """#
        }
    }

    /// A type without a usual initial value: no fix-it.
    @Test func aPropertyOfAnotherTypeWithoutInitialValue() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var extra: Extra
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var extra: Extra
                    ┬────
                    ╰─ 🛑 'extra' needs an initial value: Folio creates records with init() before it sets their attributes; give it one, declare it optional, or declare init() yourself
                       ✏️ Declare 'extra' as 'Extra?'
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var extra: Extra?
            }
            """
        } expansion: {
            #"""
            struct Article {
                var id: RecordID?
                var extra: Extra?

                static let entity = EntityDescription<Article>(
                    "article",
                    [
                        AttributeDescription(\Article.extra, column: "extra"),
                    ]
                )
            }

            extension Article: PersistentRecord {
            }
            """#
        }
    }

    @Test func anOptionalToOneIsRefused() {
        assertMacro {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                var source: ToOne<Source>? = nil
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                var source: ToOne<Source>? = nil
                            ┬─────────────
                            ╰─ 🛑 'source' is an optional to-one: a ToOne is empty when it holds no identifier (ToOne()), so declare it 'ToOne<Target>' without '?'
                               ✏️ Declare 'source' as 'ToOne<Source>'
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                var source: ToOne<Source> = ToOne()
            }
            """
        } expansion: {
            #"""
            struct Item {
                var id: RecordID?
                var source: ToOne<Source> = ToOne()

                static let entity = EntityDescription<Item>(
                    "item",
                    [],
                    relationships: [
                        .toOne(\Item.source, column: "source"),
                    ]
                )
            }

            extension Item: PersistentRecord {
            }
            """#
        }
    }
}
