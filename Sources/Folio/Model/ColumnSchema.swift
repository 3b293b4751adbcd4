import Foundation
import GRDB

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
