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
    func encode(_ record: Root) -> [DatabaseValue] {
        attributes.map { $0.encode(record) }
    }

    /// The stored values of a record to write, in the order of ``storedColumnNames``: the
    /// attributes, then the folded keys of the folded ones.
    /// - Throws: ``FolioError/invalidArgument(_:)`` for a NaN (see ``checkWritable(_:column:)``).
    func writableValues(_ record: Root) throws -> [DatabaseValue] {
        var values = encode(record)
        for (attribute, value) in zip(attributes, values) { try checkWritable(value, column: attribute.column) }
        for (attribute, value) in zip(attributes, values) where attribute.isFolded {
            values.append(Self.foldedKey(of: value))
        }
        return values
    }

    /// Every column a write sets: the attributes', then the folded keys'.
    var storedColumnNames: [String] {
        attributes.map(\.column) + attributes.filter(\.isFolded).map { ColumnSchema.foldedKeyColumn(of: $0.column) }
    }

    /// The folded key of a stored value: its folded text (``TextFolding``); `NULL` for
    /// `NULL`; any other value as it is (only text is folded).
    static func foldedKey(of value: DatabaseValue) -> DatabaseValue {
        if case .string(let text) = value.storage { return TextFolding.fold(text).databaseValue }
        return value
    }

    /// SQLite has no NaN: it stores one as NULL, which a non-optional column refuses (an
    /// obscure NOT NULL failure) and an optional one would read back as `nil`. Folio
    /// refuses it by name instead. (Infinities are stored as they are.)
    func checkWritable(_ value: DatabaseValue, column: String) throws {
        if case .double(let number) = value.storage, number.isNaN {
            throw FolioError.invalidArgument("'\(column)' of '\(name)' is NaN, which SQLite cannot store")
        }
    }
}

/// A column as Folio declares it.
public struct ColumnSchema: Sendable, Hashable, Codable {
    /// The column name.
    public var name: String
    /// How values are stored.
    public var type: AttributeType
    /// Whether the column accepts `NULL`.
    public var isOptional: Bool
    /// Whether the column has an index.
    public var isIndexed: Bool
    /// Whether the index is unique.
    public var isUnique: Bool
    /// Whether Folio keeps the column's folded text in a column of its own (``AttributeDescription/isFolded``).
    public var isFolded: Bool = false
    /// Whether the column is in the entity's full-text index (``AttributeDescription/isSearchable``).
    public var isSearchable: Bool = false
    /// For a to-one's reference column, the target entity's table; `nil` for an attribute.
    public var references: String?

    private enum CodingKeys: String, CodingKey {
        case name, type, isOptional, isIndexed, isUnique, isFolded, isSearchable, references
    }

    init(
        name: String, type: AttributeType, isOptional: Bool, isIndexed: Bool, isUnique: Bool, isFolded: Bool = false,
        isSearchable: Bool = false, references: String? = nil
    ) {
        self.references = references
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isIndexed = isIndexed
        self.isUnique = isUnique
        self.isFolded = isFolded
        self.isSearchable = isSearchable
    }

    /// Decodes a column; the folding flags are absent from what Folio recorded before them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        type = try container.decode(AttributeType.self, forKey: .type)
        isOptional = try container.decode(Bool.self, forKey: .isOptional)
        isIndexed = try container.decode(Bool.self, forKey: .isIndexed)
        isUnique = try container.decode(Bool.self, forKey: .isUnique)
        isFolded = try container.decodeIfPresent(Bool.self, forKey: .isFolded) ?? false
        isSearchable = try container.decodeIfPresent(Bool.self, forKey: .isSearchable) ?? false
        references = try container.decodeIfPresent(String.self, forKey: .references)
    }

    /// Encodes a column; the folding flags only when set, so that a column without them is
    /// recorded exactly as before they existed.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(type, forKey: .type)
        try container.encode(isOptional, forKey: .isOptional)
        try container.encode(isIndexed, forKey: .isIndexed)
        try container.encode(isUnique, forKey: .isUnique)
        if isFolded { try container.encode(true, forKey: .isFolded) }
        if isSearchable { try container.encode(true, forKey: .isSearchable) }
        if let references { try container.encode(references, forKey: .references) }
    }

    /// The name of the column that holds a folded column's keys: `folio_<name>_folded`
    /// (Folio's prefix, which no attribute may use).
    static func foldedKeyColumn(of name: String) -> String { "folio_\(name)_folded" }

    /// Whether a column name is that of a folded-key column (`folio_…_folded`).
    static func isFoldedKeyColumn(_ name: String) -> Bool { foldedSource(ofKeyColumn: name) != nil }

    /// The source column of a folded-key column's name (`folio_title_folded` → `title`).
    static func foldedSource(ofKeyColumn name: String) -> String? {
        let lower = name.lowercased()
        guard lower.hasPrefix("folio_"), lower.hasSuffix("_folded"), name.count > 13 else { return nil }
        return String(name.dropFirst(6).dropLast(7))
    }

    /// The columns of the column's index: the column — and for a folded key, its source
    /// after it, so that a folded sort (key, then text, then rowid) is read from the index
    /// alone, in order, without a lookup of each row or a sort of its ties.
    var indexedColumns: [String] { Self.foldedSource(ofKeyColumn: name).map { [name, $0] } ?? [name] }

    /// The column that holds this column's folded keys: nullable text, indexed.
    var foldedKeySchema: ColumnSchema {
        ColumnSchema(name: Self.foldedKeyColumn(of: name), type: .string, isOptional: true, isIndexed: true, isUnique: false)
    }
}

