#if os(Linux)
import Dispatch
import Foundation
import Testing
@testable import Folio

/// A watcher wakes its store at each notification, then re-checks after each of
/// ``ChangeWatcher/rechecks``, counted from the latest notification: one timer runs the
/// series, however many notifications a burst sends.
@Suite("A watcher's re-checks after the last notification")
@MainActor
struct ChangeWatcherRecheckTests {
    /// Appends `count` bytes to `path`, one write each (a notification each, or fewer when
    /// the kernel merges them).
    static func append(_ count: Int, to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        for i in 0..<count { try handle.write(contentsOf: Data([UInt8(truncatingIfNeeded: i)])) }
    }

    nonisolated static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    @Test func theSeriesRestartsAtEachNotificationAndEndsTwoSecondsAfterTheLast() async throws {
        let directory = try ScratchDirectory()
        try await SharedInotifyTests.requireInstance(directory)
        let path = directory.path("watched.sqlite")
        for file in [path, path + "-wal"] { #expect(FileManager.default.createFile(atPath: file, contents: Data())) }
        let wakes = Locked<[UInt64]>([])
        let notifications = Locked(0)
        let watcher = ChangeWatcher(
            path: path, heartbeat: .seconds(3_600), notified: { notifications.withLock { $0 += 1 } }
        ) { wakes.withLock { $0.append(Self.now) } }
        defer { watcher.cancel() }
        #expect(watcher.detection == .inotify)
        func woken(after start: UInt64, within span: UInt64 = .max) -> Int {
            wakes.withLock { $0.filter { $0 > start && $0 - start <= span }.count }
        }

        // A burst of 500 writes: a wake-up at once, the series after.
        try Self.append(500, to: path + "-wal")
        // The series' 2 ms, 15 ms and 100 ms re-checks are over by 150 ms; its 500 ms one
        // would come about 350 ms after `second`.
        try await Task.sleep(for: .milliseconds(150))
        let second = Self.now
        try Self.append(1, to: path + "-wal")
        // The new notification starts the series again: 2 ms, 15 ms and 100 ms after it,
        // not only the first series' 500 ms re-check left over.
        let deadline = Self.now + 5_000_000_000
        while woken(after: second, within: 300_000_000) < 4, Self.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(
            woken(after: second, within: 300_000_000) >= 4,
            "the notification's own wake-up and its 2, 15 and 100 ms re-checks within 300 ms")
        // The 500 ms and 2 s re-checks of the last series, and nothing after them.
        let later = second + 400_000_000
        while woken(after: later) < 2, Self.now < second + 10_000_000_000 {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(600))
        let tail = wakes.withLock { $0.filter { $0 > later } }
        #expect(tail.count == 2, "the last series' 500 ms and 2 s re-checks: \(tail.map { ($0 - second) / 1_000_000 }) ms")
        if let last = tail.last { #expect(last - second >= 1_900_000_000, "the last re-check 2 s after the notification") }
        #expect(notifications.withLock { $0 } >= 2)
    }
}
#endif
