import Foundation
import GRDB
import Testing
@testable import Folio

extension Durability {
    /// Closing inside the store's own closures, a file that moves, an entity without attributes.
    @Suite("Store lifecycle")
    struct StoreLifecycleTests {
        // MARK: close()

        /// `close()` inside a write closure trapped (GRDB's reentrancy check) and inside a read
        /// closure waited forever for that read: it throws, and the store stays usable and
        /// closable.
        @Test func closeInsideTheStoresOwnClosuresThrowsAndTheStoreStaysUsable() async throws {
            let store = try Store.temporary(records: [Article.self])
            expectError(.closeInsideAccess) {
                try store.write { tx in
                    var article = Article(title: "rolled back")
                    try tx.insert(&article)
                    try store.close()
                }
            }
            expectError(.closeInsideAccess) { try store.read { _ in try store.close() } }
            await #expect(throws: FolioError.closeInsideAccess) { try await store.write { _ in try store.close() } }
            await #expect(throws: FolioError.closeInsideAccess) { try await store.read { _ in try store.close() } }
            #expect(try store.count(RecordRequest<Article>()) == 0, "the write that tried to close was rolled back")
            try seedHours(store, 0..<3)
            #expect(try store.count(RecordRequest<Article>()) == 3)
            try store.close()
            expectError(.storeClosed) { try store.count(RecordRequest<Article>()) }
            expectError(.storeClosed) { try store.write { _ in } }
        }

        /// Closing while another thread reads waits for that read, which completes.
        @Test func closeWaitsForAReadOnAnotherThread() async throws {
            let store = try Store.temporary(records: [Article.self])
            try seedHours(store, 0..<10)
            let reading = DispatchSemaphore(value: 0)
            let read = Task.detached {
                try store.read { db in
                    reading.signal()
                    Thread.sleep(forTimeInterval: 0.05)
                    return try Int.fetchOne(db, sql: "SELECT count(*) FROM article")
                }
            }
            reading.wait()
            try store.close()
            #expect(try await read.value == 10)
            expectError(.storeClosed) { try store.count(RecordRequest<Article>()) }
        }

        // MARK: A file that moves

        enum Move: String, CaseIterable { case directoryRemoved, renamed, replacedByAnotherDatabase }

        /// In WAL mode SQLite goes on writing a file that was deleted or renamed, and the
        /// commits are lost to whoever opens the path next. Every read and write checks first
        /// and throws `databaseFileMoved`.
        @Test(arguments: Move.allCases)
        func aStoreWhoseFileMovedRefusesReadsAndWrites(_ move: Move) async throws {
            let directory = try ScratchDirectory()
            let folder = directory.url.appendingPathComponent("data")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("store.sqlite").path
            let movedPath = directory.path("moved.sqlite")
            let store = try Store(path: path, records: [Article.self])
            try commitOneByOne(store, 0..<20)
            var replacement: Store? = nil
            switch move {
            case .directoryRemoved:
                try FileManager.default.removeItem(at: folder)
            case .renamed:
                #expect(rename(path, movedPath) == 0)
            case .replacedByAnotherDatabase:
                for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
                replacement = try Store(path: path, records: [Article.self])
                try seedHours(replacement!, 0..<5)
            }
            expectError(.databaseFileMoved(path: path)) {
                try store.write { tx in
                    var article = Article(title: "lost")
                    try tx.insert(&article)
                }
            }
            await #expect(throws: FolioError.databaseFileMoved(path: path)) {
                try await store.write { tx in
                    var article = Article(title: "lost")
                    try tx.insert(&article)
                }
            }
            expectError(.databaseFileMoved(path: path)) { try store.count(RecordRequest<Article>()) }
            await #expect(throws: FolioError.databaseFileMoved(path: path)) { try await store.read { _ in 0 } }
            if let pool = store.writer as? DatabasePool {
                // A connection opened now opens whatever is at the path: it checks the identity.
                pool.releaseMemory()
                expectError(.databaseFileMoved(path: path)) { try store.count(RecordRequest<Article>()) }
            }
            try store.close()
            switch move {
            case .directoryRemoved:
                #expect(!FileManager.default.fileExists(atPath: path))
            case .renamed:
                // SQLite does not fold the WAL into a file that moved as its last connection
                // closes: the commits wait in the WAL at the old path. Put back, the file has
                // every commit made before the move, and none after.
                #expect(FileManager.default.fileExists(atPath: path + "-wal"))
                #expect(rename(movedPath, path) == 0)
                #expect(try Shell.sqlite3(path, "PRAGMA integrity_check; SELECT count(*) FROM article;") == "ok\n20")
            case .replacedByAnotherDatabase:
                #expect(try replacement!.count(RecordRequest<Article>()) == 5)
                #expect(try Shell.sqlite3(path, "SELECT count(*) FROM article;") == "5")
            }
        }

        // MARK: An entity without attributes

        @Test func anEntityWithoutAttributesIsStoredFetchedAndTracked() async throws {
            let store = try Store.temporary(records: [Bare.self, Article.self])
            let ids = try writeSync(store) { tx -> [RecordID] in
                var made: [RecordID] = []
                for _ in 0..<3 {
                    var bare = Bare()
                    try tx.insert(&bare)
                    made.append(try #require(bare.id))
                }
                var chosen = Bare(id: RecordID(100))
                try tx.insert(&chosen)
                return made + [RecordID(100)]
            }
            #expect(ids == [RecordID(1), RecordID(2), RecordID(3), RecordID(100)])
            let token = try store.changeToken(for: Bare.self)
            // An update of nothing writes nothing, and still says when the record is not there.
            try writeSync(store) { tx in try tx.update(Bare(id: RecordID(2))) }
            #expect(try store.changeToken(for: Bare.self) == token)
            expectError(.recordNotFound(entity: "bare", id: RecordID(99))) {
                try store.write { tx in try tx.update(Bare(id: RecordID(99))) }
            }
            #expect(try writeSync(store) { tx in try tx.delete(Bare.self, id: RecordID(1)) })
            let request = RecordRequest<Bare>(sortBy: [SortDescriptor(\.id, order: .reverse)])
            #expect(try await store.fetch(request).map { $0?.id } == [RecordID(100), RecordID(3), RecordID(2)])
            #expect(try store.count(request) == 3)
            #expect(try store.fetchOne(Bare.self, id: RecordID(3)) == Bare(id: RecordID(3)))
            #expect(try await store.fetchInBackground(request).value.count == 3)
            #expect(try writeSync(store) { tx in try tx.deleteAll(Bare.self) } == 3)
            let shell = try Shell.sqlite3(
                store.path!, "INSERT INTO bare DEFAULT VALUES; INSERT INTO bare DEFAULT VALUES; SELECT count(*) FROM bare;")
            #expect(shell == "2")
        }

        @Test @MainActor func aControllerOverAnEntityWithoutAttributes() async throws {
            let store = try Store.temporary(records: [Bare.self])
            var request = RecordRequest<Bare>(sortBy: [SortDescriptor(\.id)])
            request.batchSize = 2
            let controller = FetchedResultsController(request, store: store)
            var changes = controller.changes.makeAsyncIterator()
            try await controller.performFetch()
            try writeSync(store) { tx in
                for _ in 0..<3 {
                    var bare = Bare()
                    try tx.insert(&bare)
                }
            }
            let change = await changes.next()
            #expect(change?.insertedItems.count == 3)
            #expect(controller.fetchedObjects?.map { $0?.id } == [RecordID(1), RecordID(2), RecordID(3)])
        }
    }
}
