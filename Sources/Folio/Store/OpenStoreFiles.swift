import Foundation

/// The store files this process has open, by device and inode, with how many ``Store``
/// instances have each open (counted once their open transaction committed, until they
/// close or go away): a migration runs only when no other store has the file open.
///
/// A file is identified by device and inode, not by path: two paths to one file (a
/// symbolic or hard link, `..` segments) are the same file.
///
/// A store the app released without `close()` can still be alive for the length of one
/// background step it had begun (following another connection's commit, counting a
/// search index): the step holds it, and it goes away when the step ends. Those steps run
/// through ``step(_:_:)``, so that an opening that would migrate waits for them
/// (``waitForReleasedStores(_:timeout:)``) instead of refusing because of a store nobody
/// holds any more.
enum OpenStoreFiles {
    private struct Entry {
        var stores = 0
        var steps = 0
    }

    private static let entries = Locked<[FileIdentity: Entry]>([:])

    static func register(_ file: FileIdentity) {
        entries.withLock { $0[file, default: Entry()].stores += 1 }
    }

    static func unregister(_ file: FileIdentity) {
        update(file) { $0.stores = max(0, $0.stores - 1) }
    }

    /// How many stores of this process have the file open.
    static func count(_ file: FileIdentity) -> Int {
        entries.withLock { $0[file]?.stores ?? 0 }
    }

    /// Runs a background step of a store of `file`. `body` reaches the store through a weak
    /// reference, so that when the app released the store meanwhile, the step's own strong
    /// reference is the last one and the store goes away (and is unregistered) before the
    /// step is counted as ended.
    static func step<T>(_ file: FileIdentity?, _ body: () throws -> T) rethrows -> T {
        guard let file else { return try body() }
        entries.withLock { $0[file, default: Entry()].steps += 1 }
        defer { update(file) { $0.steps -= 1 } }
        return try body()
    }

    /// ``step(_:_:)`` for an asynchronous body.
    static func step<T>(_ file: FileIdentity?, _ body: () async throws -> T) async rethrows -> T {
        guard let file else { return try await body() }
        entries.withLock { $0[file, default: Entry()].steps += 1 }
        defer { update(file) { $0.steps -= 1 } }
        return try await body()
    }

    /// How many stores of this process have the file open, once each store that could be
    /// one the app released has finished the background step that holds it: waits while
    /// every store counted could be inside such a step (there are at least as many steps
    /// running as stores), up to `timeout`. A store the app still holds and that runs no
    /// step is counted at once.
    /// - Complexity: returns at once when no store has the file open or one runs no step;
    ///   otherwise waits for the running steps, polling every millisecond.
    static func waitForReleasedStores(_ file: FileIdentity, timeout: Duration = .seconds(10)) -> Int {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let entry = entries.withLock { $0[file] ?? Entry() }
            if entry.stores == 0 || entry.steps < entry.stores || clock.now >= deadline { return entry.stores }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }

    private static func update(_ file: FileIdentity, _ change: (inout Entry) -> Void) {
        entries.withLock { entries in
            guard var entry = entries[file] else { return }
            change(&entry)
            entries[file] = entry.stores == 0 && entry.steps <= 0 ? nil : entry
        }
    }
}
