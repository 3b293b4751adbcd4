import Foundation

/// What to fetch: a predicate, an order, a window and a batch size.
///
/// ```swift
/// var request = RecordRequest<Article>(
///     predicate: #Predicate { $0.score > 10 },
///     sortBy: [SortDescriptor(\.published, order: .reverse)])
/// request.batchSize = 50
/// let results = try store.fetch(request)
/// ```
///
/// Sorting is total and stable: Folio appends the rowid to the sort, so ties in the
/// sort keys always come back in the same order. Strings sort by their UTF-8 bytes
/// (SQLite's `BINARY` collation); sort by `\.title.folded` for case- and
/// diacritic-insensitive order (see <doc:SearchingAndSortingText>).
public struct RecordRequest<R: PersistentRecord>: Sendable {
    /// Which records; `nil` for all. Translated to SQL; a part Folio cannot translate
    /// throws ``FolioError/unsupportedPredicate(expression:reason:)`` when the request is used.
    ///
    /// - Complexity: the predicate is translated once per fetch, in time linear in the
    ///   size of its expression; SQLite then evaluates it (through an index when one serves).
    public var predicate: Predicate<R>?
    /// A full-text search the records must also match (with the predicate), or `nil`.
    ///
    /// ```swift
    /// request.search = TextSearch("ipad pro", matchingPrefixes: true)
    /// ```
    ///
    /// - Complexity: one lookup in the entity's full-text index per fetch, O(matches); a
    ///   live controller asks the index only about the rows each commit touched.
    public var search: TextSearch<R>?
    /// The order. Required by ``FetchedResultsController``; a plain fetch without one
    /// orders by rowid.
    ///
    /// `SortDescriptor(\.title.folded)` sorts by the folded text of an attribute declared
    /// `folded` ("Émile" beside "emile", not after "z"); ties between equal folded texts
    /// are broken by the text's bytes, then by the next descriptors, then by rowid.
    ///
    /// - Complexity: a fetch costs one pass in index order when the first key is an
    ///   indexed attribute; otherwise SQLite sorts, O(n log n).
    public var sortBy: [SortDescriptor<R>]
    /// At most this many results (`nil`: no limit). Holds after live changes.
    ///
    /// - Complexity: O(1) to set; the limit is applied by SQLite.
    public var limit: Int?
    /// Skip this many results first.
    ///
    /// - Complexity: O(1) to set; SQLite still steps over the skipped rows, O(offset).
    public var offset: Int?
    /// Records are loaded in batches of this size as they are accessed; `0` loads every
    /// record at once when fetched, as Core Data does.
    ///
    /// - Complexity: with a batch size, a fetch is one identifier query (O(n), eight bytes
    ///   per result) and each batch accessed is one more query of `batchSize` records.
    public var batchSize: Int
    /// How many loaded batches ``FetchedRecords`` keeps (least recently used dropped).
    ///
    /// - Complexity: memory is at most `maxBatchesInMemory × batchSize` records.
    public var maxBatchesInMemory: Int
    /// An estimate of the number of results, honoured by background fetches as
    /// `NSAsynchronousFetchRequest` does; `nil` lets Folio count exactly.
    ///
    /// - Complexity: with an estimate, a background fetch runs no `COUNT` query.
    public var estimatedResultCount: Int?
    /// The to-many this request reads (``init(relatedTo:through:predicate:search:sortBy:limit:offset:batchSize:)``), or `nil`.
    var relatedTo: RelatedFilter?

    /// Creates a fetch request.
    ///
    /// - Parameters:
    ///   - predicate: which records; `nil` for all.
    ///   - search: a full-text search they must also match; `nil` for none.
    ///   - sortBy: the order; ties are broken by rowid.
    ///   - limit: at most this many results.
    ///   - offset: skip this many results first.
    ///   - batchSize: load records in batches of this size; `0` loads them all at once.
    /// - Complexity: O(1); nothing is validated or translated until the request is used.
    public init(
        predicate: Predicate<R>? = nil,
        search: TextSearch<R>? = nil,
        sortBy: [SortDescriptor<R>] = [],
        limit: Int? = nil,
        offset: Int? = nil,
        batchSize: Int = 0
    ) {
        self.predicate = predicate
        self.search = search
        self.sortBy = sortBy
        self.limit = limit
        self.offset = offset
        self.batchSize = batchSize
        self.maxBatchesInMemory = 8
        self.estimatedResultCount = nil
    }

