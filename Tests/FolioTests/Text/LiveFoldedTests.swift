import Foundation
import GRDB
import Testing
@testable import Folio

/// Live controllers over folded predicates, folded sorts and folded sections, past the
/// identifier list's chunk size (4,096): every change set, applied to a strict table-view
/// model, gives a fresh fetch, and the order is the folded order computed in Swift.
@Suite("Live folded lists")
struct LiveFoldedTests {
    static let pieces = [
        "Émile", "emile", "EMILE", "e\u{301}mile", "Zoë", "zoe", "Straße", "STRASSE", "\u{212A}elvin", "kelvin", "İstanbul",
        "ıstanbul", "a\u{0}b", "A\u{0}B", "", "😀", "🇫🇷", "Ωmega", "ωmega", "ábaco", "abaco", "Łódź", "lodz", "ß", "SS", "ﬁn",
    ]

    static func name(_ rng: inout SplitMix64) -> String {
        rng.pick(pieces) + (rng.chance(0.5) ? " " + rng.pick(pieces) : "")
            + (rng.chance(0.3) ? " \(Int.random(in: 0..<50, using: &rng))" : "")
    }

    @Test(arguments: [(false, false, true), (true, false, false), (true, true, true)])
    @MainActor func randomEditsAcrossChunks(descending: Bool, predicate: Bool, sections: Bool) async throws {
        let store = try Store.inMemory(records: [Person.self])
        var rng = SplitMix64(seed: descending ? 11 : 12)
        try insertPeople(store, (0..<4_500).map { Person(Self.name(&rng), note: "n\($0)", age: $0) })
        let e = "E"
        var request = RecordRequest<Person>(sortBy: [SortDescriptor(\.name.folded, order: descending ? .reverse : .forward)])
        if predicate { request.predicate = #Predicate { $0.name.folded.contains(e) } }
        request.batchSize = 50
        let harness = try await PersonHarness(store, request, sectionBy: sections ? .firstLetter(\.name) : nil)
        for round in 0..<40 {
            let ids = try store.fetchIdentifiers(RecordRequest<Person>()).map(\.rawValue)
            try writeSync(store) { tx in
                for _ in 0..<Int.random(in: 1...(round % 10 == 0 ? 60 : 6), using: &rng) {
                    let id = rng.pick(ids)
                    switch Int.random(in: 0..<7, using: &rng) {
                    case 0:
                        var person = Person(Self.name(&rng), note: "new", age: -round)
                        try tx.insert(&person)
                    case 1: try tx.delete(Person.self, id: RecordID(id))
                    case 2:
                        // A change of case or accent only: the folded key stays.
                        try tx.database.execute(
                            sql: "UPDATE person SET name = upper(name) WHERE id = ? AND name NOT GLOB '*[^ -~]*'", arguments: [id]
                        )
                    case 3:
                        try tx.database.execute(
                            sql: "UPDATE person SET name = CAST(? AS TEXT) WHERE id = ?",
                            arguments: [Data(rng.pick([[0xFF, 0x45], [0x45, 0x00, 0x46], [0xC3], [0x7A, 0xFF]])), id])
                    case 4:
                        var person = Person(Self.name(&rng), note: "updated", age: Int(id))
                        person.id = RecordID(id)
                        _ = try? tx.update(person)  // (deleted earlier in the transaction)
                    case 5:
                        let age = Int(id)
                        try tx.updateAll(
                            Person.self, where: #Predicate { $0.age == age }, set: [.set(\.name, to: Self.name(&rng))])
                    default:
                        try tx.database.execute(sql: "UPDATE person SET note = note || '+' WHERE id = ?", arguments: [id])
                    }
                }
            }
            try await harness.settle()
        }
        let shown = harness.model.identifiers.map(\.rawValue)
        let all = try expectedFoldedOrder(store, descending: descending)
        if predicate {
            // Which rows match, from the stored bytes and the reference folding.
            let rows = try readSync(store) { db in try Row.fetchAll(db, sql: "SELECT id, CAST(name AS BLOB) FROM person") }
            let matching = Set(
                rows.filter { row in referenceKey(Array((row[1] as Data?) ?? Data()))!.contains(UInt8(ascii: "e")) }.map {
                    $0[0] as Int64
                })
            #expect(shown == all.filter(matching.contains))
        } else {
            #expect(shown == all)
        }
        #expect(shown.count > 4_096 || predicate)
        try expectKeysCurrent(store)
    }
}
