import Foundation
import GRDB
import Testing
@testable import Folio

/// What a controller answers at one moment: sections, counts, identifiers, and the records
/// at every index path (titles), read through every reading API.
struct ShownState: Equatable, CustomStringConvertible {
    var sections: [String]
    var counts: [Int]
    var numberOfObjects: Int
    var identifiers: [RecordID]
    var byIndexPath: [RecordID]
    var titles: [String?]

    @MainActor
    init(_ controller: FetchedResultsController<Article>) {
        sections = controller.sections.map(\.name)
        counts = controller.sections.map(\.numberOfObjects)
        numberOfObjects = controller.fetchedObjects?.count ?? -1
        identifiers = Array(controller.snapshot.identifiers)
        var byIndexPath: [RecordID] = []
        var titles: [String?] = []
        for (section, info) in controller.sections.enumerated() {
            for item in 0..<info.numberOfObjects {
                let path = IndexPath(item: item, section: section)
                let id = controller.identifier(at: path)
                byIndexPath.append(id)
                #expect(controller.indexPath(for: id) == path, "indexPath(for:) agrees with identifier(at:)")
                titles.append(controller.object(at: path)?.title)
            }
        }
        self.byIndexPath = byIndexPath
        self.titles = titles
        #expect(byIndexPath == identifiers, "identifier(at:) agrees with the snapshot")
    }

    /// Identifiers and positions only: what a record read from the database cannot change.
    var shape: [String] { zip(sections, counts).map { "\($0.0):\($0.1)" } + identifiers.map { "\($0)" } }

    var description: String { "\(sections) \(counts) \(identifiers.count) rows" }
}

/// Records, in each callback, what the controller shows, and checks each per-change
/// callback's index paths against it.
@MainActor
final class StateRecordingDelegate: FetchedResultsControllerDelegate {
    var will: [ShownState] = []
    var perChange: [ShownState] = []
    var did: [ShownState] = []
    var changeSetCallback: [ShownState] = []
    var snapshotCallback: [(shown: ShownState, snapshot: Snapshot)] = []
    var changeSets: [ChangeSet] = []
    /// Per-change callbacks whose index paths do not describe the state shown.
    var mismatches: [String] = []
    /// The sections deleted so far by the change being delivered (their rows may be inserted elsewhere).
    var deletedSections: Set<Int> = []

    func reset() {
        will = []
        perChange = []
        did = []
        changeSetCallback = []
        snapshotCallback = []
        mismatches = []
    }

    func controllerWillChangeContent(_ controller: FetchedResultsController<Article>) {
        will.append(ShownState(controller))
        deletedSections = []
    }

    func controller(
        _ controller: FetchedResultsController<Article>, didChange section: SectionInfo, atSectionIndex sectionIndex: Int,
        for type: FetchedResultsChangeType
    ) {
        perChange.append(ShownState(controller))
        let shown = controller.sections
        let old = will.last?.sections ?? []
        switch type {
        case .delete:
            // Described as it was, at its old index; gone from what is shown now.
            if sectionIndex >= old.count || old[sectionIndex] != section.name {
                mismatches.append("deleted section \(sectionIndex) \(section.name) was not there")
            }
            if shown.contains(where: { $0.name == section.name }) {
                mismatches.append("deleted section \(section.name) still shown")
            }
        default:
            if sectionIndex >= shown.count || shown[sectionIndex].name != section.name
                || shown[sectionIndex].numberOfObjects != section.numberOfObjects
            {
                mismatches.append("inserted section \(sectionIndex) \(section.name) is not shown there")
            }
        }
    }

    func controller(
        _ controller: FetchedResultsController<Article>, didChangeObject id: RecordID, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        perChange.append(ShownState(controller))
        // `indexPath`: the row's place in the state before the change (the "will" state).
        if let indexPath, let old = will.last {
            let flat = old.counts.prefix(indexPath.section).reduce(0, +) + indexPath.item
            if indexPath.section >= old.counts.count || indexPath.item >= old.counts[indexPath.section]
                || old.byIndexPath[flat] != id
            {
                mismatches.append("\(type) \(id) was not at its old index path \(indexPath)")
            }
        }
        // `newIndexPath`: its place in what is shown now, where its record is read.
        if let newIndexPath, controller.identifier(at: newIndexPath) != id {
            mismatches.append("\(type) \(id) is not at its new index path \(newIndexPath)")
        }
        switch type {
        case .insert: if indexPath != nil || newIndexPath == nil { mismatches.append("insert \(id) paths") }
        case .delete:
            if indexPath == nil || newIndexPath != nil { mismatches.append("delete \(id) paths") }
            if controller.indexPath(for: id) != nil { mismatches.append("deleted \(id) still shown") }
        case .move, .update: if indexPath == nil || newIndexPath == nil { mismatches.append("\(type) \(id) paths") }
        }
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController<Article>) {
        did.append(ShownState(controller))
    }

