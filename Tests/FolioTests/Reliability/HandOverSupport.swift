import Foundation
import GRDB
import Testing
@testable import Folio

/// Commits SQL synchronously — the commit is made when ``commit(_:)`` returns — through one
/// kind of writer: the store itself, another GRDB connection, the `sqlite3` shell, or a
/// python3 process that keeps its connection open between commits (it reads one transaction
/// a line on its standard input and says when each is committed).
final class HandOverWriter: @unchecked Sendable {
    // @unchecked Sendable: used from one thread at a time (the test's, or a hook it runs).
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case store, otherConnection, sqlite3, python
        var testDescription: String { rawValue }
    }

    static let pythonScript = """
        import sqlite3, sys
        db = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
        n = 0
        while True:
            line = sys.stdin.readline()
            if not line:
                break
            db.execute("BEGIN IMMEDIATE")
            for statement in line.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("COMMIT")
            n += 1
            print("ok %d" % n, flush=True)
        """

    let kind: Kind
    private let path: String
    private let store: Store
    private var queue: DatabaseQueue?
    private var process: ChildProcess?
    private var output = ""
    private var committed = 0

    init(_ kind: Kind, path: String, store: Store) throws {
        self.kind = kind
        self.path = path
        self.store = store
        switch kind {
        case .store, .sqlite3: break
        case .otherConnection: queue = try DatabaseQueue(path: path)
        case .python:
            output = path + "-python-\(UUID().uuidString).out"
            process = try ChildProcess(
                "/usr/bin/env", ["python3", "-c", Self.pythonScript, path], input: .pipe, output: output)
        }
    }

    deinit {
        process?.closeInput()
        process?.kill()
    }

    /// Commits `statements` in one transaction (no `;` inside a statement).
    func commit(_ statements: [String]) throws {
        switch kind {
        case .store:
            try store.write { tx in for sql in statements { try tx.database.execute(sql: sql) } }
        case .otherConnection:
            try queue?.write { db in for sql in statements { try db.execute(sql: sql) } }
        case .sqlite3:
            try Shell.sqlite3(path, "BEGIN IMMEDIATE; " + statements.joined(separator: "; ") + "; COMMIT;")
        case .python:
            guard let process else { return }
            try process.write(Data((statements.joined(separator: "; ") + "\n").utf8))
            committed += 1
            let expected = "ok \(committed)\n"
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                if (try? String(contentsOfFile: output, encoding: .utf8))?.contains(expected) == true { return }
                if let end = process.poll() { throw ChildProcess.Failure(description: "python3 ended: \(end)") }
                usleep(1000)
            }
            throw ChildProcess.Failure(description: "python3 did not commit within 30 s")
        }
    }

    /// Commits `statements` and, for a writer other than the store, makes the store follow
    /// the commit at once (as a wake-up would): its live lists are told of it.
    func commitFollowed(_ statements: [String]) throws {
        try commit(statements)
        if kind != .store { try store.synchronize() }
    }
}

/// A list to follow across a hand-over: sectioned by day or not, filtered or not, ascending
/// or descending.
struct HandOverShape: Sendable, CustomTestStringConvertible {
    var sectioned: Bool
    var filtered: Bool
    var descending: Bool

    static let all: [HandOverShape] = [false, true].flatMap { sectioned in
        [false, true].flatMap { filtered in
            [false, true].map { HandOverShape(sectioned: sectioned, filtered: filtered, descending: $0) }
        }
    }

    var testDescription: String {
        "\(sectioned ? "by day" : "plain"), \(filtered ? "filtered" : "all"), \(descending ? "descending" : "ascending")"
    }

    var request: RecordRequest<Article> {
        let order: SortOrder = descending ? .reverse : .forward
        let sort = sectioned ? SortDescriptor(\Article.published, order: order) : SortDescriptor(\Article.score, order: order)
        return RecordRequest<Article>(predicate: filtered ? #Predicate { $0.score >= 30 } : nil, sortBy: [sort], batchSize: 5)
    }

    var sectionKey: SectionKey<Article>? { sectioned ? .day(\.published, timeZone: .gmt) : nil }
}

/// Articles for the hand-over tests: `count` rows, ids 1…count, score 3·id, published 3·id
/// hours after 1970 (a day section holds eight).
func handOverArticles(_ store: Store, count: Int = 60) throws {
    try store.write { tx in
        try tx.database.execute(
            sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO article (id, title, url, published, score, category, isRead)
                SELECT i, 'a' || i, 'u' || i, i * 3 * 3600, i * 3, 'c', 0 FROM n
                """, arguments: [count])
    }
}

/// The commit a hand-over test puts in its window: an insert, a row moved, a row deleted.
let notedCommit = [
    "INSERT INTO article (title, url, published, score, category, isRead) VALUES ('noted', 'noted', 100 * 3600, 100, 'c', 0)",
    "UPDATE article SET score = 140, published = 140 * 3600 WHERE id = 11",
    "DELETE FROM article WHERE id = 20",
]

/// Another connection's commit that the store has not followed when the catch-up runs:
/// every other row's keys reversed (a binary search among them would be lost), a row
/// deleted (a probe of it fails), one inserted (above every identifier held).
let unseenCommit = [
    "UPDATE article SET score = 181 - score, published = (181 - score) * 3600 WHERE id % 2 = 0 AND id <= 60",
    "DELETE FROM article WHERE id = 7",
    "INSERT INTO article (title, url, published, score, category, isRead) VALUES ('unseen', 'unseen', 50 * 3600, 50, 'c', 0)",
]

typealias HandOverPoint = LiveResults.HandOverPoint
