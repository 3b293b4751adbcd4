import Foundation
import GRDB
import GRDBSQLite

/// Computes a controller's next results from the database, commit by commit: the "fetch"
/// and "reduce" stages of the live engine (the ``ChangeHub`` detects, the
/// ``ResultsTracker`` notifies).
///
/// It holds no state and no lock: each call reads the database it is given, at exactly the
/// state a commit left, and returns a new ``ResultsState`` and the ``ChangeSet`` from the
/// old one (built by ``ChangeSetBuilder``, the one place that decides moves).
///
/// The incremental path asks SQLite only about the rows the commit touched — which of
/// them match now, with their sort keys — and, for a binary search among the rows it holds,
/// the sort keys of about log₂(n) untouched rows each: O(changed rows · log n) queries plus
/// one linear scan of the identifiers in memory. A transaction that touches a large share
/// of the rows, or that the incremental path cannot place (the rows do not fit the section
/// order), falls back to a full identifier scan and a general difference; the change set
/// is exact either way.
struct ResultsUpdater: Sendable {
    let query: CompiledQuery
    let section: SectionExpression?
    let order: RowOrder
    let diagnostics: Diagnostics

    init(query: CompiledQuery, section: SectionExpression?, diagnostics: Diagnostics) {
        self.query = query
        self.section = section
        self.order = RowOrder(query: query, section: section)
        self.diagnostics = diagnostics
        self.relatedTables = RelatedTable.distinct(query.related + (section?.related.map { [$0] } ?? []))
        var tables = query.tables
        if let table = section?.related?.table, !tables.contains(table) { tables.append(table) }
        self.tokenTables = tables
        let (changed, identifiersArgument) = SQLBuilder.changedRows(query, section: section?.fragment)
        self.changedRows = changed
        self.changedRowsKey = changed.fingerprint
        self.identifiersArgument = identifiersArgument
        self.sortKeys = SQLBuilder.sortKeys(query, section: section?.fragment)
        self.sortKeysKey = sortKeys.fingerprint
    }

    // The two statements a commit runs, built once per list (a commit binds its
    // identifiers), each with its fingerprint: its identity among a commit's shared reads.
    private let changedRows: SQLFragment
    private let changedRowsKey: String
    private let identifiersArgument: Int
    private let sortKeys: SQLFragment
    private let sortKeysKey: String

    var table: String { query.table }

    /// The tables the results read through to-ones: the predicate's, the order's, the section's.
    let relatedTables: [RelatedTable]

    /// The tables whose change tokens make the results' token: the list's and the related
    /// ones (worked out once: every commit reads them).
    let tokenTables: [String]

    /// The list's rows that point to rows a commit changed in related tables: through each
    /// reference column's index, O(affected rows · log n), whatever the size of the list.
    func referencingRows(_ related: [RelatedTable: Set<Int64>], _ db: Database) throws -> Set<Int64> {
        var rows: Set<Int64> = []
        for (dependency, targets) in related {
            let statement = try db.cachedStatement(sql: SQLBuilder.referencingRows(table: table, column: dependency.column))
            try statement.setArguments([IdentifierList.jsonArray(targets)])
            try statement.forEachRow(in: db) { rows.insert(sqlite3_column_int64($0, 0)) }
        }
        return rows
    }

    /// Every matching identifier (the window is applied when presenting) and its sections.
    /// Calls a `.computed` section key's closure: never while holding a lock.
    func scan(_ db: Database) throws -> ResultsState {
        try scan(db, until: nil).state
    }

