import Foundation
import GRDB
import Testing
@testable import Folio

/// A failed check inside a workload. `kind` names the class of failure (it stays the same
/// while a reproduction is shrunk); `message` has the details.
struct WorkloadFailure: Error, Codable, CustomStringConvertible {
    var kind: String
    var message: String
    var step = 0
    var description: String { "[\(kind)] step \(step): \(message)" }
}

/// Collects each change set a controller delivers, with the snapshot delivered after it
/// and how many callbacks came with it.
@MainActor
final class WorkloadRecorder: FetchedResultsControllerDelegate {
    struct Entry {
        var change: ChangeSet
        var snapshot: Snapshot
        var sectionCallbacks: Int
        var objectCallbacks: Int
        var wellFormed: Bool
    }

    var entries: [Entry] = []
    /// Every change set since the controller was made (compared with its streams).
    var all: [(change: ChangeSet, snapshot: Snapshot)] = []
    private var sectionCallbacks = 0, objectCallbacks = 0
    private var phase = 0  // 0 idle, 1 between will and did, 2 after did, 3 after the change set
    private var pending: ChangeSet?
    private var wellFormed = true

    func take() -> [Entry] {
        defer { entries = [] }
        return entries
    }

    /// Errors heard through `controller(_:didFailWith:)` since the last check, and in all.
    var failures: [FolioError] = []
    var failureCount = 0

    func controller(_ controller: FetchedResultsController<Item>, didFailWith error: FolioError) {
        if phase != 0 { wellFormed = false }
        failures.append(error)
        failureCount += 1
    }

    func controllerWillChangeContent(_ controller: FetchedResultsController<Item>) {
        if phase != 0 { wellFormed = false }
        phase = 1
        sectionCallbacks = 0
        objectCallbacks = 0
    }
    func controller(
        _ controller: FetchedResultsController<Item>, didChange section: SectionInfo, atSectionIndex sectionIndex: Int,
        for type: FetchedResultsChangeType
    ) {
        if phase != 1 { wellFormed = false }
        sectionCallbacks += 1
    }
    func controller(
        _ controller: FetchedResultsController<Item>, didChangeObject id: RecordID, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        if phase != 1 { wellFormed = false }
        objectCallbacks += 1
        configureCell(id, type, at: indexPath, newIndexPath: newIndexPath, controller)
    }

    /// The classic Core Data delegate's cell configuration: an inserted, moved or updated
    /// row's record is read at `newIndexPath` (the new state is installed); it must be that
    /// row. Problems since the last check.
    var classicProblems: [String] = []

    private func configureCell(
        _ id: RecordID, _ type: FetchedResultsChangeType, at indexPath: IndexPath?, newIndexPath: IndexPath?,
        _ controller: FetchedResultsController<Item>
    ) {
        if type == .delete {
            // (A row that left a deleted section for another is also inserted there: it may be shown.)
            if indexPath == nil || newIndexPath != nil { classicProblems.append("delete \(id): paths") }
            return
        }
        guard let newIndexPath, type == .insert ? indexPath == nil : indexPath != nil else {
            return classicProblems.append(
                "\(type) \(id): paths \(String(describing: indexPath)) \(String(describing: newIndexPath))")
        }
        let sections = controller.sections
        guard newIndexPath.section < sections.count, newIndexPath.item < sections[newIndexPath.section].numberOfObjects
        else { return classicProblems.append("\(type) \(id): newIndexPath \(newIndexPath) is past the results") }
        if controller.identifier(at: newIndexPath) != id {
            classicProblems.append("\(type) \(id): another row at newIndexPath \(newIndexPath)")
        } else if let record = controller.object(at: newIndexPath), record.id != id {
            classicProblems.append(
                "\(type) \(id): the record at newIndexPath \(newIndexPath) is \(String(describing: record.id))")
        }
    }
    func controllerDidChangeContent(_ controller: FetchedResultsController<Item>) {
        if phase != 1 { wellFormed = false }
        phase = 2
    }
    func controller(_ controller: FetchedResultsController<Item>, didChangeContentWith changes: ChangeSet) {
        if phase != 2 { wellFormed = false }
        phase = 3
        pending = changes
    }
    func controller(_ controller: FetchedResultsController<Item>, didChangeContentWith snapshot: Snapshot) {
        if phase != 3 { wellFormed = false }
        phase = 0
        let change = pending ?? .reload
        entries.append(
            Entry(
                change: change, snapshot: snapshot, sectionCallbacks: sectionCallbacks, objectCallbacks: objectCallbacks,
                wellFormed: wellFormed && pending != nil))
        all.append((change, snapshot))
        pending = nil
        wellFormed = true
    }
}

/// What a controller's async sequences delivered (filled by tasks that hold no controller).
@MainActor
final class StreamLog {
    var changes: [ChangeSet] = []
    var updates: [(ChangeSet, Snapshot)] = []
    /// Updates that carried an error (not change sets).
    var errors = 0
}

