import Foundation
import GRDB
import Testing
@testable import Folio

/// A change set reports as moves only the rows that changed place, and as few as possible:
/// an untouched row is never a move, and the rescan path's moves are a minimum set
/// (counted independently by ``MinimumMoves``).
@Suite("Moves: only rows that changed place")
@MainActor
struct MoveTests {
    /// The smallest case: two rows in two day sections; one transaction updates one row into
    /// the other's day, emptying its section. Folio sent `delete section 1, insert 0.0,
    /// move 0.0→0.1 (updated)`: the row that stayed was reported as a move. It is untouched:
    /// nothing at all is reported for it.
    @Test(.tags(Testing.Tag.threadSanitized)) func anUntouchedRowIsNeverAMove() async throws {
        let store = try Store.inMemory(records: [Article.self])
        var a = Article(title: "a", published: Date(timeIntervalSince1970: 86_400 + 36_000))
        var b = Article(title: "b", published: Date(timeIntervalSince1970: 2 * 86_400 + 36_000))
        try writeSync(store) { tx in
            try tx.insert(&a)
            try tx.insert(&b)
        }
        let live = try await LiveHarness(
            store, sorted([SortDescriptor(\.published)]), sectionBy: .day(\.published, timeZone: .gmt))
        b.published = Date(timeIntervalSince1970: 86_400 + 3_600)
        let changes = try await live.step { tx in try tx.update(b) }
        let change = try #require(changes.first)
        #expect(change.deletedSections == [1])
        #expect(change.insertedItems == [IndexPath(item: 0, section: 0)])
        #expect(change.insertedIdentifiers == [b.id!])
        #expect(change.movedItems.isEmpty, "\(change)")
        #expect(change.updatedItems.isEmpty, "\(change)")
    }

    /// A nil-date section and a day section; `updateAll` moves the day's row into the nil
    /// section, before the row already there. Once reported `-s[1] +[0.0] ~[0.0>0.1*]`: the row
    /// that stayed was a move. Expected: the emptied section deleted, the moved row inserted;
    /// the other matched the `updateAll` too, but its day was already nil: no stored value
    /// changed, so it is not an update.
    @Test func aTouchedRowThatKeptItsPlaceIsAnUpdateNotAMove() async throws {
        let store = try Store.inMemory(records: [OptionalDay.self])
        var a = OptionalDay(day: 345_599)
        var b = OptionalDay(day: nil)
        try writeSync(store) { tx in
            try tx.insert(&a)
            try tx.insert(&b)
        }
        var request = RecordRequest<OptionalDay>(sortBy: [SortDescriptor(\.day)])
        request.batchSize = 10
        let controller = FetchedResultsController(
            request, store: store, sectionBy: .day(\.day, timeZone: TimeZone(secondsFromGMT: 19_800)!))
        let recorder = OptionalDayRecorder()
        controller.delegate = recorder
        try await controller.performFetch()
        #expect(controller.sections.map(\.numberOfObjects) == [1, 1])
        _ = try writeSync(store) { tx in
            try tx.updateAll(
                OptionalDay.self, where: #Predicate { $0.score == nil || $0.score! < 20 }, set: [.set(\.day, to: nil)])
        }
        await controller.waitForChanges()
        let change = try #require(recorder.changeSets.last)
        #expect(change.deletedSections == [1])
        #expect(
            change.insertedItems == [IndexPath(item: 0, section: 0)], "the moved row, first among the nil dates (rowid order)")
        #expect(change.movedItems.isEmpty, "\(change)")
        #expect(change.updatedItems.isEmpty, "\(change)")
    }

