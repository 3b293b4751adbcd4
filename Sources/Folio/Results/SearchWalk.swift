import Foundation
import GRDB
import GRDBSQLite

/// The first screen of a full-text search that matches many rows, read by walking the
/// list's sort order instead of sorting every match.
///
/// The usual plan, `id IN (SELECT rowid FROM fts WHERE fts MATCH ?) ORDER BY …`, makes
/// SQLite look up and sort every match before its first row: 190 ms for a one-letter prefix
/// that 48 % of 1,000,000 rows match. The walk reads the matches' rowids from the index
/// alone (ascending, no table row, no sort: a tenth of that), then steps the list's own
/// query without the search — read in order through the index that orders it — and keeps
/// the rows among the matches: with 12–48 % of rows matching, a screen is found within a
/// few hundred rows.
///
/// The rows kept are exactly those of the usual plan, in its order: the same full-text
/// query gives the same set of rows (in the same read transaction), and the same
/// `WHERE` and `ORDER BY` (total: it ends with the rowid) the same order and sections.
///
/// The walk is not tried when the query without the search would sort (no index orders
/// it) or the search is ranked, and is given up — the caller then runs the usual plan —
/// when it has stepped more than `8 × matches + 4,096` rows and still has no first screen:
/// a selective search, whose few matches the usual plan sorts at once. So the walk costs at
/// most a small multiple of what it replaces.
enum SearchWalk {
    /// Rows stepped per match, and beyond that, before a walk without a first screen is
    /// given up.
    static let budgetFactor = 8
    static let budgetSlack = 4096

    /// The first screen of `query` (stopped at `rule`, or every row when the walk reaches
    /// the end first), or `nil` when the walk does not apply or was given up.
    static func run(
        _ db: Database,
        _ query: CompiledQuery,
        section: SectionExpression?,
        diagnostics: Diagnostics,
        until rule: FirstScreenRule
    ) throws -> IdentifierScan.Scanned? {
        guard let search = query.search, let text = search.query, !search.ranked else { return nil }
        var unsearched = query
        unsearched.search = nil
        let walk = SQLBuilder.identifiers(unsearched, section: section?.fragment, windowed: false)
        guard try !QueryPlan.read(db, walk).sortsResults else { return nil }
        if diagnostics.walksTestingRows,
            let screen = try matchingWalk(db, walk, search, section: section, diagnostics: diagnostics, until: rule)
        {
            return screen
        }
        let clock = FirstScreenRule.Clock(rule)
        let matches = try MatchSet.read(db, SQLBuilder.searchMatches(table: search.table, query: text))
        // No more matches than a screen: the usual plan sorts them at once.
        guard matches.count > rule.rows else { return nil }

        let statement = try db.cachedStatement(sql: walk.sql)
        try statement.setArguments(walk.statementArguments)
        var builder = IdentifierList.Builder()
        var sections = section.map { SectionRunBuilder($0, column: 1) }
        let budget = matches.count * budgetFactor + budgetSlack
        var stepped = 0, kept = 0, abandoned = false
        let complete = try statement.stepRows(
            in: db,
            stoppingWhen: { sqlite -> Bool in
                stepped += 1
                let id = sqlite3_column_int64(sqlite, 0)
                if matches.contains(id) {
                    builder.append(id)
                    kept += 1
                    sections?.add(sqlite)
                    if clock.isDue(rows: kept, sqlite) { return true }
                }
                if kept <= rule.rows, stepped > budget {
                    abandoned = true
                    return true
                }
                return false
            })
        if abandoned {
            diagnostics.count { $0.searchWalksAbandoned += 1 }
            diagnostics.note("SEARCH WALK: given up after \(stepped) rows for \(kept) of \(matches.count) matches")
            return nil
        }
        diagnostics.count {
            $0.identifierScans += 1
            $0.searchWalks += 1
            if !complete { $0.firstScreens += 1 }
        }
        diagnostics.note("SEARCH WALK: \(kept) of \(matches.count) matches in \(stepped) rows")
        return IdentifierScan.Scanned(ids: builder.finish(), runs: try sections?.finish() ?? [], complete: complete)
    }
}

extension SearchWalk {
    /// The rows a walk testing rows may take for its screen, for a table whose rowids reach
    /// `largestRowid`: about `1.2 × √rows`, from 256 to 4,096 — 1,200 at 1,000,000 rows,
    /// 3,800 at 10,000,000. Testing a row costs about 40 times what reading one match from
    /// the index does, so the walk wins while a screen takes fewer rows than reading every
    /// match costs: a search 1 row in 25 matches at 1,000,000 rows, 1 in 75 at 10,000,000.
    static func matchingBudget(largestRowid: Int64) -> Int {
        Swift.min(4096, Swift.max(256, Int((Double(Swift.max(largestRowid, 0)).squareRoot() * 1.2).rounded(.down))))
    }

    /// Whether a walk testing rows gives up: past an eighth of its `budget`, as soon as the
    /// rate of rows kept so far says the screen would take more than the budget.
    @inline(__always)
    static func givesUp(kept: Int, stepped: Int, screen: Int, budget: Int) -> Bool {
        kept < screen && stepped >= budget / 8 && kept * budget < screen * stepped
    }