/// One live controller of a workload and what the test knows of it.
@MainActor
final class WorkloadSlot {
    var spec: ControllerSpec
    let controller: FetchedResultsController<Item>
    let recorder = WorkloadRecorder()
    var model = TableViewModel(sections: [])
    /// The results after the last step, when they were valid (for the move rules).
    var oracle: OracleResult?
    var fetched = false
    /// The last results were not contiguous: fetches fail until the data is repaired.
    var broken = false
    let streams = StreamLog()
    var streamTask: Task<Void, Never>?

    init(spec: ControllerSpec, store: Store) {
        self.spec = spec
        controller = FetchedResultsController(spec.request, store: store, sectionBy: spec.sectionKey, cacheName: spec.cacheName)
        let log = streams
        switch spec.stream {
        case .none: break
        case .changes:
            let stream = controller.changes
            streamTask = Task { @MainActor in for await change in stream { log.changes.append(change) } }
        case .updates:
            let stream = controller.updates
            streamTask = Task { @MainActor in
                for await update in stream {
                    if update.error != nil { log.errors += 1 } else { log.updates.append((update.changes, update.snapshot)) }
                }
            }
        }
    }

    /// After a fetch: the model starts from what the controller shows.
    func fetchedNow() {
        fetched = true
        recorder.entries = []
        model = TableViewModel(controller.snapshot)
        oracle = nil
    }
}

/// The synchronous `performFetch`, callable from async code.
@MainActor
func fetchSync(_ controller: FetchedResultsController<Item>) throws {
    try controller.performFetch()
}

/// Signals between a transaction held open on the writer and the test.
final class WriteGate: @unchecked Sendable {
    // @unchecked Sendable: semaphores are thread-safe; `began` is guarded by `lock`.
    private let release = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var didBegin = false
    private(set) var timedOut = false

    private let committed = DispatchSemaphore(value: 0)
    private var opened = false

    var hasBegun: Bool { lock.withLock { didBegin } }
    func begin() { lock.withLock { didBegin = true } }
    /// Lets the transaction commit (once).
    func open() {
        let first = lock.withLock { () -> Bool in
            defer { opened = true }
            return !opened
        }
        if first { release.signal() }
    }
    func waitForRelease() {
        if release.wait(timeout: .now() + 5) == .timedOut { lock.withLock { timedOut = true } }
    }
    /// Called when the transaction has committed (its observers told).
    func didCommit() { committed.signal() }
    /// Opens the gate and waits, up to two seconds, for the commit.
    func openAndWaitForCommit() {
        let first = lock.withLock { () -> Bool in
            defer { opened = true }
            return !opened
        }
        guard first else { return }
        release.signal()
        _ = committed.wait(timeout: .now() + 2)
    }
}

/// Counters of a run, for the figures printed at the end.
struct WorkloadStats: Codable {
    var values: [String: Int] = [:]
    mutating func add(_ key: String, _ n: Int = 1) { values[key, default: 0] += n }
    subscript(key: String) -> Int { values[key, default: 0] }
}

/// A store, live controllers, and operations applied one at a time. After every operation
/// each controller's change sets are applied to a strict table-view model, which must then
/// equal the results computed by SQL written in the test (sections from the stored bytes);
/// the move rules are checked, with minimality; records read through the controller are
/// compared with a direct read of the table.
@MainActor
final class Workload {
    let store: Store
    let fileStore: Bool
    let touched = TouchedRows(table: "item")
    var rows: [Int64: StoredRow] = [:]
    var slots: [WorkloadSlot?] = []
    var executed: [Operation] = []
    var stats = WorkloadStats()
    var step = 0
    var rng = SplitMix64(seed: 7)
    /// Called with each operation before it runs (the journal of a child process).
    var journal: ((Operation) -> Void)?
    /// Every this many steps the checks read every record and the whole table.
    var deepEvery = 25
    /// Big profiles check records less often (a batch of thousands of records per step).
    var recordEvery = 1

    init(fileStore: Bool) throws {
        self.fileStore = fileStore
        store = fileStore ? try Store.temporary(records: [Item.self]) : try Store.inMemory(records: [Item.self])
        try touched.install(on: store)
    }

    func fail(_ kind: String, _ text: String, _ slot: Int? = nil) -> WorkloadFailure {
        var message = text
        if let slot, let s = slots[slot] { message += "\n  controller \(slot): \(s.spec)" }
        return WorkloadFailure(kind: kind, message: message, step: step)
    }

    func ensure(_ condition: Bool, _ kind: String, _ text: @autoclosure () -> String, _ slot: Int? = nil) throws {
        if !condition { throw fail(kind, text(), slot) }
    }

    // MARK: Operations

