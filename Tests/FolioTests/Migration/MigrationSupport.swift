import Foundation
import GRDB
import Testing
@testable import Folio

// The "note" entity in the versions the migration tests move between. Each declares the
// same table differently; added attributes come last, where `ALTER TABLE … ADD COLUMN`
// puts them, so that a migrated file and a fresh one have the same schema text.

/// Version 1: the starting point.
struct NoteV1: PersistentRecord, Equatable {
    var id: RecordID?
    var title = ""
    var body: String? = nil
    var score = 0
    static let entity = EntityDescription<NoteV1>(
        "note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.body),
            AttributeDescription(\.score, indexed: true),
        ])
}

/// An optional attribute added.
struct NoteWithTag: PersistentRecord {
    var id: RecordID?
    var title = ""
    var body: String? = nil
    var score = 0
    var tag: String? = nil
    static let entity = EntityDescription<NoteWithTag>(
        "note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.body),
            AttributeDescription(\.score, indexed: true),
            AttributeDescription(\.tag),
        ])
}

/// A non-optional attribute added, with a default and an index.
struct NoteWithRank: PersistentRecord {
    var id: RecordID?
    var title = ""
    var body: String? = nil
    var score = 0
    var rank = 0
    static let entity = EntityDescription<NoteWithRank>(
        "note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.body),
            AttributeDescription(\.score, indexed: true),
            AttributeDescription(\.rank, indexed: true, defaultValue: 7),
        ])
}

/// A non-optional attribute added without a default.
struct NoteWithRankNoDefault: PersistentRecord {
    var id: RecordID?
    var title = ""
    var body: String? = nil
    var score = 0
    var rank = 0
    static let entity = EntityDescription<NoteWithRankNoDefault>(
        "note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.body),
            AttributeDescription(\.score, indexed: true),
            AttributeDescription(\.rank),
        ])
}

/// `body` removed.
struct NoteWithoutBody: PersistentRecord {
    var id: RecordID?
    var title = ""
    var score = 0
    static let entity = EntityDescription<NoteWithoutBody>(
        "note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.score, indexed: true),
        ])
}

/// `body` made non-optional, with a default.
struct NoteBodyRequired: PersistentRecord {
    var id: RecordID?
    var title = ""
    var body = ""
    var score = 0
    static let entity = EntityDescription<NoteBodyRequired>(
        "note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.body, defaultValue: "(empty)"),
            AttributeDescription(\.score, indexed: true),
        ])
}

/// `body` made non-optional, without a default.
struct NoteBodyRequiredNoDefault: PersistentRecord {
    var id: RecordID?
    var title = ""
    var body = ""
    var score = 0
    static let entity = EntityDescription<NoteBodyRequiredNoDefault>(
        "note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.body),
            AttributeDescription(\.score, indexed: true),
        ])
}

/// `title` made optional.
struct NoteTitleOptional: PersistentRecord {
    var id: RecordID?
    var title: String? = nil
    var body: String? = nil
    var score = 0
    static let entity = EntityDescription<NoteTitleOptional>(
        "note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.body),
            AttributeDescription(\.score, indexed: true),
        ])
}

/// `score`'s index removed, `title` unique.
struct NoteTitleUnique: PersistentRecord {
    var id: RecordID?
    var title = ""
    var body: String? = nil
    var score = 0
    static let entity = EntityDescription<NoteTitleUnique>(
        "note",
        [
            AttributeDescription(\.title, unique: true),
            AttributeDescription(\.body),
            AttributeDescription(\.score),
        ])
}

/// `score`'s index made unique.
struct NoteScoreUnique: PersistentRecord {
    var id: RecordID?
    var title = ""
    var body: String? = nil
    var score = 0
    static let entity = EntityDescription<NoteScoreUnique>(
        "note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.body),
            AttributeDescription(\.score, unique: true),
        ])
}

/// `title` renamed `headline`, `score` renamed `points` (its index follows).
struct NoteRenamedAttributes: PersistentRecord {
    var id: RecordID?
    var headline = ""
    var body: String? = nil
    var points = 0
    static let entity = EntityDescription<NoteRenamedAttributes>(
        "note",
        [
            AttributeDescription(\.headline, renamedFrom: "title"),
            AttributeDescription(\.body),
            AttributeDescription(\.points, indexed: true, renamedFrom: "score"),
        ])
}

/// The entity renamed `memo`.
struct RenamedNote: PersistentRecord {
    var id: RecordID?
    var title = ""
    var body: String? = nil
    var score = 0
    static let entity = EntityDescription<RenamedNote>(
        "memo",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.body),
            AttributeDescription(\.score, indexed: true),
        ], renamedFrom: "note")
}

/// `score` declared a `Double`: a type change.
struct NoteScoreDouble: PersistentRecord {
    var id: RecordID?
    var title = ""
    var body: String? = nil
    var score = 0.0
    static let entity = EntityDescription<NoteScoreDouble>(
        "note",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.body),
            AttributeDescription(\.score, indexed: true),
        ])
}

