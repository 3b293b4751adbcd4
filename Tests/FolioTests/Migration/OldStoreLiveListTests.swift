import Foundation
import GRDB
import Testing
@testable import Folio

/// A live list of a store opened with the old model, while another process migrates the
/// file: the list reports ``FolioError/modelVersionChanged(path:found:opened:)`` — it must
/// not go on showing the old results as current, silently.
@Suite("Live lists of an old store after another process migrated")
@MainActor
struct OldStoreLiveListTests {
    @Test func synchronizeTellsTheLiveModelOnce() async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("items.sqlite")
        try MigrationProcessTests.makeItems(path, count: 300)
        let store = try Store(path: path, records: [CrashItem.self])
        var request = RecordRequest<CrashItem>(sortBy: [SortDescriptor(\.batch), SortDescriptor(\.id)])
        request.batchSize = 20
        let model = FetchedResultsModel(request, store: store, sectionBy: .attribute(\.batch), cacheName: "items")
        try await model.performFetch()
        let shown = ModelItems(model)
        let results = ObservationCounter {
            _ = model.sections
            _ = model.items
        }
        let errors = ObservationCounter { _ = model.lastError }
        let delegate = FailureRecorder<CrashItem>()
        let controller = FetchedResultsController(request, store: store)
        controller.delegate = delegate
        try await controller.performFetch()

        let child = try MigrationProcessTests.Child(["migrate", path], in: directory.url)
        #expect(child.process.wait() == .exited(0))
        #expect(child.lines.last == "migrated 290")

        let changed = FolioError.modelVersionChanged(path: path, found: 2, opened: 0)
        expectError(changed) { try store.synchronize() }
        await model.waitForChanges()
        await controller.waitForChanges()
        // Before: nothing reached the model or the controller (lastError nil, no delegate call).
        #expect(model.lastError == changed)
        #expect(errors.take() == 1)
        #expect(results.take() == 0, "the results stay as they were, with the error beside them")
        #expect(ModelItems(model) == shown)
        #expect(controller.lastError == changed)
        #expect(delegate.errors == [changed])
        // Told once: polling again is no new notification.
        expectError(changed) { try store.synchronize() }
        await model.waitForChanges()
        #expect(errors.take() == 0)
        #expect(delegate.errors == [changed])
        // Every access says the same.
        do {
            try await model.performFetch()
            Issue.record("a fetch of the old store succeeded")
        } catch {
            #expect(error as? FolioError == changed)
        }
        do {
            _ = try await store.fetchInBackground(request).value
            Issue.record("a background fetch of the old store succeeded")
        } catch {
            #expect(error as? FolioError == changed)
        }
        try store.close()
    }
}

extension OldStoreLiveListTests {
    @Test func observingExternalChangesTellsTheLiveModel() async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("items.sqlite")
        try MigrationProcessTests.makeItems(path, count: 120)
        let store = try Store(path: path, records: [CrashItem.self])
        let model = FetchedResultsModel(
            RecordRequest<CrashItem>(sortBy: [SortDescriptor(\.batch), SortDescriptor(\.id)]), store: store,
            sectionBy: .attribute(\.batch))
        try await model.performFetch()
        let shown = ModelItems(model)
        let observer = store.observeExternalChanges(every: .milliseconds(10))
        defer { observer.cancel() }
        let child = try MigrationProcessTests.Child(["migrate", path], in: directory.url)
        #expect(child.process.wait() == .exited(0))
        // A bound for a loaded machine, not a timing: the loop ends as soon as the error is there.
        let deadline = ContinuousClock.now + .seconds(600)
        while model.lastError == nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        // Before: observeExternalChanges swallowed the error; the model never heard of it.
        #expect(model.lastError == .modelVersionChanged(path: path, found: 2, opened: 0))
        #expect(ModelItems(model) == shown)
        #expect(model.loadingState == .loaded)
        observer.cancel()
        try store.close()
    }
}

/// A model's rows as identifiers by section.
struct ModelItems: Equatable {
    var sections: [String]
    var ids: [RecordID]

    @MainActor
    init<R: PersistentRecord>(_ model: FetchedResultsModel<R>) {
        sections = model.sections.map(\.name)
        ids = model.items.map(\.id)
    }
}

/// Keeps the errors a controller reports.
@MainActor
final class FailureRecorder<R: PersistentRecord>: FetchedResultsControllerDelegate {
    var errors: [FolioError] = []
    func controller(_ controller: FetchedResultsController<R>, didFailWith error: FolioError) { errors.append(error) }
}
