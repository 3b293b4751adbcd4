import Foundation
import GRDB
import GRDBSQLite

/// Steps an identifier query with the SQLite C API: no row objects, no per-row
/// allocation, section values materialized only where they change.
enum IdentifierScan {
    /// - Parameters:
    ///   - section: when set, the query's second column is the section expression's value,
    ///     and the result's runs are its sections.
    ///   - progress: called every `progressInterval` rows with the rows read so far.
    static func run(
        _ db: Database,
        _ fragment: SQLFragment,
        section: SectionExpression? = nil,
        diagnostics: Diagnostics,
        progressInterval: Int = 4096,
        progress: ((Int) throws -> Void)? = nil
    ) throws -> (IdentifierList, [SectionRun]) {
        let scan = try run(
            db, fragment, section: section, diagnostics: diagnostics, until: nil, progressInterval: progressInterval,
            progress: progress)
        return (scan.ids, scan.runs)
    }

    /// What a scan read: every row, or (`complete == false`) the first rows, when the scan
    /// stopped at its ``FirstScreenRule``. The runs of a first screen end with the run of its
    /// last row, whose count is a lower bound.
    struct Scanned {
        var ids: IdentifierList
        var runs: [SectionRun]
        var complete: Bool
    }

    /// Steps the query to its end, or until `rule` says the rows read so far are a first
    /// screen worth showing while the rest is read elsewhere.
    static func run(
        _ db: Database,
        _ fragment: SQLFragment,
        section: SectionExpression? = nil,
        diagnostics: Diagnostics,
        until rule: FirstScreenRule?,
        progressInterval: Int = 4096,
        progress: ((Int) throws -> Void)? = nil
    ) throws -> Scanned {
        let statement = try db.cachedStatement(sql: fragment.sql)
        try statement.setArguments(fragment.statementArguments)
        diagnostics.count { $0.identifierScans += 1 }
        var builder = IdentifierList.Builder()
        var sections = section.map { SectionRunBuilder($0, column: 1) }
        var rows = 0
        let clock = rule.map { FirstScreenRule.Clock($0) }
        let complete = try statement.stepRows(
            in: db,
            stoppingWhen: { sqlite -> Bool in
                builder.append(sqlite3_column_int64(sqlite, 0))
                rows += 1
                sections?.add(sqlite)
                if let progress, rows % progressInterval == 0 { try progress(rows) }
                return clock?.isDue(rows: rows, sqlite) ?? false
            })
        if complete, let progress { try progress(rows) }
        try notePlan(db, fragment, diagnostics: diagnostics)
        if !complete { diagnostics.count { $0.firstScreens += 1 } }
        return Scanned(ids: builder.finish(), runs: try sections?.finish() ?? [], complete: complete)
    }

    /// The identifiers and sections of `query` (unwindowed) sectioned by `section`: by
    /// seeking each section's first row (``SectionBoundarySeek``) when the section key is
    /// the first sort key on an index and the store allows it
    /// (``Diagnostics/seeksSectionBoundaries``), reading each row's section value otherwise.
    static func run(
        _ db: Database,
        query: CompiledQuery,
        section: SectionExpression?,
        diagnostics: Diagnostics,
        until rule: FirstScreenRule?,
        progressInterval: Int = 4096,
        progress: ((Int) throws -> Void)? = nil
    ) throws -> Scanned {
        if let section, diagnostics.seeksSectionBoundaries, let seek = SectionBoundarySeek(query: query, section: section),
            let plan = try seek.indexedPlan(db)
        {
            do {
                let scanned = try run(
                    db, SQLBuilder.identifiers(query, windowed: false), boundaries: seek, diagnostics: diagnostics,
                    until: rule, progressInterval: progressInterval, progress: progress)
                if diagnostics.logsQueryPlans {
                    diagnostics.note("SECTION BOUNDARIES: \(scanned.runs.count) sections by index seeks: \(plan.summary)")
                }
                return scanned
            } catch is SeekMismatch {
                diagnostics.note("-- section boundary seeks disagreed with the scan; reading every row's section value")
            }
        }
        return try run(
            db, SQLBuilder.identifiers(query, section: section?.fragment, windowed: false), section: section,
            diagnostics: diagnostics, until: rule, progressInterval: progressInterval, progress: progress)
    }

