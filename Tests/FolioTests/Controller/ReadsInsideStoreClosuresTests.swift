import Foundation
import GRDB
import Testing
@testable import Folio

/// `object(at:)` called inside the store's own `write` or `read` closure.
@Suite("object(at:) inside the store's own closures", .tags(Testing.Tag.threadSanitized))
@MainActor
struct ReadsInsideStoreClosuresTests: LiveListSuite {
    /// Inside the store's own `write` closure the store cannot start a read, and
    /// `object(at:)` swallowed the `reentrantAccess` error: every row whose batch was not
    /// loaded read as `nil` ("deleted"). Now the batch is read through the closure's own
    /// connection — seeing the transaction's uncommitted changes — and not kept.
    @Test func objectAtInsideWriteReturnsTheRecord() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 30)
        let controller = FetchedResultsController(sorted([SortDescriptor(\.score)]), store: store)
        try Self.fetch(controller)
        let loaded = controller.object(at: IndexPath(item: 3, section: 0))
        let (inLoaded, inUnloaded) = try writeSync(store) { _ in
            (controller.object(at: IndexPath(item: 3, section: 0)), controller.object(at: IndexPath(item: 25, section: 0)))
        }
        #expect(inLoaded != nil && inLoaded == loaded)
        let stored = try store.fetchOne(Article.self, id: controller.identifier(at: IndexPath(item: 25, section: 0)))
        #expect(inUnloaded != nil && inUnloaded == stored, "an unloaded batch is read, not nil")
        // Inside a read closure too.
        let inRead = try readNow(store) { _ in controller.object(at: IndexPath(item: 15, section: 0)) }
        #expect(inRead?.score == 15)
        // What a write sees is its own, and is not kept past a rollback.
        struct Rollback: Error {}
        let id = controller.identifier(at: IndexPath(item: 25, section: 0))
        var uncommitted: Article? = nil
        #expect(throws: Rollback.self) {
            try writeSync(store) { tx in
                try tx.database.execute(sql: "UPDATE article SET title = 'uncommitted' WHERE id = ?", arguments: [id.rawValue])
                uncommitted = controller.object(at: IndexPath(item: 25, section: 0))
                throw Rollback()
            }
        }
        #expect(uncommitted?.title == "uncommitted")
        #expect(controller.object(at: IndexPath(item: 25, section: 0))?.title == "Article 25")
    }
}
