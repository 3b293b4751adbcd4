import Foundation
import GRDB
import GRDBSQLite
import Testing

@testable import Folio

// Adversarial tests of RowDecoder / DirectColumn / ColumnReader and of BatchLoader's
// decode-then-move buffer.

// MARK: - Fixtures

/// A class-typed attribute value (general path) whose live instances are counted, to find
/// leaks or double releases of what a batch decoded; the text "boom" fails to decode.
final class AdvTracked: AttributeValue, @unchecked Sendable, CustomStringConvertible {
    nonisolated(unsafe) static var live = 0
    nonisolated(unsafe) static var decodes = 0
    /// When set, the decode that brings `decodes` to `interruptAt` interrupts this connection.
    nonisolated(unsafe) static var interruptConnection: OpaquePointer?
    nonisolated(unsafe) static var interruptAt = -1
    static let lock = NSLock()

    let value: String
    init(_ value: String) {
        self.value = value
        Self.lock.withLock { Self.live += 1 }
    }
    deinit { Self.lock.withLock { Self.live -= 1 } }
    var description: String { "AdvTracked(\(value))" }

    static var attributeType: AttributeType { .string }
    var storedValue: DatabaseValue { value.databaseValue }
    static func decode(stored: DatabaseValue, column: String) throws -> AdvTracked {
        guard case .string(let s) = stored.storage else {
            throw FolioError.decoding(column: column, reason: "expected tracked text, found \(stored)")
        }
        if s == "boom" { throw FolioError.decoding(column: column, reason: "boom") }
        let n = lock.withLock { () -> Int in
            decodes += 1
            return decodes
        }
        if n == interruptAt, let connection = interruptConnection { sqlite3_interrupt(connection) }
        return AdvTracked(s)
    }
}

enum AdvMood: String, AttributeValue {
    case happy, sad
    static var attributeType: AttributeType { .string }
    var storedValue: DatabaseValue { rawValue.databaseValue }
    static func decode(stored: DatabaseValue, column: String) throws -> AdvMood {
        guard case .string(let s) = stored.storage, let mood = AdvMood(rawValue: s) else {
            throw FolioError.decoding(column: column, reason: "expected a mood, found \(stored)")
        }
        return mood
    }
}

struct AdvInner: Sendable {
    var pad: Int8 = 1
    var label = ""
    var pad2: Bool = true
    var maybe: Date? = nil
}

/// 40 attributes (plus a computed one, a nested one and a tuple element), declared in an order
/// unlike the struct's layout, with general-path types (Data, UUID, an enum, a class) between direct ones.
struct AdvWide: PersistentRecord {
    var id: RecordID?
    var p0: String = ""
    var p1: Int = 0
    var p2: Int64 = 0
    var p3: Bool = false
    var p4: Double = 0.0
    var p5: AdvTracked = AdvTracked("init")
    var p6: String? = nil
    var p7: Int? = nil
    var p8: Int64? = nil
    var p9: Bool? = nil
    var p10: Double? = nil
    var scratch: [Int] = [1, 2, 3]  // not an attribute
    var p11: Date? = nil
    var p12: Data = Data()
    var p13: AdvMood = .happy
    var p14: String = ""
    var p15: Int = 0
    var p16: Int64 = 0
    var p17: Bool = false
    var p18: Double = 0.0
    var p19: Date = Date(timeIntervalSince1970: 0)
    var p20: String? = nil
    var inner = AdvInner()
    var p21: Int? = nil
    var p22: Int64? = nil
    var p23: Bool? = nil
    var p24: Double? = nil
    var p25: Date? = nil
    var p26: Data = Data()
    var p27: UUID = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
    var p28: String = ""
    var p29: Int = 0
    var p30: Int64 = 0
    var pair: (Int8, Int) = (3, 0)
    var p31: Bool = false
    var p32: Double = 0.0
    var p33: AdvTracked = AdvTracked("init")
    var p34: String? = nil
    var p35: Int? = nil
    var p36: Int64? = nil
    var p37: Bool? = nil
    var p38: Double? = nil
    var p39: Date? = nil
    var shout: String {
        get { p0 }
        set { p0 = newValue.uppercased() }
    }
    static let entity = EntityDescription<AdvWide>(
        "adv_wide",
        [
            AttributeDescription(\.p0, column: "c0"),
            AttributeDescription(\.p17, column: "c17"),
            AttributeDescription(\.p34, column: "c34"),
            AttributeDescription(\.p11, column: "c11"),
            AttributeDescription(\.p28, column: "c28"),
            AttributeDescription(\.p5, column: "c5"),
            AttributeDescription(\.p22, column: "c22"),
            AttributeDescription(\.inner.label, column: "inner_label"),
            AttributeDescription(\.p39, column: "c39"),
            AttributeDescription(\.p16, column: "c16"),
            AttributeDescription(\.p33, column: "c33"),
            AttributeDescription(\.p10, column: "c10"),
            AttributeDescription(\.p27, column: "c27"),
            AttributeDescription(\.p4, column: "c4"),
            AttributeDescription(\.p21, column: "c21"),
            AttributeDescription(\.p38, column: "c38"),
            AttributeDescription(\.p15, column: "c15"),
            AttributeDescription(\.p32, column: "c32"),
            AttributeDescription(\.p9, column: "c9"),
            AttributeDescription(\.pair.1, column: "pair_1"),
            AttributeDescription(\.p26, column: "c26"),
            AttributeDescription(\.p3, column: "c3"),
            AttributeDescription(\.p20, column: "c20"),
            AttributeDescription(\.p37, column: "c37"),
            AttributeDescription(\.p14, column: "c14"),
            AttributeDescription(\.inner.maybe, column: "inner_maybe"),
            AttributeDescription(\.p31, column: "c31"),
            AttributeDescription(\.p8, column: "c8"),
            AttributeDescription(\.p25, column: "c25"),
            AttributeDescription(\.p2, column: "c2"),
            AttributeDescription(\.p19, column: "c19"),
            AttributeDescription(\.p36, column: "c36"),
            AttributeDescription(\.p13, column: "c13"),
            AttributeDescription(\.p30, column: "c30"),
            AttributeDescription(\.p7, column: "c7"),
            AttributeDescription(\.p24, column: "c24"),
            AttributeDescription(\.p1, column: "c1"),
            AttributeDescription(\.p18, column: "c18"),
            AttributeDescription(\.p35, column: "c35"),
            AttributeDescription(\.p12, column: "c12"),
            AttributeDescription(\.p29, column: "c29"),
            AttributeDescription(\.p6, column: "c6"),
            AttributeDescription(\.p23, column: "c23"),
        ])
}

