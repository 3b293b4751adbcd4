import Foundation
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
        switch type {
        case .delete:
            deletedSections.insert(sectionIndex)
            if sectionIndex >= shown.count || shown[sectionIndex].name != section.name {
                mismatches.append("deleted section \(sectionIndex) \(section.name) is not shown there")
            }
        default:
            if shown.contains(where: { $0.name == section.name }) {
                mismatches.append("inserted section \(section.name) already shown")
            }
        }
    }

    func controller(
        _ controller: FetchedResultsController<Article>, didChangeObject id: RecordID, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        perChange.append(ShownState(controller))
        switch type {
        case .insert:
            // Not shown, or shown in a section this change deletes (it leaves it for another).
            if let shownAt = controller.indexPath(for: id), !deletedSections.contains(shownAt.section) {
                mismatches.append("inserted \(id) already shown at \(shownAt)")
            }
        case .delete, .update, .move:
            if let indexPath, controller.identifier(at: indexPath) != id {
                mismatches.append("\(type) \(id) is not at its old index path \(indexPath)")
            }
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

/// Core Data's "about to start processing": during `controllerWillChangeContent` and the
/// per-change callbacks the controller shows the state before the change; from
/// `controllerDidChangeContent` on, the state after it.
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
            delegate.perChange.allSatisfy { $0.shape == before.shape }, "per-change callbacks: the old state",
            sourceLocation: sourceLocation)
        #expect(delegate.did == [after], "did: the new state", sourceLocation: sourceLocation)
        #expect(delegate.changeSetCallback == [after], sourceLocation: sourceLocation)
        #expect(delegate.snapshotCallback.map(\.shown) == [after], sourceLocation: sourceLocation)
        #expect(delegate.snapshotCallback.first?.snapshot == controller.snapshot, sourceLocation: sourceLocation)
        #expect(delegate.mismatches.isEmpty, "\(delegate.mismatches)", sourceLocation: sourceLocation)
        #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)), sourceLocation: sourceLocation)
    }

    @Test func willAndPerChangeCallbacksSeeTheOldStateAndDidSeesTheNew() async throws {
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

    @Test func anInPlaceUpdateIsDeliveredWithTheOldPositionsShown() async throws {
        let (controller, delegate) = try await liveController()
        // The titles are read while the positions are the old ones; nothing moves.
        delegate.reset()
        let before = ShownState(controller)
        try writeSync(store) { tx in try tx.database.execute(sql: "UPDATE article SET title = 'changed' WHERE score = 3") }
        await controller.waitForChanges()
        #expect(delegate.will.map(\.shape) == [before.shape])
        #expect(delegate.perChange.map(\.shape) == [before.shape])
        #expect(delegate.changeSets.last?.updatedItems.count == 1)
        #expect(delegate.did.first?.titles.contains("changed") == true, "did: the stored record")
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