    func perform(_ op: Operation) async throws {
        if op.needsFileStore && !fileStore { return }
        step += 1
        executed.append(op)
        journal?(op)
        scansAtStart = store.diagnostics.counters.identifierScans
        slotsSteady = slots.allSatisfy { $0 == nil || ($0!.fetched && !$0!.broken && $0!.oracle != nil) }
        do {
            try await execute(op)
        } catch let failure as WorkloadFailure {
            throw failure
        } catch {
            throw fail("operation threw", "\(op) threw \(error)")
        }
        try await verify(op)
    }

    private func execute(_ op: Operation) async throws {
        switch op {
        case .create(let slot, let spec):
            try await create(slot, spec)
        case .write(let writes):
            try writeSync(store) { tx in try Write.apply(writes, tx) }
        case .rollback(let writes):
            struct Rollback: Error {}
            do {
                try writeSync(store) { tx in
                    try Write.apply(writes, tx)
                    throw Rollback()
                }
            } catch is Rollback {}
        case .writers(let lists):
            try await runWriters(lists) {}
        case .external(let writes):
            guard let path = store.path else { return }
            let other = try DatabaseQueue(path: path)
            try writeSync(other) { db in
                for case .sql(let sql, let args) in writes {
                    try db.execute(sql: sql, arguments: StatementArguments(args.map(\.binding.value)))
                }
            }
            try other.close()
            try store.synchronize()
        case .setRequest(let slot, let spec, let lists):
            guard let s = live(slot) else { return }
            let expected = try readSync(store) { db in try Oracle.results(spec, db) }
            try await runWriters(lists) {
                do {
                    _ = try s.controller.setRequest(spec.request)
                } catch {
                    // Sections that would not be contiguous: the request is refused, the old one stays.
                    if expected.notContiguous != nil || !lists.isEmpty {
                        self.stats.add("fetches failing as they must")
                        return
                    }
                    throw self.fail("setRequest threw", "setRequest(\(spec)) threw \(error)", slot)
                }
                if let reason = expected.notContiguous, lists.isEmpty {
                    throw self.fail("fetch of non-contiguous sections", "setRequest succeeded although \(reason)", slot)
                }
                s.spec = spec
            }
        case .refetch(let slot, let lists):
            guard slot < slots.count, let s = slots[slot] else { return }
            try await runWriters(lists) { try await self.fetch(slot, s, racing: !lists.isEmpty) }
        case .replace(let slot, let spec, let lists):
            try await runWriters(lists) {
                self.release(slot)
                try await self.create(slot, spec)
            }
        case .firstListener(let specs, let writes):
            try await firstListener(specs, writes)
        case .readInsideWrite(let slot, let writes):
            try readInsideWrite(slot, writes)
        }
    }

    func live(_ slot: Int) -> WorkloadSlot? {
        guard slot < slots.count, let s = slots[slot], s.fetched else { return nil }
        return s
    }

    /// Runs `action` on the main actor while `lists` commit from other tasks.
    private func runWriters(_ lists: [[Write]], _ action: () async throws -> Void) async throws {
        let store = self.store
        let tasks = lists.map { writes in
            Task.detached { try await store.write { tx in try Write.apply(writes, tx) } }
        }
        var actionError: (any Error)?
        do { try await action() } catch { actionError = error }
        for task in tasks { try await task.value }
        if let actionError { throw actionError }
    }

    func release(_ slot: Int) {
        guard slot < slots.count, let s = slots[slot] else { return }
        s.streamTask?.cancel()
        slots[slot] = nil
    }

    private func create(_ slot: Int, _ spec: ControllerSpec) async throws {
        while slots.count <= slot { slots.append(nil) }
        release(slot)
        let s = WorkloadSlot(spec: spec, store: store)
        slots[slot] = s
        if spec.delegateFirst { s.controller.delegate = s.recorder }
        try await fetch(slot, s, racing: false)
        stats.add("controllers created")
    }

    /// `performFetch`, which must fail exactly when the sections would not be contiguous
    /// (unless writes race it: then the state it reads is unknown).
    private func fetch(_ slot: Int, _ s: WorkloadSlot, racing: Bool) async throws {
        let expected = try readSync(store) { db in try Oracle.results(s.spec, db) }
        do {
            if s.spec.asyncFetch { try await s.controller.performFetch() } else { try fetchSync(s.controller) }
        } catch {
            if expected.notContiguous != nil || racing {
                stats.add("fetches failing as they must")
                s.fetched = false
                return
            }
            throw fail("performFetch threw", "performFetch of \(s.spec) threw \(error)", slot)
        }
        if let reason = expected.notContiguous, !racing {
            throw fail("fetch of non-contiguous sections", "performFetch succeeded although \(reason)", slot)
        }
        s.fetchedNow()
        // A delegate set after the fetch (`delegate-after`), or after the first fetch that
        // succeeded: a controller whose first fetch failed has none until then.
        if s.controller.delegate == nil { s.controller.delegate = s.recorder }
    }

