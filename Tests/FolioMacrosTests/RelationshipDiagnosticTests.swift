import MacroTesting
import Testing

@testable import FolioMacrosCore

/// Every diagnostic of `@ToMany`, `#CompoundIndex` and the attribute macros outside a record.
@Suite(.macros(folioMacros))
struct RelationshipDiagnosticTests {
    @Test func aToManyIsARequestWithoutValue() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\\Item.source, deleteRule: .cascade) var items: [Item] = []
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\Item.source, deleteRule: .cascade) var items: [Item] = []
                                                                       ┬─────
                                                                       ╰─ 🛑 'items' is a to-many, read as a request: declare it 'RecordRequest<Item>'
                                                                          ✏️ Declare 'items' as 'RecordRequest<Item>', without initial value
            }
            """#
        } fixes: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\Item.source, deleteRule: .cascade) var items: RecordRequest<Item>
            }
            """#
        }
    }

    @Test func aToManyWithAValue() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\\Item.source) var items: RecordRequest<Item> = RecordRequest()
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\Item.source) var items: RecordRequest<Item> = RecordRequest()
                                                                     ┬────────────────
                                                                     ╰─ 🛑 'items' is a to-many: @ToMany makes it a computed request of the records that point here, so it has no initial value
                                                                        ✏️ Remove the initial value
            }
            """#
        } fixes: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\Item.source) var items: RecordRequest<Item>
            }
            """#
        }
    }

    @Test func aToManyIsAVar() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\\Feed.source) let feeds: RecordRequest<Feed>
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\Feed.source) let feeds: RecordRequest<Feed>
                                      ┬──
                                      ╰─ 🛑 'feeds' is a to-many: @ToMany makes it a computed property, which is declared 'var'
                                         ✏️ Change 'let' to 'var'
            }
            """#
        } fixes: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\Feed.source) var feeds: RecordRequest<Feed>
            }
            """#
        }
    }

    @Test func aToManyWithoutItsType() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\\Item.source) var items
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\Item.source) var items
                                          ┬────
                                          ╰─ 🛑 'items' is a to-many, read as a request: declare it 'RecordRequest<Item>'
                                             ✏️ Declare 'items' as 'RecordRequest<Item>'
            }
            """#
        } fixes: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(\Item.source) var items: RecordRequest<Item>
            }
            """#
        }
    }

    @Test func aToManyNeedsTheInverseWithItsRoot() {
        assertMacro {
            """
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(inverse) var items: RecordRequest<Item>
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Source {
                var id: RecordID?
                @ToMany(inverse) var items: RecordRequest<Item>
                ┬───────────────
                ╰─ 🛑 @ToMany on 'items' needs the inverse to-one as a key path with its type: @ToMany(\Child.toOne, deleteRule: …)
            }
            """#
        }
    }

    @Test func attributeMacrosOutsideARecord() {
        assertMacro {
            """
            struct Article {
                var id: RecordID?
                @Stored(.indexed) var title = ""
                @NotStored var isExpanded = false
                @ToMany(\\Item.article) var items: RecordRequest<Item>
                #CompoundIndex<Article>(\\.title, \\.id)
            }
            """
        } diagnostics: {
            #"""
            struct Article {
                var id: RecordID?
                @Stored(.indexed) var title = ""
                ┬────────────────
                ╰─ 🛑 @Stored is read by @PersistentRecord, and the enclosing type has none: add @PersistentRecord to the type, or declare this in its hand-written EntityDescription
                @NotStored var isExpanded = false
                ┬─────────
                ╰─ 🛑 @NotStored is read by @PersistentRecord, and the enclosing type has none: add @PersistentRecord to the type, or declare this in its hand-written EntityDescription
                @ToMany(\Item.article) var items: RecordRequest<Item>
                ┬─────────────────────
                ╰─ 🛑 @ToMany is read by @PersistentRecord, and the enclosing type has none: add @PersistentRecord to the type, or declare this in its hand-written EntityDescription
                #CompoundIndex<Article>(\.title, \.id)
                ┬─────────────────────────────────────
                ╰─ 🛑 #CompoundIndex is read by @PersistentRecord, and the enclosing type has none: add @PersistentRecord to the type, or declare this in its hand-written EntityDescription
            }
            """#
        }
    }

    @Test func anAttributeMacroOnSomethingElse() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                @NotStored func summary() -> String { "" }
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                @NotStored func summary() -> String { "" }
                ┬─────────
                ╰─ 🛑 @NotStored applies to a property of a record
            }
            """
        }
    }

    @Test func aCompoundIndexNeedsAKey() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var title = ""
                #CompoundIndex<Article>()
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var title = ""
                #CompoundIndex<Article>()
                ┬────────────────────────
                ╰─ 🛑 #CompoundIndex needs at least one key: #CompoundIndex<Record>(\.first, \.second)
            }
            """#
        }
    }
}
