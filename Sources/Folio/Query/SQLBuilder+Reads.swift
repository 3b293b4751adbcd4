import Foundation
import GRDB

// Fetches: sources, order, windows, counts, batches, sort keys and section values.
extension SQLBuilder {
    static func whereClause(_ q: CompiledQuery, extra: String? = nil) -> (String, [DatabaseValue]) {
        var parts: [String] = []
        var args: [DatabaseValue] = []
        if let extra { parts.append(extra) }
        if let filter = q.filter { parts.append(filter.sql); args += filter.arguments }
        return parts.isEmpty ? ("", []) : (" WHERE " + parts.joined(separator: " AND "), args)
    }

    static func orderBy(_ q: CompiledQuery) -> String {
        let terms = q.order.map { value(of: $0, table: q.table) + ($0.descending ? " DESC" : "") }
        return " ORDER BY " + (q.rankingQuery == nil ? terms : ["folio_search_rank"] + terms).joined(separator: ", ")
    }

    /// `FROM table WHERE filter` — or, for a search ranked by relevance, the table joined
    /// with the full-text matches and their rank (`folio_search_rank`, which ``orderBy(_:)``
    /// puts first; the names cannot clash with an attribute's, which never start with `folio_`).
    static func source(_ q: CompiledQuery) -> (sql: String, arguments: [DatabaseValue]) {
        guard let ranking = q.rankingQuery else {
            let (whereSQL, whereArgs) = whereClause(q)
            return (" FROM \(quote(q.table))\(whereSQL)", whereArgs)
        }
        let fts = quote(searchTable(q.table))
        var conditions = ["\(quote("id")) = folio_search_rowid"]
        var arguments = [ranking.databaseValue]
        if let predicate = q.predicate {
            conditions.append(predicate.sql)
            arguments += predicate.arguments
        }
        return (
            " FROM \(quote(q.table)), (SELECT rowid AS folio_search_rowid, rank AS folio_search_rank FROM \(fts) WHERE \(fts) MATCH ?) WHERE "
                + conditions.joined(separator: " AND "), arguments
        )
    }

    static func window(_ q: CompiledQuery) -> (String, [DatabaseValue]) {
        switch (q.limit, q.offset) {
        case (nil, nil), (nil, 0?): return ("", [])
        case (let limit, let offset):
            return (" LIMIT ? OFFSET ?", [Int64(limit ?? -1).databaseValue, Int64(offset ?? 0).databaseValue])
        }
    }

    static func recordColumns(_ q: CompiledQuery) -> String {
        ([quote("id")] + q.columns.map(quote)).joined(separator: ", ")
    }

    /// SQLite's plan of a statement (``identifiers(_:section:windowed:)``), with the same bound values.
    static func explainQueryPlan(_ sql: String) -> String { "EXPLAIN QUERY PLAN \(sql)" }

    /// A read of the schema table: it makes SQLite compare the connection's schema with
    /// the file's, and load the file's when another connection changed it (an `EXPLAIN`
    /// alone does not).
    static let touchSchema = "SELECT 1 FROM sqlite_master LIMIT 1"

    /// The identifiers in order, optionally with a section value: the scan behind every batched fetch.
    static func identifiers(_ q: CompiledQuery, section: SQLFragment? = nil, windowed: Bool = true) -> SQLFragment {
        let (sourceSQL, sourceArgs) = source(q)
        let (windowSQL, windowArgs) = windowed ? window(q) : ("", [])
        let select = section.map { "\(quote("id")), \($0.sql)" } ?? quote("id")
        return SQLFragment(
            "SELECT \(select)\(sourceSQL)\(orderBy(q))\(windowSQL)",
            (section?.arguments ?? []) + sourceArgs + windowArgs)
    }

    /// Whole records in order (fetches without a batch size).
    static func records(_ q: CompiledQuery) -> SQLFragment {
        let (sourceSQL, sourceArgs) = source(q)
        let (windowSQL, windowArgs) = window(q)
        return SQLFragment(
            "SELECT \(recordColumns(q))\(sourceSQL)\(orderBy(q))\(windowSQL)",
            sourceArgs + windowArgs)
    }