    /// ``scan(_:)``, stopping at the first screen when `rule` says so (`complete` is then
    /// `false`: the state is the first rows, its last section's count a lower bound).
    /// `progress` is called every 4,096 rows with the rows read so far; it may throw to stop.
    func scan(_ db: Database, until rule: FirstScreenRule?, progress: ((Int) throws -> Void)? = nil) throws -> (
        state: ResultsState, complete: Bool
    ) {
        if let rule, let walked = try SearchWalk.run(db, query, section: section, diagnostics: diagnostics, until: rule) {
            return (ResultsState(ids: walked.ids, runs: walked.runs, sectioned: section != nil), walked.complete)
        }
        let scanned = try IdentifierScan.run(
            db, query: query, section: section, diagnostics: diagnostics, until: rule, progress: progress)
        return (ResultsState(ids: scanned.ids, runs: scanned.runs, sectioned: section != nil), scanned.complete)
    }

    /// The full results of which `first` is the first screen, read in a snapshot where it
    /// is (the same change token): from the first screen's last section on when the sections
    /// are found by seeks (``IdentifierScan/rest(_:after:query:section:diagnostics:progressInterval:progress:)``),
    /// otherwise from the start. `progress` as in ``scan(_:until:progress:)``, counting the
    /// rows taken from the first screen.
    func scan(_ db: Database, after first: ResultsState, progress: ((Int) throws -> Void)? = nil) throws -> ResultsState {
        if let rest = try IdentifierScan.rest(
            db, after: first, query: query, section: section, diagnostics: diagnostics, progress: progress)
        {
            return ResultsState(ids: rest.ids, runs: rest.runs, sectioned: section != nil)
        }
        return try scan(db, until: nil, progress: progress).state
    }

    /// What the controller shows of the full results: the request's window.
    func present(_ full: ResultsState) -> ResultsState {
        query.isWindowed ? full.window(offset: query.offset ?? 0, limit: query.limit) : full
    }

    /// The full results after a commit that touched `changed`, and the change set between
    /// the presented states. `maxID` is at least the largest identifier in `old`.
    /// `shared` are the reads of the commit being followed, which the other lists following
    /// it share (``CommitTokens``).
    func apply(
        _ changed: Set<Int64>, to old: ResultsState, maxID: Int64, shared: CommitTokens? = nil, _ db: Database
    ) throws -> (ResultsState, ChangeSet) {
        if let probes = ReloadPolicy.incrementalProbes(changed: changed.count, total: old.ids.count),
            let (new, change) = try incremental(changed, old, maxID: maxID, probes: probes, shared: shared, db)
        {
            return (new, ReloadPolicy.limited(change))
        }
        let new = try scan(db)
        return (new, ReloadPolicy.limited(ChangeSetBuilder.diff(old: present(old), new: present(new), changed: changed)))
    }

