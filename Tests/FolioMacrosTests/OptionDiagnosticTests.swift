import MacroTesting
import Testing

@testable import FolioMacrosCore

/// Every diagnostic of `@PersistentRecord` about a property's options and column, with its fix-its.
@Suite(.macros(folioMacros))
struct OptionDiagnosticTests {
    @Test func aToOneTakesColumnAndRenamedFromOnly() {
        assertMacro {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                @Stored(.unique) var source = ToOne<Source>()
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                @Stored(.unique) var source = ToOne<Source>()
                ┬───────────────
                ╰─ 🛑 'source' is a to-one, whose reference column is always indexed: it takes column: and renamedFrom: only, not .unique
            }
            """
        }
    }

    @Test func foldedAndSearchableNeedText() {
        assertMacro {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                @Stored(.folded) var score = 0
                @Stored(.searchable) var published: Date = Date()
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                @Stored(.folded) var score = 0
                ┬───────────────
                ╰─ 🛑 'score' is declared folded, which applies to text attributes only (String, URL, an enum with String raw values); it is 'Int'
                @Stored(.searchable) var published: Date = Date()
                ┬───────────────────
                ╰─ 🛑 'published' is declared searchable, which applies to text attributes only (String, URL, an enum with String raw values); it is 'Date'
            }
            """
        }
    }

    @Test func namesMustBeStringLiterals() {
        assertMacro {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                @Stored(column: columnName) var title = ""
                @Stored(renamedFrom: "old\\(suffix)") var body = ""
            }
            """
        } diagnostics: {
            #"""
            @PersistentRecord
            struct Item {
                var id: RecordID?
                @Stored(column: columnName) var title = ""
                                ┬─────────
                                ╰─ 🛑 column: of 'title' must be a string literal: it is a name in the file, which the schema (and its version hash) records
                @Stored(renamedFrom: "old\(suffix)") var body = ""
                                     ┬─────────────
                                     ╰─ 🛑 renamedFrom: of 'body' must be a string literal: it is a name in the file, which the schema (and its version hash) records
            }
            """#
        }
    }

    @Test func aColumnNameMustBeAPlainSQLiteName() {
        assertMacro {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                var café = ""
                @Stored(column: "sqlite_title") var title = ""
                @Stored(column: "ID") var number = 0
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                var café = ""
                    ┬────
                    ╰─ 🛑 'café' would be stored in the column 'café', which is not a plain SQLite name (ASCII letters, digits and _, starting with a letter or _, at most 64 bytes); give it another name with @Stored(column: "…")
                @Stored(column: "sqlite_title") var title = ""
                                                    ┬────
                                                    ╰─ 🛑 'title' would be stored in the column 'sqlite_title', which uses a prefix reserved for SQLite and Folio; give it another name with @Stored(column: "…")
                @Stored(column: "ID") var number = 0
                                          ┬─────
                                          ╰─ 🛑 'id' and 'number' would both be stored in the column 'ID' (column names ignore case); give one of them another name with @Stored(column: "…")
            }
            """
        }
    }

    @Test func twoPropertiesCannotShareAColumn() {
        assertMacro {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                var title = ""
                @Stored(column: "Title") var heading = ""
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                var title = ""
                @Stored(column: "Title") var heading = ""
                                             ┬──────
                                             ╰─ 🛑 'title' and 'heading' would both be stored in the column 'Title' (column names ignore case); give one of them another name with @Stored(column: "…")
            }
            """
        }
    }

    @Test func conflictingAndRepeatedAttributes() {
        assertMacro {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                @Stored(.indexed) @NotStored var title = ""
                @Stored(.indexed) @Stored(.unique) var url = ""
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                @Stored(.indexed) @NotStored var title = ""
                                  ┬─────────
                                  ╰─ 🛑 'title' is marked both @Stored and @NotStored: keep one
                @Stored(.indexed) @Stored(.unique) var url = ""
                                  ┬───────────────
                                  ╰─ 🛑 'url' has @Stored twice: merge the options into one
            }
            """
        }
    }

    @Test func storedOnAStaticOrComputedProperty() {
        assertMacro {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                var title = ""
                @Stored(.indexed) static var shared = ""
                @Stored(.indexed) var length: Int { title.count }
            }
            """
        } diagnostics: {
            """
            @PersistentRecord
            struct Item {
                var id: RecordID?
                var title = ""
                @Stored(.indexed) static var shared = ""
                ┬────────────────
                ╰─ 🛑 @Stored applies to an instance property: a static property is never a column
                @Stored(.indexed) var length: Int { title.count }
                ┬────────────────
                ╰─ 🛑 @Stored applies to a stored property: 'length' is computed, and is never a column
            }
            """
        }
    }
}
