import Foundation
import GRDB
import Testing

@testable import Folio

/// A `Codable`, `Comparable` struct: stored as JSON, which cannot be ordered in SQL.
struct GadgetVersion: Codable, Comparable, Sendable {
    var major = 0
    var minor = 0
    static func < (lhs: GadgetVersion, rhs: GadgetVersion) -> Bool { (lhs.major, lhs.minor) < (rhs.major, rhs.minor) }
}

struct Versioned: PersistentRecord {
    var id: RecordID?
    var version = GadgetVersion()
    var optionalVersion: GadgetVersion? = nil
    var tags: [String] = []
    var level = GadgetPriority.low
    var state: GadgetStatus? = nil
    var owner = ToOne<Versioned>()
    static let entity = EntityDescription<Versioned>(
        "versioned",
        [
            AttributeDescription(\.version, column: "version"),
            AttributeDescription(\.optionalVersion, column: "optionalVersion"),
            AttributeDescription(\.tags, column: "tags"),
            AttributeDescription(\.level, column: "level"),
            AttributeDescription(\.state, column: "state"),
        ], relationships: [.toOne(\.owner)])
}

/// Predicates and sorts over the new attribute types: each checked against Foundation's own
/// evaluation of the predicate on every record.
@Suite("Attribute types: predicates and sorts")
struct AttributeTypePredicateTests {
    /// 4 statuses × 3 priorities × 3 sizes, with optionals, links, integers and floats varied.
    static func populated() throws -> (Store, [Gadget]) {
        let store = try Store.inMemory(records: [Gadget.self])
        let sizes = [GadgetSize(width: 1, height: 2), GadgetSize(width: 2, height: 1), GadgetSize()]
        let links = [URL(string: "https://example.com/")!, URL(string: "https://例え.jp/パス?q=1#f")!, URL(fileURLWithPath: "/a b")]
        var index = 0
        try store.write { tx in
            for status in GadgetStatus.allCases {
                for priority in GadgetPriority.allCases {
                    for size in sizes {
                        var g = Gadget("g\(index)")
                        g.status = status
                        g.priority = priority
                        g.size = size
                        g.tags = index.isMultiple(of: 3) ? ["a"] : ["a", "b"]
                        g.optionalStatus = index.isMultiple(of: 4) ? nil : status
                        g.optionalPriority = index.isMultiple(of: 5) ? nil : priority
                        g.optionalSize = index.isMultiple(of: 2) ? nil : size
                        g.link = links[index % links.count]
                        g.optionalLink = index.isMultiple(of: 3) ? nil : links[(index / 2) % links.count]
                        g.i8 = [Int8.min, -1, 0, 1, .max][index % 5]
                        g.i32 = [Int32.min, 0, .max][index % 3]
                        g.u8 = [0, 200, .max][index % 3]
                        g.u64 = [0, UInt64(Int64.max) - 1, UInt64(Int64.max)][index % 3]
                        g.word = UInt(index)
                        g.ratio = [-Float.infinity, -0.0, 0.1, 1, .greatestFiniteMagnitude][index % 5]
                        try tx.insert(&g)
                        index += 1
                    }
                }
            }
        }
        return (store, try store.fetch(RecordRequest<Gadget>()).map { $0! })
    }

