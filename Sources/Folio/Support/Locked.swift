import Foundation

/// A value guarded by a lock. Bodies must not call out to user code or block.
// @unchecked Sendable: every access to `value` happens inside `lock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    @inline(__always)
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }

    /// Whether the lock is free at this instant (tests use it to prove that code they get
    /// called back from does not run while the lock is held — by any thread, this one
    /// included).
    var _isFree: Bool {
        guard lock.try() else { return false }
        lock.unlock()
        return true
    }

    /// Whether the calling thread can take the lock within `timeout` (tests: a thread that
    /// holds it cannot take it again, the lock not being recursive, and gets `false` once
    /// `timeout` passed; another thread's brief hold is waited out).
    func _canTakeLock(within timeout: TimeInterval) -> Bool {
        guard lock.lock(before: Date(timeIntervalSinceNow: timeout)) else { return false }
        lock.unlock()
        return true
    }
}