/// A table as Folio declares it.
public struct EntitySchema: Sendable, Hashable, Codable {
    /// The table name.
    public var name: String
    /// The columns, in order (the `id` column is implicit).
    public var columns: [ColumnSchema]
    /// The compound indexes (``IndexDescription``), in declaration order.
    public var indexes: [IndexSchema] = []

    /// The canonical text the version hash is computed from. The folding flags and a
    /// reference's target are added only when set, so an entity without them keeps the hash
    /// it had before they existed.
    var canonicalText: String {
        var text = "folio-entity-1;\(name)"
        for c in columns {
            text +=
                ";\(c.name):\(c.type.rawValue):\(c.isOptional ? "?" : "!"):\(c.isIndexed ? "i" : "-"):\(c.isUnique ? "u" : "-")"
            if c.isFolded { text += ":f" }
            if c.isSearchable { text += ":s" }
            if let target = c.references { text += ":->\(target)" }
        }
        for index in indexes { text += ";index:\(index.canonicalText)" }
        return text
    }

    /// Every column Folio stores, in order: the declared ones, then the folded-key column of
    /// each folded one (which Folio writes, indexes and keeps current; see ``TextFolding``).
    var storedColumns: [ColumnSchema] { columns + columns.filter(\.isFolded).map(\.foldedKeySchema) }

    /// The folded columns: each source column with the column of its folded keys.
    var foldedColumns: [(source: String, key: String)] {
        columns.filter(\.isFolded).map { ($0.name, ColumnSchema.foldedKeyColumn(of: $0.name)) }
    }

    /// The folded-key columns of the searchable columns: what the full-text index holds.
    var searchableKeyColumns: [String] {
        columns.filter(\.isSearchable).map { ColumnSchema.foldedKeyColumn(of: $0.name) }
    }

    /// Whether Folio keeps folded keys for the entity.
    var hasFoldedColumns: Bool { columns.contains(where: \.isFolded) }

    /// A stable hash of the schema: FNV-1a (64 bits, hexadecimal) of a canonical text of
    /// the table name and every column's name, type, optionality and index.
    public var versionHash: String { fnv1a64Hex(canonicalText) }
}

extension EntitySchema {
    private enum CodingKeys: String, CodingKey { case name, columns, indexes }

    /// Decodes a table; its indexes are absent from what Folio recorded before them.
    /// - Complexity: O(columns + index columns).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            columns: try container.decode([ColumnSchema].self, forKey: .columns),
            indexes: try container.decodeIfPresent([IndexSchema].self, forKey: .indexes) ?? [])
    }

    /// Encodes a table; its indexes only when it has some, so that a table without them is
    /// recorded exactly as before they existed.
    /// - Complexity: O(columns + index columns).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(columns, forKey: .columns)
        if !indexes.isEmpty { try container.encode(indexes, forKey: .indexes) }
    }
}

/// FNV-1a, 64 bits: stable across processes, unlike `Hasher`.
func fnv1a64(_ bytes: some Sequence<UInt8>, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
    var hash = seed
    for byte in bytes {
        hash ^= UInt64(byte)
        hash &*= 0x100_0000_01b3
    }
    return hash
}

func fnv1a64Hex(_ text: String) -> String {
    let value = fnv1a64(text.utf8)
    let hex = String(value, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
}
