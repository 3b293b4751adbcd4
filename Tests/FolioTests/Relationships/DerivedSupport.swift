import Foundation
import GRDB
import Testing
@testable import Folio

/// A parent whose derived attributes read its ``Post``s: counts (all, unread), sums of an
/// integer and of a real, the smallest size and the newest date.
struct Board: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var postCount = 0
    var unreadCount = 0
    var totalSize = 0
    var totalScore = 0.0
    var smallest: Int? = nil
    var newest: Double? = nil

    static let entity = EntityDescription<Board>(
        "board",
        [
            AttributeDescription(\.name, unique: true),
            AttributeDescription(\.postCount, derived: .count(\Post.board)),
            AttributeDescription(
                \.unreadCount, derived: .count(\Post.board, where: #Predicate { $0.isRead == false }), indexed: true),
            AttributeDescription(\.totalSize, derived: .sum(\Post.size, of: \Post.board)),
            AttributeDescription(\.totalScore, derived: .sum(\Post.score, of: \Post.board, where: #Predicate { $0.size > 10 })),
            AttributeDescription(\.smallest, derived: .minimum(\Post.size, of: \Post.board)),
            AttributeDescription(\.newest, derived: .maximum(\Post.published, of: \Post.board)),
        ],
        relationships: [.toMany(\Post.board, deleteRule: .cascade)])
}

/// A child of a ``Board``, with a unique `guid` (whose `REPLACE` deletes rows unseen).
struct Post: PersistentRecord, Equatable {
    var id: RecordID?
    var guid = ""
    var title = ""
    var isRead = false
    var size = 0
    var score = 0.0
    var published: Double? = nil
    var board = ToOne<Board>()

    static let entity = EntityDescription<Post>(
        "post",
        [
            AttributeDescription(\.guid, unique: true),
            AttributeDescription(\.title),
            AttributeDescription(\.isRead),
            AttributeDescription(\.size),
            AttributeDescription(\.score),
            AttributeDescription(\.published),
        ],
        relationships: [.toOne(\.board)])
}

/// What each derived attribute of ``Board`` must equal: SQLite's own aggregate over the
/// posts, computed by a plain query (the oracle), compared as stored (`1` is not `1.0`).
enum DerivedOracle {
    /// Each derived column, whether its affinity is `INTEGER`, and the oracle's query.
    static let expectations: [(column: String, integer: Bool, query: String)] = [
        ("postCount", true, "SELECT count(*) FROM post WHERE post.board = b.id"),
        ("unreadCount", true, "SELECT count(*) FROM post WHERE post.board = b.id AND post.isRead = 0"),
        ("totalSize", true, "SELECT coalesce(sum(post.size), 0) FROM post WHERE post.board = b.id"),
        ("totalScore", false, "SELECT total(post.score) FROM post WHERE post.board = b.id AND post.size > 10"),
        ("smallest", true, "SELECT min(post.size) FROM post WHERE post.board = b.id"),
        ("newest", false, "SELECT max(post.published) FROM post WHERE post.board = b.id"),
    ]

    /// The boards whose derived values differ from the oracle: "board 3 unreadCount 2 ≠ 1".
    /// An `INTEGER` column stores an integral real as an integer (SQLite's affinity: a sum
    /// over text is a real), so there an integer equal to a real is the same value.
    static func mismatches(_ db: Database) throws -> [String] {
        var found: [String] = []
        for (column, integer, query) in expectations {
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT b.id, quote(b.\(column)), quote((\(query))) FROM board AS b \
                    WHERE NOT ((b.\(column) COLLATE BINARY) IS (\(query)) AND (typeof(b.\(column)) = typeof((\(query))) \
                    OR (\(integer ? "1" : "0") AND typeof(b.\(column)) = 'integer' AND typeof((\(query))) = 'real')))
                    """)
            for row in rows {
                let id: Int64 = row[0], stored: String = row[1], expected: String = row[2]
                found.append("board \(id) \(column) \(stored) ≠ \(expected)")
            }
        }
        return found
    }

    static func mismatches(_ store: Store) throws -> [String] {
        try store.read { try mismatches($0) }
    }

    static func mismatches(path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { try mismatches($0) }
    }
}