/// The literal per attribute type for the fuzz: index in AdvWide.entity.attributes → kind.

/// A small record with a heap string, a tracked class between direct reads, an optional date.
struct AdvSmall: PersistentRecord {
    var id: RecordID?
    var n = 0
    var text = ""
    var tag = AdvTracked("init")
    var flag = false
    var when: Date? = nil
    var ratio = 0.0

    static let entity = EntityDescription<AdvSmall>(
        "adv_small",
        [
            AttributeDescription(\.text), AttributeDescription(\.tag), AttributeDescription(\.n),
            AttributeDescription(\.when), AttributeDescription(\.flag), AttributeDescription(\.ratio),
        ])
}

/// One attribute only, an optional date.
struct AdvOne: PersistentRecord {
    var id: RecordID?
    var when: Date? = nil
    static let entity = EntityDescription<AdvOne>("adv_one", [AttributeDescription(\.when)])
}

/// Observed properties, and a key path through a force-unwrapped optional.
struct AdvOdd: PersistentRecord {
    var id: RecordID?
    var setCount = 0
    var title = "" {
        didSet { setCount += 1 }
    }
    var box: AdvInner? = AdvInner()
    var after = 0

    static let entity = EntityDescription<AdvOdd>(
        "adv_odd",
        [
            AttributeDescription(\.title, column: "title"), AttributeDescription(\.box!.label, column: "box_label"),
            AttributeDescription(\.after, column: "after"),
        ])
}

// MARK: - Helpers

/// The record as the pre-change code decoded it: each attribute's general read, in order.
func advReferenceDecode<R: PersistentRecord>(_ sqlite: OpaquePointer, as: R.Type = R.self) throws -> R {
    var record = R()
    record.id = RecordID(sqlite3_column_int64(sqlite, 0))
    for (index, attribute) in R.entity.attributes.enumerated() {
        try attribute.decode(&record, sqlite, Int32(index + 1))
    }
    return record
}

func advDescribe(_ value: DatabaseValue) -> String {
    switch value.storage {
    case .null: "N"
    case .int64(let v): "i\(v)"
    case .double(let v): "d\(v.bitPattern)"
    case .string(let v): "s\(Array(v.utf8))"
    case .blob(let v): "b\(Array(v))"
    }
}

/// Every attribute's stored form, bit for bit.
func advFingerprint<R: PersistentRecord>(_ record: R?) -> String {
    guard let record else { return "nil" }
    return "\(record.id.map { String($0.rawValue) } ?? "-"):"
        + R.entity.attributes.map { attribute in
            (try? attribute.encode(record)).map(advDescribe) ?? "unstorable"
        }.joined(separator: "|")
}

