import Foundation
import GRDB
import Testing
@testable import Folio

/// Live controllers after a migration, and migrations while the file is open elsewhere in
/// the process.
@Suite("Migrations, live controllers and other stores of the process")
@MainActor
struct MigrationInProcessTests: NotesFileSuite {
    let directory: ScratchDirectory
    let path: String

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("notes.sqlite")
    }

    @Test func aLiveControllerAfterAMigrationFollowsWritesExactly() async throws {
        try makeLetteredNotes(count: 60)
        let store = try Store(
            path: path,
            model: StoreModel(
                version: 2, records: [NoteRenamedAttributes.self],
                steps: [MigrationStep("shift") { db in try db.execute(sql: "UPDATE note SET points = points + 1000") }]))
        let request = RecordRequest<NoteRenamedAttributes>(sortBy: [SortDescriptor(\.headline), SortDescriptor(\.points)])
        let controller = FetchedResultsController(request, store: store, sectionBy: .firstLetter(\.headline))
        try await controller.performFetch()
        var model = TableViewModel(controller.snapshot)
        let delegate = ChangeSetRecorder()
        controller.delegate = delegate
        try writeSync(store) { tx in
            var note = NoteRenamedAttributes()
            note.headline = "B new"
            try tx.insert(&note)
            try tx.database.execute(sql: "UPDATE note SET headline = 'E moved' WHERE id = 2")
            _ = try tx.delete(NoteRenamedAttributes.self, id: RecordID(3))
        }
        await controller.waitForChanges()
        // (A controller that starts tracking when its delegate is set delivers one empty
        // change set first, as it does without a migration.)
        #expect(delegate.changeSets.filter { !$0.isEmpty }.count == 1, "\(delegate.changeSets)")
        for change in delegate.changeSets where !change.isEmpty { _ = try model.apply(change, dataSource: controller.snapshot) }
        let fresh = FetchedResultsController(request, store: store, sectionBy: .firstLetter(\.headline))
        try await fresh.performFetch()
        #expect(model == TableViewModel(fresh.snapshot))
        #expect(controller.snapshot == fresh.snapshot)
        #expect(controller.object(at: IndexPath(item: 0, section: 0))?.points == 1000)
    }

    // MARK: Other stores in this process

    @Test func aMigrationWaitsForTheOtherStoresOfTheProcess() throws {
        try makeNotes(path, count: 5)
        let link = directory.path("link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        var first: Store? = try Store(path: path, model: StoreModel(version: 1, records: [NoteV1.self]))
        let before = try fileContents(path)
        let v2 = StoreModel(version: 2, records: [NoteWithTag.self])
        expectError(.migrationWhileOpen(path: path)) { try Store(path: path, model: v2) }
        expectError(.migrationWhileOpen(path: link)) { try Store(path: link, model: v2) }
        #expect(try fileContents(path) == before)
        // Stores of the same version open beside it, under any path.
        let second = try Store(path: link, model: StoreModel(version: 1, records: [NoteV1.self]))
        #expect(try second.count(RecordRequest<NoteV1>()) == 5)
        try second.close()
        expectError(.migrationWhileOpen(path: path)) { try Store(path: path, model: v2) }
        // Released without close(): no longer open.
        first = nil
        let migrated = try Store(path: path, model: v2)
        #expect(try migrated.count(RecordRequest<NoteWithTag>()) == 5)
        #expect(first == nil)
    }

    /// A store the app released can live on for one background step it had begun (here
    /// a step that holds it for 0.3 s): the migration waits for that step instead of
    /// refusing, while a store the app still holds is refused once its step ends.
    @Test(arguments: [false, true])
    func aMigrationWaitsForTheLastStepOfAReleasedStore(stillHeld: Bool) throws {
        try makeNotes(path, count: 5)
        var first: Store? = try Store(path: path, model: StoreModel(version: 1, records: [NoteV1.self]))
        let file = try #require(first?.openFileIdentity)
        let inStep = Locked<Store?>(first)
        let started = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            OpenStoreFiles.step(file) {
                started.signal()
                Thread.sleep(forTimeInterval: 0.3)
                inStep.withLock { $0 = nil }
            }
            ended.signal()
        }
        started.wait()
        if !stillHeld { first = nil }
        let v2 = StoreModel(version: 2, records: [NoteWithTag.self])
        if stillHeld {
            expectError(.migrationWhileOpen(path: path)) { try Store(path: path, model: v2) }
        } else {
            let migrated = try Store(path: path, model: v2)
            #expect(try migrated.count(RecordRequest<NoteWithTag>()) == 5)
        }
        ended.wait()
        #expect((first != nil) == stillHeld)
    }

    @Test func aFailedOpenDoesNotCountAsOpen() throws {
        try makeNotes(path, count: 5, version: 3)
        expectError(.newerModelVersion(path: path, version: 3, declared: 2)) {
            try Store(path: path, model: StoreModel(version: 2, records: [NoteV1.self]))
        }
        try makeNotes(directory.path("other.sqlite"), count: 1)
        // The file is counted once per open store; a failed open left nothing behind.
        let store = try Store(path: path, model: StoreModel(version: 4, records: [NoteWithTag.self]))
        #expect(try store.count(RecordRequest<NoteWithTag>()) == 5)
    }

    @Test func twoStoresOpeningAnOldFileAtOnceMigrateItOnce() async throws {
        try makeNotes(path, count: 50)
        let runs = StepCounter()
        let model = StoreModel(
            version: 2, records: [NoteWithRank.self], steps: [MigrationStep("count") { _ in runs.tick() }])
        let path = self.path
        let results = await withTaskGroup(of: Result<Store, any Error>.self) { group in
            for _ in 0..<4 { group.addTask { Result { try Store(path: path, model: model) } } }
            var results: [Result<Store, any Error>] = []
            for await result in group { results.append(result) }
            return results
        }
        #expect(runs.value == 1, "the step ran once")
        // The first to take the write lock migrated; the others, still opening (no state a
        // migration could invalidate), waited for it and found the file migrated.
        for result in results {
            switch result {
            case .success(let store): #expect(try store.count(RecordRequest<NoteWithRank>()) == 50)
            case .failure(let error): Issue.record("\(error)")
            }
        }
    }

    /// An old-model store and a migrating one opening at once, many times: whatever the
    /// interleaving, either the migration waits (refused, the old store reads its rows), or
    /// the old store is refused (a newer file), or the old store opened just before the
    /// migration committed and its next access is a named error — never rows of the new
    /// table read as the old entity.
    @Test func anOldStoreAndAMigrationRacing() async throws {
        var outcomes: [String: Int] = [:]
        for round in 0..<30 {
            let path = directory.path("race-\(round).sqlite")
            try makeNotes(path, count: 20)
            async let old = Task.detached {
                Result { try Store(path: path, model: StoreModel(version: 1, records: [NoteV1.self])) }
            }.value
            async let new = Task.detached {
                Result {
                    try Store(
                        path: path, model: StoreModel(version: 2, records: [NoteRenamedAttributes.self]))
                }
            }.value
            let (oldStore, newStore) = await (old, new)
            switch (oldStore, newStore) {
            case (.success(let old), .failure(let error)):
                #expect(error as? FolioError == .migrationWhileOpen(path: path))
                #expect(try fetchSync(old, RecordRequest<NoteV1>()).compactMap { $0?.title }.count == 20)
                outcomes["migration refused", default: 0] += 1
            case (.failure(let error), .success(let new)):
                #expect(error as? FolioError == .newerModelVersion(path: path, version: 2, declared: 1))
                #expect(try new.count(RecordRequest<NoteRenamedAttributes>()) == 20)
                outcomes["old store refused", default: 0] += 1
            case (.success(let old), .success(let new)):
                expectError(.modelVersionChanged(path: path, found: 2, opened: 1)) { try fetchSync(old, RecordRequest<NoteV1>()) }
                #expect(try new.count(RecordRequest<NoteRenamedAttributes>()) == 20)
                outcomes["old store outdated", default: 0] += 1
            case (.failure(let a), .failure(let b)):
                Issue.record("both failed: \(a), \(b)")
            }
        }
        print("old store and migration racing: \(outcomes.sorted { $0.key < $1.key })")
    }
}

/// Keeps the change sets a controller of renamed notes delivers.
@MainActor
final class ChangeSetRecorder: FetchedResultsControllerDelegate {
    var changeSets: [ChangeSet] = []
    func controller(_ controller: FetchedResultsController<NoteRenamedAttributes>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
    }
}