    /// The incremental path; `nil` when the rows cannot be placed exactly (then the caller
    /// rescans).
    private func incremental(
        _ changed: Set<Int64>, _ old: ResultsState, maxID: Int64, probes: Int, shared: CommitTokens?, _ db: Database
    ) throws -> (ResultsState, ChangeSet)? {
        // 1. The touched rows that match now, in SQLite's result order, with their keys:
        // read once per commit for the lists with this filter and sort.
        let identifiers = IdentifierList.jsonArray(changed)
        var rows: [RowKey] = []
        if let shared {
            let (read, wasShared) = try shared.rows(changedRowsKey, identifiers: identifiers) {
                var columns: [[SQLiteValue]] = []
                try readChangedRows(identifiers, db) { columns.append(RowOrder.columns(of: $0)) }
                return columns
            }
            if wasShared { diagnostics.count { $0.sharedCommitReads += 1 } }
            rows = read.map { order.key(values: $0, withSection: true) }
        } else {
            try readChangedRows(identifiers, db) { rows.append(order.key(statement: $0)) }
        }
        // Folio's comparison is SQLite's, so it agrees with the order SQLite returned; if it
        // ever did not, positions found by comparing in Swift would be wrong: rescan.
        for j in rows.indices.dropFirst() where !order.precedes(rows[j - 1], rows[j]) { return nil }

        // 2. Where the touched rows were, ascending: through the chunk summaries, which a
        // long list gets at its first commit and keeps through its edits.
        var ids = old.ids
        ids.beginEdits()
        ids.buildSummaries()
        let (oldPositions, searched) = ids.positionsSearch(of: changed.filter { $0 <= maxID })
        diagnostics.count { $0.identifierChunksSearched += searched }
        let removed = oldPositions.values.sorted()

        // 3. Remove them (highest first, so earlier offsets stay valid). Runs may empty for
        // a while: a row can come back to its section below.
        var runs = old.sectioned ? old.runs : []
        let offsets = old.offsets
        // Whether a section emptied or was made: otherwise the sections are the old ones,
        // in order, and map to themselves.
        var sectionsReshaped = false
        if old.sectioned {
            for index in removed {
                let section = ResultsState.path(of: index, offsets: offsets).section
                runs[section].count -= 1
                if runs[section].count == 0 { sectionsReshaped = true }
            }
        }
        ids.remove(atSortedIndices: removed)

        // 4. Find each row's place among the untouched rows: `gaps[j]` untouched rows come
        // before `rows[j]` (see ``findGaps(of:among:probe:)``).
        let probe = KeyProbe(fragment: sortKeys, key: sortKeysKey, order: order, shared: shared, db)
        defer { if probe.sharedReads > 0 { diagnostics.count { [n = probe.sharedReads] in $0.sharedCommitReads += n } } }
        guard let gaps = try findGaps(of: rows, among: ids, probe: probe, budget: probes) else { return nil }

        // 5. Place them in sections (in ascending positions, each walk of the runs going on
        // from where the last one stopped), then insert them, each chunk rebuilt once.
        let positions = rows.indices.map { gaps[$0] + $0 }
        if old.sectioned {
            var hint = RunHint()
            for (j, row) in rows.enumerated() {
                let before = runs.count
                guard Self.place(row.section ?? .null, at: positions[j], in: &runs, hint: &hint) else { return nil }
                if runs.count != before { sectionsReshaped = true }
            }
        }
        ids.insert(rows.map(\.id), atSortedPositions: positions)
        var newOffsets = [0]
        if old.sectioned {
            runs.removeAll { $0.count == 0 }
            newOffsets = ResultsState.offsets(of: runs)
            guard
                try nameByFirstRow(
                    &runs, ids: ids, old: old, offsets: offsets, newOffsets: newOffsets, removed: removed, rows: rows,
                    gaps: gaps, probe)
            else { return nil }
        }
        // Counts add up and values stay unique by construction (``place(_:at:in:hint:)`` refuses a
        // second run of a value); the invariants are checked when internal checks are on.
        let new = ResultsState(ids: ids, runs: runs, sectioned: old.sectioned)
        if query.isWindowed {
            return (new, ChangeSetBuilder.diff(old: present(old), new: present(new), changed: changed))
        }

        // 6. Which rows left, came, or stayed — and where, counted in untouched rows.
        var rankOfRemoved: [Int: Int] = [:]
        rankOfRemoved.reserveCapacity(removed.count)
        for (rank, index) in removed.enumerated() { rankOfRemoved[index] = rank }
        var deleted: [Int] = []
        var inserted: [Int] = []
        var touched: [ChangeSetBuilder.TouchedRow] = []
        var matched = Set<Int64>()
        for (j, row) in rows.enumerated() {
            let newIndex = gaps[j] + j
            matched.insert(row.id)
            if let oldIndex = oldPositions[row.id] {
                touched.append(
                    ChangeSetBuilder.TouchedRow(
                        oldIndex: oldIndex, newIndex: newIndex, oldAnchors: oldIndex - rankOfRemoved[oldIndex]!,
                        newAnchors: gaps[j], updated: true))
            } else {
                inserted.append(newIndex)
            }
        }
        for (id, index) in oldPositions where !matched.contains(id) { deleted.append(index) }
        return (
            new,
            ChangeSetBuilder.build(
                old: old, new: new, deleted: deleted, inserted: inserted, touched: touched, oldOffsets: offsets,
                newOffsets: newOffsets, sectionsKept: !sectionsReshaped)
        )
    }

