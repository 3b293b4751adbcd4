import Foundation
import GRDB
import GRDBSQLite

/// Keeps one controller's results current, commit by commit.
///
/// It runs on the store's writer queue right after each commit, when the database is in
/// exactly the state that commit left, so every position it computes is exact. It asks
/// SQLite only about the rows the commit touched: which of them match now, with their
/// sort keys, and — for a binary search among the rows it holds — the sort keys of
/// about log₂(n) untouched rows each. The cost of a change is O(changed rows · log n)
/// queries plus one linear scan of the identifiers in memory.
///
/// A transaction that touches a large share of the rows falls back to a full identifier
/// scan and a general difference; the change set is still exact.
// @unchecked Sendable: mutable state lives in `state`, guarded by its lock; the other
// properties are immutable. The lock is never held while calling out to user code.
final class ResultsTracker: CommitSubscriber, @unchecked Sendable {
    struct Delivery: Sendable {
        var change: ChangeSet
        /// The presented (windowed) state after the change.
        var state: ResultsState
        var serial: UInt64
        var token: Int64?
        /// The rows the commit touched (records loaded before it may be stale).
        var changed: Set<Int64> = []
    }

    let table: String
    let query: CompiledQuery
    let section: SectionExpression?
    let order: RowOrder
    let diagnostics: Diagnostics
    let readsToken: Bool
    let deliveries: AsyncStream<Delivery>
    private let continuation: AsyncStream<Delivery>.Continuation
    private let state = Locked(State())

    private struct State {
        var full: ResultsState?
        /// No identifier above this is in `full`: rowids are never reused (AUTOINCREMENT),
        /// so rows inserted later always have larger ones and need no search.
        var maxID = Int64.min
        var pending = Set<Int64>()
        var serial: UInt64 = 0
        var stopped = false
    }

    init(query: CompiledQuery, section: SectionExpression?, diagnostics: Diagnostics, readsToken: Bool) {
        self.table = query.table
        self.query = query
        self.section = section
        self.order = RowOrder(query: query, section: section)
        self.diagnostics = diagnostics
        self.readsToken = readsToken
        (deliveries, continuation) = AsyncStream.makeStream(of: Delivery.self)
    }

    // MARK: Fetching

    /// Every matching identifier (the window is applied when presenting) and its sections.
    static func fetchFull(_ db: Database, query: CompiledQuery, section: SectionExpression?, diagnostics: Diagnostics) throws
        -> ResultsState
    {
        let (ids, runs) = try IdentifierScan.run(
            db, SQLBuilder.identifiers(query, section: section?.fragment, windowed: false),
            withSection: section != nil, sectionTransform: section?.transform, dayOffset: section?.dayOffset,
            diagnostics: diagnostics)
        return ResultsState(ids: ids, runs: runs, sectioned: section != nil)
    }

    func present(_ full: ResultsState) -> ResultsState {
        query.isWindowed ? full.window(offset: query.offset ?? 0, limit: query.limit) : full
    }

    /// Installs the state the controller fetched. Returns whether commits arrived since
    /// subscribing: they may or may not be in the fetched state, and no later commit may
    /// come to bring them in, so the caller must run ``catchUp(_:)`` on the writer's queue.
    func install(_ full: ResultsState) -> Bool {
        let maxID = full.ids.maximum
        return state.withLock { s in
            s.full = full
            s.maxID = maxID
            return !s.pending.isEmpty
        }
    }

    /// Re-examines the rows of the commits that arrived while the installed state was
    /// being read, at the database's current state, and delivers what changed. Runs on
    /// the writer's queue, like a commit.
    func catchUp(_ db: Database) {
        didCommit(changedRowIDs: [], in: db)
    }

    var serial: UInt64 { state.withLock { $0.serial } }

    func stop() {
        state.withLock { $0.stopped = true }
        continuation.finish()
    }

    // MARK: Commits