    private func firstListener(_ specs: [ControllerSpec], _ writes: [Write]) async throws {
        for slot in slots.indices { release(slot) }
        // A fetch reads the state before the transaction or after it: where either has
        // sections that are not contiguous, it must fail instead (score written past
        // Int64.max by raw SQL becomes a real, which a computed section cannot decode).
        let before = try specs.map { spec in try readSync(self.store) { db in try Oracle.results(spec, db) } }
        let gate = WriteGate()
        let store = self.store
        let write = Task.detached {
            defer { gate.didCommit() }
            try await store.write { tx in
                try Write.apply(writes, tx)
                gate.begin()
                gate.waitForRelease()
            }
        }
        for _ in 0..<5_000 where !gate.hasBegun { try await Task.sleep(for: .milliseconds(1)) }
        // The commit lands exactly while the first fetch scans the identifiers: the scan's
        // first statement (traced as it starts) lets the transaction commit, and waits for
        // it, before reading — the fetch then installs a state older than that commit.
        store.diagnostics.logSQL { sql in
            if sql.contains("ORDER BY") { gate.openAndWaitForCommit() }
        }
        defer { store.diagnostics.logSQL(nil) }
        let scans = store.diagnostics.counters.identifierScans
        var fetches: [Task<Void, any Error>] = []
        for (slot, spec) in specs.enumerated() {
            while slots.count <= slot { slots.append(nil) }
            let s = WorkloadSlot(spec: spec, store: store)
            slots[slot] = s
            s.controller.delegate = s.recorder
            fetches.append(
                Task { @MainActor in
                    try await s.controller.performFetch()
                    s.fetchedNow()
                })
        }
        // Let the fetches read while the transaction is still open (or give up waiting,
        // if a fetch waits for the writer).
        for _ in 0..<500 {
            if store.diagnostics.counters.identifierScans >= scans + specs.count { break }
            try await Task.sleep(for: .milliseconds(1))
        }
        gate.open()
        try await write.value
        let after = try specs.map { spec in try readSync(store) { db in try Oracle.results(spec, db) } }
        for (slot, fetch) in fetches.enumerated() {
            do { try await fetch.value } catch {
                if before[slot].notContiguous != nil || after[slot].notContiguous != nil {
                    stats.add("fetches failing as they must")
                    slots[slot]?.fetched = false
                    continue
                }
                throw fail("performFetch threw", "performFetch during an open transaction threw \(error)")
            }
        }
        stats.add("first-listener races")
        if gate.timedOut { stats.add("first-listener fetches that waited for the writer") }
    }

    private func readInsideWrite(_ slot: Int, _ writes: [Write]) throws {
        guard let s = live(slot) else { return }
        // Inside a closure of its own store, a record is read through that closure's
        // connection (before this closure writes, that is the committed row); identifiers and
        // sections show the state of the last change set.
        let paths = samplePaths(s, count: 3)
        var read: [(IndexPath, Int64, RecordID, IndexPath?)] = []
        var records: [(IndexPath, Int64, Item?)] = []
        var sections: [SectionInfo] = []
        try writeSync(store) { tx in
            for (path, id) in paths {
                read.append((path, id, s.controller.identifier(at: path), s.controller.indexPath(for: RecordID(id))))
                records.append((path, id, s.controller.object(at: path)))
            }
            sections = s.controller.sections
            try Write.apply(writes, tx)
        }
        for (path, id, record) in records {
            guard let expected = rows[id]?.decoded else { continue }
            guard let record else {
                throw fail(
                    "object(at:) inside a write", "object(at: \(path)) inside store.write returned nil for row \(id)", slot)
            }
            try ensure(
                record.sameStoredValues(as: expected), "object(at:) inside a write",
                "object(at: \(path)) inside store.write is \(record.summary), stored \(expected.summary)", slot)
            stats.add("records read inside a write")
        }
        try ensure(
            sections.map(\.numberOfObjects) == s.model.sections.map(\.count), "read inside a write",
            "sections read inside store.write differ from the last change set's", slot)
        for (path, id, identifier, indexPath) in read {
            try ensure(
                identifier.rawValue == id && indexPath == path, "read inside a write",
                "inside store.write, identifier(at: \(path)) is \(identifier) and indexPath(for: \(id)) is \(String(describing: indexPath))",
                slot)
            stats.add("identifiers read inside a write")
        }
    }

    // MARK: Checks

    /// Up to `count` random index paths of the model, with their identifiers.
    func samplePaths(_ s: WorkloadSlot, count: Int) -> [(IndexPath, Int64)] {
        let all = s.model.sections.enumerated().flatMap { section, ids in
            ids.enumerated().map { (IndexPath(item: $0.offset, section: section), $0.element.rawValue) }
        }
        guard !all.isEmpty else { return [] }
        return (0..<count).map { _ in all[Int.random(in: 0..<all.count, using: &rng)] }
    }