func advOutcome<R: PersistentRecord>(_ body: () throws -> R?) -> String {
    do { return advFingerprint(try body()) } catch { return "error: \(error)" }
}

struct AdvRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        var z = state
        z = (z ^ (z >> 33)) &* 0xff51_afd7_ed55_8ccd
        return z ^ (z >> 29)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// SQL literals of every storage class, at the extremes.
let advWildLiterals = [
    "NULL", "0", "1", "2", "-1", "9223372036854775807", "-9223372036854775808", "9007199254740993",
    "9007199254740993.0", "0.0", "-0.0", "0.5", "1.5", "2.0", "1e308 * 10", "-1e308 * 10", "(0.0 / 0.0)",
    "'text'", "''", "'12'", "'1'", "'1.5'", "'a' || char(0) || 'b'", "CAST(x'ff' AS TEXT)", "CAST(x'61c3' AS TEXT)",
    "'é'", "'2024-01-01 00:00:00'", "X'00FF'", "X''", "zeroblob(16)", "'happy'", "'sad'", "'boom'",
    "'" + String(repeating: "long text ", count: 20) + "'", "1700000000.25", "-62135596800", "1e300",
]

/// A literal the attribute's type takes.
func advValidLiteral(_ attribute: AttributeDescription<AdvWide>, _ random: inout AdvRandom) -> String {
    if random.below(8) == 0 && attribute.isOptional { return "NULL" }
    switch attribute.type {
    case .string: return ["'happy'", "'sad'"][random.below(2)]
    case .integer: return ["42", "-7", "9223372036854775807", "0"][random.below(4)]
    case .bool: return ["0", "1"][random.below(2)]
    case .double: return ["1.5", "-2.25", "3", "1e-300"][random.below(4)]
    case .date: return ["1700000000.25", "0", "-1.5", "86400"][random.below(4)]
    case .data: return ["X'0102'", "X''"][random.below(2)]
    case .uuid: return "X'000102030405060708090A0B0C0D0E0F'"
    case .json: return "'[]'"
    }
}

// MARK: - Tests