    static func count(_ q: CompiledQuery) -> SQLFragment {
        let (whereSQL, whereArgs) = whereClause(q)
        if q.isWindowed {
            let (windowSQL, windowArgs) = window(q)
            return SQLFragment(
                "SELECT COUNT(*) FROM (SELECT \(quote("id")) FROM \(quote(q.table))\(whereSQL)\(windowSQL))",
                whereArgs + windowArgs)
        }
        return SQLFragment("SELECT COUNT(*) FROM \(quote(q.table))\(whereSQL)", whereArgs)
    }

    /// One batch: the identifiers travel as one bound JSON array, so the statement text
    /// is the same whatever the batch size, and is prepared once.
    static func batch(table: String, columns: [String]) -> String {
        let list = ([quote("id")] + columns.map(quote)).joined(separator: ", ")
        return "SELECT \(list) FROM \(quote(table)) WHERE \(quote("id")) IN (SELECT value FROM json_each(?))"
    }

    /// One batch in the order of its identifiers, for ``FetchedRecords``: the identifiers
    /// travel as one bound JSON array that SQLite walks in order (`CROSS JOIN` keeps it the
    /// outer loop), each looked up by rowid; the last column is the identifier's position in
    /// the array, so a row is placed without a search, and an identifier whose row is gone
    /// gives no row. The first columns are the record's, as ``batch(table:columns:)`` reads them.
    static func batchInOrder(table: String, columns: [String]) -> String {
        let row = quote("r")
        let list = ([quote("id")] + columns.map(quote)).map { "\(row).\($0)" }.joined(separator: ", ")
        return "SELECT \(list), \(quote("j")).\(quote("key")) FROM json_each(?) AS \(quote("j")) "
            + "CROSS JOIN \(quote(table)) AS \(row) ON \(row).\(quote("id")) = \(quote("j")).\(quote("value"))"
    }

    /// The changed rows that match the request now, in order, with their sort keys and
    /// section value: what a controller asks after a commit.
    static func changedRows(_ q: CompiledQuery, section: SQLFragment?, identifiersJSON: String) -> SQLFragment {
        var (fragment, index) = changedRows(q, section: section)
        fragment.arguments[index] = identifiersJSON.databaseValue
        return fragment
    }

    /// ``changedRows(_:section:identifiersJSON:)`` with an empty array for the identifiers,
    /// and the index of that argument: a tracker builds the text once and binds each
    /// commit's identifiers there.
    static func changedRows(_ q: CompiledQuery, section: SQLFragment?) -> (SQLFragment, identifiersArgument: Int) {
        let (whereSQL, whereArgs) = whereClause(q, extra: "\(quote("id")) IN (SELECT value FROM json_each(?))")
        let sectionArgs = section?.arguments ?? []
        return (
            SQLFragment(
                "SELECT \(sortKeyColumns(q, section: section)) FROM \(quote(q.table))\(whereSQL)\(orderBy(q))",
                sectionArgs + ["[]".databaseValue] + whereArgs),
            sectionArgs.count
        )
    }

    /// `id, key1, key2, …, section`.
    static func sortKeyColumns(_ q: CompiledQuery, section: SQLFragment?) -> String {
        var list = [quote("id")] + q.order.filter { !$0.isRowID }.map { value(of: $0, table: q.table) }
        if let section { list.append(section.sql) }
        return list.joined(separator: ", ")
    }

    /// The sort keys of one row (binary searches probe with it).
    static func sortKeys(_ q: CompiledQuery, section: SQLFragment?) -> SQLFragment {
        SQLFragment(
            "SELECT \(sortKeyColumns(q, section: section)) FROM \(quote(q.table)) WHERE \(quote("id")) = ?",
            section?.arguments ?? [])
    }

    /// One column of one row, as stored: `column` of the row with identifier `id`.
    static func column(_ column: String, ofRow id: Int64, in table: String) -> SQLFragment {
        SQLFragment("SELECT \(quote(column)) FROM \(quote(table)) WHERE \(quote("id")) = ?", [id.databaseValue])
    }

