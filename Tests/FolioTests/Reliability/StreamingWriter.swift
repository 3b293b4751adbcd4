import Foundation
import GRDB
import Testing
@testable import Folio

/// A writer that commits small transactions — inserts, moving updates, renames and deletes
/// of articles — until stopped: on a thread of its own through another connection (every
/// millisecond) or through the store (every 1–3 ms), on a thread that runs the `sqlite3`
/// shell for each commit, or as a python3 process that keeps one connection open.
final class StreamingWriter: @unchecked Sendable {
    // @unchecked Sendable: `stopped` and `commits` are behind `lock`; the rest is set once.
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case otherConnection, store, sqlite3, python
        var testDescription: String { rawValue }
    }

    /// A python3 process that keeps one connection open, commits `count` small transactions
    /// 1–3 ms apart, says `done`, and keeps its connection open until its standard input ends.
    static let pythonWriter = """
        import random, sqlite3, sys, time
        path, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
        r = random.Random(seed)
        db = sqlite3.connect(path, timeout=30, isolation_level=None)
        def some_id():
            return "(SELECT id FROM article WHERE id >= %d %% (SELECT max(id) FROM article) ORDER BY id LIMIT 1)" % r.randrange(2**31)
        for n in range(count):
            db.execute("BEGIN IMMEDIATE")
            for _ in range(r.randint(1, 3)):
                k = r.randrange(4)
                if k == 0:
                    db.execute("INSERT INTO article (title, url, published, score, category, isRead) VALUES (?, ?, ?, ?, 'c', 0)",
                               (r.choice(["a", "B", "é", "z", ""]) + "p%d" % n, "p-%d-%d-%d" % (seed, n, r.randrange(2**40)), r.randrange(100000) * 3600, r.randrange(1000)))
                elif k == 1:
                    db.execute("DELETE FROM article WHERE id = " + some_id())
                elif k == 2:
                    db.execute("UPDATE article SET score = ?, published = ? WHERE id = " + some_id(), (r.randrange(1000), r.randrange(100000) * 3600))
                else:
                    db.execute("UPDATE article SET title = ? WHERE id = " + some_id(), (r.choice(["a", "B", "é", "z", ""]) + "q%d" % n,))
            db.execute("COMMIT")
            time.sleep(r.randint(1, 3) / 1000)
        print("done", flush=True)
        sys.stdin.read()
        """

    private var process: ChildProcess?
    private var output: String?

    private let lock = NSLock()
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)
    private var committed = 0

    /// Commits made so far (a python3 writer's: its count, once done).
    var commits: Int { lock.withLock { committed } }

    /// Whether ``commits`` grows with each commit (a python3 writer's is its count at once).
    let countsEachCommit: Bool

    /// `pythonCommits`: how many transactions a python3 writer makes before it says `done`.
    init(kind: Kind, path: String, store: Store, seed: UInt64, pythonCommits: Int = 40) throws {
        countsEachCommit = kind != .python
        if kind == .python {
            let output = path + "-python-\(seed).out"
            self.output = output
            process = try ChildProcess(
                "/usr/bin/env", ["python3", "-c", Self.pythonWriter, path, "\(seed)", "\(pythonCommits)"], input: .pipe,
                output: output)
            committed = pythonCommits
            done.signal()
            return
        }
        let queue = kind == .otherConnection ? try DatabaseQueue(path: path) : nil
        let pause: ClosedRange<Int> = kind == .otherConnection ? 1...1 : 1...3
        let thread = Thread { [self] in
            var random = SeededRandom(seed: seed)
            var n = 0
            while !isStopped {
                let statements = Self.transaction(&random, n: n)
                do {
                    switch kind {
                    case .otherConnection:
                        try queue?.write { db in for sql in statements { try db.execute(sql: sql) } }
                    case .store:
                        try store.write { tx in for sql in statements { try tx.database.execute(sql: sql) } }
                    case .sqlite3:
                        try Shell.sqlite3(path, "BEGIN IMMEDIATE; " + statements.joined(separator: "; ") + "; COMMIT;")
                    case .python:
                        break
                    }
                    lock.withLock { committed += 1 }
                } catch {}
                n += 1
                usleep(UInt32(Int.random(in: pause, using: &random) * 1000))
            }
            done.signal()
        }
        thread.start()
    }

    deinit {
        process?.closeInput()
        process?.kill()
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    /// Stops the writer and waits (at most 30 s) for its last commit. A python3 writer keeps
    /// its connection open until it is released.
    func stop() {
        if let process, let output {
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                if (try? String(contentsOfFile: output, encoding: .utf8))?.contains("done") == true { return }
                if let end = process.poll() {
                    Issue.record("the python writer ended early: \(end)")
                    return
                }
                usleep(2_000)
            }
            Issue.record("the python writer did not finish within 30 s")
            return
        }
        lock.withLock { stopped = true }
        if done.wait(timeout: .now() + 30) == .timedOut { Issue.record("the writer did not stop within 30 s") }
    }

    static func transaction(_ random: inout SeededRandom, n: Int) -> [String] {
        var statements: [String] = []
        let someID = { (random: inout SeededRandom) in
            "(SELECT id FROM article WHERE id >= \(Int.random(in: 0..<Int(Int32.max), using: &random)) % (SELECT max(id) FROM article) ORDER BY id LIMIT 1)"
        }
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let score = Int.random(in: 0..<1000, using: &random)
            let hour = Int.random(in: 0..<100_000, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                statements.append(
                    "INSERT INTO article (title, url, published, score, category, isRead) VALUES ('w\(n)', 'w-\(n)-\(score)-\(random.next())', \(hour * 3600), \(score), 'c', 0)"
                )
            case 1:
                statements.append("DELETE FROM article WHERE id = \(someID(&random))")
            case 2:
                statements.append(
                    "UPDATE article SET score = \(score), published = \(hour * 3600) WHERE id = \(someID(&random))")
            default:
                let letter = ["a", "B", "é", "z", ""].randomElement(using: &random)!
                statements.append("UPDATE article SET title = '\(letter)t\(n)' WHERE id = \(someID(&random))")
            }
        }
        return statements
    }
}

/// Fills `count` articles by one SQL statement: scores 0..<1000 drawn at random (many ties),
/// published at random hours, categories by score.
func fillArticles(_ store: Store, count: Int) throws {
    try store.write { tx in
        try tx.database.execute(
            sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO article (title, url, published, score, category, isRead)
                SELECT 'Article ' || i, 'https://example.com/' || i, abs(random() % 100000) * 3600,
                       abs(random() % 1000), char(97 + i % 5), i % 3 = 0 FROM n
                """, arguments: [count])
    }
}
