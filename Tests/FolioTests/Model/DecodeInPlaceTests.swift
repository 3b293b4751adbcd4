import Foundation
import Testing
import GRDB
import GRDBSQLite

@testable import Folio

/// A record whose attributes are of every storage kind, stored inline: decoded in place, at
/// the offsets of the struct's layout.
struct SpeedEveryKind: PersistentRecord, Equatable {
    var id: RecordID?
    var flag = false
    var text = ""
    var maybeText: String? = nil
    var number = 0
    var big: Int64 = 0
    var ratio = 0.0
    var when = Date(timeIntervalSince1970: 0)
    var bytes = Data()
    var uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
    var maybeNumber: Int? = nil
    var inner = SpeedInner()

    static let entity = EntityDescription<SpeedEveryKind>(
        "speed_every_kind",
        [
            AttributeDescription(\.flag), AttributeDescription(\.text), AttributeDescription(\.maybeText),
            AttributeDescription(\.number), AttributeDescription(\.big), AttributeDescription(\.ratio),
            AttributeDescription(\.when), AttributeDescription(\.bytes), AttributeDescription(\.uuid),
            AttributeDescription(\.maybeNumber), AttributeDescription(\.inner.label, column: "inner_label"),
        ])
}

struct SpeedInner: Equatable, Sendable {
    var padding: Int8 = 7
    var label = ""
}

/// A record whose attribute is a computed property: decoded through its setter (the key path).
struct SpeedComputed: PersistentRecord {
    var id: RecordID?
    var storage = ""
    var setterCalls = 0
    var shout: String {
        get { storage }
        set {
            storage = newValue.uppercased()
            setterCalls += 1
        }
    }

    static let entity = EntityDescription<SpeedComputed>(
        "speed_computed", [AttributeDescription(\.shout, column: "shout")])
}

/// A record that is a class: no inline layout, decoded through key paths.
final class SpeedClassRecord: PersistentRecord, @unchecked Sendable {
    var id: RecordID?
    var name = ""
    var count = 0

    static let entity = EntityDescription<SpeedClassRecord>(
        "speed_class_record", [AttributeDescription(\.name), AttributeDescription(\.count)])

    init() {}
}

@Suite("Decoding records in place")
struct DecodeInPlaceTests {
    @Test func everyKindOfAttributeRoundTripsThroughBatchesAndFetchOne() throws {
        let store = try Store.inMemory(records: [SpeedEveryKind.self])
        var written: [SpeedEveryKind] = []
        try store.write { tx in
            for i in 0..<250 {
                var r = SpeedEveryKind()
                r.flag = i % 2 == 0
                r.text = String(repeating: "é\u{0}x", count: i % 40)  // NULs and long text (heap storage)
                r.maybeText = i % 3 == 0 ? nil : "m\(i)"
                r.number = i == 7 ? Int.min : i * 1_000_003
                r.big = i == 8 ? Int64.max : Int64(-i)
                r.ratio = i == 9 ? -.infinity : Double(i) / 7
                r.when = Date(timeIntervalSince1970: Double(i) * 86_400.5)
                r.bytes = Data((0..<(i % 17)).map { UInt8($0 * 15) })
                r.uuid = UUID()
                r.maybeNumber = i % 4 == 0 ? nil : -i
                r.inner = SpeedInner(padding: 7, label: "inner \(i)")
                try tx.insert(&r)
                written.append(r)
            }
        }
        for batchSize in [1, 64, 0] {
            var request = RecordRequest<SpeedEveryKind>(sortBy: [SortDescriptor(\.number)])
            request.batchSize = batchSize
            let read = Array(try store.fetch(request))
            #expect(read.compactMap { $0 } == written.sorted { $0.number < $1.number }, "batch size \(batchSize)")
        }
        #expect(try store.fetchOne(SpeedEveryKind.self, id: written[7].id!) == written[7])
        // Batches of 3 with one kept: every record decoded many times over, each equal to the written one.
        var request = RecordRequest<SpeedEveryKind>(sortBy: [SortDescriptor(\.number, order: .reverse)])
        request.batchSize = 3
        request.maxBatchesInMemory = 1
        let results = try store.fetch(request)
        let byID = Dictionary(uniqueKeysWithValues: written.map { ($0.id!, $0) })
        for _ in 0..<2 {
            for (i, record) in results.enumerated() {
                #expect(record != nil && record == byID[results.identifier(at: i)])
            }
        }
    }

    @Test func aComputedAttributeIsSetThroughItsSetter() throws {
        let store = try Store.inMemory(records: [SpeedComputed.self])
        try store.write { tx in
            try tx.database.execute(sql: "INSERT INTO speed_computed (shout) VALUES ('quiet'), ('louder')")
        }
        var request = RecordRequest<SpeedComputed>(sortBy: [SortDescriptor(\.shout)])
        request.batchSize = 1
        let read = Array(try store.fetch(request))
        #expect(read.map { $0?.storage } == ["LOUDER", "QUIET"])
        #expect(read.map { $0?.setterCalls } == [1, 1])
    }

    @Test func aClassRecordIsDecodedThroughKeyPaths() throws {
        let store = try Store.inMemory(records: [SpeedClassRecord.self])
        try store.write { tx in
            try tx.database.execute(sql: "INSERT INTO speed_class_record (name, count) VALUES ('a', 1), ('b', 2)")
        }
        var request = RecordRequest<SpeedClassRecord>(sortBy: [SortDescriptor(\.count)])
        request.batchSize = 1
        let read = Array(try store.fetch(request))
        #expect(read.map { $0?.name } == ["a", "b"])
        #expect(read.map { $0?.count } == [1, 2])
        #expect(read[0] !== read[1])
    }

