import Foundation
import GRDB
import Testing
@testable import Folio

/// The record of the text tests: a folded name, a searchable optional city, a searchable
/// note, and a plain (unfolded) text attribute.
struct Person: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var city: String? = nil
    var note = ""
    var code = ""
    var age = 0

    static let entity = EntityDescription<Person>(
        "person",
        [
            AttributeDescription(\.name, folded: true),
            AttributeDescription(\.city, searchable: true),
            AttributeDescription(\.note, searchable: true),
            AttributeDescription(\.code),
            AttributeDescription(\.age, indexed: true),
        ])

    init() {}
    init(_ name: String, city: String? = nil, note: String = "", code: String = "", age: Int = 0) {
        self.name = name
        self.city = city
        self.note = note
        self.code = code
        self.age = age
    }
}

/// Inserts people, one transaction; returns them with their identifiers.
@discardableResult
func insertPeople(_ store: Store, _ people: [Person]) throws -> [Person] {
    try store.write { tx in
        var result: [Person] = []
        for var person in people {
            try tx.insert(&person)
            result.append(person)
        }
        return result
    }
}

/// The names of a request's results, in order (records loaded).
func fetchedNames(_ store: Store, _ request: RecordRequest<Person>) throws -> [String] {
    try store.fetch(request).map { $0?.name ?? "<deleted>" }
}

/// What is stored for a row, read on a connection of the test's own: the source columns
/// and their keys as bytes (`nil` for NULL).
struct StoredKeys: Equatable {
    var name: [UInt8]?, nameKey: [UInt8]?
    var city: [UInt8]?, cityKey: [UInt8]?
    var note: [UInt8]?, noteKey: [UInt8]?
}

func storedKeys(_ store: Store, id: RecordID) throws -> StoredKeys? {
    try store.read { db in
        let statement = try db.makeStatement(
            sql:
                "SELECT CAST(name AS BLOB), CAST(folio_name_folded AS BLOB), CAST(city AS BLOB), CAST(folio_city_folded AS BLOB), CAST(note AS BLOB), CAST(folio_note_folded AS BLOB) FROM person WHERE id = ?"
        )
        guard let row = try Row.fetchOne(statement, arguments: [id.rawValue]) else { return nil }
        func bytes(_ index: Int) -> [UInt8]? { (row[index] as Data?).map(Array.init) }
        return StoredKeys(
            name: bytes(0), nameKey: bytes(1), city: bytes(2), cityKey: bytes(3), note: bytes(4), noteKey: bytes(5))
    }
}

/// The key the current folding (folio-fold-2) gives stored bytes, by the reference implementation.
func referenceKey(_ bytes: [UInt8]?) -> [UInt8]? {
    bytes.map { Array(ReferenceFolding.fold(String(decoding: $0, as: UTF8.self)).utf8) }
}

/// Every stored key is what the reference implementation computes from its text.
func expectKeysCurrent(_ store: Store, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let rows = try store.read { db in
        try Row.fetchAll(
            db,
            sql:
                "SELECT id, CAST(name AS BLOB), CAST(folio_name_folded AS BLOB), CAST(city AS BLOB), CAST(folio_city_folded AS BLOB), CAST(note AS BLOB), CAST(folio_note_folded AS BLOB), typeof(name) FROM person"
        )
    }
    for row in rows {
        func bytes(_ index: Int) -> [UInt8]? { (row[index] as Data?).map(Array.init) }
        let id: Int64 = row[0]
        if (row[7] as String) == "text" {
            #expect(bytes(2) == referenceKey(bytes(1)), "name key of row \(id)", sourceLocation: sourceLocation)
        }
        #expect(bytes(4) == referenceKey(bytes(3)), "city key of row \(id)", sourceLocation: sourceLocation)
        #expect(bytes(6) == referenceKey(bytes(5)), "note key of row \(id)", sourceLocation: sourceLocation)
    }
}

/// The order a folded sort must give: folded key by bytes (by the reference folding), then
/// the text's bytes, then the rowid — computed in Swift from the stored bytes.
func expectedFoldedOrder(_ store: Store, descending: Bool = false) throws -> [Int64] {
    let rows = try store.read { db in try Row.fetchAll(db, sql: "SELECT id, CAST(name AS BLOB) FROM person") }
    let keyed = rows.map { row -> (id: Int64, key: [UInt8], raw: [UInt8]) in
        let raw = Array((row[1] as Data?) ?? Data())
        return (row[0], referenceKey(raw)!, raw)
    }
    let ascending = keyed.sorted { a, b in
        if a.key != b.key { return a.key.lexicographicallyPrecedes(b.key) }
        if a.raw != b.raw { return a.raw.lexicographicallyPrecedes(b.raw) }
        return a.id < b.id
    }.map(\.id)
    return descending ? ascending.reversed() : ascending
}

/// A live controller of people and a strict table-view model that follows it; every
/// settle checks the model against the controller and against a fresh fetch, and that the
/// controller reported no error.
@MainActor
final class PersonHarness: LiveList<Person> {
    init(_ store: Store, _ request: RecordRequest<Person>, sectionBy: SectionKey<Person>? = nil) async throws {
        try await super.init(store, request, sectionBy: sectionBy, expectsNoErrors: true)
    }
}
