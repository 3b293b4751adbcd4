import Foundation
import GRDB
import Testing

@testable import Folio

/// Every attribute type of "Store what apps store" at its extremes, written by Folio and read
/// back, with the exact stored form checked in SQL.
@Suite("Attribute types: round trips")
struct AttributeTypeRoundTripTests {
    /// Inserts `gadget`, reads it back by id and through a batch-faulting fetch.
    func roundTrip(_ gadget: Gadget, _ store: Store) throws -> Gadget {
        var copy = gadget
        try store.write { tx in try tx.insert(&copy) }
        let read = try #require(try store.fetchOne(Gadget.self, id: copy.id!))
        let name = copy.name
        let fetched = try store.fetch(RecordRequest<Gadget>(predicate: #Predicate { $0.name == name }))
        #expect(fetched.count == 1)
        #expect(try fetched.record(at: 0) == read)
        return read
    }

    /// The value SQLite holds in `column` of the one gadget named `name`, with its storage class.
    func raw(_ store: Store, _ column: String, _ name: String) throws -> String {
        try store.read { db in
            try String.fetchOne(
                db, sql: "SELECT typeof(\(column)) || ':' || quote(\(column)) FROM gadget WHERE name = ?", arguments: [name])!
        }
    }

    @Test func fixedWidthIntegersAtTheirExtremes() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        for (index, useMax) in [false, true].enumerated() {
            var g = Gadget("extreme \(index)")
            g.i8 = useMax ? .max : .min
            g.i16 = useMax ? .max : .min
            g.i32 = useMax ? .max : .min
            g.u8 = useMax ? .max : .min
            g.u16 = useMax ? .max : .min
            g.u32 = useMax ? .max : .min
            g.u64 = useMax ? UInt64(Int64.max) : 0
            g.word = useMax ? UInt(Int64.max) : 0
            g.optionalI32 = useMax ? .max : .min
            g.optionalU64 = useMax ? UInt64(Int64.max) : 0
            let read = try roundTrip(g, store)
            #expect(read.i8 == g.i8 && read.i16 == g.i16 && read.i32 == g.i32)
            #expect(read.u8 == g.u8 && read.u16 == g.u16 && read.u32 == g.u32 && read.u64 == g.u64 && read.word == g.word)
            #expect(read.optionalI32 == g.optionalI32 && read.optionalU64 == g.optionalU64)
        }
        #expect(try raw(store, "i8", "extreme 0") == "integer:-128")
        #expect(try raw(store, "u32", "extreme 1") == "integer:4294967295")
        #expect(try raw(store, "u64", "extreme 1") == "integer:9223372036854775807")
        #expect(try raw(store, "optionalI32", "extreme 0") == "integer:-2147483648")
    }

    @Test func unsignedIntegersAboveInt64MaxAreRefusedAtWrite() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        for value in [UInt64(Int64.max) + 1, UInt64.max] {
            var g = Gadget("big")
            g.u64 = value
            #expect {
                try store.write { tx in try tx.insert(&g) }
            } throws: { error in
                guard case FolioError.unstorableValue(let entity, let attribute, let reason) = error else { return false }
                return entity == "gadget" && attribute == "u64" && reason.contains("Int64.max")
            }
            var optional = Gadget("big optional")
            optional.optionalU64 = value
            #expect(throws: FolioError.self) { try store.write { tx in try tx.insert(&optional) } }
            var word = Gadget("big word")
            word.word = UInt(value)
            #expect(throws: FolioError.self) { try store.write { tx in try tx.insert(&word) } }
        }
        #expect(try store.count(RecordRequest<Gadget>()) == 0, "nothing was written")
        var stored = Gadget("stored")
        try store.write { tx in try tx.insert(&stored) }
        #expect {
            try store.write { tx in
                try tx.updateAll(Gadget.self, set: [.set(\.u64, to: .max)])
            }
        } throws: { error in
            guard case FolioError.unstorableValue(_, let attribute, _) = error else { return false }
            return attribute == "u64"
        }
        #expect(try store.fetchOne(Gadget.self, id: stored.id!)?.u64 == 0)
    }

    @Test(arguments: [
        Float.nan, Float.signalingNaN, -Float.nan,
    ])
    func aFloatNaNIsRefusedAsADoubleNaNIs(_ nan: Float) throws {
        let store = try Store.inMemory(records: [Gadget.self])
        var g = Gadget("nan")
        g.ratio = nan
        #expect {
            try store.write { tx in try tx.insert(&g) }
        } throws: { error in
            guard case FolioError.invalidArgument(let text) = error else { return false }
            return text.contains("'ratio'") && text.contains("NaN")
        }
        var optional = Gadget("optional nan")
        optional.optionalRatio = nan
        #expect(throws: FolioError.self) { try store.write { tx in try tx.insert(&optional) } }
        // Read: NULL is NaN for a non-optional Float, as for a Double; nil for an optional.
        #expect(try Float.decode(stored: .null, column: "ratio").isNaN)
        #expect(try Double.decode(stored: .null, column: "ratio").isNaN)
        #expect(try Float?.decode(stored: .null, column: "ratio") == nil)
    }

    static let floats: [Float] = [
        0, -0.0, 1, -1, .infinity, -.infinity, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .ulpOfOne, 0.1, .leastNormalMagnitude / 3, 16_777_216, 16_777_218,
        .pi,
    ]

    @Test func floatsRoundTripBitForBit() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        for (index, value) in Self.floats.enumerated() {
            var g = Gadget("f\(index)")
            g.ratio = value
            g.optionalRatio = value
            let read = try roundTrip(g, store)
            // SQLite keeps no sign of zero: -0.0 reads back as 0.0, as a Double's does.
            let expected = value == 0 ? 0 : value
            #expect(read.ratio.bitPattern == expected.bitPattern, "\(value)")
            #expect(read.optionalRatio?.bitPattern == expected.bitPattern, "\(value)")
            if value == 0 && value.sign == .minus {
                #expect(try Float.decode(stored: (-0.0).databaseValue, column: "f").sign == .minus, "decoding keeps it")
            }
            // Stored as the REAL equal to it.
            let stored = try store.read { db in
                try Double.fetchOne(db, sql: "SELECT ratio FROM gadget WHERE name = ?", arguments: ["f\(index)"])
            }
            #expect(stored == Double(value))
        }
    }

    @Test func floatsSortInSQLAsInSwift() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        var random = SeededRandom(seed: 41)
        // Every bit pattern but NaNs: subnormals, huge and tiny values of both signs.
        let randomFloats = (0..<200).map { _ in Float(bitPattern: UInt32(truncatingIfNeeded: random.next())) }
        let values = (Self.floats + randomFloats).filter { !$0.isNaN }
        try store.write { tx in
            for (index, value) in values.enumerated() {
                var g = Gadget("f\(index)")
                g.ratio = value
                try tx.insert(&g)
            }
        }
        for order in [SortOrder.forward, .reverse] {
            let sorted = try store.fetch(RecordRequest<Gadget>(sortBy: [SortDescriptor(\.ratio, order: order)])).map { $0!.ratio }
            // Ties (0 and -0) keep the rowid order, which the values do not show: compare values.
            let expected = values.sorted { order == .forward ? $0 < $1 : $0 > $1 }
            #expect(sorted.map(Double.init) == expected.map(Double.init))
        }
    }

    @Test func aRealFromAnotherProgramReadsAsTheNearestFloatOrAnError() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        var g = Gadget("r")
        try store.write { tx in try tx.insert(&g) }
        try execute(store, "UPDATE gadget SET ratio = 0.1, optionalRatio = 7")
        let read = try #require(try store.fetchOne(Gadget.self, id: g.id!))
        #expect(read.ratio == Float(0.1))
        #expect(read.optionalRatio == 7)
        for literal in ["1e300", "-3.5e38", "'text'", "x'00'"] {
            try execute(store, "UPDATE gadget SET ratio = \(literal)")
            #expect {
                try store.fetchOne(Gadget.self, id: g.id!)
            } throws: { error in
                guard case FolioError.decoding(let column, _) = error else { return false }
                return column == "ratio"
            }
        }
    }

    static let urls: [URL] = [
        URL(string: "https://例え.jp/パス?q=ü&r=%2F#frag")!,
        URL(string: "https://example.com/a%20b?x=%2F&y=1#top")!,
        URL(string: "https://user:pw@example.com:8443/p/../q;params?a=b&a=c#")!,
        URL(fileURLWithPath: "/tmp/a b/ü e\u{301}.txt"),
        URL(fileURLWithPath: "/tmp/dir/", isDirectory: true),
        URL(string: "docs/a.html")!,
        URL(string: "mailto:someone@example.com")!,
        URL(string: "data:text/plain;base64,SGVsbG8=")!,
        URL(string: "HTTP://EXAMPLE.com")!,
    ]

    @Test func urlsRoundTripThroughTheirAbsoluteString() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        for (index, url) in Self.urls.enumerated() {
            var g = Gadget("u\(index)")
            g.link = url
            g.optionalLink = url
            let read = try roundTrip(g, store)
            #expect(read.link == url, "\(url)")
            #expect(read.optionalLink == url)
            #expect(try raw(store, "link", "u\(index)") == "text:" + "'\(url.absoluteString)'")
        }
        // A URL relative to a base is stored resolved: it reads back as its absolute URL.
        let base = URL(string: "https://example.org/dir/")!
        var relative = Gadget("relative")
        relative.link = URL(string: "../a.html?x=1", relativeTo: base)!
        let read = try roundTrip(relative, store)
        #expect(read.link == relative.link.absoluteURL)
        #expect(read.link.absoluteString == "https://example.org/a.html?x=1")
        #expect(read.link.baseURL == nil)
        var empty = Gadget("no link")
        empty.optionalLink = nil
        #expect(try roundTrip(empty, store).optionalLink == nil)
        #expect(try raw(store, "optionalLink", "no link") == "null:NULL")
    }

    @Test func textThatIsNoURLIsADecodingError() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        var g = Gadget("x")
        try store.write { tx in try tx.insert(&g) }
        for literal in ["''", "'http://[::1'", "x'68747470'"] {
            try execute(store, "UPDATE gadget SET optionalLink = \(literal)")
            #expect {
                try store.fetchOne(Gadget.self, id: g.id!)
            } throws: { error in
                guard case FolioError.decoding(let column, _) = error else { return false }
                return column == "optionalLink"
            }
        }
    }

    @Test func enumsAreStoredAsTheirRawValues() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        for status in GadgetStatus.allCases {
            for priority in GadgetPriority.allCases {
                var g = Gadget("\(status)-\(priority)")
                g.status = status
                g.priority = priority
                g.optionalStatus = status
                g.optionalPriority = priority
                let read = try roundTrip(g, store)
                #expect(read.status == status && read.priority == priority)
                #expect(read.optionalStatus == status && read.optionalPriority == priority)
                #expect(try raw(store, "status", g.name) == "text:'\(status.rawValue)'")
                #expect(try raw(store, "priority", g.name) == "integer:\(priority.rawValue)")
            }
        }
        var none = Gadget("none")
        none.optionalStatus = nil
        let read = try roundTrip(none, store)
        #expect(read.optionalStatus == nil && read.optionalPriority == nil)
        #expect(try raw(store, "optionalStatus", "none") == "null:NULL")
        #expect(Gadget.entity.attributes.first { $0.column == "status" }?.type == .string)
        #expect(Gadget.entity.attributes.first { $0.column == "priority" }?.type == .integer)
        #expect(Gadget.entity.attributes.first { $0.column == "optionalPriority" }?.isOptional == true)
    }

    @Test func codableValuesAreStoredAsJSONWithSortedKeys() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        var g = Gadget("json")
        g.size = GadgetSize(width: 3, height: 4)
        g.tags = ["b", "a/b", "é"]
        g.shape = .box(width: 2, height: 5)
        g.optionalSize = nil
        g.optionalTags = []
        let read = try roundTrip(g, store)
        g.id = read.id
        #expect(read == g)
        #expect(try raw(store, "size", "json") == #"text:'{"height":4,"width":3}'"#)
        #expect(try raw(store, "tags", "json") == #"text:'["b","a/b","é"]'"#)
        #expect(try raw(store, "shape", "json") == #"text:'{"box":{"height":5,"width":2}}'"#)
        #expect(try raw(store, "optionalSize", "json") == "null:NULL")
        #expect(try raw(store, "optionalTags", "json") == "text:'[]'")
        #expect(Gadget.entity.attributes.first { $0.column == "size" }?.type == .json)
        #expect(Gadget.entity.attributes.first { $0.column == "optionalTags" }?.type == .json)
    }

    @Test func nestedCodableValuesRoundTripExactly() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        let texts = ["a\0b", "\0", "e\u{301}", "\u{E9}", "K", "\u{212A}", "🎉👩‍👩‍👧", "\"quoted\" \\ /", "\u{FEFF}", "line\nbreak"]
        var g = Gadget("nested")
        g.spec = GadgetSpec(
            parts: texts.enumerated().map { GadgetPart(name: $1, count: Int64($0), note: $0.isMultiple(of: 2) ? nil : $1) }
                + [
                    GadgetPart(name: "2^53+1", count: 9_007_199_254_740_993, note: nil),
                    GadgetPart(name: "max", count: .max, note: ""), GadgetPart(name: "min", count: .min, note: nil),
                ],
            // Canonically equivalent keys ("é" in NFC and NFD, K and the Kelvin sign) are one key.
            labels: Dictionary(texts.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first }), maybe: -0.5)
        let read = try roundTrip(g, store)
        #expect(read.spec == g.spec)
        #expect(read.spec.parts.map(\.name).map { Array($0.utf8) } == g.spec.parts.map(\.name).map { Array($0.utf8) })
        #expect(Set(read.spec.labels.keys.map { Array($0.utf8) }) == Set(g.spec.labels.keys.map { Array($0.utf8) }))
        #expect(read.spec.parts.first { $0.name == "2^53+1" }?.count == 9_007_199_254_740_993)
        #expect(read.spec.parts.first { $0.name == "max" }?.count == .max)
    }

    @Test func equalValuesStoreEqualText() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        // Dictionaries built in different orders (and so hashed and iterated differently).
        let keys = (0..<50).map { "key\($0)" }
        var first = Gadget("first"), second = Gadget("second")
        first.spec.labels = Dictionary(uniqueKeysWithValues: keys.map { ($0, $0.count) })
        second.spec.labels = Dictionary(uniqueKeysWithValues: keys.reversed().map { ($0, $0.count) })
        #expect(first.spec == second.spec)
        try store.write { tx in
            try tx.insert(&first)
            try tx.insert(&second)
        }
        #expect(try raw(store, "spec", "first") == raw(store, "spec", "second"))
    }

    @Test func aCodableValueThatDoesNotEncodeIsRefusedAtWrite() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        var g = Gadget("nan inside")
        g.spec.maybe = .nan
        #expect {
            try store.write { tx in try tx.insert(&g) }
        } throws: { error in
            guard case FolioError.unstorableValue(let entity, let attribute, let reason) = error else { return false }
            return entity == "gadget" && attribute == "spec" && reason.contains("JSON")
        }
        #expect(try store.count(RecordRequest<Gadget>()) == 0)
        var stored = Gadget("stored")
        try store.write { tx in try tx.insert(&stored) }
        var broken = stored
        broken.spec.maybe = .infinity
        #expect(throws: FolioError.self) { try store.write { tx in try tx.update(broken) } }
        #expect {
            try store.write { tx in try tx.updateAll(Gadget.self, set: [.set(\.spec, to: broken.spec)]) }
        } throws: { error in
            guard case FolioError.unstorableValue(_, let attribute, _) = error else { return false }
            return attribute == "spec"
        }
        #expect(try store.fetchOne(Gadget.self, id: stored.id!) == stored)
    }

    @Test func assignmentsStoreNewTypesAsTheirAttributesDo() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        var g = Gadget("a")
        try store.write { tx in try tx.insert(&g) }
        let link = URL(string: "https://example.net/x")!
        let changed = try store.write { tx in
            try tx.updateAll(
                Gadget.self,
                set: [
                    .set(\.status, to: .live), .set(\.priority, to: .high), .set(\.optionalStatus, to: nil),
                    .set(\.size, to: GadgetSize(width: 9, height: 8)), .set(\.link, to: link), .set(\.i8, to: -3),
                    .set(\.ratio, to: 2.5), .set(\.optionalTags, to: ["z"]),
                ])
        }
        #expect(changed == 1)
        let read = try #require(try store.fetchOne(Gadget.self, id: g.id!))
        #expect(read.status == .live && read.priority == .high && read.optionalStatus == nil)
        #expect(read.size == GadgetSize(width: 9, height: 8) && read.link == link && read.i8 == -3 && read.ratio == 2.5)
        #expect(read.optionalTags == ["z"])
        #expect(try raw(store, "size", "a") == #"text:'{"height":8,"width":9}'"#)
    }

    @Test func upsertsByAUniqueEnumOrJSONAttribute() throws {
        struct Keyed: PersistentRecord {
            var id: RecordID?
            var status = GadgetStatus.draft
            var size = GadgetSize()
            var count = 0
            static let entity = EntityDescription<Keyed>(
                "keyed",
                [
                    AttributeDescription(\.status, column: "status", unique: true),
                    AttributeDescription(\.size, column: "size", unique: true),
                    AttributeDescription(\.count, column: "count"),
                ])
        }
        let store = try Store.inMemory(records: [Keyed.self])
        try store.write { tx in
            var first = Keyed(id: nil, status: .live, size: GadgetSize(width: 1, height: 1), count: 1)
            try tx.upsert(&first, onConflict: \.status)
            var second = Keyed(id: nil, status: .live, size: GadgetSize(width: 2, height: 2), count: 2)
            try tx.upsert(&second, onConflict: \.status)
            #expect(first.id == second.id)
            var third = Keyed(id: nil, status: .archived, size: GadgetSize(width: 2, height: 2), count: 3)
            try tx.upsert(&third, onConflict: \.size)
            #expect(third.id == first.id)
        }
        let all = try store.fetch(RecordRequest<Keyed>()).map { $0! }
        #expect(all.count == 1 && all[0].status == .archived && all[0].count == 3)
    }
}
