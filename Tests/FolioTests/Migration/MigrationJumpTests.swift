import Foundation
import GRDB
import Testing
@testable import Folio

/// Version 1 of a model whose version 3 changes everything at once.
struct JumpItemV1: PersistentRecord {
    var id: RecordID?
    var title = ""
    var note: String? = nil
    var score = 0
    var ratio = 0.0
    var payload = Data()
    static let entity = EntityDescription<JumpItemV1>(
        "item",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.note),
            AttributeDescription(\.score, indexed: true),
            AttributeDescription(\.ratio),
            AttributeDescription(\.payload),
        ])
}

/// Version 3: `title` renamed `headline`, `note` required with a default, `rank` added with
/// an index; `tag` removed (with the opt-in); `label` new.
struct JumpItemV3: PersistentRecord {
    var id: RecordID?
    var headline = ""
    var note = ""
    var score = 0
    var ratio = 0.0
    var payload = Data()
    var rank: Int? = nil
    static let entity = EntityDescription<JumpItemV3>(
        "item",
        [
            AttributeDescription(\.headline, renamedFrom: "title"),
            AttributeDescription(\.note, defaultValue: "-"),
            AttributeDescription(\.score, indexed: true),
            AttributeDescription(\.ratio),
            AttributeDescription(\.payload),
            AttributeDescription(\.rank, indexed: true),
        ])
}

struct JumpLabel: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<JumpLabel>("label", [AttributeDescription(\.name, unique: true)])
}

/// A jump from version 1 straight to 3 with every kind of change and the steps of both
/// versions, over values at the extremes: all of it or none of it.
@Suite("Migrations over several versions")
struct MigrationJumpTests {
    let directory: ScratchDirectory
    let path: String

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("items.sqlite")
    }

    /// Every stored value of `item`, by rowid, as storage class and bytes (the renamed
    /// column under either name).
    func items(title: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT id || ':' || typeof(\(title)) || hex(\(title)) || '|' || typeof(score) || hex(score) || '|' \
                    || typeof(ratio) || hex(ratio) || printf('%!.17g', ratio) || '|' || typeof(payload) || length(payload) \
                    || hex(substr(payload, 1, 8)) || hex(substr(payload, -8)) FROM item ORDER BY id
                    """)
        }
    }

    func makeVersion1() throws {
        let store = try Store(path: path, model: StoreModel(version: 1, records: [JumpItemV1.self, NoteTag.self]))
        let big = Data((0..<10_485_760).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let rows: [JumpItemV1] = [
            JumpItemV1(title: "min", note: nil, score: Int(Int64.min), ratio: -0.0, payload: Data([0, 0, 0])),
            JumpItemV1(title: "max\u{0}nul", note: "kept", score: Int(Int64.max), ratio: .infinity, payload: big),
            JumpItemV1(title: "2^53+1", note: nil, score: 9_007_199_254_740_993, ratio: 9_007_199_254_740_992, payload: Data()),
            JumpItemV1(title: "-inf", note: "", score: -1, ratio: -.infinity, payload: Data([0xFF])),
            JumpItemV1(title: "tiny", note: nil, score: 0, ratio: .leastNonzeroMagnitude, payload: Data([0])),
            JumpItemV1(title: "deleted", note: nil, score: 5, ratio: 1, payload: Data()),
        ]
        try store.write { tx in
            for var row in rows { try tx.insert(&row) }
            for name in ["red", "green", "blue"] {
                var tag = NoteTag(name: name)
                try tx.insert(&tag)
            }
            _ = try tx.delete(JumpItemV1.self, id: RecordID(6))
        }
        try store.close()
        // Another program: invalid UTF-8, and a real beside integers in the integer column.
        try sqlite3Shell(
            path,
            """
            INSERT INTO item (title, note, score, ratio, payload) VALUES (CAST(x'C3FF00FE' AS TEXT), NULL, 1.5, 0.5, x'00');
            DELETE FROM item WHERE id = 7;
            INSERT INTO item (title, note, score, ratio, payload) VALUES (CAST(x'C328' AS TEXT), CAST(x'FF' AS TEXT), 2.5, 2, x'');
            """)
    }

    static let discarding: [StoreModel.DiscardedData] = [.entity("tag")]

    static func steps(failing: Bool) -> [MigrationStep] {
        [
            MigrationStep("v2: rank from score sign") { db in
                try db.execute(sql: "UPDATE item SET rank = CASE WHEN score < 0 THEN -1 WHEN score > 0 THEN 1 ELSE 0 END")
            },
            MigrationStep("v3: labels from tags") { db in
                try db.execute(sql: "INSERT INTO label (name) SELECT name FROM tag ORDER BY id")
                // Writes a lot before it fails: all of it must go.
                try db.execute(
                    sql: """
                        WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 49999)
                        INSERT INTO label (name) SELECT 'bulk ' || i FROM n
                        """)
                try db.execute(sql: "DELETE FROM label WHERE name LIKE 'bulk %'")
                if failing { throw StepFailure() }
            },
        ]
    }

    @Test func aFailingStepLeavesEverythingThenTheJumpKeepsEveryValue() throws {
        try makeVersion1()
        let before = try fileContents(path)
        let values = try items(title: "title")
        #expect(values.count == 6)  // ids 1-5 and 8
        expectError(.migrationStepFailed(step: "v3: labels from tags", reason: "the step's own error")) {
            try Store(
                path: path,
                model: StoreModel(
                    version: 3, records: [JumpItemV3.self, JumpLabel.self], discarding: Self.discarding,
                    steps: Self.steps(failing: true)))
        }
        #expect(try fileContents(path) == before, "schema, rows, rowids, sqlite_sequence, metadata: all as before")

        let store = try Store(
            path: path,
            model: StoreModel(
                version: 3, records: [JumpItemV3.self, JumpLabel.self], discarding: Self.discarding,
                steps: Self.steps(failing: false)))
        let notes = try store.read { db in try String.fetchAll(db, sql: "SELECT hex(note) FROM item ORDER BY id") }
        #expect(notes == ["2D", "6B657074", "2D", "", "2D", "FF"])
        let ranks = try store.read { db in try Int.fetchAll(db, sql: "SELECT rank FROM item ORDER BY id") }
        #expect(ranks == [-1, 1, 1, -1, 0, 1])
        #expect(
            try store.fetch(RecordRequest<JumpLabel>(sortBy: [SortDescriptor(\.id)])).map { $0!.name } == [
                "red", "green", "blue",
            ])
        var item = JumpItemV3(headline: "new")
        try store.write { tx in try tx.insert(&item) }
        #expect(item.id == RecordID(9), "the counter is past the deleted rows 6 and 7")
        try store.close()

        #expect(try items(title: "headline").dropLast() == values[...])
        #expect(try fileValue(path, "PRAGMA integrity_check") == "ok")
        #expect(try fileValue(path, "SELECT count(*) FROM sqlite_master WHERE tbl_name = 'tag'") == 0)
        #expect(
            try fileValue(path, "SELECT group_concat(name, ',') FROM (SELECT name FROM folio_entities ORDER BY name)")
                == "item,label")
        #expect(try fileValue(path, "SELECT count(*) FROM folio_metadata WHERE key LIKE 'migration_step:%'") == 2)
        let fresh = directory.path("fresh.sqlite")
        try Store(path: fresh, model: StoreModel(version: 3, records: [JumpItemV3.self, JumpLabel.self])).close()
        let shape = { (file: String) in try fileSchema(file).filter { $0.contains(" ON item:") || $0.contains(" ON label:") } }
        #expect(try shape(path) == shape(fresh))
    }
}
