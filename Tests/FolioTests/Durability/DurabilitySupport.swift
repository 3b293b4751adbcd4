import Foundation
import GRDB
import Testing
@testable import Folio

/// The durability suites: several stores and processes on one file, the section
/// cache's identity, crafted cache files, files that move, upgrades of Folio's own tables.
/// (`swift test --filter Durability` runs them; the crash test is in Reliability.)
@Suite("Durability") enum Durability {}

/// Another process on the same file: the real `sqlite3` shell (installed by `.ci/run`).
enum Shell {
    static let executable: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/sqlite3" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    struct Failure: Error, CustomStringConvertible {
        var status: Int32
        var errors: String
        var description: String { "sqlite3 exited with \(status): \(errors)" }
    }

    /// Runs `sql` in `sqlite3 <path>` (10 s busy timeout, stop at the first error) and
    /// returns what it printed, without the last newline.
    @discardableResult
    static func sqlite3(_ path: String, _ sql: String) throws -> String {
        let executable = try #require(executable, "the sqlite3 shell is not installed (.ci/run installs it)")
        return try run(executable, ["-batch", "-bail", "-cmd", ".timeout 10000", path, sql])
    }

    /// Copies a file in a child process (`cp`): this process opens no descriptor on it, so
    /// the locks its SQLite connections hold on it stay (sqlite.org/howtocorrupt.html §2.2).
    static func copy(_ source: String, to destination: String) throws {
        try run("/bin/cp", [source, destination])
    }

    /// Runs a program to its end; output through files (see ``ChildProcess``, which is
    /// not Foundation's `Process`: that one crashes now and then on Linux).
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-shell-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outputURL = directory.appendingPathComponent("out"), errorURL = directory.appendingPathComponent("err")
        let child: ChildProcess
        do {
            child = try ChildProcess(executable, arguments, output: outputURL.path, errors: errorURL.path)
        } catch {
            throw Failure(status: -1, errors: "\(error)")
        }
        let ended = child.wait()
        let printed = String(decoding: (try? Data(contentsOf: outputURL)) ?? Data(), as: UTF8.self)
        guard ended.succeeded else {
            let errors = String(decoding: (try? Data(contentsOf: errorURL)) ?? Data(), as: UTF8.self)
            throw Failure(status: ended.status, errors: errors)
        }
        return printed.hasSuffix("\n") ? String(printed.dropLast()) : printed
    }
}

/// A record with no attribute at all: only its `id`.
struct Bare: PersistentRecord, Equatable {
    var id: RecordID?
    static let entity = EntityDescription<Bare>("bare", [])
}

/// The committed files in Tests/FolioTests/Fixtures.
func fixtureURL(_ name: String) -> URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").appendingPathComponent(name)
}

/// Removes a database file and its WAL and shared-memory files (no connection may be open).
func removeDatabase(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// One article per hour in `hours`, in one transaction (one day section per 24 hours).
func seedHours(_ store: Store, _ hours: Range<Int>, prefix: String = "a") throws {
    try store.write { tx in
        for hour in hours {
            var article = Article(
                title: "\(prefix) \(hour)", url: "https://example.com/\(prefix)/\(hour)",
                published: Date(timeIntervalSince1970: Double(hour) * 3600), score: hour)
            try tx.insert(&article)
        }
    }
}

/// One committed transaction per article.
func commitOneByOne(_ store: Store, _ hours: Range<Int>, prefix: String = "c") throws {
    for hour in hours {
        try store.write { tx in
            var article = Article(
                title: "\(prefix) \(hour)", url: "https://example.com/\(prefix)/\(hour)",
                published: Date(timeIntervalSince1970: Double(hour) * 3600), score: hour)
            try tx.insert(&article)
        }
    }
}

/// The request the cache tests use: newest first, 20 per batch.
func newestFirst() -> RecordRequest<Article> {
    var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.published, order: .reverse)])
    request.batchSize = 20
    return request
}

/// Fetches with the cache `name` and without a cache; expects both to show the same
/// sections and identifiers ("never a wrong answer") and returns what the cached one did.
@MainActor
func cachedFetch(
    _ store: Store, name: String = "feed", sourceLocation: SourceLocation = #_sourceLocation
) async throws -> SectionCache.Outcome {
    let cached = FetchedResultsController(
        newestFirst(), store: store, sectionBy: .day(\.published, timeZone: .gmt), cacheName: name)
    try await cached.performFetch()
    await cached.flushCache()
    let fresh = FetchedResultsController(newestFirst(), store: store, sectionBy: .day(\.published, timeZone: .gmt))
    try await fresh.performFetch()
    #expect(cached.snapshot == fresh.snapshot, "a cached answer is never a wrong answer", sourceLocation: sourceLocation)
    #expect(cached.sections == fresh.sections, sourceLocation: sourceLocation)
    return cached.lastCacheOutcome
}

/// Whether the outcome is a rebuild, whatever the reason.
func isRebuilt(_ outcome: SectionCache.Outcome) -> Bool {
    if case .rebuilt = outcome { return true }
    return false
}

/// The POSIX locks this process holds on the file at `path`, from /proc/locks (Linux): the
/// same answer from three reads in a row.
///
/// One read of /proc/locks is not one look at the table: the kernel serves it at most a page
/// (about 4 KB) per `read`, walking the table again from the line it had reached, and every
/// process's locks share the table. A lock taken or released elsewhere between two pages
/// shifts the lines, and one of ours can be skipped or shown twice (seen: 6 misses and 11
/// repeats of a held lock in 2,930 reads, beside two processes taking and releasing 150
/// locks; in a full test run, the stores of the tests running beside hold many). Three identical answers also wait out a lock of
/// this process taken for an instant. A lock really dropped is stable, so still found.
func posixLocksHeld(on path: String) throws -> [String] {
    var last: [String]?
    var streak = 0
    for _ in 0..<1_000 {
        let current = try posixLocksReadOnce(on: path)
        streak = current == last ? streak + 1 : 1
        last = current
        if streak == 3 { break }
        usleep(2_000)
    }
    return last ?? []
}

/// One read of /proc/locks (see ``posixLocksHeld(on:)``).
private func posixLocksReadOnce(on path: String) throws -> [String] {
    var info = stat()
    guard stat(path, &info) == 0 else { return [] }
    let inode = UInt64(info.st_ino)
    let pid = getpid()
    // Read to the end: /proc files report a size of 0, and String(contentsOfFile:) stops
    // after its first 4,095 bytes, which cut off our own locks once other processes' filled
    // the table.
    guard let handle = FileHandle(forReadingAtPath: "/proc/locks") else { return [] }
    defer { try? handle.close() }
    let table = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    // "1: POSIX  ADVISORY  READ 1234 08:01:5678 128 128": the kind, mode and range, without
    // the line's number (which changes as other processes take locks).
    return table.split(separator: "\n").compactMap { line in
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 8, fields[1] == "POSIX", Int32(fields[4]) == pid,
            fields[5].split(separator: ":").last.flatMap({ UInt64($0) }) == inode
        else { return nil }
        return fields[1...].joined(separator: " ")
    }.sorted()
}