    /// Identifier scans before the operation, and whether every controller was following
    /// the store then (so that a small transaction must not rescan).
    private var scansAtStart = 0
    private var slotsSteady = false

    private func verify(_ op: Operation) async throws {
        for s in slots.compactMap({ $0 }) { await s.controller.waitForChanges() }
        let scans = store.diagnostics.counters.identifierScans - scansAtStart
        let commits = touched.take()
        let touchedRows = commits.reduce(into: Set<Int64>()) { $0.formUnion($1) }
        stats.add("transactions", commits.count)

        if case .rollback = op {
            try ensure(commits.isEmpty, "rollback", "a rolled-back transaction reported \(commits.count) commits")
        }
        // The mirror of the table.
        var changed = Set<Int64>()
        if case .external = op {
            let all = try readSync(store) { db in try StoredRow.readAll(db) }
            for id in Set(all.keys).union(rows.keys) where all[id] != rows[id] { changed.insert(id) }
            rows = all
        } else {
            let current = try readSync(store) { db in try StoredRow.read(db, ids: touchedRows) }
            for id in touchedRows where current[id] != rows[id] {
                changed.insert(id)
                rows[id] = current[id]
            }
        }
        let deep = step % deepEvery == 0
        if deep {
            let all = try readSync(store) { db in try StoredRow.readAll(db) }
            let unreported = Set(all.keys).union(rows.keys).filter { all[$0] != rows[$0] }
            try ensure(unreported.isEmpty, "unreported change", "rows changed without being reported: \(unreported.sorted())")
        }
        for index in slots.indices where slots[index] != nil {
            try checkSlot(index, op, commits: commits, touched: touchedRows, changed: changed, deep: deep)
        }
        // A transaction of at most 2,048 rows is followed incrementally: O(changed · log n),
        // no identifier scan (the engine's threshold is max(2048, total / 500)) — unless the
        // rows stopped falling into contiguous sections, which a rescan confirms.
        if case .write = op, commits.count == 1, slotsSteady, !slots.allSatisfy({ $0 == nil }),
            slots.allSatisfy({ $0 == nil || !$0!.broken })
        {
            if touchedRows.count <= 2_048 {
                try ensure(
                    scans == 0, "rescan on a small transaction",
                    "\(scans) identifier scans for a transaction of \(touchedRows.count) rows")
                stats.add("transactions followed without a scan")
            } else {
                stats.add("transactions past the incremental limit")
            }
        }
        stats.add("steps")
    }

    /// Whether a reload is an acceptable answer to this operation. `old` are the rows shown
    /// before it, `new` the rows after it.
    private func reloadAllowed(_ op: Operation, touched: Int, slot s: WorkloadSlot, old: [Int64], new: [Int64]) -> Bool {
        switch op {
        case .external, .firstListener: return true
        // A controller fetched or subscribed while writers commit catches up by a rescan.
        case .setRequest(_, _, let w) where !w.isEmpty: return true
        case .refetch(_, let w) where !w.isEmpty: return true
        case .replace(_, _, let w) where !w.isEmpty: return true
        case .setRequest:
            // Past `ReloadPolicy.maximumComparedRows` (old and new together) the request
            // change is not compared; past `maximumAnimatedRows` (deleted, inserted and moved)
            // it is not animated. The rows that left or came are a lower bound on the second,
            // those and every row kept moving an upper bound: between the two, either answer.
            if old.count + new.count > 100_000 || touched > 25_000 || s.broken { return true }
            let kept = Set(old).intersection(new).count
            return (old.count - kept) + (new.count - kept) + kept > 50_000
        default: return touched > 25_000 || s.broken
        }
    }

