import Foundation
import GRDB
import Testing
@testable import Folio

/// SplitMix64: a tiny seeded generator, so a failing workload replays from its seed.
struct SplitMix64: RandomNumberGenerator {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &self)] }
}

/// Reads an integer from the environment (replay and soak knobs).
func environmentInt(_ name: String) -> Int? {
    ProcessInfo.processInfo.environment[name].flatMap { Int($0) }
}

/// The seeds a randomized suite runs: `FOLIO_SEED=n` that one (a replay), else
/// `FOLIO_SEEDS` seeds (when unset: `quick` in the quick tier, `defaultCount` in the long
/// one, ``TestTier``) from `FOLIO_FIRST_SEED` (0 when unset).
func workloadSeeds(defaultCount: Int, quick: Int = 2) -> [UInt64] {
    if let seed = environmentInt("FOLIO_SEED") { return [UInt64(seed)] }
    let count = environmentInt("FOLIO_SEEDS") ?? (isSoak ? defaultCount : TestTier.pick(quick: quick, long: defaultCount))
    let first = UInt64(environmentInt("FOLIO_FIRST_SEED") ?? 0)
    return (first..<(first + UInt64(count))).map { $0 }
}

var isSoak: Bool { ProcessInfo.processInfo.environment["FOLIO_SOAK"] == "1" }

/// Records the rowids of `table` each committed transaction touched, as SQLite reports
/// them — an upper bound of what a change set may call updated or moved.
// @unchecked Sendable: `pending` is touched only on the writer's serial queue, where GRDB
// calls every observer method; `committed` is guarded by `lock`.
final class TouchedRows: TransactionObserver, @unchecked Sendable {
    let table: String
    private var pending = Set<Int64>()
    private let lock = NSLock()
    private var committed: [Set<Int64>] = []

    init(table: String) { self.table = table }

    /// Observes the store's writer, and reports the old rowid of an `UPDATE` that changes
    /// it (SQLite's update hook reports only the new one) through a temporary trigger of
    /// the test's own.
    func install(on store: Store) throws {
        store.writer.add(transactionObserver: self, extent: .observerLifetime)
        try store.writer.write { db in
            db.add(
                function: DatabaseFunction("test_old_rowid", argumentCount: 1, pure: false) { [weak self] values in
                    if let id = Int64.fromDatabaseValue(values[0]) { self?.pending.insert(id) }
                    return nil
                })
            try db.execute(
                sql: """
                    CREATE TEMP TRIGGER test_\(table)_old_rowid AFTER UPDATE ON main.\(table) \
                    WHEN OLD.id IS NOT NEW.id BEGIN SELECT test_old_rowid(OLD.id); END
                    """)
        }
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == table }
    func databaseDidChange(with event: DatabaseEvent) { pending.insert(event.rowID) }

    /// The rows of the transaction being committed, taken before any observer's
    /// `databaseDidCommit` runs: an observer notified earlier (Folio's change hub) may run a
    /// read transaction on the same connection, which GRDB announces to every observer as
    /// a transaction of its own (will commit, did commit — or did roll back) before this one
    /// hears of the outer commit.
    private var committing: Set<Int64>?

    func databaseWillCommit() throws {
        committing = (committing ?? []).union(pending)
        pending = []
    }

    func databaseDidCommit(_ db: Database) { finishCommit() }

    func databaseDidRollback(_ db: Database) {
        // A rollback announced while a commit is being announced is a later, nested
        // transaction: the commit stands.
        finishCommit()
        pending = []
    }

    private func finishCommit() {
        guard let rows = committing else { return }
        committing = nil
        guard !rows.isEmpty else { return }  // GRDB also reports transactions that changed nothing here
        lock.lock(); committed.append(rows); lock.unlock()
    }

    /// The commits that touched the table since the last call.
    func take() -> [Set<Int64>] {
        lock.lock(); defer { lock.unlock() }
        let result = committed
        committed = []
        return result
    }
}

/// Collects what a controller tells its delegate, commit by commit.
@MainActor
final class EventRecorder: FetchedResultsControllerDelegate {
    enum Event: Equatable, CustomStringConvertible {
        case will
        case section(FetchedResultsChangeType, index: Int, name: String)
        case object(FetchedResultsChangeType, id: RecordID, at: IndexPath?, newIndexPath: IndexPath?)
        case did
        case changeSet
        case snapshot

        var description: String {
            switch self {
            case .will: "will"
            case .section(let type, let index, let name): "section \(type) \(index) \(name)"
            case .object(let type, let id, let at, let new):
                "object \(type) \(id) \(at.map { "\($0)" } ?? "-") \(new.map { "\($0)" } ?? "-")"
            case .did: "did"
            case .changeSet: "changeSet"
            case .snapshot: "snapshot"
            }
        }
    }

    var changeSets: [ChangeSet] = []
    var snapshots: [Snapshot] = []
    var events: [Event] = []

    func controllerWillChangeContent(_ controller: FetchedResultsController<Article>) { events.append(.will) }
    func controller(
        _ controller: FetchedResultsController<Article>, didChange section: SectionInfo, atSectionIndex sectionIndex: Int,
        for type: FetchedResultsChangeType
    ) {
        events.append(.section(type, index: sectionIndex, name: section.name))
    }
    func controller(
        _ controller: FetchedResultsController<Article>, didChangeObject id: RecordID, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        events.append(.object(type, id: id, at: indexPath, newIndexPath: newIndexPath))
    }
    func controllerDidChangeContent(_ controller: FetchedResultsController<Article>) { events.append(.did) }
    func controller(_ controller: FetchedResultsController<Article>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
        events.append(.changeSet)
    }
    func controller(_ controller: FetchedResultsController<Article>, didChangeContentWith snapshot: Snapshot) {
        snapshots.append(snapshot)
        events.append(.snapshot)
    }

    /// The callbacks a change set must produce, given the model before it and the
    /// section names before and after.
    static func expectedEvents(
        for change: ChangeSet, old: TableViewModel, oldNames: [String], newNames: [String],
        new: TableViewModel
    ) -> [Event] {
        var events: [Event] = [.will]
        if !change.isReload && !change.isCompletion {
            for s in change.deletedSections { events.append(.section(.delete, index: s, name: oldNames[s])) }
            for s in change.insertedSections { events.append(.section(.insert, index: s, name: newNames[s])) }
            for p in change.deletedItems {
                events.append(.object(.delete, id: old.sections[p.section][p.item], at: p, newIndexPath: nil))
            }
            for (p, id) in zip(change.insertedItems, change.insertedIdentifiers) {
                events.append(.object(.insert, id: id, at: nil, newIndexPath: p))
            }
            for m in change.movedItems {
                events.append(.object(.move, id: old.sections[m.from.section][m.from.item], at: m.from, newIndexPath: m.to))
            }
            for p in change.updatedItems {
                events.append(.object(.update, id: old.sections[p.section][p.item], at: p, newIndexPath: nil))
            }
        }
        events += [.did, .changeSet, .snapshot]
        return events
    }
}