    /// The records whose to-one `relationship` points to `target`: the target's to-many, as
    /// a request — a fetch gives the same lazy, batch-faulting ``FetchedRecords`` as any
    /// request (`count` without loading a record, records in batches as they are read), and
    /// a ``FetchedResultsController`` over it follows the to-many live.
    ///
    /// ```swift
    /// var request = RecordRequest<Item>(relatedTo: source.id, through: \.source,
    ///                                   sortBy: [SortDescriptor(\.published)], batchSize: 50)
    /// let items = try store.fetch(request)   // one identifier query, through the reference index
    /// ```
    ///
    /// - Parameters:
    ///   - target: the target's identifier; `nil` selects the records whose relationship is empty.
    ///   - relationship: the records' to-one.
    ///   - predicate: which of those records; `nil` for all.
    ///   - search: a full-text search they must also match; `nil` for none.
    ///   - sortBy: the order; ties are broken by rowid.
    ///   - limit: at most this many results.
    ///   - offset: skip this many results first.
    ///   - batchSize: load records in batches of this size; `0` loads them all at once.
    /// - Complexity: O(1); a fetch reads the reference column's index, O(log n + children).
    public init<Target: PersistentRecord>(
        relatedTo target: RecordID?,
        through relationship: KeyPath<R, ToOne<Target>>,
        predicate: Predicate<R>? = nil,
        search: TextSearch<R>? = nil,
        sortBy: [SortDescriptor<R>] = [],
        limit: Int? = nil,
        offset: Int? = nil,
        batchSize: Int = 0
    ) {
        self.init(
            predicate: predicate, search: search, sortBy: sortBy, limit: limit, offset: offset, batchSize: batchSize)
        self.relatedTo = RelatedFilter(keyPath: relationship, target: target)
    }
}

/// A to-many as a request's filter: the to-one's key path and the target's identifier.
// @unchecked Sendable: the key path is immutable.
struct RelatedFilter: @unchecked Sendable, Hashable {
    var keyPath: AnyKeyPath
    var target: RecordID?
}

extension RelatedFilter {
    /// The reference column, checked against the entity.
    func column<R: PersistentRecord>(in entity: EntityDescription<R>) throws -> String {
        guard let attribute = entity.attribute(for: keyPath), attribute.reference != nil else {
            throw FolioError.unknownKeyPath(entity: entity.name, keyPath: String(describing: keyPath))
        }
        return attribute.column
    }
}

extension RelatedTable {
    /// The tables in first-seen order, each once.
    static func distinct(_ tables: [RelatedTable]) -> [RelatedTable] {
        var seen: Set<RelatedTable> = []
        return tables.filter { seen.insert($0).inserted }
    }
}

/// One `ORDER BY` term: a column of the entity, or of a to-one's target (`related`).
struct OrderTerm: Sendable {
    var column: String
    var type: AttributeType?
    var descending: Bool
    /// The to-one the column is read through (`column` is then the target's), or `nil`.
    var related: RelatedKey? = nil

    /// Whether the term is the entity's own rowid.
    var isRowID: Bool { related == nil && column == "id" }
}

/// A table a query reads through a to-one: the target's table, and the entity's reference
/// column that points to it. A commit that changes rows of `table` changes the rows of the
/// query whose `column` holds one of their identifiers.
struct RelatedTable: Sendable, Hashable {
    var table: String
    var column: String
}

