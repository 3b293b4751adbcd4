import Foundation
import GRDB
import GRDBSQLite

/// The description of a record type: its table and attributes.
///
/// The ``versionHash`` is computed from this description alone, so it is stable across
/// launches and changes whenever the schema does; persistent section caches are
/// validated against it.
public struct EntityDescription<Root: PersistentRecord>: Sendable {
    /// The table name.
    public let name: String
    /// The attributes, in column order.
    public let attributes: [AttributeDescription<Root>]
    /// The table's name in older model versions, which a migration renames to ``name``
    /// so that its rows follow (see <doc:EvolvingYourSchema>).
    public let renamedFrom: String?
    /// The relationships: to-ones (their reference columns follow the attributes, in
    /// ``attributes``) and inverse to-manys (with their delete rules).
    public let relationships: [RelationshipDescription<Root>]
    /// The compound indexes, over several keys in order (see ``IndexDescription``).
    public let indexes: [IndexDescription<Root>]
    /// Decodes records from stepped statements laid out as `id, attributes…`: hold it in a
    /// local before a loop over rows (``RowDecoder``).
    let rowDecoder: RowDecoder<Root>
    /// The attributes a write sets: all but the derived ones, which SQLite keeps (worked out
    /// once: every write of a record reads them).
    let writtenAttributes: [AttributeDescription<Root>]

    /// Declares an entity.
    ///
    /// - Parameters:
    ///   - name: the table name.
    ///   - attributes: the attributes, in column order.
    ///   - relationships: the to-one relationships (each a reference column after the
    ///     attributes, with an index) and the inverse to-manys with their delete rules
    ///     (see <doc:Relationships>).
    ///   - renamedFrom: the table's name in older model versions, if it had another.
    ///   - indexes: the compound indexes, each over several keys in order (see
    ///     ``IndexDescription``); the store refuses an index without keys, with a key twice,
    ///     declared twice, or naming what is no key of the entity.
    /// - Complexity: O(attributes + relationships + indexes).
    public init(
        _ name: String, _ attributes: [AttributeDescription<Root>],
        relationships: [RelationshipDescription<Root>] = [], indexes: [IndexDescription<Root>] = [],
        renamedFrom: String? = nil
    ) {
        self.name = name
        self.attributes = attributes + relationships.compactMap(\.referenceAttribute)
        self.relationships = relationships
        self.indexes = indexes
        self.renamedFrom = renamedFrom
        self.rowDecoder = RowDecoder(self.attributes)
        self.writtenAttributes = self.attributes.filter { $0.derivation == nil }
    }

    /// The schema, as the store checks it. A compound index the store would refuse (see
    /// ``init(_:_:relationships:indexes:renamedFrom:)``) is left out.
    /// - Complexity: O(attributes + index keys × attributes).
    public var schema: EntitySchema {
        EntitySchema(
            name: name, columns: attributes.map(\.schema),
            indexes: indexes.isEmpty ? [] : (try? checkedIndexes()) ?? [])
    }

    /// A stable hash of the schema (FNV-1a, 64 bits, hexadecimal).
    public var versionHash: String { schema.versionHash }

    func attribute(for keyPath: AnyKeyPath) -> AttributeDescription<Root>? {
        attributes.first { $0.keyPath == keyPath }
    }

    /// The to-manys' delete rules: the child's table and reference column, and the rule.
    var toManyRules: [(child: ToManyTarget, rule: DeleteRule)] {
        relationships.compactMap { relationship in
            guard case .toMany(_, let child) = relationship.kind, let rule = relationship.deleteRule else { return nil }
            return (child(), rule)
        }
    }

    /// A key path through one of the entity's to-ones (`\Item.source.name`,
    /// `\Item.source.name.folded`), resolved; `nil` when it goes through none.
    /// - Throws: ``FolioError/attributeNotFolded(entity:attribute:)`` for the folded text of
    ///   a target attribute that is not folded.
    func relatedKey(for keyPath: AnyKeyPath) throws -> RelatedKey? {
        for attribute in attributes {
            guard let reference = attribute.reference else { continue }
            let base: AnyKeyPath = attribute.keyPath
            for key in reference.targetKeys() {
                guard let member = base.appending(path: key.member) else { continue }
                if member == keyPath {
                    return RelatedKey(
                        referenceColumn: attribute.column, targetTable: reference.targetName(), targetColumn: key.column,
                        type: key.type)
                }
                if key.type == .string, member.appending(path: \String?.folded) == keyPath {
                    guard key.isFolded else {
                        throw FolioError.attributeNotFolded(entity: reference.targetName(), attribute: key.column)
                    }
                    return RelatedKey(
                        referenceColumn: attribute.column, targetTable: reference.targetName(),
                        targetColumn: ColumnSchema.foldedKeyColumn(of: key.column), type: .string)
                }
            }
        }
        return nil
    }

