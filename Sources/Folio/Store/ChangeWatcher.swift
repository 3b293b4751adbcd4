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
    /// No notification mechanism could be set up: the store compares the file's and its
    /// `-wal`'s size, time and inode every 10 ms (two `stat` calls, no SQL) and follows a
    /// change at once, and it checks the database itself every `interval` whatever the files
    /// say (for a file system whose times lag behind its writes).
    case polling(interval: Duration)
    /// A store in memory: no other connection can write to it.
    case none

    /// `inotify`, `dispatch source`, `polling the files every 0.01 seconds, the database
    /// every 0.1 seconds` or `none`.
    /// - Complexity: O(1).
    public var description: String {
        switch self {
        case .inotify: "inotify"
        case .dispatchSource: "dispatch source"
        case .polling(let interval):
            "polling the files every \(ChangeWatcher.pollingStampInterval), the database every \(interval)"
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
/// inotify watches by path, in the process's one inotify instance shared by every store
/// (``InotifyRegistry``); on Apple platforms only the `-wal` is opened, with `O_EVTONLY`,
/// which SQLite never locks.
final class ChangeWatcher: @unchecked Sendable {
    // @unchecked Sendable: the re-check and heartbeat state is touched only on `queue`; the
    // rest is immutable (the registry and the sources are themselves thread-safe).
    let detection: ExternalChangeDetection
    private let queue: DispatchQueue
    private let wake: @Sendable () -> Void
    private let notificationCount: (@Sendable () -> Void)?
    /// A polling timer, or (Apple platforms) the dispatch source of the `-wal`.
    private let source: (any DispatchSourceProtocol)?
    #if canImport(Glibc)
    /// The store's watches in the process's one inotify instance (``InotifyRegistry``).
    private let registration: InotifyRegistry.Token?
    #endif
    /// When the latest notification came: the re-checks count from it.
    private var lastNotified = DispatchTime.now()
    /// The next of ``rechecks`` to run after ``lastNotified`` (`rechecks.count`: none).
    private var nextRecheck = ChangeWatcher.rechecks.count
    /// The one timer that runs the re-checks, and the deadline it is
    /// set for (`nil`: not set). A burst of notifications — a large write of the store's own
    /// sends hundreds — moves the series' start without setting a timer for each.
    private var recheckTimer: (any DispatchSourceTimer)?
    private var recheckDeadline: DispatchTime?
    /// The heartbeat: a timer that wakes the store when the files changed although no
    /// notification came for a whole ``heartbeat`` (polling: every ``pollingStampInterval``).
    private var heartbeatTimer: (any DispatchSourceTimer)?
    /// The files as the last heartbeat (or the notification before it) found them.
    private var lastStamp: FileStamp?
    /// A notification came since the last heartbeat.
    private var notifiedSinceHeartbeat = false
    /// Tests: notifications are counted but do not wake the store (a lost notification).
    private let dropsNotifications: Bool
    /// Whether the store follows the file for a live list now: then every heartbeat wakes
    /// it (one `PRAGMA data_version`), whatever the files' stamps say (``heartbeatFired(path:)``).
    private let isFollowed: @Sendable () -> Bool
    /// Tests: the files' stamps as the heartbeat reads them (a file system whose stamps do
    /// not change).
    private let stamp: @Sendable (String) -> FileStamp

    /// After a notification: checked at once, then again after these delays unless another
    /// notification came meanwhile.
    /// The last ones cover a writer whose `fsync` of the `-wal`, between writing a commit's
    /// frames (the notification) and publishing it in the `-shm`, takes long on a busy disk.
    static let rechecks: [DispatchTimeInterval] = [
        .milliseconds(2), .milliseconds(15), .milliseconds(100), .milliseconds(500), .milliseconds(2_000),
    ]
    /// The polling interval when no notification mechanism is available: the database's
    /// own check (`PRAGMA data_version`), whatever the files' stamps say.
    static let pollingInterval = Duration.milliseconds(100)
    /// How often a polling store compares the files' stamps (``FileStamp``): a change wakes
    /// it as a notification would, re-checks included, so another process's commit is
    /// followed within about this interval rather than within ``pollingInterval``.
    static let pollingStampInterval = Duration.milliseconds(10)
    /// How often the files' size and modification time are compared with the last ones seen,
    /// where notifications watch them: a change that no notification reported for a whole
    /// interval (a lost event) wakes the store. Two `stat` calls, no SQL, when nothing changed.
    static let heartbeat = DispatchTimeInterval.seconds(1)

    /// Starts watching `path` (and its `-wal`), calling `wake` on a private queue when it may
    /// have changed. With `notifications: false`, polls (the fallback, forced for tests).
    /// `notified` is called at each file-system notification (not at re-checks or polls),
    /// for the store's counters.
    /// `dropsNotifications` (tests) counts notifications but acts on none, as if the kernel
    /// had lost them: only the heartbeat wakes the store.
    init(
        path: String, notifications: Bool = true, dropsNotifications: Bool = false,
        heartbeat: DispatchTimeInterval = ChangeWatcher.heartbeat,
        polling: Duration = ChangeWatcher.pollingInterval,
        notified: (@Sendable () -> Void)? = nil, isFollowed: @escaping @Sendable () -> Bool = { false },
        stamp: @escaping @Sendable (String) -> FileStamp = { FileStamp(path: $0) },
        wake: @escaping @Sendable () -> Void
    ) {
        let queue = DispatchQueue(label: "folio.change-watcher")
        self.queue = queue
        self.wake = wake
        self.isFollowed = isFollowed
        self.stamp = stamp
        self.notificationCount = notified
        self.dropsNotifications = dropsNotifications
        // The handler reaches the watcher through a box set once the watcher exists (the
        // registry may call it as soon as the watch is set).
        let box = WeakBox()
        var mechanism: ExternalChangeDetection?
        var source: (any DispatchSourceProtocol)?
        #if canImport(Glibc)
        registration =
            notifications
            ? InotifyRegistry.shared.watch(path: path) { queue.async { box.watcher?.notified() } } : nil
        if registration != nil { mechanism = .inotify }
        #elseif canImport(Darwin)
        if notifications, let watched = Self.dispatchSource(path: path, queue: queue) {
            watched.setEventHandler { box.watcher?.notified() }
            source = watched
            mechanism = .dispatchSource
        }
        #endif
        // The heartbeat compares the files' stamps: once a second beside notifications, and
        // every ``pollingStampInterval`` when polling, where it is what follows a commit soon.
        let stampInterval: DispatchTimeInterval
        if let mechanism {
            detection = mechanism
            stampInterval = heartbeat
        } else {
            detection = .polling(interval: polling)
            stampInterval = Self.dispatchInterval(Self.pollingStampInterval)
            let interval = Self.dispatchInterval(polling)
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + interval, repeating: interval)
            timer.setEventHandler { wake() }
            source = timer
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(
            deadline: .now() + stampInterval, repeating: stampInterval,
            leeway: mechanism == nil ? .milliseconds(2) : .milliseconds(100))
        timer.setEventHandler { box.watcher?.heartbeatFired(path: path) }
        heartbeatTimer = timer
        let rechecks = DispatchSource.makeTimerSource(queue: queue)
        rechecks.setEventHandler { box.watcher?.recheckFired() }
        recheckTimer = rechecks
        self.source = source
        box.watcher = self
        source?.resume()
        queue.async { [weak self] in self?.lastStamp = stamp(path) }
        timer.resume()
        rechecks.schedule(deadline: .distantFuture)
        rechecks.resume()
    }

    deinit { cancel() }

    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
    }

    /// Stops watching (the store closed): its watches are taken back from the process's
    /// inotify instance (those other stores hold stay). Idempotent.
    func cancel() {
        source?.cancel()
        heartbeatTimer?.cancel()
        recheckTimer?.cancel()
        #if canImport(Glibc)
        if let registration { InotifyRegistry.shared.unwatch(registration) }
        #endif
    }

    /// A notification (on `queue`): wake now, and again after each of ``rechecks``, counted
    /// from the latest notification (a later one starts the series again).
    private func notified() {
        notificationCount?()
        if dropsNotifications { return }
        notifiedSinceHeartbeat = true
        wakeAndRecheck()
    }

    /// Wakes the store now and after each of ``rechecks``, counted from now (a later call
    /// starts the series again) (on `queue`).
    private func wakeAndRecheck() {
        lastNotified = .now()
        nextRecheck = 0
        wake()
        setRecheckTimer(by: lastNotified + Self.rechecks[0])
    }

    /// The re-check timer fired (on `queue`): wake if the next re-check is due, and set the
    /// timer for the one after; if a notification came since it was set, only set it again
    /// for the series' new start.
    private func recheckFired() {
        recheckDeadline = nil
        guard nextRecheck < Self.rechecks.count else { return }
        let due = lastNotified + Self.rechecks[nextRecheck]
        if DispatchTime.now() < due { return setRecheckTimer(by: due) }
        wake()
        nextRecheck += 1
        if nextRecheck < Self.rechecks.count { setRecheckTimer(by: lastNotified + Self.rechecks[nextRecheck]) }
    }

    /// Sets the re-check timer for `deadline` unless it is already set for it or earlier
    /// (when it fires, it finds the re-check not due yet and sets itself again).
    private func setRecheckTimer(by deadline: DispatchTime) {
        guard let recheckTimer else { return }
        if let recheckDeadline, recheckDeadline <= deadline { return }
        recheckDeadline = deadline
        recheckTimer.schedule(deadline: deadline)
    }

    /// The heartbeat (on `queue`): when no notification came since the last one and the
    /// files differ from how it last found them, a notification was lost (or never sent):
    /// wake the store as a notification would, re-checks included. A burst that did notify
    /// is left to its own re-checks, so the store's own writes never cost a wake-up here.
    ///
    /// The re-checks matter as much as for a notification: the files change when a commit's
    /// frames are written, before the writer's `fsync` and its publication in the `-shm`. A
    /// heartbeat in between finds nothing to read, and the next one finds the files as this
    /// one left them: without a re-check, the commit would wait for the store's next write.
    ///
    /// And while a live list follows the store, every heartbeat wakes it whatever the files
    /// say: one `PRAGMA data_version` a second. It finds a commit published after every
    /// re-check of its notification ran (a writer whose `fsync` took seconds on a loaded
    /// machine, a file system whose stamps do not move), which nothing else would look for
    /// until the store's next write. An idle store costs two `stat` calls a second.
    private func heartbeatFired(path: String) {
        let stamp = self.stamp(path)
        defer {
            lastStamp = stamp
            notifiedSinceHeartbeat = false
        }
        if !notifiedSinceHeartbeat, stamp != lastStamp { return wakeAndRecheck() }
        if isFollowed() { wake() }
    }

    /// The watcher a notification handler reaches, set once it is made (a notification
    /// before that finds none: the store follows the file from its state after opening, and
    /// re-checks at every later notification).
    private final class WeakBox: Sendable {
        private struct Reference {
            weak var watcher: ChangeWatcher?
        }
        private let reference = Locked(Reference())

        var watcher: ChangeWatcher? {
            get { reference.withLock { $0.watcher } }
            set { reference.withLock { $0.watcher = newValue } }
        }
    }

    #if canImport(Darwin)
    /// A dispatch source on the `-wal`, opened with `O_EVTONLY` (the database file is not
    /// opened: closing a descriptor of it would drop SQLite's locks).
    private static func dispatchSource(path: String, queue: DispatchQueue) -> (any DispatchSourceFileSystemObject)? {
        let fd = open(path + "-wal", O_EVTONLY)
        guard fd >= 0 else { return nil }
        let source = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: fd, eventMask: [.write, .extend, .delete, .rename], queue: queue)
        source.setCancelHandler { close(fd) }
        return source
    }
    #endif
}

/// The size, modification time and inode of a database file and its `-wal`, read with
/// `stat` (no descriptor: closing one would drop SQLite's locks): what changes when
/// another program writes either.
struct FileStamp: Equatable, Sendable {
    private var parts: [Int64]

    /// Tests: a stamp that never moves, as on a file system whose times lag its writes.
    static let frozen = FileStamp(parts: [])

    private init(parts: [Int64]) { self.parts = parts }

    init(path: String) {
        parts = []
        for file in [path, path + "-wal"] {
            var info = stat()
            if stat(file, &info) == 0 {
                #if canImport(Darwin)
                let modified = info.st_mtimespec
                #else
                let modified = info.st_mtim
                #endif
                parts += [
                    Int64(info.st_size), Int64(modified.tv_sec), Int64(modified.tv_nsec),
                    Int64(bitPattern: UInt64(info.st_ino)),
                ]
            } else {
                parts += [-1, -1, -1, -1]
            }
        }
    }
}