@Suite("Adversarial decoding", .serialized)
struct AdversarialDecodeTests {
    /// The decoder straight on `SELECT 1, literals…`: no affinity, no NOT NULL; the direct
    /// reads must give what the general reads give, bit for bit, or the same error.
    @Test func rowDecoderMatchesTheGeneralReadsOnRandomRows() throws {
        let queue = try DatabaseQueue()
        let attributes = AdvWide.entity.attributes
        var random = AdvRandom(state: 0x5eed)
        var mismatches: [String] = []
        var successes = 0
        try queue.read { db in
            for iteration in 0..<600 {
                // Valid literals, but for a few columns (many every tenth row) that get anything.
                var literals = attributes.map { advValidLiteral($0, &random) }
                for _ in 0..<(iteration % 10 == 0 ? 20 : random.below(4)) {
                    literals[random.below(literals.count)] = advWildLiterals[random.below(advWildLiterals.count)]
                }
                let statement = try db.makeStatement(sql: "SELECT 77, " + literals.joined(separator: ", "))
                let sqlite = statement.sqliteStatement
                #expect(sqlite3_step(sqlite) == SQLITE_ROW)
                let direct = advOutcome { try AdvWide.entity.rowDecoder.decode(sqlite) }
                let general = advOutcome { try advReferenceDecode(sqlite, as: AdvWide.self) }
                sqlite3_reset(sqlite)
                if direct != general { mismatches.append("\(literals): \(direct) vs \(general)") }
                if !direct.hasPrefix("error") { successes += 1 }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
        #expect(successes > 50)
    }

    /// Every wild literal alone in every column of the wide record (the others valid).
    @Test func everyWildLiteralInEveryColumn() throws {
        let queue = try DatabaseQueue()
        let attributes = AdvWide.entity.attributes
        var random = AdvRandom(state: 42)
        let valid = attributes.map { advValidLiteral($0, &random) }.map { $0 == "NULL" ? "'happy'" : $0 }
        let base = attributes.indices.map { i in attributes[i].isOptional ? valid[i] : valid[i] }
        var mismatches: [String] = []
        try queue.read { db in
            for column in attributes.indices {
                for literal in advWildLiterals {
                    var literals = base
                    literals[column] = literal
                    let statement = try db.makeStatement(sql: "SELECT 5, " + literals.joined(separator: ", "))
                    let sqlite = statement.sqliteStatement
                    #expect(sqlite3_step(sqlite) == SQLITE_ROW)
                    let direct = advOutcome { try AdvWide.entity.rowDecoder.decode(sqlite) }
                    let general = advOutcome { try advReferenceDecode(sqlite, as: AdvWide.self) }
                    sqlite3_reset(sqlite)
                    if direct != general {
                        mismatches.append("\(attributes[column].column) = \(literal): \(direct) vs \(general)")
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
    }

    @Test func wideRecordsRoundTripThroughBatchesFetchOneAndFetchAll() throws {
        let store = try Store.inMemory(records: [AdvWide.self])
        var random = AdvRandom(state: 7)
        var written: [String] = []
        try store.write { tx in
            for i in 0..<30 {
                var r = AdvWide()
                // p0 is set again, upper-cased, through `shout`: keep it upper case.
                r.p0 = String(repeating: "X\(i)", count: random.below(40))
                r.p1 = Int(bitPattern: UInt(random.next()))
                r.p2 = i == 3 ? .min : Int64(bitPattern: random.next())
                r.p3 = random.below(2) == 0
                r.p4 = i == 4 ? .infinity : Double(bitPattern: random.next() >> 2)
                r.p6 = i % 2 == 0 ? nil : "é\u{0}\(i)" + String(repeating: "z", count: i)
                r.p7 = i % 3 == 0 ? nil : -i
                r.p9 = i % 3 == 0 ? nil : i % 2 == 0
                r.p10 = i % 4 == 0 ? nil : Double(i) / 3
                r.p11 = i % 5 == 0 ? nil : Date(timeIntervalSince1970: Double(i) * 1e6 + 0.5)
                r.p12 = Data((0..<i).map { UInt8($0) })
                r.p13 = i % 2 == 0 ? .sad : .happy
                r.p5 = AdvTracked("tracked \(i) " + String(repeating: "t", count: 30))
                r.p33 = AdvTracked("other \(i)")
                r.p27 = UUID()
                r.p19 = Date(timeIntervalSince1970: -Double(i) * 12345.678)
                r.inner.label = String(repeating: "inner", count: i)
                r.inner.maybe = i % 2 == 0 ? nil : Date(timeIntervalSince1970: Double(i))
                r.pair.1 = i * 1000
                try tx.insert(&r)
                written.append(advFingerprint(r))
            }
        }
        for batchSize in [1, 7, 0] {
            var request = RecordRequest<AdvWide>()
            request.batchSize = batchSize
            request.maxBatchesInMemory = 1
            let results = try store.fetch(request)
            let read = try (0..<results.count).map { advFingerprint(try results.record(at: $0)) }
            #expect(Set(read) == Set(written), "batch size \(batchSize)")
        }
        let one = try store.fetch(RecordRequest<AdvWide>())
        #expect(
            advFingerprint(try store.fetchOne(AdvWide.self, id: one.identifier(at: 11))) == advFingerprint(try one.record(at: 11))
        )
    }

    /// Raw SQL puts wrong storage classes into random columns of random rows (through the
    /// columns' affinities and constraints); batches of 7 must give what the general reads
    /// give, row by row, the same errors included.
    @Test func rawSQLWritesDecodeAsTheGeneralReadsInBatches() throws {
        let store = try Store.inMemory(records: [AdvWide.self])
        let attributes = AdvWide.entity.attributes
        var random = AdvRandom(state: 99)
        try store.write { tx in
            for _ in 0..<35 {
                var r = AdvWide()
                try tx.insert(&r)
            }
            for row in 1...35 {
                for _ in 0..<random.below(4) {
                    let column = attributes[random.below(attributes.count)].column
                    let literal = advWildLiterals[random.below(advWildLiterals.count)]
                    // NOT NULL constraints refuse some: ignore those.
                    try? tx.database.execute(sql: "UPDATE adv_wide SET \"\(column)\" = \(literal) WHERE id = \(row)")
                }
            }
        }
        let columns = (["id"] + attributes.map(\.column)).map { "\"\($0)\"" }.joined(separator: ", ")
        let reference: [Int64: String] = try store.read { db in
            let statement = try db.makeStatement(sql: "SELECT \(columns) FROM adv_wide")
            var found: [Int64: String] = [:]
            try statement.forEachRow(in: db) { sqlite in
                found[sqlite3_column_int64(sqlite, 0)] = advOutcome { try advReferenceDecode(sqlite, as: AdvWide.self) }
            }
            return found
        }
        #expect(reference.count == 35)
        #expect(reference.values.contains { $0.hasPrefix("error") })
        #expect(reference.values.contains { !$0.hasPrefix("error") })
        for (batchSize, maxBatches) in [(7, 1), (7, 8), (1, 3), (35, 1)] {
            var request = RecordRequest<AdvWide>()
            request.batchSize = batchSize
            request.maxBatchesInMemory = maxBatches
            let results = try store.fetch(request)
            for pass in 0..<2 {
                for i in (0..<results.count).reversed() {
                    let id = results.identifier(at: i).rawValue
                    let got = advOutcome { try results.record(at: i) }
                    #expect(got == reference[id], "row \(id), batch size \(batchSize), pass \(pass)")
                    let one = advOutcome { try store.fetchOne(AdvWide.self, id: RecordID(id)) }
                    #expect(one == reference[id], "fetchOne \(id)")
                }
            }
        }
    }

    /// The bad row at every offset k of a batch of 7 (the middle batch of three), failing in
    /// a direct column (text in an integer column), a general column (the tracked class), or
    /// after every column was read (the last); the others read, nothing leaks or is released twice.
    @Test(arguments: 0..<7)
    func aBadRowAtEveryOffsetOfABatch(k: Int) throws {
        let baseline = AdvTracked.lock.withLock { AdvTracked.live }
        do {
            let store = try Store.inMemory(records: [AdvSmall.self])
            try store.write { tx in
                for i in 0..<21 {
                    var r = AdvSmall()
                    r.n = i
                    r.text = String(repeating: "heap string \(i) ", count: 4)
                    r.tag = AdvTracked("tag \(i) " + String(repeating: "x", count: 40))
                    r.flag = i % 2 == 1
                    r.when = i % 3 == 0 ? nil : Date(timeIntervalSince1970: Double(i) * 1000.5)
                    r.ratio = Double(i) / 4
                    try tx.insert(&r)
                }
                let bad = 7 + k
                let set = [
                    "n = 'seven'", "tag = 'boom'", "ratio = 'x'", "\"when\" = X'01'", "flag = 0.5", "text = X'41'", "tag = X'42'",
                ][k]
                try tx.database.execute(sql: "UPDATE adv_small SET \(set) WHERE n = \(bad) OR (n IS 'seven' AND id = \(bad + 1))")
                // Column `n` of the bad row may now be text; it is read by id below.
            }
            var request = RecordRequest<AdvSmall>()
            request.batchSize = 7
            request.maxBatchesInMemory = 1
            for _ in 0..<2 {  // a refetch after the failure works the same
                let results = try store.fetch(request)
                #expect(results.count == 21)
                for pass in 0..<2 {
                    for i in [10, 3, 17] + Array(0..<21) {
                        let id = Int(results.identifier(at: i).rawValue)
                        if id - 1 == 7 + k {
                            let error = #expect(throws: FolioError.self, "row \(i) pass \(pass)") {
                                _ = try results.record(at: i)
                            }
                            let column = ["n", "tag", "ratio", "when", "flag", "text", "tag"][k]
                            #expect(error.map { "\($0)" }?.contains("'\(column)'") == true, "\(error.map { "\($0)" } ?? "")")
                        } else {
                            let r = try #require(try results.record(at: i))
                            #expect(r.n == id - 1)
                            #expect(r.text == String(repeating: "heap string \(id - 1) ", count: 4))
                            #expect(r.tag.value == "tag \(id - 1) " + String(repeating: "x", count: 40))
                            #expect(r.flag == ((id - 1) % 2 == 1))
                            #expect(r.ratio == Double(id - 1) / 4)
                            #expect(r.when == ((id - 1) % 3 == 0 ? nil : Date(timeIntervalSince1970: Double(id - 1) * 1000.5)))
                        }
                    }
                }
            }
        }
        #expect(AdvTracked.lock.withLock { AdvTracked.live } == baseline, "every tracked value decoded was released once")
    }

    /// The statement fails (interrupted) after k rows of a batch of 10 were decoded: the
    /// batch throws, the k rows are released once, and the next read of the batch works.
    @Test(arguments: [1, 2, 5, 9, 10])
    func aStepFailureMidBatchReleasesTheDecodedRows(k: Int) throws {
        let baseline = AdvTracked.lock.withLock { AdvTracked.live }
        do {
            let store = try Store.inMemory(records: [AdvSmall.self])
            try store.write { tx in
                for i in 0..<10 {
                    var r = AdvSmall()
                    r.n = i
                    r.text = String(repeating: "t\(i)", count: 30)
                    r.tag = AdvTracked("tag \(i) " + String(repeating: "y", count: 40))
                    try tx.insert(&r)
                }
            }
            var request = RecordRequest<AdvSmall>(sortBy: [SortDescriptor(\.n)])
            request.batchSize = 10
            let results = try store.fetch(request)
            let failed: Bool = try store.write { tx in
                AdvTracked.lock.withLock {
                    AdvTracked.decodes = 0
                    AdvTracked.interruptAt = k
                    AdvTracked.interruptConnection = tx.database.sqliteConnection
                }
                defer {
                    AdvTracked.lock.withLock {
                        AdvTracked.interruptAt = -1
                        AdvTracked.interruptConnection = nil
                    }
                }
                // Inside the store's closure, the batch is read through the writer's connection.
                do {
                    _ = try results.record(at: 0)
                    return false
                } catch {
                    return true
                }
            }
            if k < 10 { #expect(failed, "interrupted after \(k) rows") }
            let all = try (0..<10).map { try results.record(at: $0) }
            #expect(all.map { $0?.n } == Array(0..<10))
            #expect(all.map { $0?.tag.value } == (0..<10).map { "tag \($0) " + String(repeating: "y", count: 40) })
        }
        #expect(AdvTracked.lock.withLock { AdvTracked.live } == baseline)
    }

    @Test func aSingleOptionalDateAttributeFromEveryStorageClass() throws {
        let store = try Store.inMemory(records: [AdvOne.self])
        let literals = [
            "NULL", "0", "-1", "1.5", "1e308 * 10", "'2024-01-01 00:00:00'", "'1700000000'", "X'00'", "9223372036854775807",
        ]
        try store.write { tx in
            for literal in literals {
                try tx.database.execute(sql: "INSERT INTO adv_one (\"when\") VALUES (\(literal))")
            }
        }
        let reference: [Int64: String] = try store.read { db in
            let statement = try db.makeStatement(sql: "SELECT id, \"when\" FROM adv_one")
            var found: [Int64: String] = [:]
            try statement.forEachRow(in: db) {
                found[sqlite3_column_int64($0, 0)] = advOutcome { [s = $0] in try advReferenceDecode(s, as: AdvOne.self) }
            }
            return found
        }
        var request = RecordRequest<AdvOne>()
        request.batchSize = 4
        let results = try store.fetch(request)
        for i in 0..<results.count {
            let id = results.identifier(at: i).rawValue
            #expect(advOutcome { try results.record(at: i) } == reference[id], "\(literals[Int(id) - 1])")
        }
        // '1700000000' in a REAL column becomes a number; the date text stays text and fails.
        #expect(try results.record(at: 6)?.when == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(throws: FolioError.self) { try results.record(at: 5) }
    }

    /// A property with an observer, and a key path through a force-unwrapped optional.
    @Test func observedAndForceUnwrappedProperties() throws {
        let store = try Store.inMemory(records: [AdvOdd.self])
        try store.write { tx in
            try tx.database.execute(sql: "INSERT INTO adv_odd (title, box_label, \"after\") VALUES ('a', 'label one', 5)")
        }
        let offsets = AdvOdd.entity.attributes.map { $0.directSlot?.offset }
        let results = try store.fetch(RecordRequest<AdvOdd>())
        let r = try #require(try results.record(at: 0))
        #expect(r.title == "a")
        #expect(r.box?.label == "label one")
        #expect(r.after == 5)
        // Through the key path, the observer runs once (AdvOdd() sets no title).
        #expect(r.setCount == 1, "direct slots: \(offsets)")
        #expect(offsets == [nil, nil, MemoryLayout<AdvOdd>.offset(of: \AdvOdd.after)])
    }
}

extension AdversarialDecodeTests {
    @MainActor @Test func aControllerWithABadRowStaysUsableAndRefetches() throws {
        let baseline = AdvTracked.lock.withLock { AdvTracked.live }
        do {
            let store = try Store.inMemory(records: [AdvSmall.self])
            try store.write { tx in
                for i in 0..<20 {
                    var r = AdvSmall()
                    r.n = i
                    r.text = "row \(i)"
                    r.tag = AdvTracked("tag \(i)")
                    try tx.insert(&r)
                }
                try tx.database.execute(sql: "UPDATE adv_small SET tag = 'boom' WHERE n = 9")
                try tx.database.execute(sql: "UPDATE adv_small SET n = 'nine' WHERE n = 12")
            }
            var request = RecordRequest<AdvSmall>(sortBy: [SortDescriptor(\.text)])
            request.batchSize = 7
            request.maxBatchesInMemory = 1
            let controller = FetchedResultsController(request, store: store)
            try controller.performFetch()
            let texts = (0..<20).map { controller.object(at: IndexPath(item: $0, section: 0))?.text }
            let expected = (0..<20).map { "row \($0)" }.sorted().map { $0 == "row 9" || $0 == "row 12" ? nil : $0 }
            #expect(texts == expected)
            #expect(controller.fetchedObjects?.lastError != nil)
            try store.write { tx in
                try tx.database.execute(sql: "UPDATE adv_small SET tag = 'fixed', n = 9 WHERE text = 'row 9'")
                try tx.database.execute(sql: "UPDATE adv_small SET n = 12 WHERE text = 'row 12'")
            }
            try controller.performFetch()
            let again = (0..<20).map { controller.object(at: IndexPath(item: $0, section: 0))?.n }
            #expect(again == (0..<20).map { "row \($0)" }.sorted().map { Int($0.dropFirst(4))! })
        }
        #expect(AdvTracked.lock.withLock { AdvTracked.live } == baseline)
    }
}

/// A generic record: its attribute's type is a type parameter, String or Int at run time.
struct AdvGeneric<T: AttributeValue>: PersistentRecord {
    var id: RecordID?
    var flag = false
    var value: T? = nil
    var after = ""
    static var entity: EntityDescription<AdvGeneric<T>> {
        EntityDescription(
            "adv_generic_\(T.attributeType.rawValue)",
            [
                AttributeDescription(\.after, column: "after"), AttributeDescription(\.value, column: "value"),
                AttributeDescription(\.flag, column: "flag"),
            ])
    }
}

extension AdversarialDecodeTests {
    @Test func genericRecordsReadTheirTypeParameterDirectly() throws {
        let store = try Store.inMemory(records: [AdvGeneric<String>.self, AdvGeneric<Int>.self])
        try store.write { tx in
            var s = AdvGeneric<String>()
            s.value = String(repeating: "generic ", count: 10)
            s.after = "after"
            s.flag = true
            try tx.insert(&s)
            var i = AdvGeneric<Int>()
            i.value = .min
            i.after = "int"
            try tx.insert(&i)
            try tx.database.execute(sql: "INSERT INTO adv_generic_integer (\"after\", value, flag) VALUES ('bad', 'x', 0)")
        }
        #expect(AdvGeneric<String>.entity.attributes.allSatisfy { $0.directSlot != nil })
        let strings = Array(try store.fetch(RecordRequest<AdvGeneric<String>>()))
        #expect(strings.map { $0?.value } == [String(repeating: "generic ", count: 10)])
        #expect(strings.map { $0?.after } == ["after"])
        #expect(strings.map { $0?.flag } == [true])
        let ints = try store.fetch(RecordRequest<AdvGeneric<Int>>(batchSize: 1))
        #expect(throws: FolioError.self) { try store.fetch(RecordRequest<AdvGeneric<Int>>()) }
        #expect(try ints.record(at: 0)?.value == .min)
        let error = #expect(throws: FolioError.self) { try ints.record(at: 1) }
        #expect(error.map { "\($0)" } == #"Cannot decode column 'value': expected an integer, found "x""#)
    }

    /// Threads reading the same results at once, batches of 7 with two kept (loads and
    /// evictions all the time), some rows bad: every read as the general decode gives it.
    @Test func concurrentReadersOfOneResults() throws {
        let baseline = AdvTracked.lock.withLock { AdvTracked.live }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("adv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let store = try Store(path: directory.appendingPathComponent("db.sqlite").path, records: [AdvSmall.self])
            try store.write { tx in
                for i in 0..<140 {
                    var r = AdvSmall()
                    r.n = i
                    r.text = String(repeating: "concurrent \(i) ", count: 3)
                    r.tag = AdvTracked("tag \(i) " + String(repeating: "c", count: 32))
                    r.when = i % 2 == 0 ? nil : Date(timeIntervalSince1970: Double(i))
                    try tx.insert(&r)
                }
                try tx.database.execute(sql: "UPDATE adv_small SET tag = 'boom' WHERE n % 13 = 5")
                try tx.database.execute(sql: "UPDATE adv_small SET ratio = 'r' WHERE n % 17 = 3")
            }
            let columns = (["id"] + AdvSmall.entity.attributes.map(\.column)).map { "\"\($0)\"" }.joined(separator: ", ")
            let reference: [Int64: String] = try store.read { db in
                let statement = try db.makeStatement(sql: "SELECT \(columns) FROM adv_small")
                var found: [Int64: String] = [:]
                try statement.forEachRow(in: db) { sqlite in
                    found[sqlite3_column_int64(sqlite, 0)] = advOutcome { try advReferenceDecode(sqlite, as: AdvSmall.self) }
                }
                return found
            }
            var request = RecordRequest<AdvSmall>()
            request.batchSize = 7
            request.maxBatchesInMemory = 2
            let results = try store.fetch(request)
            let mismatches = Locked(0)
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                var random = AdvRandom(state: UInt64(thread + 1))
                for _ in 0..<300 {
                    let i = random.below(results.count)
                    let got = advOutcome { try results.record(at: i) }
                    if got != reference[results.identifier(at: i).rawValue] { mismatches.withLock { $0 += 1 } }
                }
            }
            #expect(mismatches.withLock { $0 } == 0)
        }
        #expect(AdvTracked.lock.withLock { AdvTracked.live } == baseline)
    }
}

extension AdversarialDecodeTests {
    /// Values another connection wrote, checked for their exact values (not only against the
    /// general decode).
    @Test func exactValuesWrittenByASecondConnection() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("adv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        let store = try Store(path: path, records: [AdvSmall.self])
        try store.write { tx in
            for i in 0..<8 {
                var r = AdvSmall()
                r.n = i
                try tx.insert(&r)
            }
        }
        let other = try DatabaseQueue(path: path)
        try other.write { db in
            try db.execute(sql: "UPDATE adv_small SET text = CAST(x'ff61' AS TEXT) WHERE n = 0")
            try db.execute(sql: "UPDATE adv_small SET text = 'a' || char(0) || 'b', flag = 2 WHERE n = 1")
            try db.execute(sql: "UPDATE adv_small SET flag = -1, ratio = 9007199254740993, \"when\" = 1e308 * 10 WHERE n = 2")
            try db.execute(sql: "UPDATE adv_small SET \"when\" = -9223372036854775808 WHERE n = 3")
            try db.execute(sql: "UPDATE adv_small SET text = X'6869' WHERE n = 4")
            try db.execute(sql: "UPDATE adv_small SET flag = 0.5 WHERE n = 5")
            try db.execute(sql: "UPDATE adv_small SET n = 1.5 WHERE n = 6")
            try db.execute(
                sql: "UPDATE adv_small SET n = 9223372036854775807, ratio = -0.0, \"when\" = '2024-01-01 00:00:00' WHERE n = 7")
        }
        try other.close()
        var request = RecordRequest<AdvSmall>()
        request.batchSize = 3
        let results = try store.fetch(request)
        func error(_ i: Int) -> String { do { _ = try results.record(at: i); return "none" } catch { return "\(error)" } }
        #expect(try Array(results.record(at: 0)!.text.utf8) == [0xEF, 0xBF, 0xBD, 0x61])
        #expect(try Array(results.record(at: 1)!.text.utf8) == [0x61, 0, 0x62])
        #expect(try results.record(at: 1)?.flag == true)
        #expect(try results.record(at: 2)?.flag == true)
        #expect(try results.record(at: 2)?.ratio == 9_007_199_254_740_992)
        #expect(try results.record(at: 2)?.when == Date(timeIntervalSince1970: .infinity))
        #expect(try results.record(at: 3)?.ratio == 0)
        #expect(try results.record(at: 3)?.when == Date(timeIntervalSince1970: -9_223_372_036_854_775_808))
        #expect(
            error(4) == #"Cannot decode column 'text': expected text, found "hi""# || error(4).contains("'text'"), "\(error(4))")
        #expect(error(5) == "Cannot decode column 'flag': expected a boolean, found 0.5")
        #expect(error(6) == "Cannot decode column 'n': expected an integer, found 1.5")
        #expect(error(7) == #"Cannot decode column 'when': expected a date (seconds since 1970), found "2024-01-01 00:00:00""#)
        // The other rows of those batches, and a later fetch, still read.
        #expect(try results.record(at: 1)?.n == 1)
        #expect(try store.fetch(RecordRequest<AdvSmall>(batchSize: 2)).record(at: 3)?.n == 3)
    }
}

extension AdversarialDecodeTests {
    /// A NaN in a non-optional Double is refused at the write with a clear error (SQLite
    /// stores NaN as NULL, which the column's NOT NULL refuses).
    @Test func aNaNInANonOptionalDoubleIsRefusedClearly() throws {
        let store = try Store.inMemory(records: [AdvSmall.self])
        let error = #expect(throws: (any Error).self) {
            try store.write { tx in
                var r = AdvSmall()
                r.ratio = .nan
                try tx.insert(&r)
            }
        }
        #expect(error.map { "\($0)" } == "Invalid argument: 'ratio' of 'adv_small' is NaN, which SQLite cannot store")
        #expect(try store.fetch(RecordRequest<AdvSmall>()).count == 0)
    }
}