    /// Steps the changed-rows statement with `identifiers` (a JSON array) bound.
    private func readChangedRows(_ identifiers: String, _ db: Database, _ body: (OpaquePointer) -> Void) throws {
        var arguments = changedRows.arguments
        arguments[identifiersArgument] = identifiers.databaseValue
        let statement = try db.cachedStatement(sql: changedRows.sql)
        try statement.setArguments(StatementArguments(arguments))
        try statement.forEachRow(in: db, body)
    }

    /// Gives each section whose first row changed the value of its new first row, as a
    /// fresh scan does: values SQLite finds equal but stored otherwise (the integer and the
    /// real −2⁶³) are one section, named by whichever row comes first. A placed row's value
    /// is known; an untouched row that became first (the first row left) is read, one
    /// lookup. `false` when that row is gone (the caller rescans).
    ///
    /// Only those sections are looked at, found by position: the run that starts with a
    /// placed row, and the run now holding the first untouched row of a section whose first
    /// row was removed — O(changed rows · log sections), whatever the number of sections.
    /// (An untouched row first of its run was first of its section before, unless the rows
    /// before it there were all removed: a run's name changes in no other way.)
    private func nameByFirstRow(
        _ runs: inout [SectionRun], ids: IdentifierList, old: ResultsState, offsets: [Int], newOffsets: [Int],
        removed: [Int], rows: [RowKey], gaps: [Int], _ probe: KeyProbe
    ) throws -> Bool {
        guard !runs.isEmpty else { return true }
        var placed: [Int64: SQLiteValue] = [:]
        for row in rows { placed[row.id] = row.section ?? .null }
        var candidates = Set<Int>()
        for j in rows.indices {
            let position = gaps[j] + j
            let run = ResultsState.path(of: position, offsets: newOffsets).section
            if newOffsets[run] == position { candidates.insert(run) }
        }
        // Sections whose first row was removed: where their first untouched row went.
        let removedSet = Set(removed)
        var k = 0  // removed[..<k] are below the survivor looked at (survivors ascend)
        for index in removed {
            let section = ResultsState.path(of: index, offsets: offsets).section
            guard offsets[section] == index else { continue }
            let end = offsets[section] + old.runs[section].count
            var survivor = index + 1
            while survivor < end && removedSet.contains(survivor) { survivor += 1 }
            guard survivor < end else { continue }
            while k < removed.count && removed[k] < survivor { k += 1 }
            let rank = survivor - k
            // Rows placed in gaps 0...rank come before the untouched row of that rank (the
            // gaps ascend, as the rows do).
            var low = 0, high = gaps.count
            while low < high {
                let mid = (low + high) / 2
                if gaps[mid] <= rank { low = mid + 1 } else { high = mid }
            }
            candidates.insert(ResultsState.path(of: rank + low, offsets: newOffsets).section)
        }
        for run in candidates {
            let first = ids[newOffsets[run]]
            if let value = placed[first] {
                runs[run].value = value
            } else {
                guard let value = try probe.section(of: first) else { return false }
                runs[run].value = value
            }
        }
        return true
    }

    /// Runs `body` in one read transaction. The tracker runs right after a commit, in
    /// autocommit mode, where each statement would otherwise begin and end a transaction
    /// of its own — taking and releasing SQLite's WAL read lock (system calls) once per
    /// probe of a binary search.
    ///
    /// The transaction only reads, so it always ends with a commit, even when `body`
    /// throws: it runs inside GRDB's commit notification, and a rollback would be reported
    /// to every transaction observer of the writer as the rollback of the transaction
    /// being notified — an observer not notified yet would drop the rows it recorded.
    static func inReadTransaction<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        if db.isInsideTransaction { return try body() }
        try db.beginTransaction(.deferred)
        let result: T
        do {
            result = try body()
        } catch {
            do { try db.commit() } catch { try? db.rollback() }
            throw error
        }
        try db.commit()
        return result
    }
}