    func didCommit(changedRowIDs: Set<Int64>, in db: Database) {
        let delivery: Delivery? = state.withLock { s in
            guard !s.stopped else { return nil }
            guard let old = s.full else {
                s.pending.formUnion(changedRowIDs)
                return nil
            }
            var changed = changedRowIDs
            if !s.pending.isEmpty {
                changed.formUnion(s.pending)
                s.pending = []
            }
            guard !changed.isEmpty else { return nil }
            do {
                let (new, change) = try Self.inReadTransaction(db) { try apply(changed, to: old, maxID: s.maxID, db) }
                s.full = new
                s.maxID = Swift.max(s.maxID, changed.max() ?? s.maxID)
                guard !change.isEmpty else { return nil }
                s.serial += 1
                let token = readsToken ? try? Store.changeToken(table: table, db) : nil
                return Delivery(change: change, state: present(new), serial: s.serial, token: token, changed: changed)
            } catch {
                // The database could not be read: the controller reloads from scratch.
                return Self.reload(&s, old: present(old))
            }
        }
        emit(delivery)
    }

    func didChangeExternally(in db: Database) {
        let delivery: Delivery? = state.withLock { s in
            guard !s.stopped, let old = s.full else { return nil }
            return Self.reload(&s, old: present(old))
        }
        emit(delivery)
    }

    /// Stops following (the controller replaces this tracker on a reload) and says so.
    private static func reload(_ s: inout State, old: ResultsState) -> Delivery {
        s.full = nil
        s.stopped = true
        s.serial += 1
        return Delivery(change: .reload, state: old, serial: s.serial, token: nil)
    }

    private func emit(_ delivery: Delivery?) {
        guard let delivery else { return }
        diagnostics.count { $0.changeSets += 1 }
        continuation.yield(delivery)
    }

    /// Whether `changed` rows are few enough for the incremental path.
    static func isIncremental(changed: Int, total: Int) -> Bool {
        changed <= Swift.max(2_048, total / 500)
    }

    func apply(_ changed: Set<Int64>, to old: ResultsState, maxID: Int64, _ db: Database) throws -> (ResultsState, ChangeSet) {
        if Self.isIncremental(changed: changed.count, total: old.ids.count),
            let result = try incremental(changed, old, maxID: maxID, db)
        {
            if query.isWindowed {
                return (
                    result.0, Self.limitReload(ChangeSetBuilder.diff(old: present(old), new: present(result.0), changed: changed))
                )
            }
            return result
        }
        let new = try Self.fetchFull(db, query: query, section: section, diagnostics: diagnostics)
        return (new, Self.limitReload(ChangeSetBuilder.diff(old: present(old), new: present(new), changed: changed)))
    }

    /// A change set so large that animating it makes no sense becomes a reload.
    static func limitReload(_ change: ChangeSet) -> ChangeSet {
        let size = change.deletedItems.count + change.insertedItems.count + change.movedItems.count
        return size > 50_000 ? .reload : change
    }

