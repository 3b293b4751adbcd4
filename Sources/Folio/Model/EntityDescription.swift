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

    /// Declares an entity.
    public init(_ name: String, _ attributes: [AttributeDescription<Root>]) {
        self.name = name
        self.attributes = attributes
    }

    /// The schema, as the store checks it.
    public var schema: EntitySchema {
        EntitySchema(name: name, columns: attributes.map(\.schema))
    }

    /// A stable hash of the schema (FNV-1a, 64 bits, hexadecimal).
    public var versionHash: String { schema.versionHash }

    func attribute(for keyPath: AnyKeyPath) -> AttributeDescription<Root>? {
        attributes.first { $0.keyPath == keyPath }
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

    /// Column name for a key path, `id` for `\.id`.
    func column(for keyPath: AnyKeyPath) throws -> String {
        if isIdentifier(keyPath) { return "id" }
        if let attribute = attribute(for: keyPath) { return attribute.column }
        throw FolioError.unknownKeyPath(entity: name, keyPath: String(describing: keyPath))
    }

    /// Decodes a record from the current row of a stepped statement laid out as
    /// `id, attributes…`, reading each column once with the C API (text with every byte).
    func decode(statement sqlite: OpaquePointer) throws -> Root {
        var record = Root()
        record.id = RecordID(sqlite3_column_int64(sqlite, 0))
        try attributes.withUnsafeBufferPointer { attributes in
            for index in 0..<attributes.count {
                try attributes[index].decode(&record, DatabaseValue.exact(sqliteStatement: sqlite, index: Int32(index + 1)))
            }
        }
        return record
    }

    /// The stored values of a record, in attribute order.
    func encode(_ record: Root) -> [DatabaseValue] {
        attributes.map { $0.encode(record) }
    }

    /// The stored values of a record to write, in attribute order.
    /// - Throws: ``FolioError/invalidArgument(_:)`` for a NaN (see ``checkWritable(_:column:)``).
    func writableValues(_ record: Root) throws -> [DatabaseValue] {
        let values = encode(record)
        for (attribute, value) in zip(attributes, values) { try checkWritable(value, column: attribute.column) }
        return values
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
}

/// A table as Folio declares it.
public struct EntitySchema: Sendable, Hashable, Codable {
    /// The table name.
    public var name: String
    /// The columns, in order (the `id` column is implicit).
    public var columns: [ColumnSchema]

    /// The canonical text the version hash is computed from.
    var canonicalText: String {
        var text = "folio-entity-1;\(name)"
        for c in columns {
            text +=
                ";\(c.name):\(c.type.rawValue):\(c.isOptional ? "?" : "!"):\(c.isIndexed ? "i" : "-"):\(c.isUnique ? "u" : "-")"
        }
        return text
    }

    /// A stable hash of the schema: FNV-1a (64 bits, hexadecimal) of a canonical text of
    /// the table name and every column's name, type, optionality and index.
    public var versionHash: String { fnv1a64Hex(canonicalText) }
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
