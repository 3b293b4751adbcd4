import Foundation
import GRDB
import GRDBSQLite
import Testing
@testable import Folio

/// `.firstLetter` sections are defined on the stored bytes (``FirstLetter``): a text
/// starting with NUL has the first letter NUL (SQLite's `substr` stopped there and put it
/// in the `""` section), and text another program stored that is not valid UTF-8 is shown,
/// in sections that are contiguous runs of the byte order (`X'C341'`, `X'C3A9'`, `X'C3C3'`
/// made `performFetch` throw `sectionsNotContiguous`). Every case is checked at
/// `performFetch`, after live inserts, updates and deletes, and through a persistent cache.
@Suite("First-letter sections of any stored bytes")
@MainActor
struct FirstLetterSectionTests {
    /// A value written by raw SQL into a text column.
    enum Raw: CustomStringConvertible {
        case text([UInt8])
        case integer(Int64)
        case real(Double)
        case blob([UInt8])

        static func string(_ s: String) -> Raw { .text(Array(s.utf8)) }

        var placeholder: String {
            switch self {
            case .text: "CAST(? AS TEXT)"
            default: "?"
            }
        }
        var argument: DatabaseValue {
            switch self {
            case .text(let b), .blob(let b): Data(b).databaseValue
            case .integer(let v): v.databaseValue
            case .real(let v): v.databaseValue
            }
        }
        var description: String {
            switch self {
            case .text(let b): "text x'\(b.map { String(format: "%02x", $0) }.joined())'"
            case .integer(let v): "\(v)"
            case .real(let v): "\(v)"
            case .blob(let b): "blob x'\(b.map { String(format: "%02x", $0) }.joined())'"
            }
        }
    }

    /// Valid text that breaks a naive first letter: NULs, NFC and NFD, skin tones and ZWJ
    /// families, a combining mark first, 4-byte UTF-8.
    static let validTexts: [Raw] = [
        "", "\0", "\0x", "\0y", "x\0", "x", "X", "é", "e\u{301}", "e", "\u{301}a", "👍🏽", "👍", "👨‍👩‍👧", "👨", "𝄞", "𝄞x", "\u{10FFFF}",
    ].map(Raw.string)

    /// Bytes that are not UTF-8: truncated sequences, lone continuation bytes, overlongs,
    /// surrogates, bytes never in UTF-8, and a valid neighbour of each.
    static let invalidTexts: [Raw] = [
        [0xC3, 0x41], [0xC3, 0xA9], [0xC3, 0xC3], [0xC3], [0x80], [0x80, 0x41], [0xBF], [0xC0, 0xAF], [0xC1, 0x81],
        [0xED, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xE0, 0x80], [0xE2, 0x82], [0xF0, 0x9F], [0xF4, 0x90, 0x80, 0x80],
        [0xF5, 0x80], [0xFF], [0xFF, 0x00], [0xFE, 0x41], [0x00, 0xFF],
    ].map(Raw.text)

    /// Other storage classes in the text column: blobs (after all text) stay blobs; numbers
    /// become text there (the column's TEXT affinity), and are sections of their own value
    /// in a column without it (``theSQLAndTheSwiftDefinitionAgreeOnEveryValue()``).
    static let otherClasses: [Raw] = [
        .integer(12), .integer(150), .integer(2), .real(1.5), .real(12.0), .blob([]), .blob([0]), .blob([0x41, 0x42]),
        .blob([0x41]),
    ]

    static var allValues: [Raw] { validTexts + invalidTexts + otherClasses }

    /// The values whose section names differ: the empty blob's name is `""` as the empty
    /// text's is, which the table-view model (checking names) would take for one section.
    static var distinctlyNamedValues: [Raw] {
        allValues.filter { if case .blob(let b) = $0 { !b.isEmpty } else { true } }
    }

    // MARK: The definition, written again here

