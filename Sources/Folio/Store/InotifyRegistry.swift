import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc

/// The process's one inotify instance, shared by every ``Store`` that watches its file
/// (``ChangeWatcher``): one descriptor, one reader (a dispatch read source on one serial
/// queue), and watches added and removed per store.
///
/// Linux allows 128 inotify instances per user by default, shared with every other process
/// of the user: one instance per store ran out with a few dozen stores open in a test run
/// beside other programs, and the rest fell back to polling. One instance per process takes
/// one of them, however many stores the process opens.
///
/// The kernel gives one watch descriptor per watched inode (two stores on one file, or a
/// hundred stores in one directory, get the same descriptor back), so each descriptor is
/// reference-counted by the stores holding it: removing a store's watch removes the kernel's
/// only when no other store holds it, and a mask is only ever added to (`IN_MASK_ADD`),
/// never narrowed. Adding and removing a kernel watch happen under the registry's lock with
/// the tables that count them, so that a removal can never undo another store's addition of
/// the same inode. No SQL and no caller's code runs under it: a store's `notify` is called
/// after the lock is released.
///
/// Events are dispatched by descriptor: a modification of a file wakes the stores watching
/// it; a file made or moved into a directory wakes only the stores whose database or `-wal`
/// has that name (and their watch of it is set again: a `-wal` is deleted when the last
/// connection closes and made again by the next). An overflowed queue wakes every store.
///
/// The descriptor stays open for the life of the process once made. When it cannot be made
/// (the user's instances are all taken), it is tried again at the next store's watch, and
/// meanwhile stores poll (``ExternalChangeDetection/polling(interval:)``).
final class InotifyRegistry: Sendable {
    static let shared = InotifyRegistry()

    /// What a store watches: its database file, its `-wal`, and their directory.
    enum Kind: CaseIterable, Sendable {
        case database, wal, directory
    }

    /// One store's registration.
    fileprivate struct Subscriber {
        var paths: [Kind: String]
        /// The names, in the directory, of the database file and the `-wal`.
        var names: [String: Kind]
        /// The kernel's descriptor of each watch the store holds now.
        var descriptors: [Kind: Int32] = [:]
        let notify: @Sendable () -> Void
    }

    /// A registration's handle: ``unwatch(_:)`` takes it back (once; later calls do nothing).
    struct Token: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    /// The counts ``introspect(_:)`` reports, for tests.
    struct Census: Equatable, Sendable {
        /// Stores registered.
        var subscribers = 0
        /// Kernel watches held (distinct descriptors).
        var descriptors = 0
        /// Holdings of `path`'s watch among the subscribers (each store's database, `-wal`
        /// or directory at that path, counted once per store).
        var holders = 0
        /// Whether the kernel watch of `path` is held by anybody.
        var isWatched = false
        /// Events read from the descriptor since the process started.
        var eventsRead = 0
    }

    /// The registry's fields, changed together under one lock.
    fileprivate struct State {
        var fd: Int32 = -1
        var source: (any DispatchSourceRead)?
        var nextID: UInt64 = 1
        var subscribers: [UInt64: Subscriber] = [:]
        /// Each kernel watch descriptor: the subscribers holding it, with how many times each
        /// holds it (a store's database and its directory are different inodes; a hard link
        /// could make two of its paths one).
        var holders: [Int32: [UInt64: Int]] = [:]
        var eventsRead = 0
    }

    private let state = Locked(State())
    private let queue = DispatchQueue(label: "folio.inotify")