/// A fetch request checked against its entity and translated to SQL fragments.
///
/// Two compiled queries are equal only when they select and order the same rows for
/// SQLite: every text (table, columns, SQL, the full-text query) byte for byte, every bound
/// value with its storage class and bytes (see ``SQLFragment``), the same window. Swift's
/// `String` equality (canonical equivalence) is never used: `"é"` and `"e\u{301}"` are
/// different queries, as they are to SQLite.
struct CompiledQuery: Sendable {
    var table: String
    var columns: [String]
    /// The predicate's translation.
    var predicate: SQLFragment?
    /// The full-text search, when the request has one with words.
    var search: SearchClause?
    /// The sort, ending with the rowid so that the order is total.
    var order: [OrderTerm]
    var limit: Int?
    var offset: Int?
    /// The tables the predicate and the order read through to-ones.
    var related: [RelatedTable] = []

    var isWindowed: Bool { limit != nil || (offset ?? 0) > 0 }

    /// Every table the query reads: its own, then those it reads through to-ones.
    var tables: [String] {
        var seen: Set<String> = [table]
        return [table] + related.map(\.table).filter { seen.insert($0).inserted }
    }

    /// The table whose full-text index the query reads, when it has a search.
    var searchedTable: String? { search == nil ? nil : table }

    /// The search's full-text query when results are ranked by it.
    var rankingQuery: String? { search.flatMap { $0.ranked ? $0.query : nil } }

    /// Everything that selects the rows: the predicate and the search, both required.
    var filter: SQLFragment? {
        guard let query = search?.query else { return predicate }
        let match = SQLBuilder.searchFilter(table: table, query: query)
        guard let predicate else { return match }
        return SQLFragment("(\(predicate.sql) AND \(match.sql))", predicate.arguments + match.arguments)
    }

    /// Everything that decides the results, for cache validation.
    var fingerprint: String {
        var text = "table=\(table);filter=\(filter?.fingerprint ?? "-");"
        if rankingQuery != nil { text += "ranked;" }
        text += "order="
        text += order.map { term in
            let name = term.related.map { "\($0.referenceColumn)->\($0.targetTable).\(term.column)" } ?? term.column
            return "\(name) \(term.descending ? "DESC" : "ASC")"
        }.joined(separator: ",")
        text += ";limit=\(limit.map(String.init) ?? "-");offset=\(offset.map(String.init) ?? "-")"
        return text
    }
}

extension CompiledQuery: Hashable {
    static func == (a: CompiledQuery, b: CompiledQuery) -> Bool {
        guard a.limit == b.limit, a.offset == b.offset, a.predicate == b.predicate,
            a.table.hasSameBytes(as: b.table), a.columns.count == b.columns.count,
            zip(a.columns, b.columns).allSatisfy({ $0.hasSameBytes(as: $1) }), a.order.count == b.order.count,
            zip(a.order, b.order).allSatisfy({
                $0.column.hasSameBytes(as: $1.column) && $0.type == $1.type && $0.descending == $1.descending
                    && $0.related == $1.related
            })
        else { return false }
        switch (a.search, b.search) {
        case (nil, nil): return true
        case (let x?, let y?):
            return x.ranked == y.ranked && x.table.hasSameBytes(as: y.table)
                && (x.query ?? "").hasSameBytes(as: y.query ?? "") && (x.query == nil) == (y.query == nil)
        default: return false
        }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(predicate)
        hasher.combine(Array(table.utf8))
        hasher.combine(order.count)
        for term in order {
            hasher.combine(Array(term.column.utf8))
            hasher.combine(term.descending)
        }
        hasher.combine(limit)
        hasher.combine(offset)
        hasher.combine(search.map { Array(($0.query ?? "").utf8) })
    }
}