    private func checkSlot(
        _ index: Int, _ op: Operation, commits: [Set<Int64>], touched: Set<Int64>, changed: Set<Int64>, deep: Bool
    ) throws {
        let s = slots[index]!
        guard s.fetched else {
            s.recorder.entries = []
            return
        }
        let oracle = try readSync(store) { db in try Oracle.results(s.spec, db) }
        stats.add("oracle checks")
        let entries = s.recorder.take()
        // The model before this operation's change sets (a copy on write: read only when a
        // reload must be judged).
        let oldModel = s.model
        // A commit that changed no stored value of the list's table (rows set to their own
        // values, another table written here or by another connection) delivers nothing.
        if slotsSteady && !s.broken {
            var unchanged = false
            switch op {
            case .write(let writes): unchanged = changed.union(Write.replacedIDs(writes)).isEmpty
            case .external(let writes): unchanged = writes.allSatisfy(\.writesOtherTable)
            default: break
            }
            try ensure(
                !unchanged || entries.isEmpty, "delivery for an unchanged table",
                "\(entries.count) change sets (\(entries.map { "\($0.change)" }.joined(separator: "; ").prefix(600))) answered \(op.description.prefix(300)), which changed no stored value of the list's table",
                index)
            if unchanged { stats.add("commits changing nothing, delivering nothing") }
        }
        for entry in entries {
            let before = s.model
            do {
                try s.model.apply(entry.change, dataSource: entry.snapshot)
            } catch {
                throw fail(
                    "invalid change set",
                    "\(error)\n  change: \(String(describing: entry.change).prefix(1_500))\n  before: \(OracleResult.describe(before.sections.map { ("", $0.map(\.rawValue)) }))\n  after:  \(OracleResult.describe(TableViewModel(entry.snapshot).sections.map { ("", $0.map(\.rawValue)) }))",
                    index)
            }
            let change = entry.change
            try ensure(
                entry.wellFormed && entry.sectionCallbacks == change.deletedSections.count + change.insertedSections.count
                    && entry.objectCallbacks
                        == change.deletedItems.count + change.insertedItems.count + change.movedItems.count
                        + change.updatedItems.count,
                "delegate callbacks",
                "the delegate heard \(entry.sectionCallbacks) section and \(entry.objectCallbacks) object callbacks for \(change)",
                index)
            stats.add("change sets checked")
            if change.isReload { stats.add("reloads") }
        }
        let classic = s.recorder.classicProblems
        s.recorder.classicProblems = []
        try ensure(
            classic.isEmpty, "classic delegate",
            "cells configured from object(at: newIndexPath): \(classic.prefix(5).joined(separator: "; "))", index)
        try ensure(
            s.model == TableViewModel(s.controller.snapshot), "model ≠ controller",
            "after the change sets the model differs from the controller's snapshot: \(OracleResult.difference(s.model.sections.map { $0.map(\.rawValue) }, TableViewModel(s.controller.snapshot).sections.map { $0.map(\.rawValue) }))",
            index)
        let failures = s.recorder.failures
        s.recorder.failures = []
        if let reason = oracle.notContiguous {
            // The controller cannot follow: it must say so, not go quiet.
            if !s.broken && !commits.isEmpty && s.oracle != nil {
                try ensure(
                    s.controller.lastError != nil && !failures.isEmpty, "silent failure",
                    "the rows are no longer in contiguous sections (\(reason)) but the controller reported no error (lastError: \(String(describing: s.controller.lastError)), delegate failures: \(failures.count))",
                    index)
                stats.add("failures reported")
            }
            if !s.broken || deep {
                let fresh = FetchedResultsController(s.spec.request, store: store, sectionBy: s.spec.sectionKey)
                fresh.firstScreenRule = nil
                do {
                    try fresh.performFetch()
                    throw fail("fetch of non-contiguous sections", "a fresh performFetch succeeded although \(reason)", index)
                } catch is WorkloadFailure {
                    throw fail("fetch of non-contiguous sections", "a fresh performFetch succeeded although \(reason)", index)
                } catch {
                    stats.add("fetches failing as they must")
                }
            }
            s.broken = true
            s.oracle = nil
            return
        }
        let shown = s.model.sections.map { $0.map(\.rawValue) }
        let expected = oracle.sections.map(\.ids)
        if shown != expected {
            let last = entries.map { "\($0.change)" }.joined(separator: "; ")
            throw fail(
                s.broken ? "no recovery after a failed fetch" : "model ≠ oracle",
                "the controller's results differ from SQL: \(OracleResult.difference(shown, expected))\n  change sets: \(last.prefix(2_000))\n  shown:  \(OracleResult.describe(zip(s.controller.sections.map(\.name), shown).map { ($0, $1) }))\n  oracle: \(oracle.description)\n  changed rows: \(changed.sorted().prefix(20))",
                index)
        }
        // Section names and nil flags, by bytes.
        let infos = s.controller.sections
        if s.spec.sections != .none {
            for (i, section) in oracle.sections.enumerated() {
                let name = Oracle.name(section.value, s.spec.sections)
                try ensure(
                    Array(infos[i].name.utf8) == Array(name.utf8) && infos[i].isNil == section.value.isNull, "section names",
                    "section \(i) is named \(Stored.swiftLiteral(infos[i].name)) (nil: \(infos[i].isNil)), its value is \(section.value): \(Stored.swiftLiteral(name))",
                    index)
            }
        }
        let reloads = entries.filter(\.change.isReload).count
        // A request whose results did not fit their first screen is a reload, then a completion.
        let completedRequest: Bool
        if case .setRequest = op {
            completedRequest = entries.contains(where: \.change.isCompletion)
        } else {
            completedRequest = false
        }
        if reloads > 0 && !completedRequest {
            let oldIDs = oldModel.identifiers.map(\.rawValue)
            if !reloadAllowed(op, touched: touched.count, slot: s, old: oldIDs, new: oracle.ids) {
                throw fail(
                    "unexpected reload",
                    "a reload answered \(op.description.prefix(300)) (\(oldIDs.count) rows before, \(oracle.ids.count) after, \(touched.count) touched)",
                    index)
            }
        }
        // The move rules, where one change set answers one commit, or one request change.
        if let old = s.oracle, entries.count == 1, !entries[0].change.isReload {
            var rule: (touched: Set<Int64>, changed: Set<Int64>)?
            switch op {
            case .write(let writes), .readInsideWrite(_, let writes):
                // Touched, for Folio, is changed: a row set to its own values is untouched (it
                // must keep its place), so the minimum counts only rows whose values changed.
                let touchedForFolio = changed.union(Write.replacedIDs(writes))
                if commits.count == 1 { rule = (touchedForFolio, touchedForFolio) }
            case .setRequest(_, _, let writers) where writers.isEmpty:
                // No record changed: every row may move, none is updated, and moves are minimal.
                let change = entries[0].change
                try ensure(
                    change.updatedItems.isEmpty && !change.movedItems.contains(where: \.isUpdated), "updates after setRequest",
                    "setRequest reported updates, but no record changed: \(change)", index)
                rule = (Set(old.ids).union(oracle.ids), [])
            default: break
            }
            if let rule {
                let verdict = MoveRules.check(
                    change: entries[0].change, old: old, new: oracle, touched: rule.touched, changed: rule.changed,
                    sectioned: s.spec.sections != .none)
                if !verdict.problems.isEmpty {
                    throw fail(
                        "move rules",
                        verdict.problems.prefix(5).joined(separator: "\n  ")
                            + "\n  change: \(String(describing: entries[0].change).prefix(1_500))\n  before: \(old.description)\n  after:  \(oracle.description)\n  touched: \(rule.touched.sorted().prefix(30))",
                        index)
                }
                stats.add("change sets checked against the move rules")
                stats.add("moves checked for minimality", verdict.movesChecked)
                stats.add("sections checked for minimal moves", verdict.sectionPairs)
            }
        } else if entries.isEmpty, let old = s.oracle, commits.count == 1, case .write = op {
            // No change set: nothing shown may have changed.
            let stayed = Set(old.ids).intersection(oracle.ids)
            let missed = stayed.intersection(changed)
            try ensure(
                missed.isEmpty, "missed change", "rows \(missed.sorted()) changed but no change set was delivered", index)
        }
        try ensure(
            s.controller.lastError == nil, s.broken ? "no recovery after a failed fetch" : "spurious error",
            "the controller shows the right rows but lastError is \(String(describing: s.controller.lastError))", index)
        if !failures.isEmpty && !s.broken {
            throw fail("spurious error", "the delegate heard \(failures.count) failures: \(failures)", index)
        }
        if s.broken { stats.add("recoveries after a failure") }
        s.oracle = oracle
        s.broken = false
        if step % recordEvery == 0 || deep { try checkRecords(index, touched: touched, deep: deep) }
        if deep {
            try checkFresh(index)
            if rows.count <= 1_000 { try checkFoldedKeys() }
        }
    }