    /// The incremental path; `nil` when the rows do not fit the section order (then the
    /// caller rescans).
    private func incremental(_ changed: Set<Int64>, _ old: ResultsState, maxID: Int64, _ db: Database) throws -> (
        ResultsState, ChangeSet
    )? {
        // 1. The touched rows that match now, in result order, with their keys.
        var json = "["
        for (i, id) in changed.enumerated() {
            if i > 0 { json += "," }
            json += String(id)
        }
        json += "]"
        let fragment = SQLBuilder.changedRows(query, section: section?.fragment, identifiersJSON: json)
        var rows: [RowKey] = []
        let changedStatement = try db.cachedStatement(sql: fragment.sql)
        try changedStatement.setArguments(fragment.statementArguments)
        try changedStatement.forEachRow(in: db) { rows.append(order.key(statement: $0)) }

        // 2. Where the touched rows were.
        let oldPositions = old.ids.positions(of: changed.filter { $0 <= maxID })
        let removedDescending = oldPositions.sorted { $0.value > $1.value }

        // 3. Remove them (highest first, so earlier offsets stay valid).
        var ids = old.ids
        var runs = old.runs
        let offsets = old.offsets
        for (_, index) in removedDescending {
            let section = ResultsState.path(of: index, offsets: offsets).section
            runs[section].count -= 1
            ids.remove(at: index)
        }

        // 4. Find each row's place among the untouched rows: `gaps[j]` untouched rows come
        // before `rows[j]` (see ``findGaps(of:among:probe:)``).
        let probe = try KeyProbe(query: query, section: section, order: order, db)
        let gaps = try findGaps(of: rows, among: ids, probe: probe)

        // 5. Insert them and place them in sections.
        for (j, row) in rows.enumerated() {
            let position = gaps[j] + j
            if old.sectioned {
                guard place(row.section ?? .null, at: position, in: &runs) else { return nil }
            } else {
                runs[0].count += 1
            }
            ids.insert(row.id, at: position)
        }
        if old.sectioned { runs.removeAll { $0.count == 0 } }
        let new = ResultsState(ids: ids, runs: runs, sectioned: old.sectioned)
        if query.isWindowed { return (new, ChangeSet()) }

        // 6. Which rows left, came, moved or stayed.
        let oldSorted = removedDescending.map(\.value).reversed() as [Int]
        var rankOfOld: [Int: Int] = [:]
        for (rank, index) in oldSorted.enumerated() { rankOfOld[index] = rank }
        var deletions: [Int] = []
        var insertions: [(index: Int, id: Int64)] = []
        var candidates: [(old: Int, new: Int, gap: Int)] = []
        var survivors: [ChangeSetBuilder.Survivor] = []
        var matched = Set<Int64>()
        for (j, row) in rows.enumerated() {
            let position = gaps[j] + j
            matched.insert(row.id)
            if let oldIndex = oldPositions[row.id] {
                let oldGap = oldIndex - rankOfOld[oldIndex]!
                if oldGap == gaps[j] {
                    candidates.append((oldIndex, position, gaps[j]))
                } else {
                    survivors.append(.init(oldIndex: oldIndex, newIndex: position, stationary: false, updated: true))
                }
            } else {
                insertions.append((position, row.id))
            }
        }
        for (id, index) in oldPositions where !matched.contains(id) { deletions.append(index) }
        // Within one gap, rows that kept their relative order stay; the others move.
        var start = 0
        while start < candidates.count {
            var end = start
            while end < candidates.count && candidates[end].gap == candidates[start].gap { end += 1 }
            let group = Array(candidates[start..<end])
            let keep = Set(ChangeSetBuilder.longestIncreasing(group.map { ($0.old, 1) }))
            for (k, c) in group.enumerated() {
                survivors.append(.init(oldIndex: c.old, newIndex: c.new, stationary: keep.contains(k), updated: true))
            }
            start = end
        }
        let change = ChangeSetBuilder.assemble(
            old: old, new: new, deletions: deletions, insertions: insertions, survivors: survivors)
        return (new, change)
    }

    /// For each of `rows` (sorted), how many of `ids` (sorted, none of them in `rows`)
    /// come before it.
    ///
    /// The rows are searched middle first, then each half within the range the middle one
    /// left it: about k·log₂(n/k) probes for k rows among n. Each probe is one indexed
    /// lookup of a row's sort keys. When the first sort key is a number, a search guesses
    /// by interpolation between the keys that bracket its range (dates and scores are
    /// often spread evenly, and then a few probes do), falling back to bisection after
    /// any guess that did not halve the range — never more than twice the probes of
    /// plain bisection.
    func findGaps(of rows: [RowKey], among ids: IdentifierList, probe: KeyProbe) throws -> [Int] {
        struct Range {
            var rows: Swift.Range<Int>
            /// The rows' gaps are in `low...high`.
            var low: Int, high: Int
            /// The keys of `ids[low - 1]` and `ids[high]`, when known.
            var lowKey: RowKey?, highKey: RowKey?
        }
        func key(_ index: Int) throws -> RowKey {
            guard let key = try probe.key(ids[index]) else {
                throw FolioError.recordNotFound(entity: table, id: RecordID(ids[index]))
            }
            return key
        }
        var gaps = [Int](repeating: 0, count: rows.count)
        var pending = rows.isEmpty ? [] : [Range(rows: 0..<rows.count, low: 0, high: ids.count)]
        while let range = pending.popLast() {
            let middle = (range.rows.lowerBound + range.rows.upperBound) / 2
            let target = rows[middle]
            var low = range.low, high = range.high
            var lowKey = range.lowKey, highKey = range.highKey
            var interpolate = true
            while low < high {
                var mid = (low + high) / 2
                if interpolate, let lowKey, let highKey, let f = order.fraction(of: target, between: lowKey, and: highKey) {
                    // ids[low - 1] and ids[high] bracket the target: place it in proportion.
                    mid = Swift.min(high - 1, Swift.max(low, low - 1 + Int((f * Double(high - low + 1)).rounded())))
                }
                let width = high - low
                let k = try key(mid)
                if order.precedes(k, target) {
                    low = mid + 1
                    lowKey = k
                } else {
                    high = mid
                    highKey = k
                }
                interpolate = (high - low) * 2 <= width
            }
            gaps[middle] = low
            if range.rows.lowerBound < middle {
                pending.append(
                    Range(rows: range.rows.lowerBound..<middle, low: range.low, high: low, lowKey: range.lowKey, highKey: highKey)
                )
            }
            if middle + 1 < range.rows.upperBound {
                pending.append(
                    Range(
                        rows: (middle + 1)..<range.rows.upperBound, low: low, high: range.high, lowKey: lowKey,
                        highKey: range.highKey))
            }
        }
        return gaps
    }