/// A second entity.
struct NoteTag: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<NoteTag>("tag", [AttributeDescription(\.name, unique: true)])
}

/// Every value type and its extremes, for rebuilds that must keep each one exactly.
struct Extreme: PersistentRecord, Equatable {
    var id: RecordID?
    var integer = 0
    var double = 0.0
    var text = ""
    var data = Data()
    var optional: Int64? = nil
    static let entity = EntityDescription<Extreme>(
        "extreme",
        [
            AttributeDescription(\.integer, indexed: true),
            AttributeDescription(\.double),
            AttributeDescription(\.text),
            AttributeDescription(\.data),
            AttributeDescription(\.optional),
        ])
}

/// `Extreme` with `optional` required (default Int64.min) and a new nullable column.
struct ExtremeV2: PersistentRecord, Equatable {
    var id: RecordID?
    var integer = 0
    var double = 0.0
    var text = ""
    var data = Data()
    var optional: Int64 = 0
    var added: String? = nil
    static let entity = EntityDescription<ExtremeV2>(
        "extreme",
        [
            AttributeDescription(\.integer, indexed: true),
            AttributeDescription(\.double),
            AttributeDescription(\.text),
            AttributeDescription(\.data),
            AttributeDescription(\.optional, defaultValue: Int64.min),
            AttributeDescription(\.added),
        ])
}

/// A store file of model version 1 with `count` notes: title "note i", body "body i" (nil
/// for every third), score i.
func makeNotes(_ path: String, count: Int, version: Int = 1, extra: [any PersistentRecord.Type] = []) throws {
    let store = try Store(path: path, model: StoreModel(version: version, records: [NoteV1.self] + extra))
    try store.write { tx in
        for i in 0..<count {
            var note = NoteV1(title: "note \(i)", body: i % 3 == 0 ? nil : "body \(i)", score: i)
            try tx.insert(&note)
        }
    }
    try store.close()
}

/// Everything a file holds, as text that tells every value apart (storage class and
/// bytes: NULs, -0.0, 2^53 + 1 beside 2^53): `sqlite_master` (types, names, tables, SQL),
/// then every row of every table (Folio's own and `sqlite_sequence` included), by rowid.
/// Read on a connection of its own, with no store open.
func fileContents(_ path: String) throws -> [String] {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { db in
        var lines = try String.fetchAll(
            db,
            sql:
                "SELECT type || ' ' || name || ' ON ' || tbl_name || ': ' || ifnull(sql, '') FROM sqlite_master ORDER BY type, name"
        )
        lines.append("--")
        for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
            let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?) ORDER BY cid", arguments: [table])
            let values = columns.map { "typeof(\"\($0)\") || ':' || ifnull(hex(\"\($0)\"), '')" }.joined(
                separator: " || ' | ' || ")
            let order = table == "sqlite_sequence" || table.hasPrefix("folio_") ? columns[0] : "rowid"
            let rowid = table == "sqlite_sequence" || table.hasPrefix("folio_") ? "" : "rowid || ' = ' || "
            lines += try String.fetchAll(db, sql: "SELECT '\(table): ' || \(rowid)\(values) FROM \"\(table)\" ORDER BY \(order)")
        }
        return lines
    }
}

/// The schema SQLite records (`sqlite_master`), without the rows.
func fileSchema(_ path: String) throws -> [String] {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { db in
        try String.fetchAll(
            db,
            sql:
                "SELECT type || ' ' || name || ' ON ' || tbl_name || ': ' || ifnull(sql, '') FROM sqlite_master ORDER BY type, name"
        )
    }
}

/// A value read from the file on a connection of its own.
func fileValue<T: DatabaseValueConvertible>(_ path: String, _ sql: String) throws -> T? {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { db in try T.fetchOne(db, sql: sql) }
}

/// The AUTOINCREMENT counter of `table`.
func sequence(_ path: String, _ table: String) throws -> Int64? {
    try fileValue(path, "SELECT seq FROM sqlite_sequence WHERE name = '\(table)'")
}

/// Runs `sql` in the real `sqlite3` shell, another process, and returns what it printed
/// (``Shell/sqlite3(_:_:)``, the durability suites' runner).
@discardableResult
func sqlite3Shell(_ path: String, _ sql: String) throws -> String {
    try Shell.sqlite3(path, sql)
}

/// Counts how many times a migration step ran, across the test.
final class StepCounter: Sendable {
    private let count = Locked(0)
    func tick() { count.withLock { $0 += 1 } }
    var value: Int { count.current }
}

/// The helpers of the suites that work on a notes file at `path`.
protocol NotesFileSuite {
    var path: String { get }
}

extension NotesFileSuite {
    /// Notes titled by a letter and a number, so that first-letter sections have several rows.
    func makeLetteredNotes(count: Int) throws {
        try makeNotes(path, count: count)
        try sqlite3Shell(path, "UPDATE note SET title = char(65 + score % 5) || ' ' || score;")
    }
}