    /// The ids Folio's SQL matches equal those Foundation's evaluation matches.
    func check(_ predicate: Predicate<Gadget>, _ store: Store, _ all: [Gadget], nonEmpty: Bool = true) throws {
        let expected = try all.filter { try predicate.evaluate($0) }.map(\.id)
        let found = Array(try store.fetchIdentifiers(RecordRequest(predicate: predicate))).map { RecordID?($0) }
        #expect(found == expected, "\(predicate)")
        if nonEmpty { #expect(!expected.isEmpty && expected.count < all.count, "\(predicate) tells rows apart") }
    }

    @Test func enumsCompareByRawValue() throws {
        let (store, all) = try Self.populated()
        let live = GadgetStatus.live, draft = GadgetStatus.draft, low = GadgetPriority.low, high = GadgetPriority.high
        let normal = GadgetPriority.normal
        try check(#Predicate { $0.status == live }, store, all)
        try check(#Predicate { $0.status != live }, store, all)
        try check(#Predicate { $0.status > draft }, store, all)
        try check(#Predicate { $0.status <= draft }, store, all)
        try check(#Predicate { $0.priority > low }, store, all)
        try check(#Predicate { $0.priority < high && $0.priority >= normal }, store, all)
        try check(#Predicate { $0.status == live && $0.priority == high }, store, all)
        try check(#Predicate { $0.optionalStatus == nil }, store, all)
        try check(#Predicate { $0.optionalStatus == live }, store, all)
        try check(#Predicate { $0.optionalStatus != live }, store, all)
        try check(#Predicate { $0.optionalPriority == high }, store, all)
        let open = [GadgetStatus.draft, GadgetStatus.live]
        try check(#Predicate { open.contains($0.status) }, store, all)
        let openOrNone: [GadgetStatus?] = [.live, nil]
        try check(#Predicate { openOrNone.contains($0.optionalStatus) }, store, all)
        let priorities = [GadgetPriority.high]
        try check(#Predicate { priorities.contains($0.priority) }, store, all)
        // The raw values are bound: the SQL names no case.
        let sql = try RecordRequest<Gadget>(predicate: #Predicate { $0.priority > low }).compile().predicate
        #expect(sql?.sql == #"("priority" > ?)"#)
        #expect(sql?.arguments == [1.databaseValue])
    }

    @Test func enumOrderIsTheRawValueOrderNotTheDeclarationOrder() throws {
        // GadgetPriority declares high (9), normal (5), low (1): `<` and SQL both say low < normal < high.
        #expect(GadgetPriority.low < .normal && GadgetPriority.normal < .high)
        #expect(GadgetPriority.allCases.sorted() == [.low, .normal, .high])
        let (store, _) = try Self.populated()
        let sorted = try store.fetch(RecordRequest<Gadget>(sortBy: [SortDescriptor(\.priority), SortDescriptor(\.status)]))
        let pairs = sorted.map { ($0!.priority, $0!.status) }
        #expect(pairs.map(\.0) == pairs.map(\.0).sorted())
        #expect(pairs.first?.0 == .low && pairs.last?.0 == .high)
        let byStatus = try store.fetch(RecordRequest<Gadget>(sortBy: [SortDescriptor(\.status, order: .reverse)])).map {
            $0!.status
        }
        #expect(byStatus == byStatus.sorted(by: >))
        #expect(byStatus.first == .retired && byStatus.last == .archived)
        let optional = try store.fetch(RecordRequest<Gadget>(sortBy: [SortDescriptor(\.optionalStatus)])).map {
            $0!.optionalStatus
        }
        #expect(optional.first == .some(nil), "NULL sorts first")
        #expect(optional.compactMap { $0 } == optional.compactMap { $0 }.sorted())
    }

    @Test func urlsCompareByTheirAbsoluteStrings() throws {
        let (store, all) = try Self.populated()
        let home = URL(string: "https://example.com/")!, japanese = URL(string: "https://例え.jp/パス?q=1#f")!
        try check(#Predicate { $0.link == home }, store, all)
        try check(#Predicate { $0.link != japanese }, store, all)
        try check(#Predicate { $0.optionalLink == nil }, store, all)
        try check(#Predicate { $0.optionalLink == japanese }, store, all)
        let either = [home, japanese]
        try check(#Predicate { either.contains($0.link) }, store, all)
        // A URL relative to a base matches the stored absolute string.
        let relative = URL(string: "../", relativeTo: URL(string: "https://example.com/dir/")!)!
        let matched = try store.count(RecordRequest<Gadget>(predicate: #Predicate { $0.link == relative }))
        #expect(matched == all.filter { $0.link == home }.count)
    }

    @Test func fixedWidthIntegersAndFloatsCompareExactly() throws {
        let (store, all) = try Self.populated()
        let maxI32 = Int32.max, minI8 = Int8.min, nearTop = UInt64(Int64.max) - 1, top = UInt64(Int64.max)
        let aboveTop = UInt64.max, justAbove = UInt64(Int64.max) + 1
        try check(#Predicate { $0.i32 == maxI32 }, store, all)
        try check(#Predicate { $0.i8 > minI8 && $0.i8 < 1 }, store, all)
        try check(#Predicate { $0.u8 >= 200 }, store, all)
        try check(#Predicate { $0.u64 > nearTop }, store, all)
        try check(#Predicate { $0.u64 == top }, store, all)
        try check(#Predicate { $0.u64 >= nearTop && $0.u64 != top }, store, all)
        try check(#Predicate { $0.u64 < aboveTop }, store, all, nonEmpty: false)
        try check(#Predicate { $0.u64 == aboveTop || $0.u64 >= justAbove }, store, all, nonEmpty: false)
        #expect(try store.count(RecordRequest<Gadget>(predicate: #Predicate { $0.u64 < aboveTop })) == all.count)
        #expect(try store.count(RecordRequest<Gadget>(predicate: #Predicate { $0.u64 >= justAbove })) == 0)
        try check(#Predicate { $0.word > 10 && $0.word <= 20 }, store, all)
        let tenth: Float = 0.1, big = Float.greatestFiniteMagnitude
        try check(#Predicate { $0.ratio == tenth }, store, all)
        try check(#Predicate { $0.ratio > 0.5 && $0.ratio < big }, store, all)
        try check(#Predicate { $0.ratio <= 0 }, store, all)
    }

    @Test func codableValuesCompareForEquality() throws {
        let (store, all) = try Self.populated()
        let size = GadgetSize(width: 1, height: 2), other = GadgetSize(width: 2, height: 1)
        try check(#Predicate { $0.size == size }, store, all)
        try check(#Predicate { $0.size != size }, store, all)
        try check(#Predicate { $0.optionalSize == nil }, store, all)
        try check(#Predicate { $0.optionalSize != nil }, store, all)
        try check(#Predicate { $0.optionalSize == size }, store, all)
        try check(#Predicate { $0.optionalSize == $0.optionalSize }, store, all, nonEmpty: false)
        let sizes = [size, other]
        try check(#Predicate { sizes.contains($0.size) }, store, all)
        let optionalSizes: [GadgetSize?] = [other, nil]
        try check(#Predicate { optionalSizes.contains($0.optionalSize) }, store, all)
        let tags = ["a", "b"]
        try check(#Predicate { $0.tags == tags }, store, all)
        let live = GadgetStatus.live
        try check(#Predicate { $0.tags != tags && $0.status == live }, store, all)
        let sql = try RecordRequest<Gadget>(predicate: #Predicate { $0.size == size }).compile().predicate
        #expect(sql?.sql == #"("size" = ?)"#)
        #expect(sql?.arguments == [#"{"height":2,"width":1}"#.databaseValue])
    }

    /// Checks that translating `predicate` throws an unsupported-predicate error naming `name`.
    func expectRefused(_ predicate: Predicate<Versioned>, naming name: String) {
        #expect {
            try RecordRequest<Versioned>(predicate: predicate).compile()
        } throws: { error in
            guard case FolioError.unsupportedPredicate(_, let reason) = error else { return false }
            return reason.contains("'\(name)'") && reason.contains("JSON")
        }
    }

    @Test func codableValuesRefuseEverythingButEquality() throws {
        let v = GadgetVersion(major: 1, minor: 2)
        expectRefused(#Predicate { $0.version < v }, naming: "version")
        expectRefused(#Predicate { $0.version >= v }, naming: "version")
        expectRefused(#Predicate { v > $0.version }, naming: "version")
        expectRefused(#Predicate { ($0.optionalVersion ?? v) == v }, naming: "optionalVersion")
        expectRefused(#Predicate { $0.optionalVersion! == v }, naming: "optionalVersion")
        expectRefused(#Predicate { $0.tags.contains("a") }, naming: "tags")
        let optionalV: GadgetVersion? = v
        expectRefused(#Predicate { $0.owner.version == optionalV }, naming: "version")
        #expect(throws: FolioError.self) {
            try RecordRequest<Versioned>(predicate: #Predicate { $0.version.major > 1 }).compile()
        }
        // Equality still translates.
        #expect(try RecordRequest<Versioned>(predicate: #Predicate { $0.version == v }).compile().predicate != nil)
        // And through a real store, the refusal is thrown before any SQL.
        let store = try Store.inMemory(records: [Versioned.self])
        #expect(throws: FolioError.self) { try store.fetch(RecordRequest<Versioned>(predicate: #Predicate { $0.version < v })) }
    }

    @Test func aSortByACodableValueIsRefused() throws {
        let store = try Store.inMemory(records: [Versioned.self])
        for descriptor in [SortDescriptor(\Versioned.version), SortDescriptor(\Versioned.optionalVersion, order: .reverse)] {
            #expect {
                try store.fetch(RecordRequest<Versioned>(sortBy: [descriptor]))
            } throws: { error in
                guard case FolioError.unsupportedSortDescriptor(let entity, let description) = error else { return false }
                return entity == "versioned" && description.contains("JSON")
            }
        }
        #expect(throws: FolioError.self) {
            try store.fetch(RecordRequest<Versioned>(sortBy: [SortDescriptor(\Versioned.owner.version)]))
        }
    }

    @Test func enumsAreReadThroughAToOne() throws {
        let store = try Store.inMemory(records: [Versioned.self])
        let levels: [GadgetPriority] = [.high, .low, .normal]
        let states: [GadgetStatus?] = [.live, nil, .draft]
        try store.write { tx in
            var owners: [Versioned] = []
            for (level, state) in zip(levels, states) {
                var owner = Versioned(level: level, state: state)
                try tx.insert(&owner)
                owners.append(owner)
            }
            for index in 0..<9 {
                var child = Versioned(owner: ToOne(owners[index % 3]))
                try tx.insert(&child)
            }
        }
        let all = try store.fetch(RecordRequest<Versioned>()).map { $0! }
        let owners = Dictionary(uniqueKeysWithValues: all.prefix(3).map { ($0.id!, $0) })
        let high: GadgetPriority? = .high, live: GadgetStatus? = .live
        for predicate in [
            #Predicate<Versioned> { $0.owner.level == high }, #Predicate<Versioned> { $0.owner.state == live },
            #Predicate<Versioned> { $0.owner.state == nil && $0.owner.id != nil },
        ] {
            let found = Array(try store.fetchIdentifiers(RecordRequest(predicate: predicate)))
            #expect(found.count == 3, "\(predicate)")
        }
        let sorted = try store.fetch(
            RecordRequest<Versioned>(
                predicate: #Predicate { $0.owner.id != nil }, sortBy: [SortDescriptor(\Versioned.owner.level, order: .reverse)]))
        let sortedLevels = sorted.map { owners[$0!.owner.id!]!.level }
        #expect(
            sortedLevels == Array(repeating: GadgetPriority.high, count: 3) + Array(repeating: .normal, count: 3)
                + Array(repeating: .low, count: 3))
    }

    @Test func aRawValueKeyPathIsNoAttribute() throws {
        // `\.status.rawValue` is a property of the enum, not the attribute: Folio cannot tell
        // it from any other computed property, and names it in the error. Sort by the enum.
        let store = try Store.inMemory(records: [Gadget.self])
        #expect {
            try store.fetch(RecordRequest<Gadget>(sortBy: [SortDescriptor(\Gadget.status.rawValue)]))
        } throws: { error in
            guard case FolioError.unknownKeyPath(let entity, _) = error else { return false }
            return entity == "gadget"
        }
    }
}