extension RecordRequest {
    /// Validates and translates the request.
    func compile(requireSort: Bool = false) throws -> CompiledQuery {
        let entity = R.entity
        if requireSort && sortBy.isEmpty { throw FolioError.missingSortDescriptor(entity: entity.name) }
        if let limit, limit < 0 { throw FolioError.invalidArgument("limit must not be negative (\(limit))") }
        if let offset, offset < 0 { throw FolioError.invalidArgument("offset must not be negative (\(offset))") }
        if batchSize < 0 { throw FolioError.invalidArgument("batchSize must not be negative (\(batchSize))") }
        if maxBatchesInMemory < 1 { throw FolioError.invalidArgument("maxBatchesInMemory must be at least 1") }
        var order: [OrderTerm] = []
        for descriptor in sortBy {
            guard let keyPath = descriptor.keyPath else {
                throw FolioError.unsupportedSortDescriptor(entity: entity.name, description: "\(descriptor)")
            }
            let descending = descriptor.order == .reverse
            if let attribute = try entity.foldedAttribute(for: keyPath) ?? Self.localizedSortAttribute(descriptor) {
                // The folded key, then the text's bytes: equal folded texts in a fixed order.
                order.append(
                    OrderTerm(column: ColumnSchema.foldedKeyColumn(of: attribute.column), type: .string, descending: descending))
                order.append(OrderTerm(column: attribute.column, type: .string, descending: descending))
                continue
            }
            if let related = try entity.relatedKey(for: keyPath) {
                if related.type == .json {
                    throw Self.unorderable(related.targetColumn, of: related.targetTable, descriptor: descriptor)
                }
                order.append(
                    OrderTerm(column: related.targetColumn, type: related.type, descending: descending, related: related))
                continue
            }
            let column = try entity.column(for: keyPath)
            let type = entity.attribute(for: keyPath)?.type
            if type == .json { throw Self.unorderable(column, of: entity.name, descriptor: descriptor) }
            order.append(OrderTerm(column: column, type: type, descending: descending))
        }
        if order.last?.isRowID != true {
            // Ties are broken by rowid, in the direction of the last key.
            order.append(OrderTerm(column: "id", type: .integer, descending: order.last?.descending ?? false))
        }
        let translator = PredicateTranslator(entity: entity)
        var filter = try predicate.map { try translator.translate($0) }
        if let relatedTo {
            let match = SQLBuilder.referenceFilter(column: try relatedTo.column(in: entity), target: relatedTo.target)
            filter = filter.map { SQLFragment("(\(match.sql) AND \($0.sql))", match.arguments + $0.arguments) } ?? match
        }
        let search = try search.map { try $0.compile() }
        var related = translator.related.tables
        for term in order {
            if let key = term.related { related.append(RelatedTable(table: key.targetTable, column: key.referenceColumn)) }
        }
        return CompiledQuery(
            table: entity.name, columns: entity.attributes.map(\.column), predicate: filter,
            search: search.flatMap { $0.query == nil ? nil : $0 }, order: order, limit: limit, offset: offset,
            related: RelatedTable.distinct(related))
    }
}

extension RecordRequest {
    /// The error for a sort by an attribute stored as JSON, whose text does not order as
    /// the values do.
    static func unorderable(_ column: String, of entity: String, descriptor: SortDescriptor<R>) -> FolioError {
        .unsupportedSortDescriptor(
            entity: entity,
            description:
                "\(descriptor) ('\(column)' is a Codable value stored as JSON text, which does not order as the values do: sort by another attribute)"
        )
    }

    /// On Apple platforms, a `SortDescriptor` with a localized string comparator
    /// (`.localized` or `.localizedStandard`, the default there for `String` key paths) on a
    /// folded attribute sorts by its folded key, as `\.title.folded` does. Untested: this
    /// path is compiled on Apple platforms only; Linux's Foundation has only `.lexical`.
    static func localizedSortAttribute(_ descriptor: SortDescriptor<R>) -> AttributeDescription<R>? {
        #if canImport(Darwin)
        guard let comparator = descriptor.stringComparator, let keyPath = descriptor.keyPath,
            let attribute = R.entity.attribute(for: keyPath), attribute.isFolded
        else { return nil }
        let unordered = String.StandardComparator(comparator, order: .forward)
        guard
            unordered == String.StandardComparator(.localizedStandard, order: .forward)
                || unordered == String.StandardComparator(.localized, order: .forward)
        else { return nil }
        return attribute
        #else
        return nil
        #endif
    }
}
