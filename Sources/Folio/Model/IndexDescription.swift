import Foundation

/// An index over several keys of an entity, in order, each ascending or descending:
/// Core Data's fetch index (`NSFetchIndexDescription`), SwiftData's `#Index`.
///
/// An index that starts with a request's equality filters and continues with its sort
/// keys, in the sort's directions, lets SQLite read the filtered list in order from the
/// index alone, without scanning the table or sorting:
///
/// ```swift
/// static let entity = EntityDescription<Article>(
///     "article", [.init(\.title, folded: true), .init(\.isRead), .init(\.published)],
///     indexes: [
///         // for `#Predicate { $0.isRead == false }` sorted by `published`, either way
///         IndexDescription([\.isRead, \.published]),
///         // for a sort by `isRead`, then `published` newest first
///         IndexDescription([.key(\.isRead), .key(\.published, order: .reverse)]),
///     ])
/// ```
///
/// A key is an attribute (`\.published`), the folded text of a folded attribute
/// (`\.title.folded`: the folded key, then the text, as a folded sort orders them), a
/// to-one's reference (`\.feed`), or the identifier (`\.id`). Each key's `order` is the
/// `SortOrder` of `SortDescriptor`. SQLite reads an index backwards as readily as forwards,
/// and Folio breaks ties by identifier in the direction of the last sort key, so for a
/// sort whose keys all go one way an ascending index serves it best, ties included; a
/// sort that mixes directions needs the index in its directions, and SQLite then sorts
/// the ties of its last key itself (`USE TEMP B-TREE FOR RIGHT PART OF ORDER BY`).
/// Single-attribute indexes stay on the attribute (``AttributeDescription/isIndexed``).
///
/// The store checks the index when it opens a file (a missing or different one is a
/// ``FolioError/schemaMismatch(entity:differences:)``), and a ``StoreModel`` migration adds,
/// drops and changes it like any index. ``Store/explain(_:)`` shows whether a request uses it.
public struct IndexDescription<Root: PersistentRecord>: Sendable {
    /// One key of an index: a key path of the record, ascending (`.forward`) or
    /// descending (`.reverse`).
    // @unchecked Sendable: the key path is an immutable value.
    public struct Key: @unchecked Sendable {
        /// The key path: an attribute, `\.attribute.folded`, a to-one, or `\.id`.
        public let keyPath: PartialKeyPath<Root>
        /// The key's direction, as in `SortDescriptor`.
        public let order: SortOrder

        /// A key of an index.
        /// - Parameters:
        ///   - keyPath: an attribute, `\.attribute.folded`, a to-one, or `\.id`.
        ///   - order: `.forward` (ascending) or `.reverse` (descending).
        /// - Complexity: O(1).
        public static func key(_ keyPath: PartialKeyPath<Root>, order: SortOrder = .forward) -> Key {
            Key(keyPath: keyPath, order: order)
        }
    }

    /// The keys, in index order.
    public let keys: [Key]

    /// Declares an index over `keys`, in order.
    /// - Parameter keys: at least one key; a key path at most once.
    /// - Complexity: O(keys).
    public init(_ keys: [Key]) { self.keys = keys }

    /// Declares an index over `keyPaths`, in order, all ascending.
    /// - Parameter keyPaths: at least one key path; each at most once.
    /// - Complexity: O(keyPaths).
    public init(_ keyPaths: [PartialKeyPath<Root>]) { self.keys = keyPaths.map { .key($0) } }
}

/// A compound index as the store checks it: its columns in order, each ascending or
/// descending.
public struct IndexSchema: Sendable, Hashable, Codable {
    /// One column of the index.
    public struct Column: Sendable, Hashable, Codable {
        /// The column name.
        public var name: String
        /// Whether the column is in descending order.
        public var isDescending: Bool
    }

    /// The columns, in order.
    public var columns: [Column]

    /// The canonical text of the index in the entity's version hash.
    var canonicalText: String { columns.map { "\($0.name)\($0.isDescending ? "-" : "+")" }.joined(separator: ",") }

    /// The index's columns as a reader writes them: `isRead, published DESC`.
    var readable: String {
        columns.map { $0.isDescending ? "\($0.name) DESC" : $0.name }.joined(separator: ", ")
    }
}

extension EntityDescription {
    /// The declared compound indexes resolved to columns.
    /// - Throws: ``FolioError/invalidSchema(entity:reason:)`` for an index without keys or
    ///   with a key twice; ``FolioError/unknownKeyPath(entity:keyPath:)`` for a key path that
    ///   is no attribute, folded text, to-one or identifier;
    ///   ``FolioError/attributeNotFolded(entity:attribute:)`` for the folded text of an
    ///   attribute that is not folded.
    func checkedIndexes() throws -> [IndexSchema] {
        var seen: Set<IndexSchema> = []
        return try indexes.enumerated().map { number, index in
            guard !index.keys.isEmpty else {
                throw FolioError.invalidSchema(entity: name, reason: "index \(number + 1) of 'indexes' has no key")
            }
            var columns: [IndexSchema.Column] = []
            for (keyNumber, key) in index.keys.enumerated() {
                let descending = key.order == .reverse
                let names: [String]
                if let folded = try foldedAttribute(for: key.keyPath) {
                    names = [ColumnSchema.foldedKeyColumn(of: folded.column), folded.column]
                } else {
                    if let related = try relatedKey(for: key.keyPath) {
                        throw FolioError.invalidSchema(
                            entity: name,
                            reason:
                                "index \(number + 1) of 'indexes' names \(key.keyPath), an attribute of '\(related.targetTable)': an index holds the entity's own columns (index the to-one itself, `\\.\(related.referenceColumn)`)"
                        )
                    }
                    do {
                        names = [try column(for: key.keyPath)]
                    } catch FolioError.unknownKeyPath(let entity, let keyPath) {
                        throw FolioError.unknownKeyPath(
                            entity: entity,
                            keyPath:
                                "\(keyPath) (key \(keyNumber + 1) of index \(number + 1) of 'indexes': a key is an attribute, the folded text of a folded one, a to-one, or the id)"
                        )
                    }
                }
                for column in names {
                    if columns.contains(where: { $0.name.lowercased() == column.lowercased() }) {
                        throw FolioError.invalidSchema(
                            entity: name,
                            reason: "index \(number + 1) of 'indexes' names '\(column)' twice (\(key.keyPath))")
                    }
                    columns.append(IndexSchema.Column(name: column, isDescending: descending))
                }
            }
            let schema = IndexSchema(columns: columns)
            guard seen.insert(schema).inserted else {
                throw FolioError.invalidSchema(
                    entity: name, reason: "the index (\(schema.readable)) is declared twice in 'indexes'")
            }
            return schema
        }
    }
}