    /// The expected section of a stored value: the first letter of text by the lead byte's
    /// sequence length, a number itself, a blob's first byte.
    static func expectedSection(_ value: SQLiteValue) -> SQLiteValue {
        switch value {
        case .text(let bytes):
            guard let lead = bytes.first else { return .text([]) }
            let length =
                switch lead {
                case 0x00...0xC1: 1
                case 0xC2...0xDF: 2
                case 0xE0...0xEF: 3
                case 0xF0...0xF4: 4
                default: 1
                }
            return .text(Array(bytes.prefix(length)))
        case .blob(let bytes): return .blob(Array(bytes.prefix(1)))
        default: return value
        }
    }

    /// The sections a fetch must give: consecutive rows of the expected order with the same
    /// expected section, every section once.
    static func expectedRuns(_ store: Store, orderBy: String, column: String) throws -> [SectionRun] {
        let values = try store.read { db in
            let statement = try db.makeStatement(sql: "SELECT \(column) FROM person ORDER BY \(orderBy), id")
            var values: [SQLiteValue] = []
            try statement.forEachRow(in: db) { values.append(SQLiteValue(sqliteStatement: $0, index: 0)) }
            return values
        }
        var runs: [SectionRun] = []
        for value in values.map(expectedSection) {
            if let last = runs.last, SQLiteValue.compare(last.value, value) == 0 {
                runs[runs.count - 1].count += 1
            } else {
                runs.append(SectionRun(value: value, count: 1))
            }
        }
        #expect(Set(runs.map(\.value)).count == runs.count, "the definition gives contiguous sections")
        return runs
    }

    static let byCode = RecordRequest<Person>(sortBy: [SortDescriptor(\.code)])

    static func insert(_ store: Store, _ values: [Raw]) throws {
        try store.write { tx in
            for value in values {
                try tx.database.execute(
                    sql: "INSERT INTO person (name, note, code, age) VALUES ('n', '', \(value.placeholder), 0)",
                    arguments: [value.argument])
            }
        }
    }

    static func runs(_ controller: FetchedResultsController<Person>) -> [SectionRun] { controller.presented?.runs ?? [] }

    // MARK: Tests

    /// The issue's case: `""`, `"\0x"`, `"\0y"` are two sections, `""` and `"\0"`.
    @Test func textStartingWithNULIsInTheNULSectionNotTheEmptyOne() async throws {
        let store = try Store.inMemory(records: [Person.self])
        try Self.insert(store, ["", "\0x", "\0y", "x\0", "x"].map(Raw.string))
        let controller = FetchedResultsController(Self.byCode, store: store, sectionBy: .firstLetter(\.code))
        try await controller.performFetch()
        #expect(Self.runs(controller).map(\.value) == [.text([]), .text([0]), .text([0x78])])
        #expect(controller.sections.map(\.numberOfObjects) == [1, 2, 2])
        #expect(controller.sections.map(\.name) == ["", "\0", "x"])
        #expect(controller.sectionIndexTitles == ["\0", "X"])
    }

