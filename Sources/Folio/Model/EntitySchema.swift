import Foundation
import GRDB

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
