import Foundation
import GRDB
import Testing
@testable import Folio

/// A record with one attribute of every supported type, optional and not, and one stored
/// property that is deliberately not an attribute (`scratch`).
struct Sample: PersistentRecord {
    var id: RecordID?
    var name = ""
    var value = 0.0
    var taken = Date(timeIntervalSince1970: 0)
    var count64: Int64 = 0
    var flag = false
    var payload = Data()
    var token = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var note: String? = nil
    var optionalValue: Double? = nil
    var optionalDate: Date? = nil
    var optionalData: Data? = nil
    var optionalToken: UUID? = nil
    var optionalCount: Int? = nil
    var optionalFlag: Bool? = nil
    /// Not declared in the entity: predicates and sorts on it are unknown key paths.
    var scratch = 0

    static let entity = EntityDescription<Sample>(
        "sample",
        [
            AttributeDescription(\.name, unique: true),
            AttributeDescription(\.value, indexed: true),
            AttributeDescription(\.taken, indexed: true),
            AttributeDescription(\.count64),
            AttributeDescription(\.flag),
            AttributeDescription(\.payload),
            AttributeDescription(\.token),
            AttributeDescription(\.note),
            AttributeDescription(\.optionalValue),
            AttributeDescription(\.optionalDate),
            AttributeDescription(\.optionalData),
            AttributeDescription(\.optionalToken),
            AttributeDescription(\.optionalCount),
            AttributeDescription(\.optionalFlag),
        ])

    init() {}
    init(name: String, value: Double = 0, taken: Date = Date(timeIntervalSince1970: 0)) {
        self.name = name
        self.value = value
        self.taken = taken
    }
}

/// Stored values are compared bit for bit for doubles (NaN equals NaN here) and by
/// `timeIntervalSince1970` for dates.
func sameStoredContent(_ a: Sample, _ b: Sample) -> Bool {
    func same(_ x: Double, _ y: Double) -> Bool { x.isNaN ? y.isNaN : x == y }
    func same(_ x: Double?, _ y: Double?) -> Bool {
        switch (x, y) {
        case (nil, nil): true;
        case let (x?, y?): same(x, y);
        default: false
        }
    }
    return a.id == b.id && a.name == b.name && same(a.value, b.value)
        && same(a.taken.timeIntervalSince1970, b.taken.timeIntervalSince1970)
        && a.count64 == b.count64 && a.flag == b.flag && a.payload == b.payload && a.token == b.token
        && a.note == b.note && same(a.optionalValue, b.optionalValue)
        && same(a.optionalDate?.timeIntervalSince1970, b.optionalDate?.timeIntervalSince1970)
        && a.optionalData == b.optionalData && a.optionalToken == b.optionalToken
        && a.optionalCount == b.optionalCount && a.optionalFlag == b.optionalFlag
}

/// A record type that no test store is opened with.
struct Unregistered: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<Unregistered>("unregistered", [AttributeDescription(\.name)])
    init() {}
}

/// The `article` table declared differently: `score` is a Double, `category` and
/// `isRead` are gone, `summary` is new, and `published` lost its index.
struct ArticleRedeclared: PersistentRecord {
    var id: RecordID?
    var title = ""
    var url = ""
    var published = Date(timeIntervalSince1970: 0)
    var score = 0.0
    var summary = ""
    static let entity = EntityDescription<ArticleRedeclared>(
        "article",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.url, unique: true),
            AttributeDescription(\.published),
            AttributeDescription(\.score, indexed: true),
            AttributeDescription(\.summary),
        ])
    init() {}
}

/// A scratch directory for file stores, removed at the end of the test.
final class ScratchDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("folio-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// The statements of `recorder` that read `table`, with placeholders (not expanded).
func selects(_ recorder: SQLRecorder, from table: String) -> [String] {
    recorder.statements.filter { $0.hasPrefix("SELECT") && $0.contains("FROM \"\(table)\"") }
}

/// The statements of `recorder` without GRDB's transaction and connection bookkeeping and
/// without the statements of Folio's change-token triggers (logged as `-- …`).
func queries(_ recorder: SQLRecorder) -> [String] {
    recorder.statements.filter { line in
        !["PRAGMA", "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "--"].contains { line.hasPrefix($0) }
            && !changeLogReads.contains(line)
    }
}

/// The change hub's reads of the change log after each commit (bookkeeping, as `PRAGMA` is).
let changeLogReads: Set<String> = [SQLBuilder.changeLogLast, SQLBuilder.allChangeIDs, SQLBuilder.changeLogSince]

/// Every row of `table`, as text, through a raw read (what a fresh look at the store sees).
func rawRows(_ store: Store, _ table: String) throws -> [String] {
    try store.read { db in
        try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\" ORDER BY id").map { $0.description }
    }
}

/// The user tables, indexes and triggers of a database, as SQLite records them.
func rawSchema(_ store: Store) throws -> [String] {
    try store.read { db in
        try String.fetchAll(db, sql: "SELECT type || ' ' || name || ' ' || ifnull(sql, '') FROM sqlite_master ORDER BY name")
    }
}

/// Expects `body` to throw exactly `expected`.
func expectError<T>(
    _ expected: FolioError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) {
    do {
        _ = try body()
        Issue.record("expected \(expected), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as FolioError {
        #expect(error == expected, sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(expected), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Runs `body`, expecting a `FolioError`, and returns it (nil, with an issue, otherwise).
func folioError<T>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) -> FolioError? {
    do {
        _ = try body()
        Issue.record("expected a FolioError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as FolioError {
        return error
    } catch {
        Issue.record("expected a FolioError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