    /// The first screen found by testing each row of the list's order against the search
    /// (``SearchMatcher``: the row's indexed text, the index's tokenizer), without reading
    /// every match from the index first — which at 10,000,000 rows takes 40–130 ms for a
    /// word's first letters, while a screen of a search that 1 row in 20 matches is found
    /// among the first thousand rows. `nil` when the matcher does not model the search, a
    /// row's text cannot be decided, or the rows kept say a screen would take more than
    /// ``matchingBudget(largestRowid:)`` rows (``givesUp(kept:stepped:screen:budget:)``).
    static func matchingWalk(
        _ db: Database,
        _ walk: SQLFragment,
        _ search: SearchClause,
        section: SectionExpression?,
        diagnostics: Diagnostics,
        until rule: FirstScreenRule
    ) throws -> IdentifierScan.Scanned? {
        guard let matcher = try SearchMatcher(db, search) else { return nil }
        let largest = try Int64.fetchOne(db, sql: SQLBuilder.largestRowid(table: search.table)) ?? 0
        let budget = matchingBudget(largestRowid: largest)
        let content = try db.cachedStatement(sql: matcher.contentSQL)
        let contentSQLite = content.sqliteStatement
        let statement = try db.cachedStatement(sql: walk.sql)
        try statement.setArguments(walk.statementArguments)
        let clock = FirstScreenRule.Clock(rule)
        var builder = IdentifierList.Builder()
        var sections = section.map { SectionRunBuilder($0, column: 1) }
        var stepped = 0, kept = 0
        var givenUp: String?
        let complete = try statement.stepRows(
            in: db,
            stoppingWhen: { sqlite -> Bool in
                stepped += 1
                let id = sqlite3_column_int64(sqlite, 0)
                sqlite3_reset(contentSQLite)
                sqlite3_bind_int64(contentSQLite, 1, id)
                let code = sqlite3_step(contentSQLite)
                var matches = false
                if code == SQLITE_ROW {
                    guard let decided = matcher.matches(contentSQLite) else {
                        givenUp = "row \(id) cannot be decided"
                        return true
                    }
                    matches = decided
                } else if code != SQLITE_DONE {
                    throw FolioError.stepFailure(code, db, sql: matcher.contentSQL)
                }
                if matches {
                    builder.append(id)
                    kept += 1
                    sections?.add(sqlite)
                    if clock.isDue(rows: kept, sqlite) { return true }
                }
                if givesUp(kept: kept, stepped: stepped, screen: rule.rows + 1, budget: budget) {
                    givenUp = "\(kept) matches in \(stepped) rows"
                    return true
                }
                return false
            })
        sqlite3_reset(contentSQLite)
        if let givenUp {
            diagnostics.count { $0.searchWalksAbandoned += 1 }
            diagnostics.note("SEARCH WALK: matching given up: \(givenUp)")
            return nil
        }
        diagnostics.count {
            $0.identifierScans += 1
            $0.searchWalks += 1
            $0.matchingWalks += 1
            if !complete { $0.firstScreens += 1 }
        }
        diagnostics.note("SEARCH WALK: \(kept) rows matched in \(stepped) rows")
        return IdentifierScan.Scanned(ids: builder.finish(), runs: try sections?.finish() ?? [], complete: complete)
    }
}

/// A set of rowids read in ascending order/// A set of rowids read in ascending order: a bitmap when they are dense enough (no more
/// words than rowids), else the sorted array, searched by halves.
struct MatchSet {
    private var sorted: [Int64] = []
    private var bits: [UInt64] = []
    private var base: Int64 = 0
    private(set) var count = 0

    /// The rowids `fragment` returns (one column).
    static func read(_ db: Database, _ fragment: SQLFragment) throws -> MatchSet {
        var set = MatchSet()
        let statement = try db.cachedStatement(sql: fragment.sql)
        try statement.setArguments(fragment.statementArguments)
        var ascending = true
        try statement.forEachRow(in: db) { sqlite in
            let id = sqlite3_column_int64(sqlite, 0)
            if let last = set.sorted.last, id <= last { ascending = false }
            set.sorted.append(id)
        }
        if !ascending {
            set.sorted.sort()
            set.sorted = set.sorted.enumerated().compactMap { $0 > 0 && set.sorted[$0 - 1] == $1 ? nil : $1 }
        }
        set.count = set.sorted.count
        if let first = set.sorted.first, let last = set.sorted.last {
            let (span, overflow) = last.subtractingReportingOverflow(first)
            if !overflow, span / 64 < Int64(set.sorted.count) {
                set.base = first
                set.bits = [UInt64](repeating: 0, count: Int(span / 64) + 1)
                for id in set.sorted {
                    let offset = id - first
                    set.bits[Int(offset >> 6)] |= 1 << UInt64(offset & 63)
                }
                set.sorted = []
            }
        }
        return set
    }

    @inline(__always)
    func contains(_ id: Int64) -> Bool {
        if !bits.isEmpty {
            let (offset, overflow) = id.subtractingReportingOverflow(base)
            guard !overflow, offset >= 0, offset >> 6 < Int64(bits.count) else { return false }
            return bits[Int(offset >> 6)] & (1 << UInt64(offset & 63)) != 0
        }
        var low = 0, high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count && sorted[low] == id
    }
}