    /// The issue's case: text another program stored as `X'C341'`, `X'C3A9'`, `X'C3C3'` is
    /// shown in three sections, named with U+FFFD for the invalid bytes.
    @Test func invalidUTF8IsShownInContiguousSectionsOfItsBytes() async throws {
        let store = try Store.inMemory(records: [Person.self])
        try Self.insert(store, [[0xC3, 0x41], [0xC3, 0xA9], [0xC3, 0xC3], [0xC3, 0xC3, 0x41]].map(Raw.text))
        let controller = FetchedResultsController(Self.byCode, store: store, sectionBy: .firstLetter(\.code))
        try await controller.performFetch()
        #expect(
            Self.runs(controller) == [
                SectionRun(value: .text([0xC3, 0x41]), count: 1), SectionRun(value: .text([0xC3, 0xA9]), count: 1),
                SectionRun(value: .text([0xC3, 0xC3]), count: 2),
            ])
        #expect(controller.sections.map(\.name) == ["\u{FFFD}A", "é", "\u{FFFD}\u{FFFD}"])
        #expect(controller.sectionIndexTitles == ["\u{FFFD}", "É"])
    }

    /// The Swift definition and the SQL expression agree on every value, in a column without
    /// affinity (where numbers stay numbers): each storage class as the definition says.
    @Test func theSQLAndTheSwiftDefinitionAgreeOnEveryValue() throws {
        let store = try Store.inMemory(records: [Person.self])
        let sql = SQLBuilder.section(firstLetterOf: "code").sql
        let pairs = try store.write { tx in
            let db = tx.database
            try db.execute(sql: "CREATE TEMP TABLE anything (id INTEGER PRIMARY KEY, code)")
            for value in Self.allValues {
                try db.execute(sql: "INSERT INTO anything (code) VALUES (\(value.placeholder))", arguments: [value.argument])
            }
            let statement = try db.makeStatement(sql: "SELECT code, \(sql) FROM anything ORDER BY id")
            var pairs: [(SQLiteValue, SQLiteValue)] = []
            try statement.forEachRow(in: db) {
                pairs.append((SQLiteValue(sqliteStatement: $0, index: 0), SQLiteValue(sqliteStatement: $0, index: 1)))
            }
            try db.execute(sql: "DROP TABLE anything")
            return pairs
        }
        #expect(pairs.count == Self.allValues.count)
        #expect(pairs.contains { if case .integer(12) = $0.1 { true } else { false } })
        #expect(pairs.contains { if case .real(1.5) = $0.1 { true } else { false } })
        for (stored, section) in pairs {
            #expect(section == Self.expectedSection(stored), "\(stored)")
            if case .text(let bytes) = stored { #expect(section == .text(FirstLetter.prefix(of: bytes)), "\(stored)") }
        }
        // For valid UTF-8 the first letter is the first Unicode scalar.
        for case .text(let bytes) in Self.validTexts {
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(FirstLetter.prefix(of: bytes) == Array(text.unicodeScalars.first.map { String($0) }?.utf8 ?? "".utf8))
        }
    }

    /// Every value at once, ascending and descending: a fetch gives the expected sections.
    @Test(arguments: [false, true])
    func everyValueAtPerformFetch(descending: Bool) async throws {
        let store = try Store.inMemory(records: [Person.self])
        try Self.insert(store, Self.allValues)
        let request = RecordRequest<Person>(sortBy: [SortDescriptor(\.code, order: descending ? .reverse : .forward)])
        let controller = FetchedResultsController(request, store: store, sectionBy: .firstLetter(\.code))
        try await controller.performFetch()
        let expected = try Self.expectedRuns(store, orderBy: descending ? "code DESC" : "code", column: "code")
        #expect(Self.runs(controller) == expected)
        for (section, run) in zip(controller.sections, expected) {
            #expect(section.name == SectionKey<Person>.name(of: run.value))
        }
    }

    /// Inserts, updates and deletes of every value one commit at a time, on a live
    /// controller: after each commit its sections are the expected ones and a fresh fetch's.
    @Test func everyValueLiveInsertedUpdatedAndDeleted() async throws {
        let store = try Store.inMemory(records: [Person.self])
        try Self.insert(store, ["", "x", "é"].map(Raw.string))
        let harness = try await PersonHarness(store, Self.byCode, sectionBy: .firstLetter(\.code))
        func check(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            try await harness.settle(sourceLocation: sourceLocation)
            let expected = try Self.expectedRuns(store, orderBy: "code", column: "code")
            #expect(Self.runs(harness.controller) == expected, "after \(step)", sourceLocation: sourceLocation)
        }
        let values = Self.distinctlyNamedValues
        for value in values {
            try Self.insert(store, [value])
            try await check("inserting \(value)")
        }
        // Rows take every value again, a row seven rows on each time, one commit each.
        let ids = try readSync(store) { db in try Int64.fetchAll(db, sql: "SELECT id FROM person ORDER BY id") }
        for (index, value) in values.enumerated() {
            let id = ids[(index * 7) % ids.count]
            try writeSync(store) { tx in
                try tx.database.execute(
                    sql: "UPDATE person SET code = \(value.placeholder) WHERE id = ?",
                    arguments: [value.argument, id.databaseValue])
            }
            try await check("setting row \(id) to \(value)")
        }
        for id in ids.shuffled().prefix(ids.count - 2) {
            try writeSync(store) { tx in try tx.database.execute(sql: "DELETE FROM person WHERE id = ?", arguments: [id]) }
            try await check("deleting row \(id)")
        }
    }

    /// Folded first letters (`.firstLetter(\.name)` under a folded sort) of the same texts,
    /// at a fetch and live: folded keys are valid UTF-8 (U+FFFD for invalid bytes) and keep
    /// NUL, so "\0x" is in "\0" there too.
    @Test func foldedFirstLettersOfEveryText() async throws {
        let store = try Store.inMemory(records: [Person.self])
        let request = RecordRequest<Person>(sortBy: [SortDescriptor(\.name.folded)])
        let order = "folio_name_folded, name"
        func insertNames(_ values: [Raw]) throws {
            try store.write { tx in
                for value in values {
                    try tx.database.execute(
                        sql: "INSERT INTO person (name, note, code, age) VALUES (\(value.placeholder), '', '', 0)",
                        arguments: [value.argument])
                }
            }
        }
        try insertNames(Self.validTexts + Self.invalidTexts)
        let fetched = FetchedResultsController(request, store: store, sectionBy: .firstLetter(\.name))
        try await fetched.performFetch()
        #expect(Self.runs(fetched) == (try Self.expectedRuns(store, orderBy: order, column: "folio_name_folded")))
        #expect(Self.runs(fetched).contains { $0.value == .text([0]) })

        let harness = try await PersonHarness(store, request, sectionBy: .firstLetter(\.name))
        for value in Self.invalidTexts + Self.validTexts.reversed() {
            try insertNames([value])
            try await harness.settle()
            #expect(
                Self.runs(harness.controller) == (try Self.expectedRuns(store, orderBy: order, column: "folio_name_folded")),
                "after inserting \(value)")
        }
    }

    /// A section cache written with sections of every value is reused after the store is
    /// reopened, and gives the expected sections (identity by bytes, NULs and invalid UTF-8
    /// kept); a row the `sqlite3` shell writes while the store is closed is found.
    @Test func aPersistentCacheKeepsSectionsOfEveryValue() async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("people.sqlite")
        func open() throws -> Store { try Store(path: path, model: StoreModel(version: 1, records: [Person.self])) }
        func fetch(_ store: Store) async throws -> (SectionCache.Outcome, [SectionRun]) {
            let controller = FetchedResultsController(
                Self.byCode, store: store, sectionBy: .firstLetter(\.code), cacheName: "letters")
            try await controller.performFetch()
            await controller.flushCache()
            #expect(Self.runs(controller) == (try Self.expectedRuns(store, orderBy: "code", column: "code")))
            return (controller.lastCacheOutcome, Self.runs(controller))
        }
        var store = try open()
        try Self.insert(store, Self.allValues)
        let (_, first) = try await fetch(store)
        try store.close()
        store = try open()
        let (outcome, again) = try await fetch(store)
        #expect(outcome == .reused)
        #expect(again == first)
        try store.close()
        _ = try sqlite3Shell(path, "INSERT INTO person (name, note, code, age) VALUES ('n', '', CAST(X'C3C3' AS TEXT), 0);")
        _ = try sqlite3Shell(path, "INSERT INTO person (name, note, code, age) VALUES ('n', '', CAST(X'0061' AS TEXT), 0);")
        store = try open()
        defer { try? store.close() }
        let (after, runs) = try await fetch(store)
        #expect(after != .reused)
        #expect(runs.first { $0.value == .text([0xC3, 0xC3]) }?.count == 2)
        #expect(runs.first { $0.value == .text([0]) }?.count == 5)
    }
}
