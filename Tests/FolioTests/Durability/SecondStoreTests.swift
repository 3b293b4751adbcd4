import Foundation
import GRDB
import Testing
@testable import Folio

extension Durability {
    /// Several `Store` instances and other processes (the `sqlite3` shell) on one file.
    @Suite("Several stores and processes on one file")
    struct SecondStoreTests {
        #if os(Linux)
        /// Opening a second Store keeps the POSIX locks the first one's connections hold:
        /// Folio never opens (and so never closes) a descriptor of the database file itself.
        @Test func aSecondStoreKeepsTheLocksOfTheFirst() throws {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            let first = try Store(path: path, records: [Article.self])
            try commitOneByOne(first, 0..<3)
            let before = try posixLocksHeld(on: path)
            #expect(!before.isEmpty, "a WAL-mode connection holds a shared lock on the database file")
            let second = try Store(path: path, records: [Article.self])
            let after = try posixLocksHeld(on: path)
            #expect(after == before, "the locks of the first store's connections changed: \(before) → \(after)")
            _ = second
        }
        #endif

        /// A second Store opens, the `sqlite3` shell reads and closes. If
        /// the process had lost its locks, the shell would believe itself the last connection,
        /// checkpoint and delete the WAL under the stores, and later commits would be lost.
        @Test func theShellReadingBesideTwoStoresLosesNoCommit() throws {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            let first = try Store(path: path, records: [Article.self])
            try commitOneByOne(first, 0..<10)
            let second = try Store(path: path, records: [Article.self])
            #expect(try Shell.sqlite3(path, "SELECT count(*) FROM article;") == "10")
            #expect(FileManager.default.fileExists(atPath: path + "-wal"), "the shell deleted the WAL of open connections")
            try commitOneByOne(first, 10..<20)
            try commitOneByOne(second, 20..<30)
            #expect(try Shell.sqlite3(path, "SELECT count(*) FROM article;") == "30")
            #expect(try first.count(RecordRequest<Article>()) == 30)
            #expect(try second.count(RecordRequest<Article>()) == 30)
            try first.close()
            try second.close()
            #expect(try Shell.sqlite3(path, "PRAGMA integrity_check;") == "ok")
            #expect(try Shell.sqlite3(path, "SELECT count(*), count(DISTINCT score) FROM article;") == "30|30")
        }