    /// Adds one row with section value `value` at `position` of the runs; false when the
    /// position is inside another section (the sort does not follow the section key).
    private func place(_ value: DatabaseValue, at position: Int, in runs: inout [SectionRun]) -> Bool {
        var before: Int? = nil, after: Int? = nil
        var start = 0
        for (i, run) in runs.enumerated() where run.count > 0 {
            if position - 1 >= start && position - 1 < start + run.count { before = i }
            if position >= start && position < start + run.count { after = i; break }
            start += run.count
        }
        if let before, runs[before].value == value { runs[before].count += 1; return true }
        if let after, runs[after].value == value { runs[after].count += 1; return true }
        if let before, let after, before == after { return false }
        let index = before.map { $0 + 1 } ?? after ?? runs.count
        runs.insert(SectionRun(value: value, count: 1), at: index)
        return true
    }
}

extension ResultsTracker {
    /// Runs `body` in one read transaction. The tracker runs right after a commit, in
    /// autocommit mode, where each statement would otherwise begin and end a transaction
    /// of its own — taking and releasing SQLite's WAL read lock (system calls) once per
    /// probe of a binary search.
    static func inReadTransaction<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        if db.isInsideTransaction { return try body() }
        try db.beginTransaction(.deferred)
        let result: T
        do {
            result = try body()
        } catch {
            try? db.rollback()
            throw error
        }
        try db.commit()
        return result
    }
}

/// Reads the sort keys of one row at a time: the statement is prepared and its section
/// arguments bound once; each probe binds the rowid, steps once, and reads the columns
/// with the C API (no row objects, no argument arrays).
struct KeyProbe {
    private let statement: Statement
    private let db: Database
    private let idParameter: Int32
    private let order: RowOrder

    init(query: CompiledQuery, section: SectionExpression?, order: RowOrder, _ db: Database) throws {
        let fragment = SQLBuilder.sortKeys(query, section: section?.fragment)
        statement = try db.cachedStatement(sql: fragment.sql)
        try statement.setArguments(StatementArguments(fragment.arguments + [0.databaseValue]))
        idParameter = sqlite3_bind_parameter_count(statement.sqliteStatement)
        self.order = order
        self.db = db
    }

    /// The keys of the row with rowid `id`, or `nil` if there is none.
    func key(_ id: Int64) throws -> RowKey? {
        let sqlite = statement.sqliteStatement
        defer { sqlite3_reset(sqlite) }
        sqlite3_bind_int64(sqlite, idParameter, id)
        let code = sqlite3_step(sqlite)
        if code == SQLITE_DONE { return nil }
        guard code == SQLITE_ROW else { throw FolioError.stepFailure(code, db, sql: statement.sql) }
        return order.key(statement: sqlite)
    }
}
