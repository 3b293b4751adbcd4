import Foundation
import Folio
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import FeedLoader

/// Runs the real `feedloader` binary: plainly, or in a tmux session to type keys and read
/// the screen.
enum App {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The `feedloader` binary that `swift build` made beside the test bundle.
    static let binary: Result<URL, Failure> = {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        for directory in candidates {
            let url = directory.appendingPathComponent("feedloader")
            if FileManager.default.isExecutableFile(atPath: url.path) { return .success(url) }
        }
        // Ask SwiftPM where it puts binaries.
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        if let result = try? run(["swift", "build", "--show-bin-path"], in: packageRoot), result.status == 0 {
            let url = URL(fileURLWithPath: result.output.trimmingCharacters(in: .whitespacesAndNewlines))
                .appendingPathComponent("feedloader")
            if FileManager.default.isExecutableFile(atPath: url.path) { return .success(url) }
        }
        return .failure(Failure(description: "the feedloader binary was not found beside the tests; run `swift build` first"))
    }()

    static var isTmuxAvailable: Bool {
        (try? run(["tmux", "-V"], in: FileManager.default.temporaryDirectory).status) == 0
    }

    /// Runs a program to its end; returns its exit status, standard output and standard
    /// error.
    ///
    /// It uses `posix_spawn` and `waitpid` rather than `Process`, and files rather than
    /// pipes: the tmux server that `tmux new-session` starts inherits the child's
    /// descriptors and outlives it, which keeps pipes (and `Process`'s own bookkeeping)
    /// from ever seeing the end.
    @discardableResult
    static func run(_ arguments: [String], in directory: URL) throws -> (status: Int32, output: String, errors: String) {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("feedloader-run-\(UUID().uuidString)")
        let outputURL = scratch.appendingPathExtension("out"), errorsURL = scratch.appendingPathExtension("err")
        defer {
            try? FileManager.default.removeItem(at: outputURL)
            try? FileManager.default.removeItem(at: errorsURL)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorsURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        closeInheritedDescriptors(&actions)
        // sh changes directory, then becomes the program (found on PATH).
        let argv = ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, directory.path] + arguments
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw Failure(description: "cannot start \(arguments.first ?? ""): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw Failure(description: "waitpid failed: \(errno)") }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        let exitStatus: Int32 = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let output = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOf: errorsURL, encoding: .utf8)) ?? ""
        return (exitStatus, output, errors)
    }

    /// Makes the child start with standard input, output and error only.
    ///
    /// Otherwise it inherits every descriptor of the test process — among them the
    /// listening sockets and connections of the HTTP servers other tests are running —
    /// and a child that outlives its test (the tmux server does) keeps a stopped server's
    /// port accepting connections that nobody answers. glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (2.34) is not visible to Swift, so it is
    /// looked up; without it, every open descriptor is marked close-on-exec instead.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        #if canImport(Glibc)
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            let addCloseFrom = unsafeBitCast(symbol, to: AddCloseFrom.self)
            if addCloseFrom(&actions, 3) == 0 { return }
        }
        #endif
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/fd")) ?? []
        for descriptor in descriptors.compactMap({ Int32($0) }) where descriptor > 2 {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// Runs `feedloader` with arguments in `directory`.
    @discardableResult
    static func feedloader(_ arguments: [String], in directory: URL) throws -> (status: Int32, output: String, errors: String) {
        try run([try binary.get().path] + arguments, in: directory)
    }

    /// Runs `feedloader` and waits for it on a thread of its own, not on one of the
    /// cooperative pool's few threads, which a test's own server needs to answer it.
    static func feedloaderOffPool(
        _ arguments: [String], in directory: URL
    ) async throws -> (status: Int32, output: String, errors: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try feedloader(arguments, in: directory) }) }.start()
        }
    }

    /// A new empty directory, removed by the caller.
    static func makeDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("feedloader-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// ``hundredThousand``, awaited without blocking Swift's cooperative threads: its first
    /// use runs `feedloader generate` (about a minute in a debug build), and every other
    /// test that asks meanwhile waits for it. Waiting on those threads (two on two cores)
    /// would stop every other test's tasks for that minute, a local HTTP server's included.
    static func hundredThousandItems() async throws -> URL {
        try await offThePool { App.hundredThousand }
    }

    /// ``million``, awaited as ``hundredThousandItems()`` is.
    static func millionItems() async throws -> URL {
        try await offThePool { App.million }
    }

    private static func offThePool(_ fixture: @escaping @Sendable () -> Result<URL, Failure>) async throws -> URL {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: fixture()) }
        }
    }

    /// A database of 100,000 generated items, made once for the tests that need it and
    /// kept in the temporary directory for the next run of the same binary.
    static let hundredThousand: Result<URL, Failure> = generated(100_000, tag: "100k")

    /// A database of 1,000,000 items, for the tests of the long tier (`FOLIO_LONG=1`), kept like
    /// ``hundredThousand``: ``filled(_:base:tag:)`` makes it in well under a minute, where
    /// `feedloader generate 1000000` takes about 11 minutes with a debug build.
    static let million: Result<URL, Failure> = filled(1_000_000, base: 10_000, tag: "1m")

    /// Whether the tests that need ``million`` run: the long tier (`FOLIO_LONG=1`), or
    /// `FOLIO_LARGE=1` for those tests alone.
    static let isLarge =
        TestTier.isLong || (ProcessInfo.processInfo.environment["FOLIO_LARGE"].map { $0 != "0" && !$0.isEmpty } ?? false)

    /// A database of `count` generated items, made once and kept in the temporary directory
    /// for the next run of the same binary.
    static func generated(_ count: Int, tag: String) -> Result<URL, Failure> {
        kept(tag: tag) { directory in
            let result = try feedloader(
                ["generate", "\(count)", "--db", "big.sqlite", "--seed", "7", "--newest", "2025-06-13T12:00:00Z"],
                in: directory)
            guard result.status == 0 else {
                throw Failure(description: "generate failed (\(result.status)): \(result.errors)")
            }
        }
    }

    /// A database of `count` items made fast: `feedloader generate` makes the first `base`
    /// (the exact schema: tables, indexes, triggers, full-text index, folded keys, metadata),
    /// then one statement of the `sqlite3` shell copies them until there are `count`, through
    /// the file's own triggers, as any other program's writes would go.
    ///
    /// Copy `k` of item `i` is what `generate` makes as item `k × base + i`, but for its
    /// title, summary and source, which are item `i`'s: dated `k × base × 150` seconds (the
    /// default spacing) before it, with its own address, and unread when `generate` leaves
    /// that index unread (one in three). Its folded keys are item `i`'s, which Folio computed:
    /// exact, so the triggers note no row stale and nothing is folded again at the opening;
    /// the full-text index gets every row by its trigger. The change log is then trimmed to
    /// its newest 10,000 rows, as Folio keeps it. So every title, prefix and source of the
    /// generator occurs 100 times over, newest first as `generate` would date them.
    static func filled(_ count: Int, base: Int, tag: String) -> Result<URL, Failure> {
        kept(tag: tag) { directory in
            let generated = try feedloader(
                ["generate", "\(base)", "--db", "big.sqlite", "--seed", "7", "--newest", "2025-06-13T12:00:00Z"],
                in: directory)
            guard generated.status == 0 else {
                throw Failure(description: "generate failed (\(generated.status)): \(generated.errors)")
            }
            let path = directory.appendingPathComponent("big.sqlite").path
            let ids = try sqlite(path, "SELECT min(id) || ' ' || max(id) || ' ' || count(*) FROM feed")
            guard ids == ["1 \(base) \(base)"] else { throw Failure(description: "generate made ids \(ids), not 1…\(base)") }
            let copies = (count + base - 1) / base - 1
            let shift = Double(base) * 150
            // A big page cache: the indexes and the full-text index of a million rows are
            // written once, not spilled to the write-ahead log and read back (3 minutes).
            try sqlite(
                path,
                """
                PRAGMA cache_size = -1500000; PRAGMA temp_store = MEMORY; PRAGMA synchronous = OFF;
                WITH RECURSIVE copy(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM copy WHERE k < \(copies))
                INSERT INTO feed (title, url, published, summary, source, imageURL, starred, guid, undated, starOrder, isRead,
                    source_id, folio_title_folded, folio_source_folded)
                SELECT b.title, substr(b.url, 1, length(b.url) - 1) || '-' || copy.k || '/', b.published - copy.k * \(shift),
                    b.summary, b.source, b.imageURL, 0, b.guid, b.undated, 0, ((copy.k * \(base) + b.id - 1) % 3) <> 0,
                    b.source_id, b.folio_title_folded, b.folio_source_folded
                FROM copy, feed AS b WHERE b.id <= \(base) AND copy.k * \(base) + b.id <= \(count) ORDER BY copy.k, b.id;
                DELETE FROM folio_changes WHERE seq <= (SELECT max(seq) FROM folio_changes) - 10000;
                """)
            let check = try sqlite(
                path,
                """
                SELECT (SELECT count(*) FROM feed) || ' ' || (SELECT count(*) FROM folio_feed_fts_docsize) || ' '
                    || (SELECT count(*) FROM folio_stale_keys)
                """)
            guard check == ["\(count) \(count) 0"] else {
                throw Failure(description: "the filled file has rows, full-text rows, stale keys \(check)")
            }
        }
    }

    /// Runs the `sqlite3` shell on the file at `path` with `sql`; returns its output's lines
    /// (columns separated by tabs).
    ///
    /// The shell waits up to a minute for a lock, as Folio does: without a busy timeout it
    /// fails at once (`database is locked`) while another test's `feedloader` opens the same
    /// file (a connection recovering the write-ahead log's index holds every other one off).
    @discardableResult
    static func sqlite(_ path: String, _ sql: String) throws -> [String] {
        let result = try run(
            ["sqlite3", "-bail", "-tabs", "-cmd", ".timeout 60000", path, sql],
            in: URL(fileURLWithPath: path).deletingLastPathComponent())
        guard result.status == 0 else {
            throw Failure(description: "sqlite3 failed (\(result.status)): \(result.errors)\n\(sql)")
        }
        return result.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// A database `big.sqlite` that `make` writes in a directory of its own, made once per
    /// build of the binary and kept in the temporary directory for the next run.
    private static func kept(tag: String, _ make: (URL) throws -> Void) -> Result<URL, Failure> {
        do {
            let binary = try binary.get()
            let attributes = try FileManager.default.attributesOfItem(atPath: binary.path)
            let stamp = [
                attributes[.modificationDate].map { "\(($0 as! Date).timeIntervalSince1970)" }, attributes[.size].map { "\($0)" },
            ]
            .compactMap { $0 }.joined(separator: "-")
            let prefix = "feedloader-tests-\(tag)-"
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(prefix + stamp)
            let database = directory.appendingPathComponent("big.sqlite")
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("complete").path) {
                return .success(database)
            }
            // Older binaries' databases go, once nothing can be using them (other
            // worktrees' test runs may share this temporary directory).
            let temporary = FileManager.default.temporaryDirectory
            for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [] where name.hasPrefix(prefix)
            {
                let url = temporary.appendingPathComponent(name)
                let modified = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
                if let modified, modified < Date().addingTimeInterval(-3 * 3600) { try? FileManager.default.removeItem(at: url) }
            }
            try? FileManager.default.removeItem(at: directory)  // a run that stopped halfway
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try make(directory)
            _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("complete").path, contents: nil)
            return .success(database)
        } catch let failure as Failure {
            return .failure(failure)
        } catch {
            return .failure(Failure(description: "\(error)"))
        }
    }
}