    /// One column of the rows whose identifiers a bound JSON array holds: `id, column`.
    static func columnValues(table: String, column: String) -> String {
        "SELECT \(quote("id")), \(quote(column)) FROM \(quote(table)) WHERE \(quote("id")) IN (SELECT value FROM json_each(?))"
    }

    // MARK: Relationships

    /// A sort term's value: its column, or the target's column through a to-one.
    static func value(of term: OrderTerm, table: String) -> String {
        guard let related = term.related else { return quote(term.column) }
        return relatedValue(related, table: table)
    }

    /// The value of a to-one's target column for the current row of `table`: a lookup of
    /// the target by rowid (`NULL` when the reference is `NULL` or dangling). The target is
    /// aliased, so that a relationship of an entity to itself reads the outer row's reference.
    static func relatedValue(_ key: RelatedKey, table: String) -> String {
        "(SELECT \(relatedAlias).\(quote(key.targetColumn)) FROM \(quote(key.targetTable)) AS \(relatedAlias)"
            + " WHERE \(relatedAlias).\(quote("id")) = \(quote(table)).\(quote(key.referenceColumn)))"
    }

    /// The alias of a to-one's target in ``relatedValue(_:table:)`` (Folio's prefix: no
    /// entity's name).
    static let relatedAlias = "folio_related"

    /// The records whose reference column holds `target` (`IS NULL` for `nil`): a to-many.
    static func referenceFilter(column: String, target: RecordID?) -> SQLFragment {
        guard let target else { return SQLFragment("\(quote(column)) IS NULL") }
        return SQLFragment("\(quote(column)) = ?", [target.rawValue.databaseValue])
    }

    /// The rows of `table` whose reference `column` holds one of the identifiers of a bound
    /// JSON array: the rows a commit changed through a to-one's target (its index is read).
    static func referencingRows(table: String, column: String) -> String {
        "SELECT \(quote("id")) FROM \(quote(table)) WHERE \(quote(column)) IN (SELECT value FROM json_each(?))"
    }

    // MARK: Sections

    static func section(attribute column: String) -> SQLFragment { SQLFragment(quote(column)) }

    /// A section value read through a to-one (``relatedValue(_:table:)``).
    static func section(related key: RelatedKey, table: String) -> SQLFragment { SQLFragment(relatedValue(key, table: table)) }

    /// The first letter of text (``FirstLetter``): a prefix of the text's bytes, so it orders
    /// as the text does (case mapping would not: "A…" < "B…" < "a…"), taken from the bytes
    /// (`CAST(… AS BLOB)`) because SQLite's text functions stop at a NUL, and sized by the
    /// first byte alone (compared as a blob) so that sections stay contiguous for any bytes.
    /// A number is its own section (numbers sort before all text, by value); a blob's is its
    /// first byte; NULL's is NULL.
    static func section(firstLetterOf column: String) -> SQLFragment { section(firstLetterOfValue: quote(column)) }

    /// ``section(firstLetterOf:)`` of any SQL value (a column through a to-one).
    static func section(firstLetterOfValue value: String) -> SQLFragment {
        let bytes = "CAST(\(value) AS BLOB)"
        let bounds = FirstLetter.lengths.dropFirst().map { $0.lowest }
        var length = "CASE"
        for (index, bound) in bounds.enumerated() {
            length += " WHEN \(bytes) < x'\(String(bound, radix: 16, uppercase: true))' THEN \(FirstLetter.lengths[index].length)"
        }
        length += " ELSE \(FirstLetter.lengths.last!.length) END"
        // First, text whose first byte is 01–7F (compared by bytes, whatever the column's
        // collation): `substr` is exact there and costs about half as much (the byte path
        // adds about 100 ns a row in SQLite, this about 50). `substr` of an empty blob is
        // NULL: coalesce gives the empty text and blob back.
        let binary = "\(value) COLLATE BINARY"
        return SQLFragment(
            "CASE WHEN \(binary) >= CAST(x'01' AS TEXT) AND \(binary) < CAST(x'80' AS TEXT) THEN substr(\(value), 1, 1)"
                + " WHEN typeof(\(value)) = 'text' THEN coalesce(CAST(substr(\(bytes), 1, \(length)) AS TEXT), '')"
                + " WHEN typeof(\(value)) = 'blob' THEN coalesce(substr(\(value), 1, 1), x'') ELSE \(value) END")
    }
}

