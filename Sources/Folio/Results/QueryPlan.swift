import Foundation
import GRDB

/// How SQLite runs a query: its `EXPLAIN QUERY PLAN`, read so that a person (or a test)
/// sees at once whether a list reads an index or every row of its table.
///
/// ```swift
/// let plan = try store.explain(RecordRequest<Article>(
///     predicate: #Predicate { $0.isRead == false }, sortBy: [SortDescriptor(\.published, order: .reverse)]))
/// print(plan)
/// // SELECT "id" FROM "article" WHERE … ORDER BY …
/// // SEARCH article USING COVERING INDEX folio_article_isRead_published_desc_index (isRead=?)
/// plan.indexes       // ["folio_article_isRead_published_desc_index"]
/// plan.readsEveryRow // false
/// ```
///
/// The steps are SQLite's own text, which changes between SQLite versions; the
/// properties read the words that have kept their meaning (`SCAN`, `SEARCH`,
/// `USING … INDEX`, `USE TEMP B-TREE`).
public struct QueryPlan: Sendable, Hashable, CustomStringConvertible {
    /// One step of the plan: a row of `EXPLAIN QUERY PLAN`.
    public struct Step: Sendable, Hashable {
        /// The step's number.
        public var id: Int
        /// The number of the step it belongs to; 0 at the top.
        public var parent: Int
        /// SQLite's description: `SCAN article`, `SEARCH article USING INDEX … (isRead=?)`,
        /// `USE TEMP B-TREE FOR ORDER BY`…
        public var detail: String
    }

    /// The statement explained, with `?` for its bound values.
    public let sql: String
    /// The steps, in SQLite's order.
    public let steps: [Step]

    /// The indexes the plan reads, in order (`USING INDEX`, `USING COVERING INDEX`).
    /// - Complexity: O(steps).
    public var indexes: [String] {
        steps.compactMap { step in
            guard let range = step.detail.range(of: "INDEX ") else { return nil }
            let name = step.detail[range.upperBound...].prefix { $0 != " " }
            return name.isEmpty ? nil : String(name)
        }
    }

    /// Whether the plan reads a table row by row with no index: a full table scan.
    /// - Complexity: O(steps).
    public var scansTable: Bool {
        steps.contains { $0.detail.hasPrefix("SCAN ") && !$0.detail.contains(" USING ") }
    }

    /// Whether the plan reads every row of a table, through the table itself or through a
    /// whole index (`SCAN`, not `SEARCH`): what a filtered list costs when no index starts
    /// with its filter. An unfiltered list reads every row by design.
    /// - Complexity: O(steps).
    public var readsEveryRow: Bool { steps.contains { $0.detail.hasPrefix("SCAN ") } }

    /// Whether SQLite sorts the results itself (`USE TEMP B-TREE`) instead of reading them
    /// in order from an index.
    /// - Complexity: O(steps).
    public var sortsResults: Bool { steps.contains { $0.detail.contains("TEMP B-TREE") } }

    /// The statement, then the steps as a tree (two spaces per level).
    /// - Complexity: O(steps²) (the depth of each step).
    public var description: String { ([sql] + lines).joined(separator: "\n") }

    /// The steps on one line, `; ` between them, for the SQL log.
    var summary: String { steps.map(\.detail).joined(separator: "; ") }

    private var lines: [String] {
        let parents = Dictionary(steps.map { ($0.id, $0.parent) }, uniquingKeysWith: { first, _ in first })
        return steps.map { step in
            var depth = 0
            var parent = step.parent
            while parent != 0, depth < steps.count, let next = parents[parent] {
                depth += 1
                parent = next
            }
            return String(repeating: "  ", count: depth) + step.detail
        }
    }

    /// The plan of `fragment`, read on `db` with its bound values, against the file's
    /// current schema.
    ///
    /// An `EXPLAIN` reads no table, so SQLite would not notice that another connection or
    /// process changed the schema since this connection last read it (an index made or
    /// dropped by the `sqlite3` shell), and would explain the old plan. Reading the schema
    /// table first makes SQLite check its schema cookie and load the current schema, and
    /// the `EXPLAIN` is prepared afresh, never kept.
    static func read(_ db: Database, _ fragment: SQLFragment) throws -> QueryPlan {
        _ = try Int.fetchOne(db.cachedStatement(sql: SQLBuilder.touchSchema))
        let rows = try Row.fetchAll(
            db, sql: SQLBuilder.explainQueryPlan(fragment.sql), arguments: fragment.statementArguments)
        return QueryPlan(
            sql: fragment.sql, steps: rows.map { Step(id: $0["id"], parent: $0["parent"], detail: $0["detail"]) })
    }
}

extension Store {
    /// How SQLite reads the identifiers of a request's results: the plan of the query
    /// a controller's `performFetch()` runs for it (and `fetch(_:)` with a
    /// batch size), with the indexes it uses, or that it reads the whole table.
    ///
    /// Use it to choose indexes (``AttributeDescription/isIndexed``, ``IndexDescription``)
    /// and in tests, to keep a list on its index: see <doc:LargeLists>.
    /// - Parameter request: the request; its limit and offset are left out, as
    ///   `performFetch` leaves them out of its query.
    /// - Returns: SQLite's `EXPLAIN QUERY PLAN` of the identifier query.
    /// - Throws: what `fetch(_:)` throws for the request.
    /// - Complexity: one `EXPLAIN QUERY PLAN` statement; reads no row of the table.
    public func explain<R: PersistentRecord>(_ request: RecordRequest<R>) throws -> QueryPlan {
        try requireEntity(R.self)
        let query = try request.compile()
        let fragment = SQLBuilder.identifiers(query, windowed: false)
        return try readSync { db in try QueryPlan.read(db, fragment) }
    }
}