    /// Records read through the controller are the stored ones.
    private func checkRecords(_ index: Int, touched: Set<Int64>, deep: Bool) throws {
        let s = slots[index]!
        let flat = s.model.identifiers.map(\.rawValue)
        guard !flat.isEmpty else { return }
        var offsets: [Int] = []
        var position: [Int64: Int] = [:]
        if touched.count < 500 { for (i, id) in flat.enumerated() where touched.contains(id) { position[id] = i } }
        offsets += position.values.sorted().prefix(20)
        if s.spec.limit != nil || s.spec.offset != nil { offsets += Array(0..<min(flat.count, 30)) }
        offsets += (0..<(deep ? 30 : 2)).map { _ in Int.random(in: 0..<flat.count, using: &rng) }
        var starts: [Int] = []
        var start = 0
        for section in s.model.sections {
            starts.append(start)
            start += section.count
        }
        let batchSize = s.controller.fetchedObjects?.batchSize ?? 1
        for offset in Set(offsets).sorted() {
            let section = (starts.lastIndex { $0 <= offset })!
            let path = IndexPath(item: offset - starts[section], section: section)
            let id = flat[offset]
            guard let stored = rows[id] else {
                throw fail("shown row not stored", "row \(id) is shown at \(path) but is not in the table", index)
            }
            guard let expected = stored.decoded else {
                stats.add("records not decodable (raw SQL)")
                continue
            }
            guard let record = s.controller.object(at: path) else {
                let batch = offset / max(1, batchSize)
                let neighbours = flat[(batch * batchSize)..<min(flat.count, (batch + 1) * batchSize)]
                if neighbours.contains(where: { rows[$0]?.decoded == nil }) {
                    stats.add("records not decodable (raw SQL)")
                    continue
                }
                throw fail("nil record", "object(at: \(path)) is nil; the table has \(stored.description)", index)
            }
            try ensure(
                record.sameStoredValues(as: expected), "stale record",
                "object(at: \(path)) is \(record.summary)\n  stored:       \(expected.summary)", index)
            stats.add("records compared with the table")
        }
    }

