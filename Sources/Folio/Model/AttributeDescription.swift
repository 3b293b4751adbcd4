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
    public internal(set) var defaultValue: DatabaseValue?
    /// How a derived attribute is computed from the records of a to-many (``Derivation``);
    /// `nil` for an attribute the app writes.
    public internal(set) var derivation: Derivation? = nil
    /// `\Root.attribute.folded`, how a sort descriptor names the folded key (text attributes only).
    let foldedKeyPath: AnyKeyPath?
    /// The attribute as a member of a to-one pointing to `Root` (`\ToOne<Root>.title`), as
    /// another entity's requests name it through the relationship.
    let toOneMember: AnyKeyPath
    /// What the column points to, for a to-one's reference column; `nil` for an attribute.
    let reference: ReferenceDescription?
    /// The attribute's stored value in a record; throws ``UnstorableValue`` for a value that
    /// cannot be stored (JSON encoding failed).
    let encode: (Root) throws -> DatabaseValue
    /// Reads the attribute's column of a stepped statement into a record, the general way
    /// (``ColumnReader/general(_:column:)``); ``directSlot`` is the fast way, where there is one.
    let decode: (inout Root, OpaquePointer, Int32) throws -> Void
    /// The property's offset and direct read, for the standard types stored inline
    /// (``ColumnReader/slot(_:)``).
    let directSlot: DirectColumn.Slot?
    /// The key path's text when the attribute gives no `column` and its key path's text is
    /// not `\Root.property` (see ``KeyPathName``): the store refuses the entity
    /// (``FolioError/unnamedKeyPath(entity:keyPath:)``). `nil` otherwise.
    let unnamedKeyPath: String?
    /// Whether the property's type holds every 64-bit integer (`Int`, `Int64` and their
    /// optionals), which an order kept by hand needs (``OrderKeys``).
    let holdsEveryInt64: Bool
    /// Why ``defaultValue`` could not be stored, if it could not (the store refuses the model).
    let defaultValueProblem: String?

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
    /// - Complexity: O(1).
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
        let (name, unnamedKeyPath) = Self.columnName(column, of: keyPath)
        self.init(
            keyPath, column: name, unnamedKeyPath: unnamedKeyPath, type: Value.attributeType, isOptional: Value.isOptional,
            options: Options(indexed: indexed, unique: unique, folded: folded, searchable: searchable, renamedFrom: renamedFrom),
            defaultValue: defaultValue?.storedValue, defaultValueProblem: nil, reference: reference,
            encode: { $0[keyPath: keyPath].storedValue }, decode: ColumnReader<Root>.general(keyPath, column: name),
            directSlot: ColumnReader<Root>.slot(keyPath))
    }

    /// The declaration's options, as the public initializers take them.
    /// A derived attribute: a column of the entity that SQLite keeps equal to `derivation`
    /// — the count of a to-many's records, or the sum, minimum or maximum of one of their
    /// attributes — whoever writes them (see ``Derivation``). The app reads it as any
    /// attribute, in records, predicates, sorts and sections; ``WriteTransaction`` never
    /// writes it (the value a record holds when it is inserted or updated is left out). A
    /// non-optional integer or `Double` attribute is 0 for a record without children.
    ///
    /// - Parameters:
    ///   - keyPath: the record's property (`\.unreadCount`).
    ///   - derivation: what it is computed from.
    ///   - column: the column's name; by default the property's name.
    ///   - indexed: whether Folio creates an index on the column (for a list sorted by it).
    ///   - renamedFrom: the column's name in older model versions.
    /// - Complexity: O(1); the derivation is checked when the store opens.
    public init<Value: AttributeValue>(
        _ keyPath: WritableKeyPath<Root, Value>, derived derivation: Derivation, column: String? = nil,
        indexed: Bool = false, renamedFrom: String? = nil
    ) {
        self.init(keyPath, column: column, indexed: indexed, renamedFrom: renamedFrom, reference: nil)
        self.derivation = derivation
        if !isOptional {
            switch type {
            case .integer: defaultValue = 0.databaseValue
            case .double: defaultValue = 0.0.databaseValue
            default: break
            }
        }
    }

    struct Options {
        var indexed: Bool
        var unique: Bool
        var folded: Bool
        var searchable: Bool
        var renamedFrom: String?
    }

    /// The one initializer the public ones end in: `type` and the closures say how values
    /// of `Value` are stored and read.
    init<Value>(
        _ keyPath: WritableKeyPath<Root, Value>, column name: String, unnamedKeyPath: String?, type: AttributeType,
        isOptional: Bool,
        options: Options, defaultValue: DatabaseValue?, defaultValueProblem: String?, reference: ReferenceDescription?,
        encode: @escaping (Root) throws -> DatabaseValue, decode: @escaping ColumnReader<Root>.Read,
        directSlot: DirectColumn.Slot?
    ) {
        self.column = name
        self.unnamedKeyPath = unnamedKeyPath
        self.type = type
        self.isOptional = isOptional
        self.isIndexed = options.indexed || options.unique
        self.isUnique = options.unique
        self.isFolded = options.folded || options.searchable
        self.isSearchable = options.searchable
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
        self.renamedFrom = options.renamedFrom
        self.defaultValue = defaultValue
        self.defaultValueProblem = defaultValueProblem
        self.encode = encode
        self.decode = decode
        self.directSlot = directSlot
        self.holdsEveryInt64 = Self.typesHoldingEveryInt64.contains(ObjectIdentifier(Value.self))
    }

    /// `Int64`, `Int` where it has 64 bits, and their optionals.
    private static var typesHoldingEveryInt64: Set<ObjectIdentifier> {
        var types = [ObjectIdentifier(Int64.self), ObjectIdentifier(Int64?.self)]
        if Int(exactly: Int64.max) != nil { types += [ObjectIdentifier(Int.self), ObjectIdentifier(Int?.self)] }
        return Set(types)
    }

    /// `\Article.title` → `title`: the column of an attribute declared without one; `nil`
    /// when the key path's text is not `\Root.identifier` (see ``KeyPathName``).
    static func propertyName(of keyPath: AnyKeyPath) -> String? {
        KeyPathName.propertyName(of: keyPath, in: Root.self)
    }

    /// The column of an attribute declared with `column` (or without), and the key path's
    /// text when no column name can be read from it (the store then refuses the entity).
    static func columnName(_ column: String?, of keyPath: AnyKeyPath) -> (name: String, unnamedKeyPath: String?) {
        if let column { return (column, nil) }
        if let property = propertyName(of: keyPath) { return (property, nil) }
        return ("", KeyPathName.describe(keyPath, in: Root.self))
    }

    /// The column as the store makes and checks it. A derived attribute's column admits
    /// `NULL` whatever its type: a row inserted without it (by raw SQL, another program)
    /// gets its value from the insert trigger (``SQLBuilder/derivedAttributeTriggers(_:)``),
    /// in the same statement.
    var schema: ColumnSchema {
        ColumnSchema(
            name: column, type: type, isOptional: isOptional || derivation != nil, isIndexed: isIndexed, isUnique: isUnique,
            isFolded: isFolded,
            isSearchable: isSearchable, references: reference?.targetName())
    }
}
