import Foundation
import GRDB

/// One stored property of a ``PersistentRecord``: a writable key path mapped to a column.
// @unchecked Sendable: the stored key path is an immutable value, and the two closures
// capture only that key path; none of them holds mutable state.
public struct AttributeDescription<Root: PersistentRecord>: @unchecked Sendable {
    /// The column name.
    public let column: String
    /// How the value is stored.
    public let type: AttributeType
    /// Whether the column accepts `NULL`.
    public let isOptional: Bool
    /// Whether Folio creates an index on the column (do so for sort and section keys).
    public let isIndexed: Bool
    /// Whether the column is unique (the key of ``WriteTransaction/upsert(_:onConflict:)``).
    public let isUnique: Bool
    /// Whether Folio keeps the attribute's folded text (`String.folded`) in a column
    /// of its own, with an index, for case- and diacritic-insensitive predicates, sorts and
    /// sections (`\.title.folded`; see <doc:SearchingAndSortingText>). Text attributes only.
    public let isFolded: Bool
    /// Whether the attribute is in the entity's full-text index, for ``TextSearch``
    /// (implies ``isFolded``: the index holds the folded text). Text attributes only.
    public let isSearchable: Bool
    /// The key path of the property.
    public let keyPath: PartialKeyPath<Root>
    /// The column this attribute had in older model versions, which a migration renames
    /// to ``column`` so that its data follows (see <doc:EvolvingYourSchema>).
    public let renamedFrom: String?
    /// The stored value existing rows get when a migration adds this attribute or makes it
    /// non-optional (rows whose value is `NULL` once the custom steps have run).
    public let defaultValue: DatabaseValue?
    /// `\Root.attribute.folded`, how a sort descriptor names the folded key (text attributes only).
    let foldedKeyPath: AnyKeyPath?
    /// The attribute as a member of a to-one pointing to `Root` (`\ToOne<Root>.title`), as
    /// another entity's requests name it through the relationship.
    let toOneMember: AnyKeyPath
    /// What the column points to, for a to-one's reference column; `nil` for an attribute.
    let reference: ReferenceDescription?
    let encode: (Root) -> DatabaseValue
    /// Reads the attribute's column of a stepped statement into a record, the general way
    /// (``ColumnReader/general(_:column:)``); ``directSlot`` is the fast way, where there is one.
    let decode: (inout Root, OpaquePointer, Int32) throws -> Void
    /// The property's offset and direct read, for the standard types stored inline
    /// (``ColumnReader/slot(_:)``).
    let directSlot: DirectColumn.Slot?

    /// Declares an attribute.
    ///
    /// - Parameters:
    ///   - keyPath: a stored property of the record.
    ///   - column: the column name; by default the property's name.
    ///   - indexed: create an index on the column.
    ///   - unique: create a unique index on the column.
    ///   - folded: keep the text's folded form (`String.folded`) in a column of its
    ///     own, with an index, so that `\.attribute.folded` can be used in predicates, sort
    ///     descriptors and section keys. Text attributes only.
    ///   - searchable: add the attribute to the entity's full-text index, for ``TextSearch``
    ///     (implies `folded`). Text attributes only.
    ///   - defaultValue: the value existing rows get when a migration adds this attribute
    ///     or makes it non-optional; a non-optional attribute added to a table that has
    ///     rows needs one (or a ``MigrationStep`` that fills it).
    ///   - renamedFrom: the column's name in older model versions: a migration renames it,
    ///     keeping its data, instead of dropping one column and adding another.
    public init<Value: AttributeValue>(
        _ keyPath: WritableKeyPath<Root, Value>,
        column: String? = nil,
        indexed: Bool = false,
        unique: Bool = false,
        folded: Bool = false,
        searchable: Bool = false,
        defaultValue: Value? = nil,
        renamedFrom: String? = nil
    ) {
        self.init(
            keyPath, column: column, indexed: indexed, unique: unique, folded: folded, searchable: searchable,
            defaultValue: defaultValue, renamedFrom: renamedFrom, reference: nil)
    }

    init<Value: AttributeValue>(
        _ keyPath: WritableKeyPath<Root, Value>,
        column: String? = nil,
        indexed: Bool = false,
        unique: Bool = false,
        folded: Bool = false,
        searchable: Bool = false,
        defaultValue: Value? = nil,
        renamedFrom: String? = nil,
        reference: ReferenceDescription?
    ) {
        let name = column ?? AttributeDescription.propertyName(of: keyPath)
        self.column = name
        self.type = Value.attributeType
        self.isOptional = Value.isOptional
        self.isIndexed = indexed || unique
        self.isUnique = unique
        self.isFolded = folded || searchable
        self.isSearchable = searchable
        self.keyPath = keyPath
        let anyKeyPath: AnyKeyPath = keyPath
        if let text = anyKeyPath as? KeyPath<Root, String> {
            self.foldedKeyPath = text.appending(path: \String.folded)
        } else if let text = anyKeyPath as? KeyPath<Root, String?> {
            self.foldedKeyPath = text.appending(path: \String?.folded)
        } else {
            self.foldedKeyPath = nil
        }
        if let optional = Value.self as? any OptionalAttributeValue.Type,
            let member = optional.toOneMember(keyPath, of: Root.self)
        {
            self.toOneMember = member
        } else {
            self.toOneMember = \ToOne<Root>.[dynamicMember: keyPath as KeyPath<Root, Value>]
        }
        self.reference = reference
        self.renamedFrom = renamedFrom
        self.defaultValue = defaultValue?.storedValue
        self.encode = { $0[keyPath: keyPath].storedValue }
        self.decode = ColumnReader<Root>.general(keyPath, column: name)
        self.directSlot = ColumnReader<Root>.slot(keyPath)
    }

    /// `\Article.title` → `title`; anything not a plain property gives a name that
    /// fails schema validation, so the store reports it.
    static func propertyName(of keyPath: AnyKeyPath) -> String {
        let text = String(describing: keyPath)
        guard let dot = text.firstIndex(of: ".") else { return text }
        return String(text[text.index(after: dot)...])
    }

    var schema: ColumnSchema {
        ColumnSchema(
            name: column, type: type, isOptional: isOptional, isIndexed: isIndexed, isUnique: isUnique, isFolded: isFolded,
            isSearchable: isSearchable, references: reference?.targetName())
    }
}
