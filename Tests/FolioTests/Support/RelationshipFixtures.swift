import Foundation
import GRDB
import Testing
@testable import Folio

/// A parent of ``Photo``s: deleting an album nullifies its photos' references.
struct Album: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var hidden = false
    var created: Date? = nil

    static let entity = EntityDescription<Album>(
        "album",
        [
            AttributeDescription(\.name, indexed: true, folded: true),
            AttributeDescription(\.hidden),
            AttributeDescription(\.created),
        ],
        relationships: [.toMany(\Photo.album, deleteRule: .nullify)])
}

/// A child pointing to an ``Album``.
struct Photo: PersistentRecord, Equatable {
    var id: RecordID?
    var title = ""
    var taken = 0
    var album = ToOne<Album>()

    static let entity = EntityDescription<Photo>(
        "photo",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.taken, indexed: true),
        ],
        relationships: [.toOne(\.album)])
}

/// A controller over photos and a strict table-view model that follows it.
typealias PhotoHarness = LiveTable<Photo>

/// A controller and a strict table-view model that follows it: each delivered change set is
/// applied to the model, which must then equal a fresh fetch.
@MainActor
class LiveTable<R: PersistentRecord> {
    let store: Store
    let controller: FetchedResultsController<R>
    var model: TableViewModel
    /// Each change set delivered, with the snapshot it led to (what a table view applies it
    /// against: by the time the harness settles, later change sets may have been applied).
    private let follower: UpdateFollower<R>

    init(_ store: Store, _ request: RecordRequest<R>, sectionBy: SectionKey<R>? = nil) async throws {
        self.store = store
        controller = FetchedResultsController(request, store: store, sectionBy: sectionBy)
        try await controller.performFetch()
        model = TableViewModel(controller.snapshot)
        follower = UpdateFollower(controller)
        await controller.waitForChanges()
    }

    /// Writes, waits for the controller, applies what it delivered and compares with a fresh
    /// fetch. Returns the change sets.
    @discardableResult
    func step(_ write: (WriteTransaction) throws -> Void) async throws -> [ChangeSet] {
        try writeSync(store, write)
        return try await settle()
    }

    /// Waits, applies what was delivered, compares with a fresh fetch; returns the change sets.
    @discardableResult
    func settle() async throws -> [ChangeSet] {
        await controller.waitForChanges()
        let updates = await follower.take()
        for update in updates { try model.apply(update.changes, dataSource: update.snapshot) }
        let changes = updates.map(\.changes)
        let fresh = FetchedResultsController(controller.fetchRequest, store: store, sectionBy: controller.sectionKey)
        fresh.firstScreenRule = nil
        try Self.fetchNow(fresh)
        #expect(model == TableViewModel(fresh.snapshot), "the live results differ from a fresh fetch")
        return changes
    }

    /// The synchronous performFetch, from async code.
    static func fetchNow(_ controller: FetchedResultsController<R>) throws { try controller.performFetch() }
}