    @Test func aWrongTypeInOneColumnFailsThatRowAlone() throws {
        let store = try Store.inMemory(records: [SpeedEveryKind.self])
        try store.write { tx in
            for i in 0..<5 {
                var r = SpeedEveryKind()
                r.number = i
                r.text = "t\(i)"
                try tx.insert(&r)
            }
            try tx.database.execute(sql: "UPDATE speed_every_kind SET uuid = X'0102' WHERE number = 2")
        }
        var request = RecordRequest<SpeedEveryKind>(sortBy: [SortDescriptor(\.number)])
        request.batchSize = 5
        let results = try store.fetch(request)
        let read = Array(results)
        #expect(read.map { $0?.text } == ["t0", "t1", nil, "t3", "t4"])
        #expect(results.lastError != nil)
    }
}

/// A record of every type ``ColumnReader`` reads straight from the statement.
struct DirectReadRecord: PersistentRecord {
    var id: RecordID?
    var text = ""
    var maybeText: String? = nil
    var number = 0
    var maybeNumber: Int? = nil
    var big: Int64 = 0
    var maybeBig: Int64? = nil
    var flag = false
    var maybeFlag: Bool? = nil
    var ratio = 0.0
    var maybeRatio: Double? = nil
    var when = Date(timeIntervalSince1970: 0)
    var maybeWhen: Date? = nil

    static let entity = EntityDescription<DirectReadRecord>("direct_read_record", [AttributeDescription(\.text)])
}

@Suite("Reading columns straight into records")
struct ColumnReaderTests {
    /// Every storage class SQLite can hand back, at the extremes: the direct reads must give
    /// exactly what the general decode gives (the same value, bit for bit, or the same error).
    static let storedValues = [
        "NULL", "0", "1", "-1", "9223372036854775807", "-9223372036854775808", "9007199254740993",
        "9007199254740993.0", "0.0", "-0.0", "1.5", "2.0", "1e308 * 10", "-1e308 * 10", "'text'", "''", "'12'",
        "'a' || char(0) || 'b'", "'é'", "'e' || char(769)", "'İı'", "X'00FF'", "X''",
    ]

    @Test(arguments: storedValues)
    func directReadsMatchTheGeneralDecode(literal: String) throws {
        let queue = try DatabaseQueue()
        try queue.read { db in
            // Laid out as a record's row: the id, then the attribute.
            let statement = try db.makeStatement(sql: "SELECT 1, \(literal)")
            let sqlite = statement.sqliteStatement
            #expect(sqlite3_step(sqlite) == SQLITE_ROW)
            defer { sqlite3_reset(sqlite) }
            let stored = DatabaseValue.exact(sqliteStatement: sqlite, index: 1)
            func check<V: AttributeValue>(_ keyPath: WritableKeyPath<DirectReadRecord, V>, _ same: (V, V) -> Bool) {
                let attribute = AttributeDescription(keyPath, column: "c")
                #expect(attribute.directSlot != nil, "\(V.self) is read directly")
                let direct = Result { try RowDecoder([attribute]).decode(sqlite) }.map { $0[keyPath: keyPath] }
                let general = Result { try V.decode(stored: stored, column: "c") }
                switch (direct, general) {
                case (.success(let a), .success(let b)):
                    #expect(same(a, b), "\(literal) as \(V.self): \(a) read directly, \(b) decoded")
                case (.failure(let a), .failure(let b)):
                    #expect("\(a)" == "\(b)", "\(literal) as \(V.self)")
                default:
                    Issue.record("\(literal) as \(V.self): \(direct) read directly, \(general) decoded")
                }
            }
            func bits(_ a: Double?, _ b: Double?) -> Bool { a?.bitPattern == b?.bitPattern }
            // Strings compare by bytes: NFC and NFD are different values in SQLite (and
            // equal Swift strings).
            check(\.text) { Array($0.utf8) == Array($1.utf8) }
            check(\.maybeText) { $0.map { Array($0.utf8) } == $1.map { Array($0.utf8) } }
            check(\.number, ==)
            check(\.maybeNumber, ==)
            check(\.big, ==)
            check(\.maybeBig, ==)
            check(\.flag, ==)
            check(\.maybeFlag, ==)
            check(\.ratio) { bits($0, $1) }
            check(\.maybeRatio) { bits($0, $1) }
            check(\.when) { bits($0.timeIntervalSince1970, $1.timeIntervalSince1970) }
            check(\.maybeWhen) { bits($0?.timeIntervalSince1970, $1?.timeIntervalSince1970) }
        }
    }

    @Test func aMismatchThrowsTheDecodingErrorNamingTheColumn() throws {
        let store = try Store.inMemory(records: [SpeedEveryKind.self])
        try store.write { tx in
            var r = SpeedEveryKind()
            try tx.insert(&r)
            try tx.database.execute(sql: "UPDATE speed_every_kind SET number = 'twelve'")
        }
        var request = RecordRequest<SpeedEveryKind>()
        request.batchSize = 10
        let results = try store.fetch(request)
        let error = #expect(throws: FolioError.self) { _ = try results.record(at: 0) }
        #expect(error.map { "\($0)" } == #"Cannot decode column 'number': expected an integer, found "twelve""#)
    }
}