    /// Every folded key is what the test's own folding computes from the stored bytes, no
    /// row is left noted stale, and the full-text index holds exactly the names' keys (the
    /// search predicate's oracle reads that index, so it is checked against the folding).
    func checkFoldedKeys() throws {
        struct Row: Equatable {
            var nameKey: Stored, categoryKey: Stored
        }
        func key(_ value: Stored) -> Stored {
            guard case .text(let bytes) = value else { return value }
            return .text(Array(ReferenceFolding.fold(String(decoding: bytes, as: UTF8.self)).utf8))
        }
        try readSync(store) { db in
            var expected: [Int64: Row] = [:], stored: [Int64: Row] = [:]
            try forEachExactRow(db, "SELECT id, name, folio_name_folded, category, folio_category_folded FROM item") { row in
                guard case .int(let id) = row[0] else { return }
                expected[id] = Row(nameKey: key(row[1]), categoryKey: key(row[3]))
                stored[id] = Row(nameKey: row[2], categoryKey: row[4])
            }
            for (id, row) in expected where stored[id] != row {
                throw fail("stale folded key", "row \(id): keys \(stored[id]!), folio-fold-2 gives \(row)")
            }
            var indexed: [Int64: Stored] = [:]
            try forEachExactRow(db, "SELECT rowid, folio_name_folded FROM folio_item_fts") { row in
                guard case .int(let id) = row[0] else { return }
                indexed[id] = row[1]
            }
            try ensure(
                Set(indexed.keys) == Set(expected.keys), "full-text index ≠ table",
                "the index has \(indexed.count) rows, the table \(expected.count)")
            for (id, key) in indexed where !key.sqliteEquals(expected[id]!.nameKey) {
                throw fail("full-text index ≠ table", "row \(id) is indexed as \(key), its key is \(expected[id]!.nameKey)")
            }
            let stale = try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_stale_keys") ?? 0
            try ensure(stale == 0, "stale folded key", "\(stale) rows are still noted stale")
        }
        stats.add("folded keys checked")
    }

    /// A new controller with the same request shows the same.
    private func checkFresh(_ index: Int) throws {
        let s = slots[index]!
        let fresh = FetchedResultsController(s.spec.request, store: store, sectionBy: s.spec.sectionKey)
        fresh.firstScreenRule = nil
        do { try fresh.performFetch() } catch {
            throw fail("performFetch threw", "performFetch of a fresh controller threw \(error)", index)
        }
        try ensure(
            fresh.snapshot == s.controller.snapshot, "fresh fetch ≠ controller",
            "a fresh controller shows \(TableViewModel(fresh.snapshot)), the live one \(TableViewModel(s.controller.snapshot))",
            index)
        try ensure(
            fresh.sections == s.controller.sections && fresh.sectionIndexTitles == s.controller.sectionIndexTitles,
            "fresh fetch ≠ controller", "sections or index titles differ from a fresh fetch", index)
        let ids = try store.fetchIdentifiers(s.spec.request)
        try ensure(
            Array(ids) == s.model.identifiers, "fresh fetch ≠ controller", "fetchIdentifiers differs from the controller", index)
        stats.add("fresh fetches compared")
    }

    /// At the end: what the streams delivered is what the delegate heard.
    func checkStreams() async throws {
        for (index, s) in slots.enumerated() {
            guard let s, s.spec.stream != .none else { continue }
            for _ in 0..<200 {
                let count = s.spec.stream == .changes ? s.streams.changes.count : s.streams.updates.count
                if count >= s.recorder.all.count { break }
                try await Task.sleep(for: .milliseconds(2))
            }
            switch s.spec.stream {
            case .changes:
                try ensure(
                    s.streams.changes == s.recorder.all.map(\.change), "stream",
                    "`changes` delivered \(s.streams.changes.count) change sets, the delegate \(s.recorder.all.count)", index)
            case .updates:
                try ensure(
                    s.streams.errors == s.recorder.failureCount, "stream",
                    "`updates` carried \(s.streams.errors) errors, the delegate heard \(s.recorder.failureCount)", index)
                let same =
                    s.streams.updates.count == s.recorder.all.count
                    && zip(s.streams.updates, s.recorder.all).allSatisfy { $0.0 == $1.change && $0.1 == $1.snapshot }
                try ensure(same, "stream", "`updates` differs from what the delegate heard", index)
            case .none: break
            }
            stats.add("streams compared")
        }
    }
}