// MARK: Section boundaries

/// Where the first row of the next section is, relative to the current section's key
/// (``SQLBuilder/sectionBoundary(_:column:condition:)``).
enum SectionBoundaryCondition: Sendable {
    /// The results' first row.
    case first
    /// The first row whose key is less than the bound (a descending sort).
    case below(SQLFragment)
    /// The first row whose key is greater than the bound (an ascending sort).
    case above(SQLFragment)
    /// The first row whose key is greater than or equal to the bound (an ascending sort).
    case atLeast(SQLFragment)
    /// The first row whose key is NULL (after every value, descending).
    case null
    /// The first row whose key is not NULL (after the NULLs, ascending).
    case notNull
}

extension SectionBoundaryCondition {
    /// What tells the statement of a condition from another (its kind and the bound's SQL),
    /// and the one value it binds: conditions of one shape differ only by that value.
    var shape: (key: String, bound: DatabaseValue?) {
        switch self {
        case .first: ("first", nil)
        case .below(let bound): ("<" + bound.sql, bound.arguments.first)
        case .above(let bound): (">" + bound.sql, bound.arguments.first)
        case .atLeast(let bound): (">=" + bound.sql, bound.arguments.first)
        case .null: ("null", nil)
        case .notNull: ("notNull", nil)
        }
    }
}

extension SQLBuilder {
    /// The identifier and the sort key of the first row of the results past a section
    /// boundary: the request's own filter and order with one more condition on its first
    /// sort key `column`, `LIMIT 1`. On an index that starts with the key (after any
    /// equality the filter puts on columns before it) SQLite seeks to the boundary, so a
    /// section costs O(log n), whatever its size.
    static func sectionBoundary(_ q: CompiledQuery, column: String, condition: SectionBoundaryCondition) -> SQLFragment {
        let key = quote(column)
        let extra = keyCondition(column, condition)
        let (whereSQL, whereArgs) = whereClause(q, extra: extra?.sql)
        return SQLFragment(
            "SELECT \(quote("id")), \(key) FROM \(quote(q.table))\(whereSQL)\(orderBy(q)) LIMIT 1",
            (extra?.arguments ?? []) + whereArgs)
    }

    /// The identifiers of every row of the results from a section boundary on, in order:
    /// the request's own filter and order with `condition` on its first sort key `column`
    /// (``SectionBoundarySeek/remainder(after:)``), unwindowed. On the index the section
    /// boundary seeks use, SQLite starts at the boundary, so the rows before it are not read.
    static func identifiers(_ q: CompiledQuery, column: String, from condition: SectionBoundaryCondition) -> SQLFragment {
        let extra = keyCondition(column, condition)
        let (whereSQL, whereArgs) = whereClause(q, extra: extra?.sql)
        return SQLFragment(
            "SELECT \(quote("id")) FROM \(quote(q.table))\(whereSQL)\(orderBy(q))", (extra?.arguments ?? []) + whereArgs)
    }

    /// `condition` on the key `column`, `nil` for ``SectionBoundaryCondition/first``.
    private static func keyCondition(_ column: String, _ condition: SectionBoundaryCondition) -> SQLFragment? {
        let key = quote(column)
        return switch condition {
        case .first: nil
        case .below(let bound): SQLFragment("\(key) < \(bound.sql)", bound.arguments)
        case .above(let bound): SQLFragment("\(key) > \(bound.sql)", bound.arguments)
        case .atLeast(let bound): SQLFragment("\(key) >= \(bound.sql)", bound.arguments)
        case .null: SQLFragment("\(key) IS NULL")
        case .notNull: SQLFragment("\(key) IS NOT NULL")
        }
    }

    /// A bound value exactly as stored: text as its bytes (`CAST(? AS TEXT)` of a blob, so
    /// that bytes that are not UTF-8, or a NUL, survive), any other value as `?`.
    static func exactPlaceholder(text bytes: [UInt8]) -> SQLFragment {
        SQLFragment("CAST(? AS TEXT)", [Data(bytes).databaseValue])
    }
}
