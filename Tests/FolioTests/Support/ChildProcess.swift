import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process of the tests, started with `posix_spawn`.
///
/// Not Foundation's `Process`: on Linux, `Process.run()` crashes now and then (SIGSEGV in
/// `memcpy`) in `findMaximumOpenFromProcSelfFD()`, which copies a whole 256-byte `d_name`
/// from `readdir`'s buffer and can read past its end (swift-corelibs-foundation #5472,
/// fixed after Swift 6.3.1). The crash takes the whole test process with it, and the tests
/// start thousands of children.
///
/// What the tests need of a child, and no more: standard output and error to files (a
/// pipe's reader uses a dispatch source, and closing the pipe of a killed child under it
/// has crashed libdispatch's event loop on Linux), standard input from `/dev/null` or a
/// pipe this process writes to, an environment, a kill at any moment, and the difference
/// between an exit and a signal. Like `Process`, the child starts with the default signal
/// dispositions, an empty signal mask, and no descriptor of this process but 0, 1 and 2.
///
/// The child is reaped once (by ``isRunning``, ``wait()`` or ``wait(timeout:)``); its
/// identifier is never signalled after that, so a reused one cannot be hit. A child still
/// running when its last reference goes is killed with SIGKILL and reaped.
final class ChildProcess: @unchecked Sendable {
    /// How a child ended.
    enum Termination: Equatable, CustomStringConvertible {
        /// `exit(code)` or a return from `main`.
        case exited(Int32)
        /// Killed by a signal.
        case signaled(Int32)

        /// Whether the child exited with status 0.
        var succeeded: Bool { self == .exited(0) }

        /// The shell's convention: the exit code, or 128 + the signal.
        var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signaled(let signal): 128 + signal
            }
        }

        var description: String {
            switch self {
            case .exited(let code): "exit status \(code)"
            case .signaled(let signal): "signal \(signal)"
            }
        }
    }

    /// Where the child's standard input comes from.
    enum Input {
        /// `/dev/null`: the child reads end-of-file at once.
        case null
        /// A pipe; ``write(_:)`` feeds it, ``closeInput()`` ends it.
        case pipe
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The child's process identifier.
    let pid: pid_t
    /// The executable that was started.
    let executable: String

    private let lock = NSLock()
    private var termination: Termination?
    private var inputDescriptor: Int32 = -1

    /// Starts `executable` (a path; no `PATH` search) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: The child's environment; `nil` passes this process's.
    ///   - input: Standard input.
    ///   - output: A file standard output is written to (created or truncated); `nil`
    ///     is `/dev/null`.
    ///   - errors: A file standard error is written to; `nil` is `/dev/null`. The same
    ///     path as `output` sends both to one file, in order.
    init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: Input = .null,
        output: String? = nil, errors: String? = nil
    ) throws {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        // Standard input.
        var pipeEnds: [Int32] = [-1, -1]
        switch input {
        case .null:
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .pipe:
            guard pipe(&pipeEnds) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
            // Both ends close on exec: the child's 0 is a dup2 (which clears the flag), and
            // no other child started meanwhile keeps the pipe open.
            for end in pipeEnds { _ = fcntl(end, F_SETFD, fcntl(end, F_GETFD) | FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[0], 0)
        }
        defer { if pipeEnds[0] >= 0 { close(pipeEnds[0]) } }
        // Standard output and error.
        let mode = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", mode, 0o600)
        if let errors, errors == output {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, errors ?? "/dev/null", mode, 0o600)
        }
        Self.closeInheritedDescriptors(&actions)

        // The default signal dispositions and an empty mask, whatever this process set.
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        #if canImport(Darwin)
        // Darwin closes every other descriptor itself.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_CLOEXEC_DEFAULT))
        #else
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        #endif

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid = pid_t()
        let spawned =
            envp.map { posix_spawn(&pid, executable, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            if pipeEnds[1] >= 0 { close(pipeEnds[1]) }
            throw Failure(description: "posix_spawn \(executable): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        inputDescriptor = pipeEnds[1]
    }

    deinit {
        if inputDescriptor >= 0 { close(inputDescriptor) }
        if termination == nil {
            _ = posixKill(pid, SIGKILL)
            _ = Self.waitpid(pid, options: 0)
        }
    }

    /// Whether the child has not ended yet (reaps it when it has).
    var isRunning: Bool { poll() == nil }

    /// How the child ended, `nil` while it runs; never blocks.
    func poll() -> Termination? {
        lock.withLock {
            if termination == nil { termination = Self.waitpid(pid, options: WNOHANG) }
            return termination
        }
    }

    /// Waits for the child to end, however long it takes (blocks the calling thread).
    @discardableResult
    func wait() -> Termination {
        lock.withLock {
            if let termination { return termination }
            let ended = Self.waitpid(pid, options: 0) ?? .signaled(0)
            termination = ended
            return ended
        }
    }

    /// Waits for the child to end without blocking a thread; `nil` if it still runs
    /// after `timeout` (it is left running).
    func wait(timeout: Duration) async throws -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let ended = poll() { return ended }
            if ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Sends `signal` to the child, unless it has already been reaped.
    func kill(_ signal: Int32 = SIGKILL) {
        lock.withLock {
            if termination == nil { _ = posixKill(pid, signal) }
        }
    }

    /// Writes all of `data` to the child's standard input (``Input/pipe`` only).
    func write(_ data: Data) throws {
        let descriptor = lock.withLock { inputDescriptor }
        guard descriptor >= 0 else { throw Failure(description: "the child's standard input is not a pipe, or closed") }
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = posixWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Failure(description: "write to the child: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }

    /// Closes the child's standard input: it reads end-of-file.
    func closeInput() {
        lock.withLock {
            if inputDescriptor >= 0 { close(inputDescriptor) }
            inputDescriptor = -1
        }
    }

    /// `waitpid`, retried after EINTR; `nil` when the child still runs (WNOHANG).
    private static func waitpid(_ pid: pid_t, options: Int32) -> Termination? {
        var status: Int32 = 0
        while true {
            let result = posixWaitpid(pid, &status, options)
            if result == pid { break }
            if result == 0 { return nil }
            if errno == EINTR { continue }
            // ECHILD: not ours to reap (cannot happen for a child only this object reaps).
            return .signaled(0)
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
    }

    /// Makes the child start with standard input, output and error only, as `Process`
    /// does (Darwin does it through `POSIX_SPAWN_CLOEXEC_DEFAULT`). glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (2.34) is not visible to Swift, so it is
    /// looked up; without it, every open descriptor is marked close-on-exec instead.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        #if canImport(Glibc)
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = addCloseFrom, unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3) == 0 { return }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/fd")) ?? []
        for descriptor in descriptors.compactMap({ Int32($0) }) where descriptor > 2 {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
        #endif
    }

    #if canImport(Glibc)
    nonisolated(unsafe) private static let addCloseFrom = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
    #endif
}

// The C functions, under names the type's own `kill`, `wait` and `write` do not hide.
private func posixKill(_ pid: pid_t, _ signal: Int32) -> Int32 { kill(pid, signal) }
private func posixWaitpid(_ pid: pid_t, _ status: UnsafeMutablePointer<Int32>, _ options: Int32) -> pid_t {
    waitpid(pid, status, options)
}
private func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, buffer, count) }
