import Foundation
import GRDB
import Testing
@testable import Folio

/// The change log (its triggers) and the hub report a row an `UPDATE` names only when one of
/// its stored values changed, compared as SQLite stores them: the same storage class and the
/// same bytes (`BINARY`, whatever the column's collation). Checked on tables Folio would not
/// create itself (a `NOCASE` column, a column without affinity) through the log's triggers
/// and the hub alone.
@Suite("Change hub: an update is a changed stored value")
struct StoredValueChangeTests {
    /// Records what the hub hands a subscriber.
    final class Recorder: CommitSubscriber, @unchecked Sendable {
        // @unchecked Sendable: the hub calls it on the writer's queue only; tests read it
        // after the write returned.
        let table = "t"
        /// The rows of each commit that changed some.
        var commits: [Set<Int64>] = []
        /// Commits that wrote the table without changing a row (its change token is new).
        var unchangedWrites = 0
        var external = 0
        func didCommit(changedRowIDs: Set<Int64>, in db: Database) {
            if changedRowIDs.isEmpty { unchangedWrites += 1 } else { commits.append(changedRowIDs) }
        }
        func didChangeExternally(in db: Database) { external += 1 }
    }

    /// A queue with table `t` (a `NOCASE` text, a `REAL`, an `INTEGER`, a column without
    /// affinity, a `BLOB`) watched by a hub, and a subscriber.
    static func watched() throws -> (DatabaseQueue, ChangeHub, Recorder) {
        let queue = try DatabaseQueue()
        let columns = ["v", "n", "i", "a", "b"]
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT COLLATE NOCASE, n REAL, i INTEGER, a, b BLOB)")
            try db.execute(sql: SQLBuilder.createEntityMetadata)
            try db.execute(sql: SQLBuilder.createChangeLog)
            try db.execute(
                sql: "INSERT INTO folio_entities (name, version_hash, schema, change_id) VALUES ('t', '', '', randomblob(16))")
            for trigger in SQLBuilder.changeTriggers(table: "t") + [SQLBuilder.logUpdateTrigger(table: "t", columns: columns)] {
                try db.execute(sql: trigger.sql)
            }
        }
        let hub = ChangeHub(tables: ["t"], diagnostics: Diagnostics())
        queue.add(transactionObserver: hub, extent: .databaseLifetime)
        try queue.writeWithoutTransaction { db in try hub.start(db) }
        let recorder = Recorder()
        hub.subscribe(recorder)
        return (queue, hub, recorder)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var column: String
        var before: String
        var after: String
        var changed: Bool
        var testDescription: String { "\(column): \(before) → \(after) \(changed ? "changes" : "is no change")" }
    }

    static let cases: [Case] = [
        Case(column: "v", before: "'Arthur'", after: "'Arthur'", changed: false),
        Case(column: "v", before: "'A'", after: "'a'", changed: true),  // NOCASE column: bytes differ
        Case(column: "v", before: "'caf' || char(233)", after: "'cafe' || char(769)", changed: true),  // NFC vs NFD
        Case(column: "v", before: "'a' || char(0) || 'b'", after: "'a' || char(0) || 'c'", changed: true),
        Case(column: "v", before: "'a' || char(0) || 'b'", after: "'a' || char(0) || 'b'", changed: false),
        Case(column: "v", before: "'a'", after: "'a' || char(0)", changed: true),
        Case(column: "v", before: "NULL", after: "''", changed: true),
        Case(column: "a", before: "9223372036854775807", after: "9.223372036854776e18", changed: true),
        Case(column: "a", before: "9007199254740993", after: "9007199254740993.0", changed: true),
        Case(column: "a", before: "9007199254740992", after: "9007199254740992.0", changed: true),  // integer vs real
        Case(column: "a", before: "1", after: "1.0", changed: true),
        Case(column: "a", before: "X'616263'", after: "'abc'", changed: true),  // blob vs text, same bytes
        Case(column: "a", before: "NULL", after: "NULL", changed: false),
        Case(column: "a", before: "1.5", after: "1.5", changed: false),
        Case(column: "n", before: "0.0", after: "-0.0", changed: false),  // one stored value in a REAL column
        Case(column: "n", before: "2", after: "2.0", changed: false),  // REAL affinity: both real
        Case(column: "i", before: "5", after: "5.0", changed: false),  // INTEGER affinity: both integer
        Case(column: "i", before: "5", after: "'5'", changed: false),
        Case(column: "i", before: "9223372036854775807", after: "9.223372036854776e18", changed: true),
        Case(column: "b", before: "X'00'", after: "X'00'", changed: false),
        Case(column: "b", before: "X''", after: "NULL", changed: true),
    ]

    @Test(arguments: cases)
    func aRowIsUpdatedWhenAStoredValueChanged(_ change: Case) throws {
        let (queue, _, recorder) = try Self.watched()
        try queue.write { db in
            try db.execute(sql: "INSERT INTO t (id, \(change.column)) VALUES (1, \(change.before))")
            try db.execute(sql: "INSERT INTO t (id, \(change.column)) VALUES (2, \(change.before))")
        }
        recorder.commits = []
        // Row 2 is named too and keeps its value: it is never reported.
        try queue.write { db in
            try db.execute(sql: "UPDATE t SET \(change.column) = \(change.after) WHERE id = 1")
            try db.execute(sql: "UPDATE t SET \(change.column) = \(change.column) WHERE id = 2")
        }
        #expect(recorder.commits == (change.changed ? [[1]] : []))
        #expect(recorder.unchangedWrites == (change.changed ? 0 : 1), "told that the table was written, with no row")
        #expect(recorder.external == 0)
    }

    @Test func aRowChangedByAnUpsertIsUpdatedAndOneSetToItsValuesIsNot() throws {
        let (queue, _, recorder) = try Self.watched()
        try queue.write { db in try db.execute(sql: "INSERT INTO t (id, v, i) VALUES (1, 'x', 1), (2, 'y', 2)") }
        recorder.commits = []
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO t (id, v, i) VALUES (1, 'x', 1), (2, 'y', 3)
                    ON CONFLICT(id) DO UPDATE SET v = excluded.v, i = excluded.i
                    """)
        }
        #expect(recorder.commits == [[2]])
    }

    @Test func aChangedRowidReportsTheOldAndTheNewRow() throws {
        let (queue, _, recorder) = try Self.watched()
        try queue.write { db in try db.execute(sql: "INSERT INTO t (id, v) VALUES (1, 'x')") }
        recorder.commits = []
        try queue.write { db in try db.execute(sql: "UPDATE t SET id = 7 WHERE id = 1") }
        #expect(recorder.commits == [[1, 7]])
    }

    @Test func aRowChangedAndChangedBackInOneTransactionIsUpdated() throws {
        let (queue, _, recorder) = try Self.watched()
        try queue.write { db in try db.execute(sql: "INSERT INTO t (id, v) VALUES (1, 'A')") }
        recorder.commits = []
        try queue.write { db in
            try db.execute(sql: "UPDATE t SET v = 'B' WHERE id = 1")
            try db.execute(sql: "UPDATE t SET v = 'A' WHERE id = 1")
        }
        #expect(recorder.commits == [[1]], "each statement is compared on its own")
    }

    @Test func aReplacedRowIsTouchedEvenWithTheSameValues() throws {
        let (queue, _, recorder) = try Self.watched()
        try queue.write { db in try db.execute(sql: "INSERT INTO t (id, v) VALUES (1, 'A')") }
        recorder.commits = []
        try queue.write { db in try db.execute(sql: "INSERT OR REPLACE INTO t (id, v) VALUES (1, 'A')") }
        #expect(recorder.commits == [[1]], "deleted and inserted: the tracker then finds it in place")
    }

    @Test func aRewriteOfEveryRowToItsValuesReportsNothing() throws {
        let (queue, _, recorder) = try Self.watched()
        try queue.write { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5000)
                    INSERT INTO t (id, v, n, i, a, b) SELECT x, 'v' || x, x * 0.5, x, x || '', randomblob(4) FROM n
                    """)
        }
        recorder.commits = []
        try queue.write { db in
            try db.execute(sql: "UPDATE t SET v = v, n = n, i = i, a = a, b = b")
            try db.execute(sql: "UPDATE t SET i = CAST(i AS REAL)")  // INTEGER affinity stores it back as an integer
        }
        #expect(recorder.commits.isEmpty)
        try queue.write { db in try db.execute(sql: "UPDATE t SET i = CASE WHEN id = 4321 THEN -1 ELSE i END") }
        #expect(recorder.commits == [[4321]])
    }
}
