import MacroTesting
import Testing

@testable import FolioMacrosCore

/// What `@PersistentRecord` makes of `@Derived` properties, and every diagnostic about them.
@Suite(.macros(folioMacros))
struct DerivedMarkerTests {
    @Test func aFilteredCountIndexed() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @Stored(.indexed) var name = ""
                @Derived(.count(\\Item.source, where: #Predicate { $0.isRead == false }), .indexed) var unreadCount = 0
                @Derived(.count(\\Item.source)) var itemCount = 0
                @ToMany(\\Item.source, deleteRule: .cascade) var items: RecordRequest<Item>
            }
            """
        } expansion: {
            #"""
            struct Source {
                var id: RecordID?
                var name = ""
                var unreadCount = 0
                var itemCount = 0
                var items: RecordRequest<Item> {
                    get {
                        RecordRequest<Item>(relatedTo: self.id, through: \Item.source)
                    }
                }

                static let entity = EntityDescription<Source>(
                    "source",
                    [
                        AttributeDescription(\Source.name, column: "name", indexed: true),
                        AttributeDescription(\Source.unreadCount, derived: .count(\Item.source, where: #Predicate {
                                    $0.isRead == false
                                }), column: "unreadCount", indexed: true),
                        AttributeDescription(\Source.itemCount, derived: .count(\Item.source), column: "itemCount"),
                    ],
                    relationships: [
                        .toMany(\Item.source, deleteRule: .cascade),
                    ]
                )
            }