    /// The target's attribute `member` (`\ToOne<Source>.name`) through the to-one at
    /// `reference` (`\Item.source`); `nil` when `reference` is no to-one or `member` no
    /// attribute of its target.
    func relatedKey(reference: AnyKeyPath, member: AnyKeyPath) -> RelatedKey? {
        guard let attribute = attribute(for: reference), let target = attribute.reference,
            let key = target.targetKeys().first(where: { $0.member == member })
        else { return nil }
        return RelatedKey(
            referenceColumn: attribute.column, targetTable: target.targetName(), targetColumn: key.column, type: key.type)
    }

    /// Whether `keyPath` is the record's `id`. `\Article.id` written where the type is
    /// known is not `==` to `\Root.id` formed here (a stored-property component versus the
    /// protocol requirement's), so a key path of the identifier's type is probed instead:
    /// it must read back whatever `id` is set to.
    func isIdentifier(_ keyPath: AnyKeyPath) -> Bool {
        if keyPath == \Root.id { return true }
        guard let path = keyPath as? KeyPath<Root, RecordID?> else { return false }
        var probe = Root()
        for raw in [Int64.min, Int64.max] {
            probe.id = RecordID(raw)
            guard probe[keyPath: path] == RecordID(raw) else { return false }
        }
        return true
    }

    /// Column name for a key path, `id` for `\.id`, the folded-key column for
    /// `\.attribute.folded` of a folded attribute.
    /// - Throws: ``FolioError/attributeNotFolded(entity:attribute:)`` for the folded text of an
    ///   attribute that is not folded; ``FolioError/unknownKeyPath(entity:keyPath:)`` otherwise.
    func column(for keyPath: AnyKeyPath) throws -> String {
        if isIdentifier(keyPath) { return "id" }
        if let attribute = attribute(for: keyPath) { return attribute.column }
        if let attribute = try foldedAttribute(for: keyPath) { return ColumnSchema.foldedKeyColumn(of: attribute.column) }
        if let error = unknownTargetMember(keyPath) { throw error }
        throw FolioError.unknownKeyPath(entity: name, keyPath: String(describing: keyPath))
    }

    /// The error for a key path through one of the entity's to-ones to a member its target
    /// does not declare as an attribute (`\Item.source.scratch`): it names the to-one, the
    /// target entity and the target's attributes, since a member reached through `ToOne`'s
    /// dynamic member lookup has no name at run time. `nil` when `keyPath` goes through no
    /// to-one. With `reference` (a predicate's `$0.source`), `keyPath` is the member
    /// (`\ToOne<Source>.scratch`); without, the to-one is found by the key path's text.
    func unknownTargetMember(_ keyPath: AnyKeyPath, through reference: AnyKeyPath? = nil) -> FolioError? {
        let text = String(describing: keyPath)
        for attribute in attributes {
            guard let target = attribute.reference else { continue }
            let base = String(describing: attribute.keyPath as AnyKeyPath)
            if let reference {
                guard reference == attribute.keyPath else { continue }
            } else {
                guard text.hasPrefix(base + ".") else { continue }
            }
            let described = reference == nil ? text : "\(base) → \(text)"
            let declared = (["id"] + target.targetKeys().map(\.column)).joined(separator: ", ")
            return FolioError.unknownKeyPath(
                entity: target.targetName(),
                keyPath:
                    "\(described) (through the to-one '\(attribute.column)' of '\(name)', whose target declares: \(declared))")
        }
        return nil
    }

