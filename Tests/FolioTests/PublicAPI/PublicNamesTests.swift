import Foundation
import GRDB
import Observation
import Testing

import Folio

// This file imports GRDB beside Folio — the raw-SQL escape hatch every Folio user has — and
// Observation (FetchedResultsModel is @Observable), and names every public Folio type WITHOUT
// qualifying it. If a Folio name clashed with one of GRDB's (as `Record`, `FetchRequest` and
// `Transaction` once did), it would not compile.
// SwiftUI, SwiftData and RealityKit do not exist on Linux: .ci/check-symbols.py compares
// Folio's public type names with their hand-kept lists in .ci/reserved-type-names.txt.
// When Folio gains a public type, use it here too.

private struct ClashProbe: PersistentRecord {
    var id: RecordID?
    var title = ""
    var created = Date(timeIntervalSince1970: 0)

    static let entity = EntityDescription<ClashProbe>(
        "clash_probe",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.created, indexed: true),
        ],
        indexes: [IndexDescription([.key(\.title), .key(\.created, order: .reverse)])])
}

@MainActor
private final class ClashProbeDelegate: FetchedResultsControllerDelegate {
    var kinds: [FetchedResultsChangeType] = []
    func controller(
        _ controller: FetchedResultsController<ClashProbe>, didChangeObject id: RecordID,
        at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        kinds.append(type)
    }
}

@Suite("Public names")
struct PublicNamesTests {
    @Test("every public type is usable unqualified in a file that imports GRDB")
    @MainActor
    func everyPublicTypeUnqualifiedBesideGRDB() async throws {
        let store: Store = try Store.temporary(records: [ClashProbe.self])
        let schema: EntitySchema = ClashProbe.entity.schema
        let column: ColumnSchema = schema.columns[0]
        let type: AttributeType = column.type
        #expect(type == .string)
        let value: any AttributeValue = "title"
        #expect(value.storedValue == "title".databaseValue)  // GRDB's DatabaseValue beside Folio's names

        try await store.write { (tx: WriteTransaction) in
            var bookmark = ClashProbe(id: nil, title: "a", created: Date(timeIntervalSince1970: 10))
            try tx.insert(&bookmark)
            let assignments: [Assignment<ClashProbe>] = [.set(\.title, to: "b")]
            try tx.updateAll(ClashProbe.self, set: assignments)
        }
        var request = RecordRequest<ClashProbe>(sortBy: [SortDescriptor(\.created)])
        request.batchSize = 10
        let search: TextSearch<ClashProbe> = TextSearch("a b*", matchingPrefixes: true)
        #expect(search.matchesPrefixes && "Ábc".folded == "abc")
        let results: FetchedRecords<ClashProbe> = try await store.fetch(request)
        let ids: RecordIDs = results.identifiers
        let first: RecordID = ids[0]
        #expect(results[0]?.title == "b")

        let controller = FetchedResultsController(request, store: store, sectionBy: SectionKey<ClashProbe>.day(\.created))
        let delegate = ClashProbeDelegate()
        controller.delegate = delegate
        try await controller.performFetch()
        let mode: TrackingMode = controller.trackingMode
        #expect(mode == .memory)
        let outcome: SectionCache.Outcome = controller.lastCacheOutcome
        #expect(outcome == .notUsed)
        let sections: [SectionInfo] = controller.sections
        let snapshot: Snapshot = controller.snapshot
        #expect(sections.count == 1 && snapshot.identifiers.first == first)
        let updates = controller.updates
        try await store.write { tx in
            var bookmark = ClashProbe(id: nil, title: "c", created: Date(timeIntervalSince1970: 20))
            try tx.insert(&bookmark)
        }
        for await update in updates {
            let update: ControllerUpdate = update
            let change: ChangeSet = update.changes
            #expect(change.insertedItems == [IndexPath(item: 1, section: 0)])
            break
        }
        #expect(delegate.kinds == [.insert])

        let model: FetchedResultsModel<ClashProbe> = FetchedResultsModel(request, store: store)
        try await model.performFetch()
        let state: FetchedResultsModel<ClashProbe>.LoadingState = model.loadingState
        #expect(state == .loaded)
        let modelSections: [FetchedSection<ClashProbe>] = model.sections
        let sectionID: FetchedSection<ClashProbe>.ID = modelSections[0].id
        let items: FetchedItems<ClashProbe> = modelSections[0].items
        let item: FetchedItem<ClashProbe> = items[0]
        #expect(sectionID == model.sections[0].id && item.id == first && item.record?.title == "b")

        let fetch: BackgroundFetch<ClashProbe> = store.fetchInBackground(request)
        var last: FetchProgress? = nil
        for await step in fetch.progressUpdates { last = step }
        #expect(try await fetch.value.count == 2)
        #expect(last?.isFinished == true)

        let plan: QueryPlan = try store.explain(RecordRequest<ClashProbe>(sortBy: [SortDescriptor(\.title)]))
        let index: IndexSchema = ClashProbe.entity.schema.indexes[0]
        #expect(!plan.steps.isEmpty && index.columns.count == 2)

        let diagnostics: Diagnostics = store.diagnostics
        #expect(diagnostics.counters.identifierScans > 0)
        let token: ChangeToken = try store.changeToken(for: ClashProbe.self)
        #expect(token == (try store.changeToken(for: ClashProbe.self)))

        // A versioned model with a step, on a file of its own.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let step: MigrationStep = MigrationStep("touch") { (db: Database) in try db.execute(sql: "SELECT 1") }
        let storeModel: StoreModel = StoreModel(version: 1, records: [ClashProbe.self], steps: [step])
        let versioned = try Store(path: directory.appendingPathComponent("names.sqlite").path, model: storeModel)
        #expect(versioned.modelVersion == 1)
        #expect(throws: FolioError.self) { try store.fetch(RecordRequest<ClashProbe>(limit: -1)) }
    }
}
