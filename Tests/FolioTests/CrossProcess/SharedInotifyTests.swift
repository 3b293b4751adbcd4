#if os(Linux)
import Foundation
import GRDB
import Testing
@testable import Folio

/// Every store of a process shares one inotify instance (``InotifyRegistry``): hundreds of
/// stores are all woken by inotify, each by its own file's commits only, and a store's
/// watches go when it closes — never another store's.
@Suite("One inotify instance per process")
@MainActor
struct SharedInotifyTests {
    /// Waits until the process has its inotify instance: it is made at the first watch and
    /// kept; until then another process may hold every one of the user's 128.
    static func requireInstance(_ directory: ScratchDirectory) async throws {
        let probe = directory.path("probe")
        _ = FileManager.default.createFile(atPath: probe, contents: Data())
        for _ in 0..<1_200 {
            if let token = InotifyRegistry.shared.watch(path: probe, notify: {}) {
                InotifyRegistry.shared.unwatch(token)
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("no inotify instance could be made in 120 s: other processes hold every one of the user's")
        throw CancellationError()
    }

    /// The process's inotify descriptors, as `/proc/self/fd` lists them.
    static func inotifyDescriptors() -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) == "anon_inode:inotify"
        }.count
    }

    /// Inserts one article through a connection no store owns (as another process would).
    static func insertElsewhere(_ path: String, _ title: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(
                sql: "INSERT INTO article (title, url, published, score, category, isRead) VALUES (?, ?, 0, 1, 'a', 0)",
                arguments: [title, "u-\(title)"])
        }
        try queue.close()
    }

    @Test func twoHundredStoresAreEachWokenByInotifyAloneAndReleaseTheirWatches() async throws {
        let directory = try ScratchDirectory()
        try await Self.requireInstance(directory)
        let count = 200
        var stores: [Store] = []
        for index in 0..<count {
            stores.append(try Store(path: directory.path("s\(index).sqlite"), records: [Article.self]))
        }
        #expect(
            stores.allSatisfy { $0.externalChangeDetection == .inotify },
            "\(Set(stores.map(\.externalChangeDetection.description)))")
        #expect(Self.inotifyDescriptors() == 1, "one inotify instance for the process's every store")
        let registry = InotifyRegistry.shared
        let folder = directory.url.path
        #expect(registry.introspect(folder).holders == count, "one hold of the directory's one watch per store")
        #expect(
            stores.allSatisfy {
                registry.introspect($0.path!).holders == 1 && registry.introspect($0.path! + "-wal").holders == 1
            })

        let first = try await XprocTable(stores[0], sectioned: false)
        let middle = try await XprocTable(stores[100], sectioned: false)
        let last = try await XprocTable(stores[count - 1], sectioned: false)
        for store in stores { store.diagnostics.resetCounters() }

        try Self.insertElsewhere(stores[0].path!, "first")
        var changes = try await first.settle("the first store's commit", count: 1)
        #expect(changes.count == 1 && changes.first?.insertedItems.count == 1, "\(changes)")
        try Self.insertElsewhere(stores[count - 1].path!, "last")
        changes = try await last.settle("the last store's commit", count: 1)
        #expect(changes.count == 1 && changes.first?.insertedItems.count == 1, "\(changes)")

        let counters = stores.map(\.diagnostics.counters)
        #expect(counters[0].fileNotifications >= 1 && counters[count - 1].fileNotifications >= 1)
        let others = counters.indices.filter { $0 != 0 && $0 != count - 1 }
        #expect(
            others.allSatisfy { counters[$0].fileNotifications == 0 && counters[$0].changeLogRowsRead == 0 },
            "woken: \(others.filter { counters[$0].fileNotifications > 0 })")
        #expect(middle.changeSets.isEmpty)
        #expect(counters[0].changeLogReloads == 0 && counters[count - 1].changeLogReloads == 0)

        // Closing every store but the last releases their watches, not the last one's.
        for store in stores.dropLast() { try store.close() }
        #expect(stores.dropLast().allSatisfy { !registry.introspect($0.path!).isWatched && $0.externalChangeDetection == .none })
        #expect(registry.introspect(folder).holders == 1)
        #expect(registry.introspect(stores[count - 1].path!).isWatched)
        let before = stores[count - 1].diagnostics.counters.fileNotifications
        try Self.insertElsewhere(stores[count - 1].path!, "after the others closed")
        changes = try await last.settle("the last store, alone in the directory", count: 1)
        #expect(changes.count == 1 && changes.first?.insertedItems.count == 1, "\(changes)")
        #expect(stores[count - 1].diagnostics.counters.fileNotifications > before, "woken by inotify, not polling")

        try stores[count - 1].close()
        #expect(!registry.introspect(folder).isWatched && registry.introspect(folder).holders == 0)
        #expect(!registry.introspect(stores[count - 1].path! + "-wal").isWatched)
    }

    /// Two stores on one file hold the kernel's one watch of it together: the first to close
    /// leaves the other's, which still wakes it.
    @Test func twoStoresOnOneFileKeepEachOthersWatch() async throws {
        let directory = try ScratchDirectory()
        try await Self.requireInstance(directory)
        let path = directory.path("shared.sqlite")
        let one = try Store(path: path, records: [Article.self])
        let two = try Store(path: path, records: [Article.self])
        let registry = InotifyRegistry.shared
        #expect(registry.introspect(path).holders == 2 && registry.introspect(path + "-wal").holders == 2)
        let table = try await XprocTable(two, sectioned: false)
        try one.close()
        #expect(registry.introspect(path).holders == 1 && registry.introspect(path + "-wal").holders == 1)
        two.diagnostics.resetCounters()
        try Self.insertElsewhere(path, "after one closed")
        let changes = try await table.settle("the store left open", count: 1)
        #expect(changes.count == 1 && changes.first?.insertedItems.count == 1, "\(changes)")
        #expect(two.diagnostics.counters.fileNotifications >= 1)
        try two.close()
        #expect(!registry.introspect(path).isWatched)
        // Opened again, the file is watched again.
        let again = try Store(path: path, records: [Article.self])
        #expect(again.externalChangeDetection == .inotify && registry.introspect(path).holders == 1)
        try again.close()
    }

    /// The registry itself, on plain files: a watcher is told of its file's writes with the
    /// registry's lock released (its thread can take it: other stores of the process, and
    /// this test's own census, may hold it a moment, so whether it is free at that instant
    /// proves nothing); a file made in the directory wakes only the watcher of that
    /// name; a registration taken back twice is taken back once.
    @Test func theRegistryNotifiesByNameWithItsLockFree() async throws {
        let directory = try ScratchDirectory()
        try await Self.requireInstance(directory)
        let registry = InotifyRegistry.shared
        let seen = Locked<[String: Int]>([:])
        let lockFree = Locked<[Bool]>([])
        // The files exist before any watch of the directory: no event tells of them.
        for name in ["a.sqlite", "b.sqlite"] {
            _ = FileManager.default.createFile(atPath: directory.path(name), contents: Data())
        }
        func watcher(_ name: String) -> InotifyRegistry.Token? {
            registry.watch(path: directory.path(name)) {
                lockFree.withLock { $0.append(registry._canTakeLock(within: 10)) }
                seen.withLock { $0[name, default: 0] += 1 }
            }
        }
        let a = try #require(watcher("a.sqlite"))
        let b = try #require(watcher("b.sqlite"))
        func waitFor(_ name: String, times: Int) async throws {
            for _ in 0..<2_000 where seen.current[name, default: 0] < times { try await Task.sleep(for: .milliseconds(5)) }
            #expect(seen.current[name, default: 0] >= times, "\(name) was not notified: \(seen.current)")
        }
        func append(_ name: String) throws {
            let handle = try #require(FileHandle(forWritingAtPath: directory.path(name)))
            try handle.seekToEnd()
            handle.write(Data("frame".utf8))
            try handle.close()
        }
        // Files made in the directory: a `-wal` wakes its store (and is watched from then on),
        // another file nobody.
        _ = FileManager.default.createFile(atPath: directory.path("unrelated-wal"), contents: Data())
        _ = FileManager.default.createFile(atPath: directory.path("a.sqlite-wal"), contents: Data())
        try await waitFor("a.sqlite", times: 1)
        for _ in 0..<2_000 where registry.introspect(directory.path("a.sqlite-wal")).holders == 0 {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(registry.introspect(directory.path("a.sqlite-wal")).holders == 1)
        // A write to a's `-wal` wakes a; read in order by one reader, every event before it
        // was dispatched by then: none woke b.
        let before = seen.current["a.sqlite", default: 0]
        try append("a.sqlite-wal")
        try await waitFor("a.sqlite", times: before + 1)
        #expect(seen.current["b.sqlite"] == nil, "b was woken by other files: \(seen.current)")
        try append("b.sqlite")
        try await waitFor("b.sqlite", times: 1)
        #expect(lockFree.current.allSatisfy { $0 } && !lockFree.current.isEmpty)
        registry.unwatch(a)
        registry.unwatch(a)
        #expect(registry.introspect(directory.path("a.sqlite")).holders == 0)
        #expect(registry.introspect(directory.url.path).holders == 1, "b's hold of the directory stays")
        registry.unwatch(b)
        #expect(!registry.introspect(directory.url.path).isWatched)
    }
}
#endif