    /// Steps the identifiers alone (`fragment` reads one column), and starts a section where
    /// the identifier is the one `boundaries` found for the next section: one integer
    /// comparison a row, one seek a section, each made when the scan reaches the section
    /// before it (so a first screen seeks only the sections it shows, plus one). The seeks
    /// run while the scan's statement is stepping, so they read the same snapshot.
    private static func run(
        _ db: Database,
        _ fragment: SQLFragment,
        boundaries: SectionBoundarySeek,
        diagnostics: Diagnostics,
        until rule: FirstScreenRule?,
        progressInterval: Int,
        progress: ((Int) throws -> Void)?
    ) throws -> Scanned {
        try walk(
            db, [fragment], boundaries: boundaries, after: nil, diagnostics: diagnostics, until: rule,
            progressInterval: progressInterval, progress: progress)
    }

    /// What a scan that starts sections where boundary seeks say starts from: the first
    /// screen's rows and sections it takes as they are, and the first row it must step,
    /// with its key (the first row of the section after them).
    private struct Resumption {
        var ids: [Int64]
        var runs: [SectionRun]
        var start: (id: Int64, key: SQLiteValue)
        var seeks: Int
    }

    /// ``run(_:_:boundaries:diagnostics:until:progressInterval:progress:)`` over `fragments`,
    /// stepped one after the other (their rows follow each other in the list's order), after
    /// `resumption`'s rows when there is one.
    private static func walk(
        _ db: Database,
        _ fragments: [SQLFragment],
        boundaries: SectionBoundarySeek,
        after resumption: Resumption?,
        diagnostics: Diagnostics,
        until rule: FirstScreenRule?,
        progressInterval: Int,
        progress: ((Int) throws -> Void)?
    ) throws -> Scanned {
        diagnostics.count { $0.identifierScans += 1 }
        var builder = IdentifierList.Builder()
        var runs: [SectionRun] = resumption?.runs ?? []
        var current: SQLiteValue?
        var count = 0
        var rows = 0
        var seeks = resumption?.seeks ?? 0
        for id in resumption?.ids ?? [] { builder.append(id) }
        let skipped = resumption?.ids.count ?? 0
        // The first row of the next section and its key (set at the first row), `nil` when
        // no section follows.
        var nextID: Int64?
        var nextKey = SQLiteValue.null
        let clock = rule.map { FirstScreenRule.Clock($0) }
        var complete = true
        for fragment in fragments where complete {
            let statement = try db.cachedStatement(sql: fragment.sql)
            try statement.setArguments(fragment.statementArguments)
            complete = try statement.stepRows(
                in: db,
                stoppingWhen: { sqlite -> Bool in
                    let id = sqlite3_column_int64(sqlite, 0)
                    builder.append(id)
                    rows += 1
                    if id != nextID && rows > 1 {
                        count += 1
                    } else {
                        if rows == 1 {
                            guard let first = try resumption?.start ?? boundaries.next(after: nil, db, queries: &seeks),
                                first.id == id
                            else {
                                throw SeekMismatch()
                            }
                            nextKey = first.key
                        }
                        if let current { runs.append(SectionRun(value: current, count: count)) }
                        current = boundaries.section(of: nextKey)
                        count = 1
                        let next = try boundaries.next(after: nextKey, db, queries: &seeks)
                        nextID = next?.id
                        if let next { nextKey = next.key }
                    }
                    if let progress, (skipped + rows) % progressInterval == 0 { try progress(skipped + rows) }
                    return clock?.isDue(rows: rows, sqlite) ?? false
                })
            try notePlan(db, fragment, diagnostics: diagnostics)
        }
        if complete, let progress { try progress(skipped + rows) }
        // Every section the seeks found was reached: the scan and the seeks agree.
        if complete && nextID != nil { throw SeekMismatch() }
        if let current { runs.append(SectionRun(value: current, count: count)) }
        let total = seeks
        diagnostics.count {
            $0.sectionBoundarySeeks += total
            if !complete { $0.firstScreens += 1 }
        }
        var seen = Set<SQLiteValue>()
        for run in runs where !seen.insert(run.value).inserted { throw SeekMismatch() }
        return Scanned(ids: builder.finish(), runs: runs, complete: complete)
    }

