import Foundation
import GRDB
import Testing
@testable import Folio

/// A controller whose every change set is applied to a table-view model, as a table view
/// applies batch updates; the model must end as a fresh fetch.
@MainActor
final class XprocTable: FetchedResultsControllerDelegate {
    let controller: FetchedResultsController<Article>
    var model: TableViewModel
    var changeSets: [ChangeSet] = []
    var failures: [String] = []
    var errors: [FolioError] = []

    /// By category, then score, 20 per batch; sectioned by category unless `sectioned` is false.
    convenience init(_ store: Store, sectioned: Bool = true) async throws {
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)])
        request.batchSize = 20
        try await self.init(store, request, sectionBy: sectioned ? .attribute(\.category) : nil)
    }

    init(_ store: Store, _ request: RecordRequest<Article>, sectionBy key: SectionKey<Article>?) async throws {
        controller = FetchedResultsController(request, store: store, sectionBy: key)
        try await controller.performFetch()
        model = TableViewModel(controller.snapshot)
        controller.delegate = self
    }

    func controller(_ controller: FetchedResultsController<Article>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
        do { try model.apply(changes, dataSource: controller.snapshot) } catch { failures.append("\(changes): \(error)") }
    }

    func controller(_ controller: FetchedResultsController<Article>, didFailWith error: FolioError) {
        errors.append(error)
    }

    /// Waits (woken by the store, no `synchronize()`) until the controller shows what a fresh
    /// fetch shows, then checks that the change sets applied to the model give the same.
    /// - Parameter count: the change sets to wait for (an update in place changes no
    ///   identifier: the snapshot alone cannot tell it arrived).
    func settle(_ what: String, count: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [ChangeSet] {
        for _ in 0..<2_000 {
            if changeSets.count >= count, TableViewModel(controller.snapshot) == (try freshModel(controller)) { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        let fresh = try freshModel(controller)
        #expect(TableViewModel(controller.snapshot) == fresh, "\(what): the controller follows", sourceLocation: sourceLocation)
        #expect(model == fresh, "\(what): the change sets applied give a fresh fetch", sourceLocation: sourceLocation)
        #expect(failures.isEmpty, "\(what): \(failures)", sourceLocation: sourceLocation)
        defer { changeSets = [] }
        return changeSets
    }
}

/// Other processes' commits — the `sqlite3` shell, a second store on the file, a shell killed
/// inside its transaction — reach open controllers as ordinary change sets through the
/// change log, woken by the file system, with no `synchronize()`.
@Suite("Other processes' writes arrive as change sets")
@MainActor
struct OtherProcessChangeTests {
    static func store(_ directory: ScratchDirectory, count: Int = 40) throws -> Store {
        let store = try Store(path: directory.path("store.sqlite"), records: [Article.self])
        try seed(store, count: count)
        return store
    }

    @Test func theShellsInsertsMovesSectionChangesAndDeletesArriveAsChangeSets() async throws {
        let directory = try ScratchDirectory()
        let store = try Self.store(directory)
        let path = store.path!
        #if os(Linux)
        // inotify, unless the user's inotify instances (128 by default, one per process,
        // shared with every other program) were all taken when this process made its one:
        // then the polling fallback.
        #expect(
            store.externalChangeDetection == .inotify || store.externalChangeDetection == .polling(interval: .milliseconds(100)))
        #endif
        let table = try await XprocTable(store)
        store.diagnostics.resetCounters()

        try Shell.sqlite3(
            path,
            "INSERT INTO article (title, url, published, score, category, isRead) VALUES ('s1', 'u-s1', 0, 5, 'b', 0), ('s2', 'u-s2', 0, 1000, 'new', 0);"
        )
        var changes = try await table.settle("inserts", count: 1)
        #expect(changes.count == 1 && !changes[0].isReload, "\(changes)")
        #expect(changes.first?.insertedItems.count == 1, "and one in a new section")
        #expect(changes.first?.insertedSections.count == 1)

        try Shell.sqlite3(path, "UPDATE article SET score = 10000 WHERE score IN (1, 2);")
        changes = try await table.settle("updates that move", count: 1)
        #expect(changes.count == 1 && !changes[0].isReload, "\(changes)")
        #expect(changes.first?.movedItems.count == 2)

        try Shell.sqlite3(path, "UPDATE article SET title = 'renamed' WHERE score = 6;")
        changes = try await table.settle("an update in place", count: 1)
        #expect(changes.first?.updatedItems.count == 1, "\(changes)")

        try Shell.sqlite3(
            path, "UPDATE article SET category = 'new' WHERE category = 'a'; DELETE FROM article WHERE category IS NULL;")
        changes = try await table.settle("section changes and deletes in two commits", count: 1)
        #expect(!changes.isEmpty && changes.allSatisfy { !$0.isReload }, "\(changes)")
        #expect(changes.flatMap(\.deletedSections).count >= 1, "the emptied sections go: \(changes)")

        try Shell.sqlite3(path, "UPDATE article SET title = title;")
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await table.settle("rows set to their values").isEmpty)
        #expect(store.diagnostics.counters.changeLogReloads == 0)
        #expect(store.diagnostics.counters.changeLogRowsRead > 0)
    }

    @Test func aSecondStoresTenThousandRowTransactionIsOneChangeSet() async throws {
        let directory = try ScratchDirectory()
        let store = try Self.store(directory)
        let second = try Store(path: store.path!, records: [Article.self])
        let table = try await XprocTable(store)
        try writeSync(second) { tx in
            for i in 0..<10_000 {
                var a = Article(title: "bulk \(i)", url: "bulk-\(i)", score: 100 + i, category: ["a", "b", "c"][i % 3])
                try tx.insert(&a)
            }
        }
        let changes = try await table.settle("10,000 rows", count: 1)
        #expect(changes.count == 1, "one transaction, one change set")
        #expect(changes.first?.isReload == false)
        #expect(changes.first?.insertedItems.count == 10_000)
        #expect(table.controller.snapshot.numberOfItems == 10_040)
    }

    /// The store's own commits write its `-wal` and so notify its own watcher: those wake-ups
    /// are not checked (each write follows other connections before it begins), so a burst of
    /// writes runs two `PRAGMA data_version` per write, not eight. Another connection's
    /// commit right after the store's own still arrives, woken, with nothing called.
    @Test func theStoresOwnWritesDoNotWakeItButAnotherCommitRightAfterDoes() async throws {
        let directory = try ScratchDirectory()
        let store = try Self.store(directory)
        let second = try Store(path: store.path!, records: [Article.self])
        let table = try await XprocTable(store)
        let checks = Locked(0)
        store.diagnostics.logSQL { sql in if sql == "PRAGMA data_version" { checks.withLock { $0 += 1 } } }
        let writes = 100
        let started = ContinuousClock.now
        for i in 0..<writes {
            try writeSync(store) { tx in
                var a = Article(title: "own \(i)", url: "own-\(i)", score: 1_000 + i, category: "a")
                try tx.insert(&a)
            }
        }
        // Past the watcher's re-checks of the last notification.
        try await Task.sleep(for: .milliseconds(300))
        store.diagnostics.logSQL(nil)
        // Two per write (its look at other connections before it, and the follow of its own
        // commit), and a few re-checks after the burst; before, every commit's notifications
        // added their own (about six per write here).
        // The heartbeat adds one a second while the list is live (a slow, loaded machine
        // takes many seconds here).
        let seconds = Int((ContinuousClock.now - started).components.seconds) + 1
        #expect(
            checks.current <= 2 * writes + 20 + seconds,
            "\(checks.current) data_version checks for \(writes) writes in \(seconds) s")
        _ = try await table.settle("own writes", count: 1)

        for round in 0..<10 {
            try writeSync(store) { tx in
                var a = Article(title: "mine \(round)", url: "mine-\(round)", score: 5_000 + round, category: "b")
                try tx.insert(&a)
            }
            // Inside the store's quiet time after its own commit.
            try writeSync(second) { tx in
                var a = Article(title: "theirs \(round)", url: "theirs-\(round)", score: 6_000 + round, category: "c")
                try tx.insert(&a)
            }
            let changes = try await table.settle("another connection's commit right after the store's own (\(round))", count: 1)
            #expect(changes.allSatisfy { !$0.isReload })
            #expect(table.controller.snapshot.numberOfItems == 40 + writes + 2 * (round + 1))
        }
    }

    /// A store that was not woken while the others trimmed the log past its progress reloads,
    /// and says why; one whose progress is recorded holds the log back and follows row by row.
    @Test func aStoreBehindTheTrimmedLogReloadsAndSaysWhy() async throws {
        let directory = try ScratchDirectory()
        let store = try Self.store(directory)
        store.stopWatching()
        let writer = try Store(path: store.path!, records: [Article.self])
        writer.changeLogLimits.withLock {
            $0.kept = 10
            $0.trimEvery = 1
        }
        let table = try await XprocTable(store)
        for i in 0..<30 {
            try writeSync(writer) { tx in
                var a = Article(title: "w\(i)", url: "w-\(i)", score: 500 + i, category: "b")
                try tx.insert(&a)
            }
        }
        let kept = try readNow(writer) { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_changes") }
        #expect(kept == 10, "no reader recorded behind: the newest rows kept")
        try store.synchronize()
        let changes = try await table.settle("behind the trimmed log", count: 1)
        #expect(changes.map(\.isReload) == [true])
        #expect(store.diagnostics.counters.changeLogReloads == 1)
        #expect(store.diagnostics.lastReloadReason?.contains("trimmed past this store's progress") == true)

        // Recorded progress (the store trims at its own writes) holds the log back.
        store.changeLogLimits.withLock { $0.trimEvery = 1 }
        try writeSync(store) { tx in
            var a = Article(title: "own", url: "own", score: 1, category: "b")
            try tx.insert(&a)
        }
        _ = try await table.settle("own write", count: 1)
        for i in 0..<30 {
            try writeSync(writer) { tx in
                var a = Article(title: "v\(i)", url: "v-\(i)", score: 700 + i, category: "c")
                try tx.insert(&a)
            }
        }
        try store.synchronize()
        let later = try await table.settle("held back by the store's progress", count: 1)
        #expect(later.count == 1 && later.first?.insertedItems.count == 30, "\(later)")
        #expect(store.diagnostics.counters.changeLogReloads == 1)
    }

    /// A store's recorded progress holds the log back while it is open; once it is closed,
    /// the next trim deletes what only it held (not ten minutes later, when a reader not seen
    /// is forgotten).
    @Test func trimmingProceedsRightAfterAClose() async throws {
        let directory = try ScratchDirectory()
        let reader = try Self.store(directory)
        let writer = try Store(path: reader.path!, records: [Article.self])
        for store in [reader, writer] {
            store.changeLogLimits.withLock {
                $0.kept = 1
                $0.trimEvery = 1
            }
        }
        func insert(_ store: Store, _ title: String) throws {
            try writeSync(store) { tx in
                var a = Article(title: title, url: title, score: 1, category: "a")
                try tx.insert(&a)
            }
        }
        func logRows() throws -> Int {
            try readNow(writer) { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_changes") ?? -1 }
        }
        try insert(reader, "reader")
        for i in 0..<20 { try insert(writer, "w\(i)") }
        #expect(try logRows() >= 20, "the open reader's progress holds the rows after it")
        try reader.close()
        let readers = try readNow(writer) { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_change_readers") }
        #expect(readers == 1, "only the writer is registered")
        try insert(writer, "after")
        #expect(try logRows() <= 2, "trimmed at the next write after the close")
        try writer.close()
    }

    @Test(arguments: ["PASSIVE", "FULL", "RESTART", "TRUNCATE"])
    func aCheckpointSendsNothing(_ mode: String) async throws {
        let directory = try ScratchDirectory()
        let store = try Self.store(directory)
        let table = try await XprocTable(store)
        try Shell.sqlite3(store.path!, "UPDATE article SET score = -1 WHERE score = 3;")
        #expect(try await table.settle("a commit", count: 1).count == 1)
        let read = store.diagnostics.counters.changeLogRowsRead
        try Shell.sqlite3(store.path!, "PRAGMA wal_checkpoint(\(mode));")
        // Past the watcher's re-checks.
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await table.settle("a checkpoint").isEmpty)
        #expect(store.diagnostics.counters.changeLogRowsRead == read, "no log read: nothing committed")
        try Shell.sqlite3(store.path!, "UPDATE article SET score = -2 WHERE score = 4;")
        #expect(try await table.settle("a commit after the checkpoint", count: 1).count == 1)
    }

    /// The shell killed inside `BEGIN …`: its rows and their log entries go together (rolled
    /// back with the WAL's uncommitted frames); the next commit arrives as usual.
    @Test func aWriterKilledMidTransactionLeavesTheLogConsistent() async throws {
        let directory = try ScratchDirectory()
        let store = try Self.store(directory)
        let table = try await XprocTable(store)
        let executable = try #require(Shell.executable)
        let output = directory.path("shell.out"), errors = directory.path("shell.err")
        let shell = try ChildProcess(
            executable, ["-batch", "-cmd", ".timeout 10000", store.path!], input: .pipe, output: output, errors: errors)
        // Standard input stays open: the shell waits inside its transaction for more.
        try shell.write(
            Data(
                """
                BEGIN;
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 20000)
                INSERT INTO article (title, url, published, score, category, isRead) SELECT 'k' || x, 'k-' || x, 0, x, 'k', 0 FROM n;
                SELECT 'ready';

                """.utf8))
        // Until the rows are written, uncommitted, however slow a loaded machine makes the
        // shell: a kill before would test nothing.
        let deadline = ContinuousClock.now + .seconds(120)
        var ready = false
        while !ready && shell.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            ready = ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("ready")
        }
        let state = shell.poll().map { "\($0)" } ?? "still running"
        let printed = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(ready, "the shell never wrote its rows (\(state)): \(printed)")
        shell.kill(SIGKILL)
        #expect(shell.wait() == .signaled(SIGKILL), "killed mid-transaction, not ended by itself")
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await table.settle("a killed transaction").isEmpty)
        let (rows, logged, gaps) = try readNow(store) { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM article WHERE category = 'k'"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_changes WHERE entity = 'article' AND row > 40"),
                try Int.fetchOne(db, sql: "SELECT max(seq) - min(seq) + 1 - count(*) FROM folio_changes")
            )
        }
        #expect(rows == 0 && logged == 0 && gaps == 0)
        try Shell.sqlite3(
            store.path!,
            "INSERT INTO article (title, url, published, score, category, isRead) VALUES ('after', 'after', 0, 7, 'b', 0);")
        let changes = try await table.settle("the next commit", count: 1)
        #expect(changes.count == 1 && changes.first?.insertedItems.count == 1)
        #expect(try readNow(store) { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
    }

    /// Where no notification can be had, the store polls, says so, and still delivers.
    @Test func withoutNotificationsTheStorePollsAndDelivers() async throws {
        let directory = try ScratchDirectory()
        let store = try Self.store(directory)
        store.watchExternalChanges(notifications: false)
        #expect(store.externalChangeDetection == .polling(interval: .milliseconds(100)))
        #expect(
            store.externalChangeDetection.description == "polling the files every 0.01 seconds, the database every 0.1 seconds")
        let table = try await XprocTable(store)
        try Shell.sqlite3(store.path!, "DELETE FROM article WHERE score < 10;")
        let changes = try await table.settle("polled", count: 1)
        #expect(changes.count == 1 && changes.first?.deletedItems.count == 10)
        try store.close()
        #expect(store.externalChangeDetection == .none)
    }

    /// Polling compares the files' stamps every 10 ms and follows a change at once: with the
    /// database's own check an hour apart, the shell's commits still arrive, each as its
    /// change set, within the test's wait. Without the stamps, none would.
    @Test func pollingFollowsACommitByTheFilesStampsBetweenDatabaseChecks() async throws {
        let directory = try ScratchDirectory()
        let store = try Self.store(directory)
        store.watchExternalChanges(notifications: false, polling: .seconds(3_600))
        #expect(store.externalChangeDetection == .polling(interval: .seconds(3_600)))
        let table = try await XprocTable(store)
        store.diagnostics.resetCounters()
        // Nothing else wakes the store: the database's check is an hour away, no
        // notification is set up, and the store writes nothing.
        for round in 0..<3 {
            try Shell.sqlite3(store.path!, "DELETE FROM article WHERE rowid = \(round + 1);")
            let changes = try await table.settle("round \(round), polled by the stamps", count: 1)
            #expect(changes.count == 1 && changes.first?.deletedItems.count == 1)
        }
        #expect(store.diagnostics.counters.fileNotifications == 0)
        try store.close()
    }

    /// A notification the kernel lost (or never sent) leaves the commit to the watcher's
    /// heartbeat, which compares the files' size and time with the last ones it saw: the
    /// shell's commits still arrive, each as a change set, though every notification is
    /// dropped. Without the heartbeat they wait for the store's next write.
    @Test func aLostNotificationIsMadeUpByTheHeartbeat() async throws {
        let directory = try ScratchDirectory()
        let store = try Self.store(directory)
        #if canImport(Glibc)
        store.watchExternalChanges(dropsNotifications: true, heartbeat: .milliseconds(200))
        #expect(store.externalChangeDetection == .inotify)
        #endif
        let table = try await XprocTable(store)
        let before = store.diagnostics.counters.fileNotifications
        try Shell.sqlite3(store.path!, "DELETE FROM article WHERE score < 10;")
        var changes = try await table.settle("a deletion, its notifications dropped", count: 1)
        #expect(changes.count == 1 && changes.first?.deletedItems.count == 10)
        #if canImport(Glibc)
        #expect(store.diagnostics.counters.fileNotifications > before, "the notifications came, and were dropped")
        #endif
        try Shell.sqlite3(
            store.path!,
            "INSERT INTO article (title, url, published, score, category, isRead) VALUES ('late', 'late', 0, 7, 'b', 0);")
        changes = try await table.settle("an insert, its notifications dropped", count: 1)
        #expect(changes.count == 1 && changes.first?.insertedItems.count == 1)
    }

    /// A commit that no notification and no change of the files' stamps shows — its
    /// notifications all came before it was published and their re-checks ran out (a
    /// writer's `fsync` of seconds on a loaded machine), or a file system whose times do not
    /// move — is found by the heartbeat's `PRAGMA data_version` while a live list follows
    /// the store. Without that check it waited for the store's next write.
    @Test func aCommitNothingShowsIsFoundByTheHeartbeatWhileAListIsLive() async throws {
        let directory = try ScratchDirectory()
        let store = try Self.store(directory)
        store.watchExternalChanges(dropsNotifications: true, heartbeat: .milliseconds(200), stamp: { _ in .frozen })
        let table = try await XprocTable(store)
        try Shell.sqlite3(store.path!, "DELETE FROM article WHERE score < 10;")
        let changes = try await table.settle("a deletion nothing shows", count: 1)
        #expect(changes.count == 1 && changes.first?.deletedItems.count == 10)
        try Shell.sqlite3(
            store.path!,
            "INSERT INTO article (title, url, published, score, category, isRead) VALUES ('late', 'late', 0, 7, 'b', 0);")
        let inserted = try await table.settle("an insert nothing shows", count: 1)
        #expect(inserted.count == 1 && inserted.first?.insertedItems.count == 1)
    }

    /// Another process migrating the file (here the shell, as a migration would: the model
    /// version and the schema change) is noticed when the store is woken: its controllers
    /// report `modelVersionChanged` instead of following a file they cannot read.
    @Test func anotherProcessesMigrationGivesModelVersionChanged() async throws {
        let directory = try ScratchDirectory()
        let store = try Self.store(directory)
        let table = try await XprocTable(store)
        try Shell.sqlite3(
            store.path!,
            "BEGIN; INSERT INTO folio_metadata (key, value) VALUES ('model_version', 2) ON CONFLICT(key) DO UPDATE SET value = 2; CREATE TABLE migrated (x); UPDATE article SET score = -5 WHERE score = 5; COMMIT;"
        )
        for _ in 0..<2_000 where table.errors.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        guard case .modelVersionChanged(_, let found, let opened)? = table.errors.first else {
            Issue.record("no modelVersionChanged: \(table.errors), \(table.changeSets)")
            return
        }
        #expect(found == 2 && opened == 0)
        #expect(table.changeSets.isEmpty, "nothing read from the migrated file")
    }
}