/// A detached tmux session running one command, on a tmux server of its own.
final class TmuxSession {
    let server = "feedloader-tests-\(ProcessInfo.processInfo.processIdentifier)"
    let name = "s\(UUID().uuidString.prefix(8))"
    let directory: URL

    /// Starts `command` (a shell command line) in a `width` × `height` terminal.
    ///
    /// The previous test's session was the server's last one: the server exits when it is
    /// killed, and a session started while it does fails with "server exited unexpectedly".
    /// That start is tried again (a new server starts).
    init(_ command: String, in directory: URL, width: Int = 100, height: Int = 30) throws {
        self.directory = directory
        var attempt = 0
        while true {
            let result = try App.run(
                [
                    "tmux", "-L", server, "new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)",
                    "-c", directory.path, command, ";", "set-option", "-t", name, "remain-on-exit", "on",
                ],
                in: directory)
            if result.status == 0 { return }
            attempt += 1
            guard result.errors.contains("server exited unexpectedly"), attempt < 5 else {
                throw App.Failure(description: "tmux new-session failed: \(result.errors)")
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }

    deinit {
        _ = try? App.run(["tmux", "-L", server, "kill-session", "-t", name], in: directory)
    }

    var target: String { name }

    /// Resizes the terminal, as a user dragging the window.
    func resize(width: Int, height: Int) throws {
        try App.run(["tmux", "-L", server, "resize-window", "-t", name, "-x", "\(width)", "-y", "\(height)"], in: directory)
    }

    /// The pane the session started with.
    func firstPane() throws -> TmuxPane {
        let result = try App.run(["tmux", "-L", server, "display-message", "-p", "-t", name, "#{pane_id}"], in: directory)
        let id = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard result.status == 0, id.hasPrefix("%") else {
            throw App.Failure(description: "tmux display-message failed: \(result.errors)")
        }
        return TmuxPane(session: self, id: id)
    }

    /// Splits the window: `command` runs in a new pane of `lines` lines below the first (a
    /// second terminal beside the first, as a user would open one).
    func split(_ command: String, lines: Int) throws -> TmuxPane {
        let result = try App.run(
            [
                "tmux", "-L", server, "split-window", "-v", "-d", "-l", "\(lines)", "-t", name, "-c", directory.path, "-P", "-F",
                "#{pane_id}", command,
            ],
            in: directory)
        let id = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard result.status == 0, id.hasPrefix("%") else {
            throw App.Failure(description: "tmux split-window failed: \(result.errors)")
        }
        return TmuxPane(session: self, id: id)
    }
}

/// One pane of a ``TmuxSession``, by its tmux id (`%3`): its own keys and screen.
struct TmuxPane: TmuxScreen {
    let session: TmuxSession
    let id: String
    var server: String { session.server }
    var directory: URL { session.directory }
    var target: String { id }
}

/// A terminal in tmux — a session's (first) pane or another pane — to type into and read.
protocol TmuxScreen {
    var server: String { get }
    var directory: URL { get }
    /// What tmux's `-t` names.
    var target: String { get }
}

extension TmuxSession: TmuxScreen {}

extension TmuxScreen {
    /// Presses keys, in tmux's names (`Enter`, `Escape`, `C-c`, `PPage`, `G`…).
    func press(_ keys: String...) throws {
        try App.run(["tmux", "-L", server, "send-keys", "-t", target] + keys, in: directory)
    }

    /// Types text literally.
    func type(_ text: String) throws {
        try App.run(["tmux", "-L", server, "send-keys", "-t", target, "-l", text], in: directory)
    }

    /// The screen, as text.
    func screen() throws -> String {
        try App.run(["tmux", "-L", server, "capture-pane", "-p", "-t", target], in: directory).output
    }

    /// Waits until the screen satisfies `condition`, and returns it.
    /// - Throws: after `timeout` seconds, with the last screen in the message.
    @discardableResult
    func waitFor(
        _ what: String, timeout: TimeInterval = 120, _ condition: (String) -> Bool
    ) async throws -> String {
        // The screen is read again after every wake-up before the limit counts: on a loaded
        // 2-core machine this task can be kept from running for minutes while the program
        // draws (CI once saw a blank first screen, read before a 120-second starvation).
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let last = try screen()
            if condition(last) { return last }
            if Date() >= deadline {
                throw App.Failure(description: "timed out waiting for \(what); the screen was:\n\(last)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Waits until the screen contains `text`.
    @discardableResult
    func waitFor(_ text: String, timeout: TimeInterval = 120) async throws -> String {
        try await waitFor("“\(text)”", timeout: timeout) { $0.contains(text) }
    }
}

/// The numbers of the list's status line.
struct StatusLine: Equatable {
    var rows: Int
    var sections: Int
    var statements: Int
    var batches: Int
    var records: Int
    var batchSize: Int
    /// Change sets the list drew as a reload (shown only when there were any).
    var reloads = 0
    /// How the list learns of other processes' commits (`inotify`, `polling`).
    var watching: String?

    init?(_ screen: String) {
        guard let line = screen.split(separator: "\n").last(where: { $0.contains(" rows ") && $0.contains("batches") }) else {
            return nil
        }
        var values: [String: Int] = [:]
        for part in line.split(separator: "│") {
            if let range = part.range(of: "watching: ") {
                watching = part[range.upperBound...].trimmingCharacters(in: .whitespaces)
            }
            let words = part.split(separator: " ")
            guard words.count >= 2, let number = Int(words.last!.replacingOccurrences(of: ",", with: "")) else { continue }
            values[words.dropLast().joined(separator: " ")] = number
        }
        guard let rows = values["rows"], let sections = values["sections"], let statements = values["statements"],
            let batches = values["batches"], let records = values["records"], let batchSize = values["batch size"]
        else { return nil }
        (self.rows, self.sections, self.statements, self.batches, self.records, self.batchSize) =
            (rows, sections, statements, batches, records, batchSize)
        reloads = values["reloads"] ?? 0
    }
}

/// The rows of the list on a screen: lines with a time in columns 5–9 (after the
/// selection, highlight and star columns and a space), or — sectioned by source — a day
/// and a time in columns 5–15 (`06-13 14:51`).
func listRows(_ screen: String) -> [String] {
    screen.split(separator: "\n").map(String.init).filter { line in
        let characters = Array(line)
        guard characters.count > 16 else { return false }
        let time = String(characters[4..<9]), dayAndTime = String(characters[4..<15])
        return time.range(of: #"^\d\d:\d\d$"#, options: .regularExpression) != nil
            || dayAndTime.range(of: #"^\d\d-\d\d \d\d:\d\d$"#, options: .regularExpression) != nil
    }
}