    /// The rest of results whose first screen `first` showed, read in the snapshot the first
    /// screen came from (or one whose list's tables have the same change token): the
    /// sections before the first screen's last one are taken as they are, and the scan
    /// starts at that last section's first row, found by a boundary seek, through the index
    /// the seeks use — SQLite does not read the rows before it again (without sections:
    /// ``unsectionedRest(_:after:query:diagnostics:progressInterval:progress:)``). `nil`
    /// when it cannot (no seek path, a first screen within one section, a seek that
    /// disagrees with the first screen): the caller scans from the start.
    ///
    /// Adds the first screen's rows taken as they are to
    /// ``Diagnostics/Counters/firstScreenRowsReused``.
    static func rest(
        _ db: Database, after first: ResultsState, query: CompiledQuery, section: SectionExpression?,
        diagnostics: Diagnostics, progressInterval: Int = 4096, progress: ((Int) throws -> Void)? = nil
    ) throws -> Scanned? {
        do {
            guard let section else {
                return try unsectionedRest(
                    db, after: first, query: query, diagnostics: diagnostics, progressInterval: progressInterval,
                    progress: progress)
            }
            return try sectionedRest(
                db, after: first, query: query, section: section, diagnostics: diagnostics,
                progressInterval: progressInterval, progress: progress)
        } catch is SeekMismatch {
            diagnostics.note("-- the rest of a first screen disagreed with its seeks; reading the list from the start")
            return nil
        }
    }

    /// ``rest(_:after:query:section:diagnostics:progressInterval:progress:)`` of a list with
    /// sections; throws ``SeekMismatch`` when the scan disagrees with a seek.
    private static func sectionedRest(
        _ db: Database, after first: ResultsState, query: CompiledQuery, section: SectionExpression,
        diagnostics: Diagnostics, progressInterval: Int, progress: ((Int) throws -> Void)?
    ) throws -> Scanned? {
        guard first.sectioned, first.runs.count >= 2, diagnostics.seeksSectionBoundaries,
            let seek = SectionBoundarySeek(query: query, section: section), try seek.indexedPlan(db) != nil
        else { return nil }
        let kept = Array(first.runs.dropLast())
        let keptRows = kept.reduce(0) { $0 + $1.count }
        guard keptRows < first.ids.count else { return nil }
        // The key of the last kept row: past its section, the next section's first row is
        // the first screen's row after the kept ones.
        guard let key = try firstKey(ofRow: first.ids[keptRows - 1], seek, db),
            seek.section(of: key) == kept[kept.count - 1].value
        else { return nil }
        var seeks = 0
        let conditions = seek.remainder(after: key)
        guard let start = try seek.next(after: key, db, queries: &seeks), start.id == first.ids[keptRows],
            !conditions.isEmpty
        else { return nil }
        let scanned = try walk(
            db, conditions.map { SQLBuilder.identifiers(query, column: seek.column, from: $0) }, boundaries: seek,
            after: Resumption(ids: first.ids.slice(0..<keptRows), runs: kept, start: start, seeks: seeks),
            diagnostics: diagnostics, until: nil, progressInterval: progressInterval, progress: progress)
        diagnostics.count { $0.firstScreenRowsReused += keptRows }
        return scanned
    }

