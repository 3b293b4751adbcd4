import Foundation
import Folio

// Records with every attribute type of "Store what apps store", declared with the public API
// only, as a user (or the record macro) writes them: `AttributeDescription(\.property,
// column: "property")`, and nothing on the value types beyond `Codable` (or `AttributeValue`).

/// Declared as SwiftData users declare enums: stored by its raw value. `Comparable` with a
/// hand-written `<` (by raw value), so that it can be sorted by.
enum GadgetStatus: String, Codable, Comparable, CaseIterable {
    case archived, draft, live, retired
    static func < (lhs: GadgetStatus, rhs: GadgetStatus) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }
}

/// An `AttributeValue` enum with an `Int8` raw value: Folio supplies its `<` (raw value order,
/// not the declaration order, which is reversed here on purpose).
enum GadgetPriority: Int8, Codable, Comparable, CaseIterable, AttributeValue {
    case high = 9
    case normal = 5
    case low = 1
}

/// A `Codable` enum without raw values: stored as JSON.
enum GadgetShape: Codable, Equatable {
    case round(radius: Int)
    case box(width: Int, height: Int)
}

struct GadgetSize: Codable, Equatable, Sendable {
    var width = 0
    var height = 0
}

struct GadgetPart: Codable, Equatable, Sendable {
    var name: String
    var count: Int64
    var note: String?
}

struct GadgetSpec: Codable, Equatable, Sendable {
    var parts: [GadgetPart] = []
    var labels: [String: Int] = [:]
    var maybe: Double? = nil
}

struct Gadget: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var i8: Int8 = 0
    var i16: Int16 = 0
    var i32: Int32 = 0
    var u8: UInt8 = 0
    var u16: UInt16 = 0
    var u32: UInt32 = 0
    var u64: UInt64 = 0
    var word: UInt = 0
    var ratio: Float = 0
    var link = URL(string: "https://example.com/")!
    var status = GadgetStatus.draft
    var priority = GadgetPriority.normal
    var size = GadgetSize()
    var tags: [String] = []
    var spec = GadgetSpec()
    var shape = GadgetShape.round(radius: 1)
    var optionalI32: Int32? = nil
    var optionalU64: UInt64? = nil
    var optionalRatio: Float? = nil
    var optionalLink: URL? = nil
    var optionalStatus: GadgetStatus? = nil
    var optionalPriority: GadgetPriority? = nil
    var optionalSize: GadgetSize? = nil
    var optionalTags: [String]? = nil

    static let entity = EntityDescription<Gadget>(
        "gadget",
        [
            AttributeDescription(\.name, column: "name"),
            AttributeDescription(\.i8, column: "i8"),
            AttributeDescription(\.i16, column: "i16"),
            AttributeDescription(\.i32, column: "i32"),
            AttributeDescription(\.u8, column: "u8"),
            AttributeDescription(\.u16, column: "u16"),
            AttributeDescription(\.u32, column: "u32"),
            AttributeDescription(\.u64, column: "u64"),
            AttributeDescription(\.word, column: "word"),
            AttributeDescription(\.ratio, column: "ratio", indexed: true),
            AttributeDescription(\.link, column: "link"),
            AttributeDescription(\.status, column: "status", indexed: true),
            AttributeDescription(\.priority, column: "priority", indexed: true),
            AttributeDescription(\.size, column: "size"),
            AttributeDescription(\.tags, column: "tags"),
            AttributeDescription(\.spec, column: "spec"),
            AttributeDescription(\.shape, column: "shape"),
            AttributeDescription(\.optionalI32, column: "optionalI32"),
            AttributeDescription(\.optionalU64, column: "optionalU64"),
            AttributeDescription(\.optionalRatio, column: "optionalRatio"),
            AttributeDescription(\.optionalLink, column: "optionalLink"),
            AttributeDescription(\.optionalStatus, column: "optionalStatus"),
            AttributeDescription(\.optionalPriority, column: "optionalPriority"),
            AttributeDescription(\.optionalSize, column: "optionalSize"),
            AttributeDescription(\.optionalTags, column: "optionalTags"),
        ])

    init() {}
    init(_ name: String) { self.name = name }
}