    /// The attribute whose folded text `keyPath` names (`\Root.title.folded`), if any.
    /// - Throws: ``FolioError/attributeNotFolded(entity:attribute:)`` when it is not folded.
    func foldedAttribute(for keyPath: AnyKeyPath) throws -> AttributeDescription<Root>? {
        guard let attribute = attributes.first(where: { $0.foldedKeyPath == keyPath }) else { return nil }
        guard attribute.isFolded else { throw FolioError.attributeNotFolded(entity: name, attribute: attribute.column) }
        return attribute
    }

    /// The folded attribute at `keyPath` (`\Root.title`), for `localizedStandardContains`.
    /// - Throws: ``FolioError/attributeNotFolded(entity:attribute:)`` when it is not folded,
    ///   ``FolioError/unknownKeyPath(entity:keyPath:)`` when it is no attribute.
    func foldedKeyColumn(forAttributeAt keyPath: AnyKeyPath) throws -> String {
        guard let attribute = attribute(for: keyPath) else {
            throw FolioError.unknownKeyPath(entity: name, keyPath: String(describing: keyPath))
        }
        guard attribute.isFolded else { throw FolioError.attributeNotFolded(entity: name, attribute: attribute.column) }
        return ColumnSchema.foldedKeyColumn(of: attribute.column)
    }

    /// The stored values of a record, in attribute order.
    /// - Throws: ``FolioError/unstorableValue(entity:attribute:reason:)`` for a value that
    ///   cannot be encoded (a `Codable` value that does not encode as JSON).
    func encode(_ record: Root) throws -> [DatabaseValue] {
        try writtenAttributes.map { try storedValue(of: $0, in: record) }
    }

    /// The stored value of `attribute` in `record`, its encoding error named.
    func storedValue(of attribute: AttributeDescription<Root>, in record: Root) throws -> DatabaseValue {
        do {
            return try attribute.encode(record)
        } catch let unstorable as UnstorableValue {
            throw FolioError.unstorableValue(entity: name, attribute: attribute.column, reason: unstorable.reason)
        }
    }

    /// The stored values of a record to write, in the order of ``storedColumnNames``: the
    /// attributes, then the folded keys of the folded ones.
    /// - Throws: ``FolioError/invalidArgument(_:)`` for a NaN, ``FolioError/unstorableValue(entity:attribute:reason:)``
    ///   for a value SQLite cannot hold (see ``checkWritable(_:column:type:)``).
    func writableValues(_ record: Root) throws -> [DatabaseValue] {
        var values = try encode(record)
        let written = writtenAttributes
        for (attribute, value) in zip(written, values) {
            try checkWritable(value, column: attribute.column, type: attribute.type)
        }
        for (attribute, value) in zip(written, values) where attribute.isFolded {
            values.append(Self.foldedKey(of: value))
        }
        return values
    }

    /// Every column a write sets: the attributes', then the folded keys'.
    var storedColumnNames: [String] {
        let written = writtenAttributes
        return written.map(\.column) + written.filter(\.isFolded).map { ColumnSchema.foldedKeyColumn(of: $0.column) }
    }

    /// The folded key of a stored value: its folded text (``TextFolding``); `NULL` for
    /// `NULL`; any other value as it is (only text is folded).
    static func foldedKey(of value: DatabaseValue) -> DatabaseValue {
        if case .string(let text) = value.storage { return TextFolding.fold(text).databaseValue }
        return value
    }

    /// SQLite has no NaN: it stores one as NULL, which a non-optional column refuses (an
    /// obscure NOT NULL failure) and an optional one would read back as `nil`. Folio
    /// refuses it by name instead. (Infinities are stored as they are.) A `REAL` for an
    /// integer attribute is a `UInt64` above `Int64.max`, which no SQLite integer holds.
    func checkWritable(_ value: DatabaseValue, column: String, type: AttributeType?) throws {
        guard case .double(let number) = value.storage else { return }
        if number.isNaN {
            throw FolioError.invalidArgument("'\(column)' of '\(name)' is NaN, which SQLite cannot store")
        }
        if type == .integer || type == .bool {
            throw FolioError.unstorableValue(
                entity: name, attribute: column,
                reason: "\(Self.describeAboveInt64(number)) is above Int64.max (\(Int64.max)), the largest integer SQLite stores")
        }
    }

    /// A number above `Int64.max` as the unsigned integer it was, where it is one.
    static func describeAboveInt64(_ number: Double) -> String {
        UInt64(exactly: number).map { "about \($0)" } ?? "\(number)"
    }
}
