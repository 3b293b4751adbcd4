import Foundation
import Testing

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