    /// A transaction over the incremental limit, in day sections (a 2,048-row UPDATE once
    /// reported 15 moves where 0 were needed, and 96 where 70 were): the moves must be a
    /// minimum set (counted independently).
    @Test(arguments: [2_049, 2_600])
    func theRescanPathMovesMinimally(updated: Int) async throws {
        let store = try Store.inMemory(records: [Article.self])
        try execute(
            store,
            """
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2999)
            INSERT INTO article (title, url, published, score, category, isRead)
            SELECT 'T' || i, 'u' || i, (i * 7919 % 3000) * 600.0, i % 50, NULL, 0 FROM n
            """)
        let live = try await LiveHarness(
            store, sorted([SortDescriptor(\.published)], batchSize: 50), sectionBy: .day(\.published, timeZone: .gmt))
        let before = live.controller.snapshot
        let scans = store.diagnostics.counters.identifierScans
        // Touch many rows; most keep their place (only isRead changes), some move by a little.
        try writeSync(store) { tx in
            try tx.database.execute(
                sql: """
                    UPDATE article SET isRead = 1,
                        published = CASE WHEN id % 7 = 0 THEN published + 900 WHEN id % 11 = 0 THEN published + 200000 WHEN id % 13 = 0 THEN published - 150000 ELSE published END
                    WHERE id <= ?
                    """, arguments: [updated])
        }
        await live.controller.waitForChanges()
        #expect(store.diagnostics.counters.identifierScans == scans + 1, "the rescan path")
        let changes = try await live.settle()
        let change = try #require(changes.first)
        let touched = Set((1...updated).map { RecordID(Int64($0)) })
        let minimum = MinimumMoves.count(old: before, new: live.controller.snapshot, touched: touched)
        #expect(minimum > 10, "the transaction reorders rows")
        #expect(change.movedItems.count == minimum, "\(change.movedItems.count) moves, \(minimum) needed")
        #expect(change.movedIdentifiers.allSatisfy(touched.contains))
    }
}

/// The minimum number of moves between two snapshots, computed independently of the
/// change-set builder. Sections are matched by name (bytes; the tests' sections never change
/// their relative order): rows of deleted or inserted sections are deletes and inserts, a
/// touched row that changed between kept sections always moves, and within a kept section
/// every untouched row stays while, between each two consecutive untouched rows, as many
/// touched rows stay as an increasing chain of old positions allows (dynamic programming,
/// O(m²) per gap).
enum MinimumMoves {
    static func count(old: Snapshot, new: Snapshot, touched: Set<RecordID>) -> Int {
        func names(_ snapshot: Snapshot) -> [[UInt8]] { snapshot.sections.map { Array($0.name.utf8) } }
        let oldNames = names(old), newNames = names(new)
        var oldSection: [RecordID: (section: [UInt8], index: Int)] = [:]
        for (s, name) in oldNames.enumerated() {
            for (i, id) in old.identifiers(inSection: s).enumerated() { oldSection[id] = (name, i) }
        }
        let kept = Set(oldNames).intersection(newNames)
        var moves = 0
        for (s, name) in newNames.enumerated() where kept.contains(name) {
            let stayed = new.identifiers(inSection: s).filter { oldSection[$0].map { kept.contains($0.section) } ?? false }
            let same = stayed.filter { oldSection[$0]!.section == name }
            moves += stayed.count - same.count  // changed between kept sections: always a move
            var low = -1
            var gap: [Int] = []
            func settle(high: Int) {
                let candidates = gap.filter { $0 > low && $0 < high }
                moves += gap.count - candidates.count
                var best = [Int](repeating: 1, count: candidates.count)
                for i in candidates.indices {
                    for j in 0..<i where candidates[j] < candidates[i] { best[i] = Swift.max(best[i], best[j] + 1) }
                }
                moves += candidates.count - (best.max() ?? 0)
                gap = []
            }
            for id in same {
                let index = oldSection[id]!.index
                if touched.contains(id) {
                    gap.append(index)
                } else {
                    settle(high: index)
                    low = index
                }
            }
            settle(high: Int.max)
        }
        return moves
    }
}

/// A record with an optional date, for day sections with a nil section.
struct OptionalDay: PersistentRecord, Equatable {
    var id: RecordID?
    var day: Date? = nil
    var score: Int? = nil

    static let entity = EntityDescription<OptionalDay>(
        "optional_day", [AttributeDescription(\.day, indexed: true), AttributeDescription(\.score)])

    init() {}
    init(day: Double?) { self.day = day.map { Date(timeIntervalSince1970: $0) } }
}

@MainActor
final class OptionalDayRecorder: FetchedResultsControllerDelegate {
    var changeSets: [ChangeSet] = []
    func controller(_ controller: FetchedResultsController<OptionalDay>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
    }
}
