import MacroTesting
import Testing

@testable import FolioMacrosCore

/// Every diagnostic of `@PersistentRecord` about the record type itself, with its fix-its.
@Suite(.macros(folioMacros))
struct RecordDiagnosticTests {
    @Test func aClassIsRefused() {
        assertMacro {
            """
            @PersistentRecord
            final class Article {
                var id: RecordID?
                var title = ""
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            ┬────────────────
            ╰─ 🛑 @PersistentRecord applies to a struct, not to a class: a record is a value that Folio builds with init() and sets through writable key paths
            final class Article {
                var id: RecordID?
                var title = ""
            }
            """
        }
    }

    @Test func aGenericTypeIsRefused() {
        assertMacro {
            """
            @PersistentRecord
            struct Box<Value> {
                var id: RecordID?
                var count = 0
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Box<Value> {
                      ┬──────
                      ╰─ 🛑 @PersistentRecord cannot describe the generic type 'Box': a generic type has no static stored 'entity'; declare a non-generic record
                var id: RecordID?
                var count = 0
            }
            """
        }
    }

    @Test func aMissingIdentifierIsAdded() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var title = ""
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Article {
                   ┬──────
                   ╰─ 🛑 'Article' has no identifier: a record declares 'var id: RecordID?', its rowid (nil until inserted)
                      ✏️ Declare 'var id: RecordID?'
                var title = ""
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var title = ""
            }
            """
        } expansion: {
            #"""
            struct Article {
                var id: RecordID?
                var title = ""

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

    @Test func anIdentifierOfAnotherTypeIsRefused() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var id: Int
                var title = ""
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Article {
                var id: Int
                        ┬──
                        ╰─ 🛑 'id' is the record's rowid and must be declared 'var id: RecordID?', not 'Int'
                           ✏️ Declare 'id' as 'RecordID?'
                var title = ""
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var title = ""
            }
            """
        } expansion: {
            #"""
            struct Article {
                var id: RecordID?
                var title = ""

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

    @Test func theIdentifierTakesNoOptions() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                @Stored(.indexed) var id: RecordID?
                var title = ""
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Article {
                @Stored(.indexed) var id: RecordID?
                ┬────────────────
                ╰─ 🛑 'id' is the record's rowid, stored by Folio: it takes no @Stored
                   ✏️ Remove @Stored
                var title = ""
            }
            """
        } fixes: {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var title = ""
            }
            """
        } expansion: {
            #"""
            struct Article {
                var id: RecordID?
                var title = ""

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

    @Test func aHandWrittenEntityIsRefused() {
        assertMacro {
            """
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var title = ""
                static let entity = EntityDescription<Article>("article", [AttributeDescription(\\.title)])
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Article {
                var id: RecordID?
                var title = ""
                static let entity = EntityDescription<Article>("article", [AttributeDescription(\.title)])
                ┬─────────────────────────────────────────────────────────────────────────────────────────
                ╰─ 🛑 'Article' declares its entity by hand and with @PersistentRecord: remove the 'entity' declaration (the macro makes it from the stored properties) or remove @PersistentRecord
            }
            """#
        }
    }

    @Test func aTableNameMustBeALiteralSQLiteName() {
        assertMacro {
            """
            @PersistentRecord(tableName)
            struct Article {
                var id: RecordID?
            }
            """
        } diagnostics: {
            """
            @PersistentRecord(tableName)
                              ┬────────
                              ╰─ 🛑 The table name of 'Article' must be a string literal: it is a name in the file, which the schema (and its version hash) records
            struct Article {
                var id: RecordID?
            }
            """
        }
        assertMacro {
            """
            @PersistentRecord("folio_article")
            struct Article {
                var id: RecordID?
            }
            """
        } diagnostics: {
            """
            @PersistentRecord("folio_article")
            ┬─────────────────────────────────
            ╰─ 🛑 The table name 'folio_article' uses a prefix reserved for SQLite and Folio; name the table with @PersistentRecord("…")
            struct Article {
                var id: RecordID?
            }
            """
        }
    }

    @Test func aTuplePatternIsRefused() {
        assertMacro {
            """
            @PersistentRecord
            struct Point {
                var id: RecordID?
                var (x, y) = (0, 0)
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Point {
                var id: RecordID?
                var (x, y) = (0, 0)
                    ┬─────
                    ╰─ 🛑 @PersistentRecord needs one name per property: declare each property on its own ('var a = 0', 'var b = ""')
            }
            """
        }
    }
}
