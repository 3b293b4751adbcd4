import Foundation

/// A type whose values are stored as rows of one table.
///
/// A record declares its ``EntityDescription``: the table, and which stored properties are
/// attributes (columns). Folio creates the table and indexes from it, and builds and
/// decodes records with `init()` and the attributes' writable key paths.
///
/// The macro ``PersistentRecord(_:renamedFrom:)`` writes the entity and this conformance from
/// the struct's stored properties:
///
/// ```swift
/// @PersistentRecord
/// struct Article {
///     var id: RecordID?
///     var title = ""
///     @Stored(.indexed) var published = Date()
///     var score = 0
/// }
/// ```
///
/// The same entity, written by hand (see <doc:DeclaringRecords>):
///
/// ```swift
/// struct Article: PersistentRecord {
///     var id: RecordID?
///     var title = ""
///     var published = Date()
///     var score = 0
///
///     static let entity = EntityDescription<Article>("article", [
///         AttributeDescription(\.title),
///         AttributeDescription(\.published, indexed: true),
///         AttributeDescription(\.score),
///     ])
/// }
/// ```
public protocol PersistentRecord: Sendable {
    /// The entity: table name and attributes.
    static var entity: EntityDescription<Self> { get }
    /// The record's rowid, `nil` until it is inserted.
    var id: RecordID? { get set }
    /// Creates a record with default values; Folio sets the attributes after.
    init()
}
