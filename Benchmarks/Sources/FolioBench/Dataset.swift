import Foundation
import Folio
import GRDB
import GRDBSQLite

/// The benchmark's record: a feed article, as in the reference app (seeds/003).
@PersistentRecord
struct Article {
    var id: RecordID?
    var title = ""
    var url = ""
    @Stored(.indexed) var published = Date(timeIntervalSince1970: 0)
    var score = 0
    var category: String? = nil
    var isRead = false

    init() {}
}

/// The same row as a plain GRDB record, for the `naive` and `limit` baselines.
struct ArticleRow: FetchableRecord, Sendable {
    var id: Int64
    var title: String
    var url: String
    var published: Date
    var score: Int
    var category: String?
    var isRead: Bool

    init(row: Row) throws {
        id = row[0]
        title = row[1]
        url = row[2]
        published = Date(timeIntervalSince1970: row[3])
        score = row[4]
        category = row[5]
        isRead = row[6]
    }

    /// Reads the current row of a stepped statement with the C API.
    init(statement s: OpaquePointer) {
        func text(_ column: Int32) -> String {
            let count = Int(sqlite3_column_bytes(s, column))
            guard let bytes = sqlite3_column_text(s, column) else { return "" }
            return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        }
        id = sqlite3_column_int64(s, 0)
        title = text(1)
        url = text(2)
        published = Date(timeIntervalSince1970: sqlite3_column_double(s, 3))
        score = Int(sqlite3_column_int64(s, 4))
        category = sqlite3_column_type(s, 5) == SQLITE_NULL ? nil : text(5)
        isRead = sqlite3_column_int64(s, 6) != 0
    }
}

/// SQL of the baselines, written out as a GRDB user would.
enum BaselineSQL {
    static let columns = "id, title, url, published, score, category, isRead"
    static let order = "ORDER BY published DESC, id DESC"
    static let identifiers = "SELECT id FROM article \(order)"
    /// The identifiers with the first sort key beside each: what a scan that kept the keys
    /// in memory would step.
    static let identifiersAndKeys = "SELECT id, published FROM article \(order)"
    static let records = "SELECT \(columns) FROM article \(order)"
    static func batch(count: Int) -> String {
        "SELECT \(columns) FROM article WHERE id IN (\(Array(repeating: "?", count: count).joined(separator: ",")))"
    }
    /// SQLite's own query for the first `limit` rows, with `filter` (an SQL condition) if given.
    static func first(where filter: String?, limit: Int) -> String {
        "SELECT \(columns) FROM article \(filter.map { "WHERE \($0) " } ?? "")\(order) LIMIT \(limit)"
    }
    static let updatePublished = "UPDATE article SET published = ? WHERE id = ?"
    static let insert = "INSERT INTO article (title, url, published, score, category, isRead) VALUES (?, ?, ?, ?, ?, ?)"
}

/// The generated table: `rows` articles whose `published` dates span `days` days,
/// in an order unrelated to their rowids (a fixed-stride permutation), so that reading
/// in sort order visits the table's pages in scattered order — the case batching is for.
struct Dataset {
    let rows: Int
    let days: Int
    /// Midnight UTC of the first day.
    let base: Double
    /// Seconds between two consecutive `published` values.
    let spacing: Double

    /// The largest `published` value of the generated table (tells a reused file's dataset).
    var lastPublished: Double { base + Double(rows - 1) * spacing }

    init(rows: Int, days: Int) {
        self.rows = rows
        self.days = days
        self.base = 1_699_920_000  // 2023-11-14T00:00:00Z
        self.spacing = Double(days) * 86_400 / Double(rows)
    }

    var span: Double { Double(days) * 86_400 }

    /// A stride coprime with `rows`, so that `i * stride mod rows` is a permutation.
    var stride: Int {
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        return [7_919, 104_729, 1_299_709, 15_485_863].first { gcd($0, rows) == 1 } ?? 1
    }

    /// One `INSERT … SELECT` from a recursive CTE, in one transaction, with a page cache
    /// large enough for the `published` index (filled in random order; at 10,000,000 rows
    /// SQLite's default 2 MB cache reads and writes a page for almost every row).
    func fill(_ store: Store) throws {
        try store.write { tx in
            let cacheSize = try Int.fetchOne(tx.database, sql: "PRAGMA cache_size") ?? -2000
            try tx.database.execute(sql: "PRAGMA cache_size = -2000000")
            defer { try? tx.database.execute(sql: "PRAGMA cache_size = \(cacheSize)") }
            try tx.database.execute(
                sql: """
                    WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
                    INSERT INTO article (title, url, published, score, category, isRead)
                    SELECT 'Article ' || i || ': a headline of a typical length for a feed',
                           'https://example.com/articles/' || i,
                           ? + ((i * ?) % ?) * ?,
                           (i * 7919) % 1000,
                           CASE i % 4 WHEN 0 THEN 'world' WHEN 1 THEN 'technology' WHEN 2 THEN 'science' ELSE NULL END,
                           i % 3 = 0
                    FROM seq
                    """, arguments: [rows - 1, base, stride, rows, spacing])
        }
    }

    /// A new article at a random date within the span.
    func randomArticle(_ n: Int, using random: inout SeededGenerator) -> Article {
        var article = Article()
        article.title = "Inserted \(n): a headline of a typical length for a feed"
        article.url = "https://example.com/inserted/\(n)"
        article.published = randomDate(using: &random)
        article.score = Int.random(in: 0..<1000, using: &random)
        article.category = "world"
        return article
    }

    func randomDate(using random: inout SeededGenerator) -> Date {
        Date(timeIntervalSince1970: base + Double.random(in: 0..<span, using: &random))
    }
}