    /// A write, and a close after writing: a process that commits and exits (a command-line
    /// import, the `sqlite3` shell) closes the `-wal` after it published its commit in the
    /// `-shm`, which no notification tells of (it is mapped memory) — a wake-up the commit's
    /// own writes, before a slow `fsync`, may come too early for.
    /// After reading a batch of events, how long the reader waits before reading the next.
    static let readingPause = DispatchTimeInterval.milliseconds(1)
    fileprivate static let fileMask = UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE)
    fileprivate static let directoryMask = UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)

    /// Watches `path` (the database file), its `-wal` (when it exists) and its directory,
    /// calling `notify` on the registry's queue, with no lock held, at each notification that
    /// concerns them. Returns `nil` when inotify is not available (no instance could be made,
    /// or the database file or its directory cannot be watched): the caller polls.
    func watch(path: String, notify: @escaping @Sendable () -> Void) -> Token? {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let paths: [Kind: String] = [
            .database: path, .wal: path + "-wal", .directory: directory.isEmpty ? "." : directory,
        ]
        return state.withLock { state -> Token? in
            guard startIfNeeded(&state) else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(
                paths: paths, names: [name: .database, name + "-wal": .wal], notify: notify)
            guard state.addWatch(id, .database), state.addWatch(id, .directory) else {
                state.removeAll(id)
                return nil
            }
            _ = state.addWatch(id, .wal)  // made again later if missing now
            return Token(id: id)
        }
    }

    /// Takes a registration back: each watch it held is removed from the kernel when no
    /// other registration holds it. Idempotent.
    func unwatch(_ token: Token) {
        state.withLock { $0.removeAll(token.id) }
    }

    /// Counts for tests: the registrations, the kernel watches, and `path`'s.
    func introspect(_ path: String? = nil) -> Census {
        state.withLock { state in
            var census = Census(
                subscribers: state.subscribers.count, descriptors: state.holders.count, eventsRead: state.eventsRead)
            if let path {
                for subscriber in state.subscribers.values {
                    for (kind, watched) in subscriber.paths where watched == path && subscriber.descriptors[kind] != nil {
                        census.holders += 1
                        census.isWatched = true
                    }
                }
            }
            return census
        }
    }

    /// Whether the calling thread can take the registry's lock within `timeout` (tests: a
    /// notification is sent with the lock released). A thread that holds it cannot take it
    /// again (the lock is not recursive) and gets `false` once `timeout` passed; another
    /// thread's hold — another store's watch, a census — is brief and waited out. (Whether
    /// the lock is free at one instant says nothing of the caller: any store of the process
    /// may be holding it then.)
    func _canTakeLock(within timeout: TimeInterval) -> Bool {
        state._canTakeLock(within: timeout)
    }

    /// Makes the instance and its reader, once. Under the lock of `state`.
    private func startIfNeeded(_ state: inout State) -> Bool {
        if state.fd >= 0 { return true }
        let made = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard made >= 0 else { return false }
        state.fd = made
        let source = DispatchSource.makeReadSource(fileDescriptor: made, queue: queue)
        source.setEventHandler { [weak self] in
            self?.readEvents(made)
            self?.pauseReading()
        }
        source.resume()
        state.source = source
        return true
    }
}

// Under the lock: the registry's bookkeeping (the kernel's watches and who holds them).
extension InotifyRegistry.State {
    /// Sets the kernel watch of one of a subscriber's paths and counts it (the same
    /// descriptor when it held it already). Returns whether the path is watched.
    @discardableResult
    mutating func addWatch(_ id: UInt64, _ kind: InotifyRegistry.Kind) -> Bool {
        guard let path = subscribers[id]?.paths[kind] else { return false }
        let mask = (kind == .directory ? InotifyRegistry.directoryMask : InotifyRegistry.fileMask) | UInt32(IN_MASK_ADD)
        let descriptor = inotify_add_watch(fd, path, mask)
        guard descriptor >= 0 else { return false }
        if let held = subscribers[id]?.descriptors[kind] {
            if held == descriptor { return true }
            release(id, held)
        }
        subscribers[id]?.descriptors[kind] = descriptor
        holders[descriptor, default: [:]][id, default: 0] += 1
        return true
    }