        /// Two stores on one file and the shell, all writing at once: every commit is there,
        /// and the file passes `integrity_check`.
        @Test func twoStoresAndTheShellWritingAtOnceLoseNoCommit() async throws {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            let first = try Store(path: path, records: [Article.self])
            let second = try Store(path: path, records: [Article.self])
            let perWriter = 60
            // The shell: one transaction per row, with a reader opening and closing between.
            var script = ""
            for i in 0..<perWriter {
                script +=
                    "BEGIN IMMEDIATE; INSERT INTO article (title, url, published, score, isRead) VALUES ('shell', 'shell:\(i)', 0, \(3 * perWriter + i), 0); COMMIT;\n"
            }
            let shell = Task.detached { try Shell.sqlite3(path, script) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, store) in [first, second, first].enumerated() {
                    group.addTask {
                        for i in 0..<perWriter {
                            try await store.write { tx in
                                var article = Article(
                                    title: "store \(index)", url: "store\(index):\(i)", score: index * perWriter + i)
                                try tx.insert(&article)
                            }
                            if i % 10 == 0 { _ = try Shell.sqlite3(path, "SELECT count(*) FROM article;") }
                        }
                    }
                }
                try await group.waitForAll()
            }
            _ = try await shell.value
            let total = 4 * perWriter
            #expect(try first.count(RecordRequest<Article>()) == total)
            #expect(try second.count(RecordRequest<Article>()) == total)
            try first.close()
            try second.close()
            #expect(try Shell.sqlite3(path, "PRAGMA integrity_check;") == "ok")
            #expect(
                try Shell.sqlite3(path, "SELECT count(*), count(DISTINCT score), min(score), max(score) FROM article;")
                    == "\(total)|\(total)|0|\(total - 1)")
        }

        /// Each store's controllers see the other store's commits (and the shell's) row by
        /// row, through the change log: woken, or at that store's next commit, `synchronize()`
        /// or `observeExternalChanges`.
        @Test @MainActor func eachStoresControllersSeeTheOthersCommits() async throws {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            let first = try Store(path: path, records: [Article.self])
            let second = try Store(path: path, records: [Article.self])
            try seedHours(first, 0..<20)
            var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
            request.batchSize = 10
            let controller = FetchedResultsController(request, store: first)
            let delegate = RecordingDelegate()
            controller.delegate = delegate
            try await controller.performFetch()

            // synchronize()
            try writeSync(second) { tx in _ = try tx.deleteAll(Article.self, where: #Predicate { $0.score < 5 }) }
            try first.synchronize()
            await controller.waitForChanges()
            #expect(delegate.changeSets.last?.isReload == false)
            #expect(delegate.changeSets.last?.deletedItems.count == 5)
            #expect(controller.snapshot.numberOfItems == 15)
            #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))

            // the first store's own next commit
            let reloads = delegate.changeSets.count
            try writeSync(second) { tx in _ = try tx.deleteAll(Article.self, where: #Predicate { $0.score < 8 }) }
            try writeSync(first) { tx in
                var article = Article(title: "own", score: 1_000)
                try tx.insert(&article)
            }
            await controller.waitForChanges()
            // The second store's commit is followed before the first store's write begins (if
            // the store was not woken for it already), then that write: both row by row.
            #expect(delegate.changeSets.count == reloads + 2)
            #expect(delegate.changeSets.suffix(2).map(\.isReload) == [false, false])
            #expect(delegate.changeSets.suffix(2).map(\.deletedItems.count) == [3, 0])
            #expect(controller.snapshot.numberOfItems == 13)
            #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))

            // observeExternalChanges, for the shell's commit
            let watcher = first.observeExternalChanges(every: .milliseconds(20))
            defer { watcher.cancel() }
            try Shell.sqlite3(path, "DELETE FROM article WHERE score < 10;")
            for _ in 0..<6_000 where controller.snapshot.numberOfItems != 11 {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(controller.snapshot.numberOfItems == 11)
            #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))
        }

        /// Another connection's checkpoints change no row, and send nothing: not even a
        /// TRUNCATE checkpoint, after which SQLite's `PRAGMA data_version` moves on other
        /// connections (checked with Python's sqlite3 beside the shell).
        @Test @MainActor func anotherConnectionsCheckpointsSendNothing() async throws {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            let store = try Store(path: path, records: [Article.self])
            try seedHours(store, 0..<20)
            let controller = FetchedResultsController(RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]), store: store)
            let delegate = RecordingDelegate()
            controller.delegate = delegate
            try await controller.performFetch()
            let before = TableViewModel(controller.snapshot)
            let other = try DatabaseQueueFactory.open(path)
            for mode in ["PASSIVE", "FULL", "RESTART", "TRUNCATE"] {
                try await other.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(\(mode))") }
                try store.synchronize()
                await controller.waitForChanges()
                #expect(delegate.changeSets.isEmpty, "\(mode)")
            }
            // A commit after them still arrives.
            try await other.write { db in try db.execute(sql: "DELETE FROM article WHERE score < 5") }
            try store.synchronize()
            await controller.waitForChanges()
            #expect(delegate.changeSets.count == 1)
            #expect(controller.snapshot.numberOfItems == before.sections.joined().count - 5)
            #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))
        }

        /// A write of a second store inside the first's write, on the same file and thread,
        /// would wait for the outer write, which waits for it: it throws at once instead of
        /// after the 10 s busy timeout, and both stores stay usable.
        @Test func aNestedWriteOfASecondStoreOnTheSameFileThrowsAtOnce() async throws {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            try FileManager.default.createSymbolicLink(atPath: directory.path("link.sqlite"), withDestinationPath: path)
            let first = try Store(path: path, records: [Article.self])
            let second = try Store(path: path, records: [Article.self])
            // The same file through a symbolic link is the same file (device and inode).
            let linked = try Store(path: directory.path("link.sqlite"), records: [Article.self])
            for (inner, innerPath) in [(second, path), (linked, directory.path("link.sqlite"))] {
                expectError(.nestedWriteOnSameFile(path: innerPath)) {
                    try first.write { tx in
                        var outer = Article(title: "outer")
                        try tx.insert(&outer)
                        try inner.write { tx in
                            var nested = Article(title: "nested")
                            try tx.insert(&nested)
                        }
                    }
                }
            }
            // Inside an async write too.
            await #expect(throws: FolioError.nestedWriteOnSameFile(path: path)) {
                try await first.write { _ in try second.write { _ in } }
            }
            // Nothing was committed, and both stores still write.
            #expect(try first.count(RecordRequest<Article>()) == 0)
            try commitOneByOne(first, 0..<1)
            try commitOneByOne(second, 1..<2)
            #expect(try first.count(RecordRequest<Article>()) == 2)
            // Reading with the second store inside the first's write is fine: it sees the
            // committed state, not the write in progress.
            let seen = try writeSync(first) { tx in
                var article = Article(title: "pending")
                try tx.insert(&article)
                return try second.count(RecordRequest<Article>())
            }
            #expect(seen == 2)
            #expect(try second.count(RecordRequest<Article>()) == 3)
            // A write on another file inside a write is fine.
            let other = try Store(path: directory.path("other.sqlite"), records: [Article.self])
            try writeSync(first) { _ in try commitOneByOne(other, 0..<1) }
            #expect(try other.count(RecordRequest<Article>()) == 1)
        }
    }
}