    /// ``rest(_:after:query:section:diagnostics:progressInterval:progress:)`` of a list
    /// without sections: the first screen's rows before the group of rows that share its last
    /// row's first sort key are taken as they are, and the scan starts at that group's first
    /// row, one seek away. The group is found by reading the keys of the first screen's last
    /// rows, at most ``groupReads`` of them (a key shared by more rows: read from the start).
    /// Throws ``SeekMismatch`` when the scan disagrees with the seek.
    private static func unsectionedRest(
        _ db: Database, after first: ResultsState, query: CompiledQuery, diagnostics: Diagnostics, progressInterval: Int,
        progress: ((Int) throws -> Void)?
    ) throws -> Scanned? {
        guard !first.sectioned, first.ids.count >= 2, diagnostics.seeksSectionBoundaries,
            let seek = SectionBoundarySeek(firstKeyOf: query), try seek.indexedPlan(db) != nil,
            let lastKey = try firstKey(ofRow: first.ids[first.ids.count - 1], seek, db)
        else { return nil }
        // The last row of the first screen whose key SQLite orders apart from the last one's.
        var index = first.ids.count - 1
        var before: SQLiteValue?
        while index > 0 && first.ids.count - index <= groupReads {
            index -= 1
            guard let key = try firstKey(ofRow: first.ids[index], seek, db) else { return nil }
            if SQLiteValue.compare(key, lastKey) != 0 {
                before = key
                break
            }
        }
        guard let before else { return nil }
        let keptRows = index + 1
        var seeks = 0
        let conditions = seek.remainder(after: before)
        guard let start = try seek.next(after: before, db, queries: &seeks), start.id == first.ids[keptRows],
            !conditions.isEmpty
        else { return nil }
        diagnostics.count {
            $0.identifierScans += 1
            $0.sectionBoundarySeeks += seeks
        }
        var builder = IdentifierList.Builder()
        for id in first.ids.slice(0..<keptRows) { builder.append(id) }
        var rows = keptRows
        for condition in conditions {
            let fragment = SQLBuilder.identifiers(query, column: seek.column, from: condition)
            let statement = try db.cachedStatement(sql: fragment.sql)
            try statement.setArguments(fragment.statementArguments)
            var firstRow = true
            _ = try statement.stepRows(in: db) { sqlite -> Bool in
                let id = sqlite3_column_int64(sqlite, 0)
                // The seek found the row the scan starts at: they read the same snapshot.
                if firstRow && rows == keptRows && id != start.id { throw SeekMismatch() }
                firstRow = false
                builder.append(id)
                rows += 1
                if let progress, rows % progressInterval == 0 { try progress(rows) }
                return false
            }
            try notePlan(db, fragment, diagnostics: diagnostics)
        }
        if let progress { try progress(rows) }
        diagnostics.count { $0.firstScreenRowsReused += keptRows }
        return Scanned(ids: builder.finish(), runs: [], complete: true)
    }

    /// The rows of a first screen whose keys a list without sections reads, from its end, to
    /// find where the group of its last row's key starts.
    static let groupReads = 64

    /// The first sort key of the row `id` as stored (`nil`: no such row).
    private static func firstKey(ofRow id: Int64, _ seek: SectionBoundarySeek, _ db: Database) throws -> SQLiteValue? {
        let fragment = SQLBuilder.column(seek.column, ofRow: id, in: seek.query.table)
        let statement = try db.cachedStatement(sql: fragment.sql)
        try statement.setArguments(fragment.statementArguments)
        var found: SQLiteValue?
        _ = try statement.stepRows(in: db) { sqlite in
            found = SQLiteValue(sqliteStatement: sqlite, index: 0)
            return true
        }
        return found
    }

    private static func notePlan(_ db: Database, _ fragment: SQLFragment, diagnostics: Diagnostics) throws {
        if diagnostics.logsQueryPlans {
            let plan = try QueryPlan.read(db, fragment)
            diagnostics.note("QUERY PLAN: \(plan.summary)\(plan.readsEveryRow ? " (reads every row)" : "")")
        }
    }
}

/// A section boundary seek that disagreed with the identifier scan (a bug, never expected):
/// the scan is redone reading every row's section value.
private struct SeekMismatch: Error {}
