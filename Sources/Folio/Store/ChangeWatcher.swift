import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a ``Store`` learns that another process (or a connection it does not own) committed
/// to its file: see ``Store/externalChangeDetection``.
public enum ExternalChangeDetection: Sendable, Equatable, CustomStringConvertible {
    /// Linux: the kernel's inotify tells the store when the file's `-wal` (or the database
    /// file, written by a rollback-journal writer) is written. A watch is set by path and
    /// holds no descriptor of the file, so SQLite's POSIX locks are never at risk.
    case inotify
    /// Apple platforms: a dispatch source on the `-wal`, opened with `O_EVTONLY`
    /// (notification only; never read or written).
    case dispatchSource
    /// No notification mechanism could be set up: the store checks every `interval`.
    case polling(interval: Duration)
    /// A store in memory: no other connection can write to it.
    case none

    /// `inotify`, `dispatch source`, `polling every 0.1 seconds` or `none`.
    /// - Complexity: O(1).
    public var description: String {
        switch self {
        case .inotify: "inotify"
        case .dispatchSource: "dispatch source"
        case .polling(let interval): "polling every \(interval)"
        case .none: "none"
        }
    }
}

/// Wakes a store when its file may have changed under it: file-system notifications on
/// the `-wal` and the database file, or a timer where those cannot be had.
///
/// A notification only says that a file was written: SQLite writes a commit's frames to the
/// `-wal` before it publishes the commit in the `-shm` (which is mapped memory, and sends no
/// notification), and a checkpoint writes both files without committing anything. So each
/// wake-up is confirmed by the store with `PRAGMA data_version` (a checkpoint sends
/// nothing), and checked again a few times shortly after the last notification of a burst
/// (``rechecks``), so that a commit published just after the first check is not left for
/// the next write to find.
///
/// Never a descriptor on the database file or the `-shm` (closing one would drop every
/// POSIX lock the process holds on the file: DESIGN.md, sqlite.org/howtocorrupt §2.2).
/// inotify watches by path; on Apple platforms only the `-wal` is opened, with
/// `O_EVTONLY`, which SQLite never locks.
final class ChangeWatcher: @unchecked Sendable {
    // @unchecked Sendable: `generation` and the watch descriptors are touched only on
    // `queue`; the rest is immutable.
    let detection: ExternalChangeDetection
    private let queue: DispatchQueue
    private let wake: @Sendable () -> Void
    private let source: (any DispatchSourceProtocol)?
    /// Bumped at every notification: only the latest burst's re-checks run.
    private var generation: UInt64 = 0

    /// After a notification: checked at once, then again after these delays unless another
    /// notification came meanwhile.
    static let rechecks: [DispatchTimeInterval] = [.milliseconds(2), .milliseconds(15), .milliseconds(100)]
    /// The polling interval when no notification mechanism is available.
    static let pollingInterval = Duration.milliseconds(100)

    /// Starts watching `path` (and its `-wal`), calling `wake` on a private queue when it may
    /// have changed. With `notifications: false`, polls (the fallback, forced for tests).
    init(path: String, notifications: Bool = true, wake: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "folio.change-watcher")
        self.queue = queue
        self.wake = wake
        let watched = notifications ? Self.notificationSource(path: path, queue: queue) : nil
        if let watched {
            detection = watched.detection
            drain = watched.drain
            source = watched.source
            watched.source.setEventHandler { [weak self] in self?.notified() }
        } else {
            detection = .polling(interval: Self.pollingInterval)
            drain = {}
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let interval = DispatchTimeInterval.milliseconds(
                Int(
                    Self.pollingInterval.components.seconds * 1000 + Self.pollingInterval.components.attoseconds
                        / 1_000_000_000_000_000))
            timer.schedule(deadline: .now() + interval, repeating: interval)
            timer.setEventHandler { wake() }
            source = timer
        }
        source?.resume()
    }

    deinit { source?.cancel() }

    /// Stops watching (the store closed).
    func cancel() { source?.cancel() }

    /// A notification (on `queue`): wake now, and again after each of ``rechecks`` unless a
    /// later notification started its own series.
    private func notified() {
        drain()
        generation &+= 1
        let current = generation
        wake()
        for delay in Self.rechecks {
            queue.asyncAfter(deadline: .now() + delay) { [weak self] in
                guard let self, self.generation == current else { return }
                self.wake()
            }
        }
    }

    /// Reads the pending notifications (inotify), so that the source fires again for new
    /// ones. On `queue` only.
    private let drain: () -> Void

    /// A notification source, its mechanism, and what reads its pending notifications.
    private typealias Watched = (
        detection: ExternalChangeDetection, source: any DispatchSourceProtocol, drain: () -> Void
    )

    #if canImport(Glibc)
    /// inotify on the `-wal` (written at every commit), the database file (a
    /// rollback-journal writer, a checkpoint) and the directory (a `-wal` made again after
    /// it was deleted: its watch is set again at the next notification).
    private static func notificationSource(path: String, queue: DispatchQueue) -> Watched? {
        let fd = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        let wal = path + "-wal"
        let directory = (path as NSString).deletingLastPathComponent
        let modified = UInt32(IN_MODIFY)
        guard inotify_add_watch(fd, path, modified) >= 0,
            inotify_add_watch(fd, directory.isEmpty ? "." : directory, UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)) >= 0
        else {
            close(fd)
            return nil
        }
        _ = inotify_add_watch(fd, wal, modified)
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setCancelHandler { close(fd) }
        let drain = {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
            // The same watch when it is still set; a new one for a `-wal` made again.
            _ = inotify_add_watch(fd, wal, modified)
        }
        return (.inotify, source, drain)
    }
    #elseif canImport(Darwin)
    /// A dispatch source on the `-wal`, opened with `O_EVTONLY` (the database file is not
    /// opened: closing a descriptor of it would drop SQLite's locks).
    private static func notificationSource(path: String, queue: DispatchQueue) -> Watched? {
        let fd = open(path + "-wal", O_EVTONLY)
        guard fd >= 0 else { return nil }
        let source = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: fd, eventMask: [.write, .extend, .delete, .rename], queue: queue)
        source.setCancelHandler { close(fd) }
        return (.dispatchSource, source, {})
    }
    #else
    private static func notificationSource(path: String, queue: DispatchQueue) -> Watched? { nil }
    #endif
}