    /// Drops a subscriber's hold of a descriptor; the kernel watch goes with the last hold.
    mutating func release(_ id: UInt64, _ descriptor: Int32) {
        guard var held = holders[descriptor], let count = held[id] else { return }
        held[id] = count > 1 ? count - 1 : nil
        if held.isEmpty {
            holders[descriptor] = nil
            _ = inotify_rm_watch(fd, descriptor)
        } else {
            holders[descriptor] = held
        }
    }

    /// Removes a subscriber and its holds.
    mutating func removeAll(_ id: UInt64) {
        guard let subscriber = subscribers.removeValue(forKey: id) else { return }
        for descriptor in subscriber.descriptors.values { release(id, descriptor) }
    }

    /// The subscribers an event concerns (and the bookkeeping it asks for).
    mutating func concerned(descriptor: Int32, mask: UInt32, name: String?) -> [UInt64] {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            // Events were lost: everybody looks.
            return Array(subscribers.keys)
        }
        guard let held = holders[descriptor] else { return [] }
        if mask & UInt32(IN_IGNORED) != 0 {
            // The kernel dropped the watch (its file was deleted): nobody holds it any more;
            // a file made again at the path is watched at its directory's event.
            holders[descriptor] = nil
            for id in held.keys {
                for (kind, value) in subscribers[id]?.descriptors ?? [:] where value == descriptor {
                    subscribers[id]?.descriptors[kind] = nil
                }
            }
            return []
        }
        var woken: [UInt64] = []
        for id in held.keys {
            guard let subscriber = subscribers[id] else { continue }
            if subscriber.descriptors[.directory] == descriptor, subscriber.descriptors[.database] != descriptor,
                subscriber.descriptors[.wal] != descriptor
            {
                // A file made or moved into the directory: this store's only if it is its
                // database or its `-wal`, whose watch is set (again).
                guard let name, let kind = subscriber.names[name] else { continue }
                addWatch(id, kind)
            } else if subscriber.descriptors[.wal] == nil {
                addWatch(id, .wal)
            }
            woken.append(id)
        }
        return woken
    }
}

extension InotifyRegistry {
    // MARK: Events

    /// After a batch (on `queue`): the reader rests for ``readingPause``. A burst — a large
    /// write sends an event per page written to the `-wal` — is read a batch per pause at
    /// most, and the kernel merges the events that repeat the last unread one meanwhile, so
    /// it costs a few wake-ups, not hundreds. The first event after a quiet spell is read
    /// at once.
    private func pauseReading() {
        guard let source = state.withLock({ $0.source }) else { return }
        source.suspend()
        queue.asyncAfter(deadline: .now() + Self.readingPause) { [weak self] in
            guard let self else { return }
            let source = self.state.withLock { $0.source }
            source?.resume()
        }
    }

    /// Reads every pending event (on `queue`), works out under the lock which subscribers
    /// they concern, and notifies those after it.
    private func readEvents(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var notified: [UInt64: @Sendable () -> Void] = [:]
        while true {
            let count = buffer.withUnsafeMutableBytes { bytes in read(fd, bytes.baseAddress, bytes.count) }
            guard count > 0 else { break }
            state.withLock { state in
                buffer.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset + 16 <= count {
                        let descriptor = bytes.load(fromByteOffset: offset, as: Int32.self)
                        let mask = bytes.load(fromByteOffset: offset + 4, as: UInt32.self)
                        let length = Int(bytes.load(fromByteOffset: offset + 12, as: UInt32.self))
                        var name: String?
                        if length > 0 {
                            let start = offset + 16
                            let raw = bytes[start..<min(start + length, count)]
                            name = String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                        }
                        offset += 16 + length
                        state.eventsRead += 1
                        for id in state.concerned(descriptor: descriptor, mask: mask, name: name) {
                            notified[id] = state.subscribers[id]?.notify
                        }
                    }
                }
            }
        }
        for notify in notified.values { notify() }
    }
}
#endif