    func controller(_ controller: FetchedResultsController<Article>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
        changeSetCallback.append(ShownState(controller))
        // The new coordinates of insertions and moves are the state shown now.
        for (path, id) in zip(changes.insertedItems, changes.insertedIdentifiers)
        where controller.identifier(at: path) != id {
            mismatches.append("inserted \(id) is not at its new index path \(path)")
        }
        for (move, id) in zip(changes.movedItems, changes.movedIdentifiers) where controller.identifier(at: move.to) != id {
            mismatches.append("moved \(id) is not at its new index path \(move.to)")
        }
    }

    func controller(_ controller: FetchedResultsController<Article>, didChangeContentWith snapshot: Snapshot) {
        snapshotCallback.append((ShownState(controller), snapshot))
    }
}

/// Core Data's timing: during `controllerWillChangeContent` the controller shows the state
/// before the change; from the first section or object callback on, the state after it.
@Suite("FetchedResultsController: what the delegate sees in each callback")
@MainActor
struct DelegateSeesStateTests {
    let store: Store
    init() throws { store = try Store.temporary(records: [Article.self]) }

    func request(_ predicate: Predicate<Article>? = nil) -> RecordRequest<Article> {
        var r = RecordRequest<Article>(
            predicate: predicate, sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)])
        r.batchSize = 4
        return r
    }

    func liveController() async throws -> (FetchedResultsController<Article>, StateRecordingDelegate) {
        try seed(store, count: 12, categories: ["a", "b", "c"])
        let controller = FetchedResultsController(request(), store: store, sectionBy: .attribute(\.category))
        let delegate = StateRecordingDelegate()
        controller.delegate = delegate
        try await controller.performFetch()
        return (controller, delegate)
    }

    /// Runs `change`, waits for its delivery, and checks every callback against the state
    /// before and after it.
    func expectOldThenNew(
        _ controller: FetchedResultsController<Article>, _ delegate: StateRecordingDelegate,
        perChangeCallbacks: Bool = true, sourceLocation: SourceLocation = #_sourceLocation,
        _ change: () async throws -> Void
    ) async throws {
        delegate.reset()
        let before = ShownState(controller)
        try await change()
        await controller.waitForChanges()
        let after = ShownState(controller)
        #expect(before.shape != after.shape, "the change changes what is shown", sourceLocation: sourceLocation)
        #expect(delegate.will.map(\.shape) == [before.shape], "will: the old state", sourceLocation: sourceLocation)
        #expect(delegate.will.first?.numberOfObjects == before.numberOfObjects, sourceLocation: sourceLocation)
        #expect(delegate.perChange.isEmpty != perChangeCallbacks, sourceLocation: sourceLocation)
        #expect(
            delegate.perChange.allSatisfy { $0.shape == after.shape }, "per-change callbacks: the new state",
            sourceLocation: sourceLocation)
        #expect(delegate.did == [after], "did: the new state", sourceLocation: sourceLocation)
        #expect(delegate.changeSetCallback == [after], sourceLocation: sourceLocation)
        #expect(delegate.snapshotCallback.map(\.shown) == [after], sourceLocation: sourceLocation)
        #expect(delegate.snapshotCallback.first?.snapshot == controller.snapshot, sourceLocation: sourceLocation)
        #expect(delegate.mismatches.isEmpty, "\(delegate.mismatches)", sourceLocation: sourceLocation)
        #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)), sourceLocation: sourceLocation)
    }

    @Test func willSeesTheOldStateAndEveryLaterCallbackTheNew() async throws {
        let (controller, delegate) = try await liveController()
        // An insert into a section.
        try await expectOldThenNew(controller, delegate) {
            try writeSync(store) { tx in
                var a = Article(title: "new", score: 5, category: "b"); try tx.insert(&a)
            }
        }
        // A delete.
        try await expectOldThenNew(controller, delegate) {
            try writeSync(store) { tx in try tx.database.execute(sql: "DELETE FROM article WHERE score = 4") }
        }
        // A move within a section, then across sections.
        try await expectOldThenNew(controller, delegate) {
            try writeSync(store) { tx in try tx.database.execute(sql: "UPDATE article SET score = 100 WHERE score = 0") }
        }
        try await expectOldThenNew(controller, delegate) {
            try writeSync(store) { tx in try tx.database.execute(sql: "UPDATE article SET category = 'c' WHERE score = 1") }
        }
        // A section inserted, then deleted.
        try await expectOldThenNew(controller, delegate) {
            try writeSync(store) { tx in
                var a = Article(title: "first of d", score: 7, category: "d"); try tx.insert(&a)
                var b = Article(title: "second of d", score: 8, category: "d"); try tx.insert(&b)
            }
        }
        try await expectOldThenNew(controller, delegate) {
            try writeSync(store) { tx in try tx.database.execute(sql: "DELETE FROM article WHERE category = 'd'") }
        }
        // Several kinds at once: a section deleted, rows inserted, moved and updated.
        try await expectOldThenNew(controller, delegate) {
            try writeSync(store) { tx in
                try tx.database.execute(sql: "UPDATE article SET category = 'b' WHERE category = 'a'")
                try tx.database.execute(sql: "UPDATE article SET title = 'renamed' WHERE score = 2")
                var a = Article(title: "into c", score: -1, category: "c"); try tx.insert(&a)
            }
        }
    }

    @Test func anInPlaceUpdateIsReadAtItsNewIndexPathWithTheNewState() async throws {
        let (controller, delegate) = try await liveController()
        // An update beside an insert before it: the old and new index paths differ.
        delegate.reset()
        let before = ShownState(controller)
        try writeSync(store) { tx in
            try tx.database.execute(sql: "UPDATE article SET title = 'changed' WHERE score = 3")
            var a = Article(title: "before it", score: -5, category: "a"); try tx.insert(&a)
        }
        await controller.waitForChanges()
        #expect(delegate.will.map(\.shape) == [before.shape])
        let change = try #require(delegate.changeSets.last)
        #expect(change.updatedItems.count == 1)
        #expect(delegate.perChange.count == 2)
        #expect(delegate.perChange.allSatisfy { $0.titles.contains("changed") }, "per-change: the new records")
        #expect(delegate.mismatches.isEmpty, "\(delegate.mismatches)")
    }

    @Test func aReloadShowsTheOldStateInWillAndTheNewInDid() async throws {
        let (controller, delegate) = try await liveController()
        let other = try DatabaseQueueFactory.open(store.path!)
        try await expectOldThenNew(controller, delegate, perChangeCallbacks: false) {
            // The change log trimmed past the store's progress: which rows changed is unknown.
            try await other.write { db in
                try db.execute(sql: "DELETE FROM article WHERE score < 5")
                try db.execute(sql: "DELETE FROM folio_changes WHERE seq < (SELECT max(seq) FROM folio_changes)")
            }
            try store.synchronize()
        }
        #expect(delegate.changeSets.last?.isReload == true)
    }

    @Test func aRequestChangeShowsTheOldRequestsRowsInWillAndTheNewInDid() async throws {
        let (controller, delegate) = try await liveController()
        try await expectOldThenNew(controller, delegate) {
            try controller.setRequest(request(#Predicate { $0.score >= 6 }))
        }
        #expect(controller.snapshot.numberOfItems == 6)
        // A request change that removes and brings back whole sections.
        try await expectOldThenNew(controller, delegate) {
            try controller.setRequest(request(#Predicate { $0.score < 3 || $0.score > 10 }))
        }
    }

    @Test func theAsyncSequencesGetTheNewState() async throws {
        let (controller, _) = try await liveController()
        let updates = controller.updates
        let changes = controller.changes
        let before = controller.snapshot
        try writeSync(store) { tx in
            var a = Article(title: "new", score: 5, category: "z"); try tx.insert(&a)
        }
        await controller.waitForChanges()
        var updateIterator = updates.makeAsyncIterator()
        var changeIterator = changes.makeAsyncIterator()
        let update = try #require(await updateIterator.next())
        let change = try #require(await changeIterator.next())
        #expect(update.snapshot == controller.snapshot)
        #expect(update.snapshot != before)
        #expect(change.insertedSections == update.changes.insertedSections)
        #expect(controller.snapshot.numberOfItems == before.numberOfItems + 1, "a consumer reads the state after it")
    }

    @Test func aDelegateThatFetchesAgainInWillAbandonsTheChangeBeingDelivered() async throws {
        try seed(store, count: 12, categories: ["a", "b", "c"])
        let controller = FetchedResultsController(request(), store: store, sectionBy: .attribute(\.category))
        let delegate = RefetchingDelegate()
        controller.delegate = delegate
        try await controller.performFetch()
        try writeSync(store) { tx in
            var a = Article(title: "new", score: 5, category: "b"); try tx.insert(&a)
        }
        await controller.waitForChanges()
        #expect(delegate.events == ["will"], "no callback of the abandoned change after the fetch")
        #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))
        // Later commits are followed from what the fetch read.
        try writeSync(store) { tx in
            var a = Article(title: "later", score: 6, category: "c"); try tx.insert(&a)
        }
        await controller.waitForChanges()
        #expect(delegate.events.suffix(2) == ["object insert", "did"])
        #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))
    }
}

/// Fetches again from the first `controllerWillChangeContent`.
@MainActor
final class RefetchingDelegate: FetchedResultsControllerDelegate {
    var events: [String] = []
    var fetched = false

    func controllerWillChangeContent(_ controller: FetchedResultsController<Article>) {
        events.append("will")
        guard !fetched else { return }
        fetched = true
        #expect(throws: Never.self) { try controller.performFetch() }
    }

    func controller(
        _ controller: FetchedResultsController<Article>, didChangeObject id: RecordID, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        events.append("object \(type)")
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController<Article>) { events.append("did") }
}

/// The classic delegate of Core Data's users (cells configured from `object(at: newIndexPath)`
/// in the object callbacks) drives a strict table-view model through commits that insert,
/// delete, move and update rows across sections in one transaction.
@Suite("FetchedResultsController: the classic Core Data delegate")
@MainActor
struct ClassicDelegateTests {
    @Test(arguments: [false, true])
    func theClassicDelegateConfiguresEachCellWithItsRecord(descending: Bool) async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 40, categories: ["a", "b", "c", "d"])
        var request = RecordRequest<Article>(
            sortBy: [SortDescriptor(\.category, order: descending ? .reverse : .forward), SortDescriptor(\.score)])
        request.batchSize = 5
        let controller = FetchedResultsController(request, store: store, sectionBy: .attribute(\.category))
        try fetchNow(controller)
        let delegate = ClassicTableDelegate<Article>(
            showing: controller.snapshot,
            stored: { id in try? readSync(store) { db in try Article.fetchStored(id, db) } },
            same: { $0 == $1 })
        controller.delegate = delegate
        var random = SeededRandom(seed: descending ? 2 : 1)
        for round in 0..<60 {
            try writeSync(store) { tx in
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    let score = Int.random(in: -20..<60, using: &random)
                    let category = ["a", "b", "c", "d", "e", nil].randomElement(using: &random)!
                    switch Int.random(in: 0..<5, using: &random) {
                    case 0:
                        var a = Article(title: "r\(round)", score: score, category: category)
                        try tx.insert(&a)
                    case 1:
                        try tx.database.execute(
                            sql: "DELETE FROM article WHERE id = (SELECT id FROM article ORDER BY random() LIMIT 1)")
                    case 2:
                        try tx.database.execute(
                            sql:
                                "UPDATE article SET score = ?, category = ? WHERE id = (SELECT id FROM article ORDER BY random() LIMIT 1)",
                            arguments: [score, category])
                    default:
                        try tx.database.execute(
                            sql:
                                "UPDATE article SET title = ? WHERE id = (SELECT id FROM article ORDER BY random() LIMIT 1)",
                            arguments: ["t\(round)-\(score)"])
                    }
                }
            }
            await controller.waitForChanges()
            #expect(delegate.problems.isEmpty, "round \(round): \(delegate.problems)")
            #expect(delegate.table == TableViewModel(controller.snapshot), "round \(round)")
            #expect(delegate.table == (try freshModel(controller)), "round \(round)")
            delegate.problems = []
        }
        #expect(delegate.batches > 40)
    }
}

extension Article {
    /// The stored row `id`, read by the test's own SQL.
    static func fetchStored(_ id: RecordID, _ db: Database) throws -> Article? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM article WHERE id = ?", arguments: [id.rawValue])
        else { return nil }
        var a = Article()
        a.id = id
        a.title = row["title"]
        a.url = row["url"]
        a.published = Date(timeIntervalSince1970: row["published"])
        a.score = row["score"]
        a.category = row["category"]
        a.isRead = row["isRead"]
        return a
    }
}
