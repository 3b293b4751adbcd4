import Foundation
import GRDB

/// What happens to the records of a to-many relationship when their target is deleted, as
/// Core Data's delete rules. The rule is kept by SQLite triggers in the file, so it holds
/// whoever deletes: Folio, raw SQL, another process, the `sqlite3` shell.
public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// The records' references are set to `nil` (the default, as in Core Data).
    case nullify
    /// The records are deleted too (and their own to-many relationships' rules apply).
    case cascade
    /// The delete is refused while any record points to the target: it throws
    /// ``FolioError/deleteDenied(entity:relationship:)`` and changes nothing.
    case deny
    /// Nothing is done: the records keep a reference to a missing target, which reads as
    /// `nil` through the relationship (``Store/fetchOne(_:)`` returns `nil`).
    case noAction
}

/// A relationship of a ``PersistentRecord``: a to-one, stored as a reference column with an
/// index, or the inverse to-many of another entity's to-one, which stores nothing and
/// carries the delete rule.
///
/// ```swift
/// struct Source: PersistentRecord {
///     var id: RecordID?
///     var name = ""
///     static let entity = EntityDescription<Source>("source", [
///         AttributeDescription(\.name, indexed: true),
///     ], relationships: [
///         .toMany(\Item.source, deleteRule: .cascade),   // deleting a source deletes its items
///     ])
/// }
/// ```
///
/// A to-many is read lazily, as a request (``RecordRequest/init(relatedTo:through:predicate:search:sortBy:limit:offset:batchSize:)``):
/// records are value types and hold no store, so a record never holds its to-many. See
/// <doc:Relationships>.
// @unchecked Sendable: every stored property is immutable; the closures capture only
// immutable key paths and read other entities' descriptions lazily.
public struct RelationshipDescription<Root: PersistentRecord>: @unchecked Sendable {
    enum Kind {
        /// The to-one's reference column, as an attribute of the entity.
        case toOne(AttributeDescription<Root>)
        /// The inverse of `Child`'s to-one: where the child's table and reference column are.
        case toMany(inverse: AnyKeyPath, child: () -> ToManyTarget)
    }

    let kind: Kind
    /// The delete rule of a to-many; `nil` for a to-one.
    /// - Complexity: O(1).
    public let deleteRule: DeleteRule?

    /// A to-one relationship: a column holding the target's identifier (`NULL` when empty),
    /// with an index, so that the target's to-many and lists that follow the target read
    /// only the rows that point to it.
    ///
    /// - Parameters:
    ///   - keyPath: the record's ``ToOne`` property.
    ///   - column: the reference column's name; by default the property's name.
    ///   - renamedFrom: the column's name in older model versions (see <doc:EvolvingYourSchema>).
    /// - Complexity: O(1); the target's description is read only when the store opens.
    public static func toOne<Target: PersistentRecord>(
        _ keyPath: WritableKeyPath<Root, ToOne<Target>>, column: String? = nil, renamedFrom: String? = nil
    ) -> RelationshipDescription {
        let attribute = AttributeDescription(
            keyPath, column: column, indexed: true, renamedFrom: renamedFrom,
            reference: ReferenceDescription(Target.self))
        return RelationshipDescription(kind: .toOne(attribute), deleteRule: nil)
    }

    /// The inverse to-many of `Child`'s to-one `inverse`: the records whose `inverse` points
    /// to a record of this entity. It stores nothing; `deleteRule` says what happens to
    /// them when their target is deleted. A to-one without a declared inverse is nullified.
    ///
    /// - Parameters:
    ///   - inverse: the to-one of the child entity that points here (`\Item.source`).
    ///   - deleteRule: what deleting a record of this entity does to the records pointing to it.
    /// - Complexity: O(1); the child's description is read only when the store opens.
    public static func toMany<Child: PersistentRecord>(
        _ inverse: KeyPath<Child, ToOne<Root>>, deleteRule: DeleteRule = .nullify
    ) -> RelationshipDescription {
        RelationshipDescription(
            kind: .toMany(
                inverse: inverse,
                child: {
                    ToManyTarget(
                        table: Child.entity.name, column: Child.entity.attribute(for: inverse)?.column,
                        inverse: KeyPathName.describe(inverse, in: Child.self))
                }),
            deleteRule: deleteRule)
    }

    /// The to-one's reference attribute, `nil` for a to-many.
    var referenceAttribute: AttributeDescription<Root>? {
        if case .toOne(let attribute) = kind { return attribute }
        return nil
    }
}

/// Where a to-many's records are: the child's table and reference column (`nil` when the
/// inverse key path is no declared to-one of the child).
struct ToManyTarget: Sendable {
    var table: String
    var column: String?
    /// The inverse key path, for messages.
    var inverse: String
}

/// What a reference column points to, read lazily (two entities may point to each other:
/// reading the other's description while this one is built would never end).
struct ReferenceDescription: Sendable {
    /// The target entity's table name.
    let targetName: @Sendable () -> String
    /// The target's attributes, as members of `ToOne<Target>` (`\ToOne<Source>.name`).
    let targetKeys: @Sendable () -> [TargetKey]

    init<Target: PersistentRecord>(_ target: Target.Type) {
        targetName = { Target.entity.name }
        targetKeys = {
            Target.entity.attributes.map {
                TargetKey(member: $0.toOneMember, column: $0.column, type: $0.type, isFolded: $0.isFolded)
            }
        }
    }
}

/// One attribute of a relationship's target, as a member of `ToOne<Target>`.
// @unchecked Sendable: the key path is immutable.
struct TargetKey: @unchecked Sendable {
    var member: AnyKeyPath
    var column: String
    var type: AttributeType
    var isFolded: Bool
}

/// A key path that goes through a to-one (`\Item.source.name`), resolved: the reference
/// column of the entity, the target's table and the target's column (its folded key for
/// `\Item.source.name.folded`).
struct RelatedKey: Sendable, Hashable {
    var referenceColumn: String
    var targetTable: String
    var targetColumn: String
    var type: AttributeType?
}

/// The optional attribute types (of any wrapped type: an ``AttributeValue`` or a `Codable`
/// one), whose member through a `ToOne` is the second subscript.
protocol OptionalAttributeValue {
    /// `Wrapped`.
    static var wrappedType: Any.Type { get }
    static func toOneMember<Root: PersistentRecord>(_ keyPath: AnyKeyPath, of root: Root.Type) -> AnyKeyPath?
}

extension Optional: OptionalAttributeValue {
    static var wrappedType: Any.Type { Wrapped.self }

    static func toOneMember<Root: PersistentRecord>(_ keyPath: AnyKeyPath, of root: Root.Type) -> AnyKeyPath? {
        guard let typed = keyPath as? KeyPath<Root, Wrapped?> else { return nil }
        return \ToOne<Root>.[dynamicMember: typed]
    }
}
