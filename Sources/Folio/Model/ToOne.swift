import Foundation
import GRDB

/// A to-one relationship's value: the identifier of the target record, or `nil`.
///
/// A record holds the target's identifier only — never the target record — so reading it
/// costs nothing, and the target is read when it is needed, in one query
/// (``Store/fetchOne(_:)``), or for many records at once (``Store/fetchTargets(_:)``):
///
/// ```swift
/// struct Item: PersistentRecord {
///     var id: RecordID?
///     var title = ""
///     var source = ToOne<Source>()
///
///     static let entity = EntityDescription<Item>("item", [
///         AttributeDescription(\.title),
///     ], relationships: [
///         .toOne(\.source),
///     ])
/// }
///
/// item.source = ToOne(source)              // point to a stored source
/// let source = try store.fetchOne(item.source)   // Source?, one query
/// ```
///
/// ### Through the relationship, in requests
///
/// A member of the target names the target's attribute in a predicate, a sort descriptor or
/// a section key, and Folio translates it to SQL (a lookup of the target by identifier):
///
/// ```swift
/// #Predicate<Item> { $0.source.muted == false }
/// SortDescriptor(\Item.source.name)
/// SectionKey.attribute(\Item.source.name)
/// ```
///
/// Such a member is always `nil` when read on a record: it exists to be named in a request.
/// It is `nil` in requests too when the reference is `nil` or its target is missing (a
/// reference another program left dangling), as an optional chain would be.
@dynamicMemberLookup
public struct ToOne<Target: PersistentRecord>: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The target's identifier; `nil` when the relationship is empty.
    /// - Complexity: O(1).
    public var id: RecordID?

    /// A reference to the record with identifier `id`, or an empty one.
    /// - Complexity: O(1).
    public init(_ id: RecordID? = nil) { self.id = id }

    /// A reference to a stored record (empty when the record has no identifier yet).
    /// - Complexity: O(1).
    public init(_ target: Target) { self.id = target.id }

    /// The target's attribute, to be named in a predicate, a sort descriptor or a section
    /// key (`\Item.source.name`). Always `nil` when read: read the target with
    /// ``Store/fetchOne(_:)``.
    /// - Complexity: O(1).
    public subscript<Value>(dynamicMember keyPath: KeyPath<Target, Value>) -> Value? { nil }

    /// An optional attribute of the target (`\Item.source.published` for a `Date?`), to be
    /// named in requests. Always `nil` when read.
    /// - Complexity: O(1).
    public subscript<Value>(dynamicMember keyPath: KeyPath<Target, Value?>) -> Value? { nil }

    /// `→#42`, or `→nil`.
    /// - Complexity: O(1).
    public var description: String { "→" + (id.map(\.description) ?? "nil") }

    /// Decodes the identifier (a single integer, or `null`).
    /// - Complexity: O(1).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        id = container.decodeNil() ? nil : try container.decode(RecordID.self)
    }

    /// Encodes the identifier as a single integer, or `null`.
    /// - Complexity: O(1).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let id { try container.encode(id) } else { try container.encodeNil() }
    }
}

/// `ToOne` of any target, for recognizing `\ToOne<Target>.id` without the target's type.
protocol ToOneProtocol {}
extension ToOne: ToOneProtocol {}

extension ToOne: AttributeValue {
    /// The storage of the reference column: ``AttributeType/integer``.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { .integer }
    /// `true`: an empty relationship is stored as `NULL`.
    /// - Complexity: O(1).
    public static var isOptional: Bool { true }
    /// The target's rowid, or `NULL`.
    /// - Complexity: O(1).
    public var storedValue: DatabaseValue { id?.rawValue.databaseValue ?? .null }
    /// Decodes a stored reference. An integer is the target's identifier; `NULL` — or any
    /// other value another program stored in the column, which cannot name a row — is an
    /// empty relationship.
    /// - Complexity: O(1).
    public static func decode(stored: DatabaseValue, column: String) throws -> ToOne {
        if case .int64(let raw) = stored.storage { return ToOne(RecordID(raw)) }
        return ToOne()
    }
}
