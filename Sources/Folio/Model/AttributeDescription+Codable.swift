import Foundation
import GRDB

extension AttributeDescription {
    /// Declares an attribute of a `Codable` type that is no ``AttributeValue``, as SwiftData
    /// users declare them: an enum with `Int` or `String` raw values, a small struct, an
    /// array, a dictionary — and their optionals.
    ///
    /// ```swift
    /// enum Status: String, Codable { case draft, published, archived }
    /// struct Dimensions: Codable, Equatable { var width = 0, height = 0 }
    ///
    /// struct Post: PersistentRecord {
    ///     var id: RecordID?
    ///     var status = Status.draft      // stored as "draft": TEXT
    ///     var size = Dimensions()        // stored as {"height":0,"width":0}: JSON text
    ///     var tags: [String] = []        // stored as ["a","b"]: JSON text
    ///     static let entity = EntityDescription<Post>("post", [
    ///         AttributeDescription(\.status, indexed: true),
    ///         AttributeDescription(\.size),
    ///         AttributeDescription(\.tags),
    ///     ])
    /// }
    /// ```
    ///
    /// How values are stored is chosen from the type:
    ///
    /// - A `RawRepresentable` type whose raw value is an ``AttributeValue`` (`Int`, `String`,
    ///   any fixed-width integer…) is stored as its raw value, with the raw value's
    ///   ``AttributeType``: predicates compare it (`==`, `<`, membership), sorts order it and
    ///   sections group it by raw value, as SQLite orders stored values.
    /// - Any other type is stored as JSON text with sorted keys (``AttributeType/json``): equal
    ///   values store equal text, so predicates can test it for equality (`==`, `!=`, `nil`,
    ///   membership in a literal array) and nothing else — an ordering, arithmetic or text
    ///   operator on it, or a sort by it, throws an error that names the attribute.
    /// - `nil` is stored as `NULL`.
    ///
    /// A value that cannot be encoded (a `Double.nan` inside, an `encode(to:)` that throws)
    /// makes the write throw ``FolioError/unstorableValue(entity:attribute:reason:)``. A
    /// stored value that no longer decodes — a raw value that is no case any more, JSON of an
    /// older shape — reads as ``FolioError/decoding(column:reason:)``, for an optional
    /// property too (it is not read as `nil`, which a later update would write back over
    /// the value). See <doc:AttributeTypes>.
    ///
    /// A type that is an ``AttributeValue`` is declared with the other initializer, which
    /// Swift prefers.
    ///
    /// - Parameters:
    ///   - keyPath: a stored property of the record.
    ///   - column: the column name; by default the property's name.
    ///   - indexed: create an index on the column.
    ///   - unique: create a unique index on the column (equal values store equal text, so
    ///     it applies to JSON too).
    ///   - folded: keep the folded form of text raw values (see the other initializer).
    ///     Text raw values only.
    ///   - searchable: add the text raw values to the entity's full-text index. Text raw
    ///     values only.
    ///   - defaultValue: the value existing rows get when a migration adds this attribute
    ///     or makes it non-optional. One that cannot be encoded makes the store refuse the
    ///     model with ``FolioError/invalidSchema(entity:reason:)``.
    ///   - renamedFrom: the column's name in older model versions.
    /// - Complexity: O(1).
    @_disfavoredOverload
    public init<Value: Codable & Sendable>(
        _ keyPath: WritableKeyPath<Root, Value>,
        column: String? = nil,
        indexed: Bool = false,
        unique: Bool = false,
        folded: Bool = false,
        searchable: Bool = false,
        defaultValue: Value? = nil,
        renamedFrom: String? = nil
    ) {
        let (name, unnamedKeyPath) = Self.columnName(column, of: keyPath)
        let storage = CodableStorage<Value>.chosen
        var stored: DatabaseValue?
        var problem: String?
        if let defaultValue {
            do { stored = try storage.encode(defaultValue) } catch { problem = (error as? UnstorableValue)?.reason ?? "\(error)" }
        }
        self.init(
            keyPath, column: name, unnamedKeyPath: unnamedKeyPath, type: storage.type, isOptional: storage.isOptional,
            options: Options(indexed: indexed, unique: unique, folded: folded, searchable: searchable, renamedFrom: renamedFrom),
            defaultValue: stored, defaultValueProblem: problem, reference: nil,
            encode: { try storage.encode($0[keyPath: keyPath]) },
            decode: ColumnReader<Root>.general(keyPath, column: name, decode: storage.decode), directSlot: nil)
    }
}