            extension Source: PersistentRecord {
            }
            """#
        }
    }

    @Test func aMaximumWithColumnAndRenamedFrom() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @Derived(.maximum(\\Item.published, of: \\Item.source), column: "newest_item", renamedFrom: "latest")
                var newest: Date?
                @Derived(Derivation.sum(\\Item.size, of: \\Item.source), .indexed, renamedFrom: "size") var totalSize: Int = 0
                @Derived(.minimum(\\Item.published, of: \\Item.source)) var oldest: Date? = nil
            }
            """
        } expansion: {
            #"""
            struct Source {
                var id: RecordID?
                var newest: Date?
                var totalSize: Int = 0
                var oldest: Date? = nil

                static let entity = EntityDescription<Source>(
                    "source",
                    [
                        AttributeDescription(\Source.newest, derived: .maximum(\Item.published, of: \Item.source), column: "newest_item", renamedFrom: "latest"),
                        AttributeDescription(\Source.totalSize, derived: Derivation.sum(\Item.size, of: \Item.source), column: "totalSize", indexed: true, renamedFrom: "size"),
                        AttributeDescription(\Source.oldest, derived: .minimum(\Item.published, of: \Item.source), column: "oldest"),
                    ]
                )
            }

            extension Source: PersistentRecord {
            }
            """#
        }
    }

    @Test func uniqueFoldedAndSearchableDoNotApply() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @Derived(.count(\\Item.source), .unique) var itemCount = 0
                @Derived(.maximum(\\Item.title, of: \\Item.source), .indexed, .folded, .searchable) var lastTitle: String?
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @Derived(.count(\Item.source), .unique) var itemCount = 0
                                               ┬──────
                                               ╰─ 🛑 'itemCount' is @Derived: SQLite keeps its value from the children, so it takes .indexed only, not .unique (many records derive the same value, as two without children both count 0, and a unique index would refuse their children's writes)
                @Derived(.maximum(\Item.title, of: \Item.source), .indexed, .folded, .searchable) var lastTitle: String?
                                                                                     ┬──────────
                                                                            │        ╰─ 🛑 'lastTitle' is @Derived: SQLite keeps its value from the children, so it takes .indexed only, not .searchable (Folio indexes text for search when the app writes a record, and the app never writes a derived value)
                                                                            ┬──────
                                                                            ╰─ 🛑 'lastTitle' is @Derived: SQLite keeps its value from the children, so it takes .indexed only, not .folded (Folio folds text when the app writes a record, and the app never writes a derived value)
            }
            """#
        }
    }

    @Test func derivedWithAnotherAttribute() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @Stored(.indexed) @Derived(.count(\\Item.source)) var itemCount = 0
                @Derived(.count(\\Item.source)) @NotStored var unreadCount = 0
                @ToMany(\\Item.source) @Derived(.count(\\Item.source)) var items: RecordRequest<Item>
                @Derived(.count(\\Item.source)) @Derived(.count(\\Item.source), .indexed) var total = 0
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @Stored(.indexed) @Derived(.count(\Item.source)) var itemCount = 0
                                  ┬─────────────────────────────
                                  ╰─ 🛑 'itemCount' is marked both @Stored and @Derived: keep one
                @Derived(.count(\Item.source)) @NotStored var unreadCount = 0
                                               ┬─────────
                                               ╰─ 🛑 'unreadCount' is marked both @Derived and @NotStored: keep one
                @ToMany(\Item.source) @Derived(.count(\Item.source)) var items: RecordRequest<Item>
                                      ┬─────────────────────────────
                                      ╰─ 🛑 'items' is marked both @ToMany and @Derived: keep one
                @Derived(.count(\Item.source)) @Derived(.count(\Item.source), .indexed) var total = 0
                                               ┬───────────────────────────────────────
                                               ╰─ 🛑 'total' has @Derived twice: merge the options into one
            }
            """#
        }
    }

    @Test func aDerivedPropertyIsAStoredVar() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @Derived(.count(\\Item.source)) let itemCount = 0
                @Derived(.count(\\Item.source)) var doubled: Int { 0 }
                @Derived(.count(\\Item.source)) static var shared = 0
                @Derived(.count(\\Item.source)) var count: Int
                @Derived(.maximum(\\Item.published, of: \\Item.source)) var newest = latest()
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @Derived(.count(\Item.source)) let itemCount = 0
                                               ┬──
                                               ╰─ 🛑 'itemCount' is a 'let': Folio sets a record's attributes when it reads one, through writable key paths; declare it 'var', or mark it @NotStored if it is no column
                                                  ✏️ Change 'let' to 'var'
                                                  ✏️ Mark 'itemCount' @NotStored
                @Derived(.count(\Item.source)) var doubled: Int { 0 }
                ┬─────────────────────────────
                ╰─ 🛑 @Derived applies to a stored property: 'doubled' is computed, and is never a column
                @Derived(.count(\Item.source)) static var shared = 0
                ┬─────────────────────────────
                ╰─ 🛑 @Derived applies to an instance property: a static property is never a column
                @Derived(.count(\Item.source)) var count: Int
                                                   ┬────
                                                   ╰─ 🛑 'count' needs an initial value: Folio creates records with init() before it sets their attributes; give it one, declare it optional, or declare init() yourself
                                                      ✏️ Give 'count' the initial value 0
                                                      ✏️ Declare 'count' as 'Int?'
                @Derived(.maximum(\Item.published, of: \Item.source)) var newest = latest()
                                                                          ┬─────
                                                                          ╰─ 🛑 'newest' needs a type annotation: @PersistentRecord cannot tell the type of 'latest()', and must know whether the property is an attribute or a to-one (ToOne)
                                                                             ✏️ Add the type annotation ': <#Type#>'
            }
            """#
        }
    }

    @Test func aDerivationIsNeededAndNoToOne() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @Derived(column: "total") var total = 0
                @Derived var count = 0
                @Derived(.count(\\Item.source)) var parent = ToOne<Folder>()
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @Derived(column: "total") var total = 0
                ┬────────────────────────
                ╰─ 🛑 @Derived on 'total' needs its derivation first: @Derived(.count(\Child.toOne)), or .sum, .minimum or .maximum(\Child.value, of: \Child.toOne)
                @Derived var count = 0
                ┬───────
                ╰─ 🛑 @Derived on 'count' needs its derivation first: @Derived(.count(\Child.toOne)), or .sum, .minimum or .maximum(\Child.value, of: \Child.toOne)
                @Derived(.count(\Item.source)) var parent = ToOne<Folder>()
                ┬─────────────────────────────
                ╰─ 🛑 'parent' is a to-one, which cannot be @Derived: a derived value is a count of the children, or the sum, minimum or maximum of one of their attributes; declare it of that type (Int, Double, Date?…)
            }
            """#
        }
    }

    @Test func derivedNamesAndPlacement() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                @Derived(.count(\\Item.source)) var id: RecordID?
                @Derived(.count(\\Item.source), column: "sqlite_count") var itemCount = 0
                @Derived(.count(\\Item.source), column: name) var unreadCount = 0
                @Derived(.count(\\Item.source)) func total() -> Int { 0 }
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Source {
                @Derived(.count(\Item.source)) var id: RecordID?
                ┬─────────────────────────────
                ╰─ 🛑 'id' is the record's rowid, stored by Folio: it takes no @Derived
                   ✏️ Remove @Derived
                @Derived(.count(\Item.source), column: "sqlite_count") var itemCount = 0
                                                                           ┬────────
                                                                           ╰─ 🛑 'itemCount' would be stored in the column 'sqlite_count', which uses a prefix reserved for SQLite and Folio; give it another name with @Derived(…, column: "…")
                @Derived(.count(\Item.source), column: name) var unreadCount = 0
                                                       ┬───
                                                       ╰─ 🛑 column: of 'unreadCount' must be a string literal: it is a name in the file, which the schema (and its version hash) records
                @Derived(.count(\Item.source)) func total() -> Int { 0 }
                ┬─────────────────────────────
                ╰─ 🛑 @Derived applies to a property of a record
            }
            """#
        }
    }

    @Test func derivedOutsideARecord() {
        assertMacro {
            """
            struct Source {
                var id: RecordID?
                @Derived(.count(\\Item.source)) var itemCount = 0
            }
            """
        } diagnostics: {
            #"""
            struct Source {
                var id: RecordID?
                @Derived(.count(\Item.source)) var itemCount = 0
                ┬─────────────────────────────
                ╰─ 🛑 @Derived is read by @PersistentRecord, and the enclosing type has none: add @PersistentRecord to the type, or declare this in its hand-written EntityDescription
            }
            """#
        }
    }
}
