import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process of the benchmark, started with `posix_spawn`, its standard input
/// `/dev/null` and its output in files.
///
/// Not Foundation's `Process`: on Linux, `Process.run()` crashes now and then (SIGSEGV in
/// `memcpy`) in `findMaximumOpenFromProcSelfFD()`, which copies a whole 256-byte `d_name`
/// from `readdir`'s buffer and can read past its end (swift-corelibs-foundation #5472,
/// fixed after Swift 6.3.1), and takes a whole run with it. (The tests have a fuller
/// `ChildProcess`; this package cannot share their code.)
final class Child: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let pid: pid_t
    private let lock = NSLock()
    private var status: Int32?

    /// Starts `executable` (a path) with `arguments`; standard output and error go to the
    /// files given (created or truncated), or to `/dev/null`.
    init(_ executable: String, _ arguments: [String], output: String? = nil, errors: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let mode = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", mode, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors ?? "/dev/null", mode, 0o600)
        #if canImport(Glibc)
        // Only 0, 1 and 2, as `Process` does: glibc's addclosefrom_np (2.34) is looked up,
        // as Swift does not see it.
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
        }
        #endif
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        #if canImport(Darwin)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_CLOEXEC_DEFAULT))
        #else
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        #endif
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw Failure(description: "cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
    }

    deinit {
        if status == nil {
            _ = kill(pid, SIGKILL)
            _ = Self.reap(pid, options: 0)
        }
    }

    /// The exit status (128 + the signal for a child killed by one), `nil` while it runs.
    func poll() -> Int32? {
        lock.withLock {
            if status == nil { status = Self.reap(pid, options: WNOHANG) }
            return status
        }
    }

    /// Waits for the end, blocking the calling thread; the exit status as ``poll()`` gives it.
    func wait() -> Int32 {
        lock.withLock {
            if status == nil { status = Self.reap(pid, options: 0) }
            return status ?? -1
        }
    }

    /// Waits for the end without blocking a thread; the exit status as ``poll()`` gives it.
    func exitStatus() async -> Int32 {
        while true {
            if let status = poll() { return status }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// `waitpid`, retried after EINTR; `nil` while the child runs (WNOHANG).
    private static func reap(_ pid: pid_t, options: Int32) -> Int32? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, options)
            if result == pid { break }
            if result == 0 { return nil }
            if errno == EINTR { continue }
            return -1
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}
