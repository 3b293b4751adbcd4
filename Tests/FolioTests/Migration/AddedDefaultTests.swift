import Foundation
import GRDB
import Testing
@testable import Folio

/// Version 1 of a searchable entity.
struct DfltItem: PersistentRecord {
    var id: RecordID?
    var title = ""
    static let entity = EntityDescription<DfltItem>("dflt", [AttributeDescription(\.title, searchable: true)])
}

/// Version 2: required attributes added, each with a default of another kind.
struct DfltItemV2: PersistentRecord {
    var id: RecordID?
    var title = ""
    var big = 0
    var small = 0
    var real = 0.0
    var tiny = 0.0
    var negativeZero = 0.0
    var quote = ""
    var nul = ""
    var bytes = Data()
    var when = Date(timeIntervalSince1970: 0)
    var flag = false
    static let entity = EntityDescription<DfltItemV2>(
        "dflt",
        [
            AttributeDescription(\.title, searchable: true),
            AttributeDescription(\.big, defaultValue: Int.max),
            AttributeDescription(\.small, defaultValue: Int.min),
            AttributeDescription(\.real, defaultValue: -1.0e300),
            AttributeDescription(\.tiny, defaultValue: Double.leastNonzeroMagnitude),
            AttributeDescription(\.negativeZero, defaultValue: -0.0),
            AttributeDescription(\.quote, defaultValue: "it's ''; DROP TABLE dflt; --"),
            AttributeDescription(\.nul, defaultValue: "a\u{0}b"),
            AttributeDescription(\.bytes, defaultValue: Data([0, 0x27, 0xFF])),
            AttributeDescription(\.when, defaultValue: Date(timeIntervalSince1970: 1_700_000_000.25)),
            AttributeDescription(\.flag, defaultValue: true),
        ])
}

/// Version 2 with only defaults SQL can hold as literals: added without a rebuild.
struct DfltLite: PersistentRecord {
    var id: RecordID?
    var title = ""
    var big = 0
    var quote = ""
    var flag = true
    static let entity = EntityDescription<DfltLite>(
        "dflt",
        [
            AttributeDescription(\.title, searchable: true),
            AttributeDescription(\.big, indexed: true, defaultValue: Int.max),
            AttributeDescription(\.quote, defaultValue: "it's"),
            AttributeDescription(\.flag, defaultValue: true),
        ])
}

/// An attribute added with a default is added as the column's `DEFAULT`: no row written, no
/// table rebuilt, the full-text index kept — what makes adding an attribute to a table of
/// millions of rows take milliseconds instead of minutes — and every row reads exactly the
/// default, for values at every extreme (those SQL cannot hold as a literal are written row by
/// row, as before).
@Suite("Migration: attributes added with a default")
struct AddedDefaultTests {
    let directory: ScratchDirectory
    var path: String { directory.path("dflt.sqlite") }

    init() throws { directory = try ScratchDirectory() }

    func seed(_ count: Int) throws {
        let store = try Store(path: path, model: StoreModel(version: 1, records: [DfltItem.self]))
        try store.write { tx in
            for i in 0..<count {
                var item = DfltItem(title: i % 2 == 0 ? "Café \(i)" : "cafe\u{301} \(i)")
                try tx.insert(&item)
            }
        }
        try store.close()
    }

    func rootPages() throws -> [String: Int] {
        let rows: [Row] = try {
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            return try queue.read { db in
                try Row.fetchAll(db, sql: "SELECT name, rootpage FROM sqlite_master WHERE type = 'table' AND rootpage > 0")
            }
        }()
        return Dictionary(uniqueKeysWithValues: rows.map { ($0[0] as String, $0[1] as Int) })
    }

    @Test func everyRowReadsEachDefaultExactly() throws {
        try seed(500)
        let store = try Store(path: path, model: StoreModel(version: 2, records: [DfltItemV2.self]))
        let items = try store.fetch(RecordRequest<DfltItemV2>(sortBy: [SortDescriptor(\.title)])).map { $0! }
        #expect(items.count == 500)
        for item in items {
            #expect(item.big == Int.max && item.small == Int.min)
            #expect(item.real == -1.0e300 && item.tiny == Double.leastNonzeroMagnitude)
            #expect(item.negativeZero == 0, "-0.0 (filled row by row: SQLite keeps no sign of zero, as for an insert)")
            #expect(item.quote == "it's ''; DROP TABLE dflt; --")
            #expect(Array(item.nul.utf8) == [0x61, 0, 0x62], "text with NUL kept (filled row by row)")
            #expect(item.bytes == Data([0, 0x27, 0xFF]))
            #expect(item.when == Date(timeIntervalSince1970: 1_700_000_000.25) && item.flag)
        }
        // Stored with the storage classes a fresh insert gives.
        var fresh = DfltItemV2()
        fresh.title = "fresh"
        fresh.big = .max
        fresh.small = .min
        fresh.real = -1.0e300
        fresh.tiny = Double.leastNonzeroMagnitude
        fresh.negativeZero = -0.0
        fresh.quote = "it's ''; DROP TABLE dflt; --"
        fresh.nul = "a\u{0}b"
        fresh.bytes = Data([0, 0x27, 0xFF])
        fresh.when = Date(timeIntervalSince1970: 1_700_000_000.25)
        fresh.flag = true
        try store.write { tx in try tx.insert(&fresh) }
        try store.close()
        let columns =
            "typeof(big), big, typeof(small), small, typeof(real), hex(real), typeof(tiny), hex(tiny), typeof(negativeZero), hex(negativeZero), typeof(nul), hex(nul), typeof(quote), hex(quote), typeof(bytes), hex(bytes), typeof(\"when\"), \"when\", typeof(flag), flag"
        let migrated: String? = try fileValue(
            path, "SELECT \(columns.replacingOccurrences(of: ", ", with: " || '|' || ")) FROM dflt WHERE title <> 'fresh' LIMIT 1"
        )
        let inserted: String? = try fileValue(
            path, "SELECT \(columns.replacingOccurrences(of: ", ", with: " || '|' || ")) FROM dflt WHERE title = 'fresh'")
        #expect(migrated != nil && migrated == inserted)
    }

    @Test func aSearchableTableKeepsItsIndexAndIsNotRebuilt() throws {
        try seed(2_000)
        let before = try rootPages()
        let store = try Store(path: path, model: StoreModel(version: 2, records: [DfltLite.self]))
        var request = RecordRequest<DfltLite>(sortBy: [SortDescriptor(\.title)])
        request.search = TextSearch("cafe")
        #expect(try store.count(request) == 2_000, "NFC and NFD, folded, all found")
        let max = Int.max
        #expect(try store.count(RecordRequest<DfltLite>(predicate: #Predicate { $0.big == max && $0.flag == true })) == 2_000)
        try store.close()
        let after = try rootPages()
        #expect(after["dflt"] == before["dflt"], "the table was not rebuilt")
        let search = before.keys.filter { $0.hasPrefix("folio_dflt_fts") }
        #expect(search.count >= 3)
        for name in search { #expect(after[name] == before[name], "\(name): the full-text index was kept") }
        // Writes after the migration keep the index right, and the shell's change of an
        // added column alone is logged (the log's update trigger names the new columns).
        let lastLogged: Int = try fileValue(path, "SELECT ifnull(max(seq), 0) FROM folio_changes") ?? 0
        _ = try sqlite3Shell(path, "UPDATE dflt SET flag = 0 WHERE id = 1;")
        let logged: Int? = try fileValue(
            path, "SELECT count(*) FROM folio_changes WHERE entity = 'dflt' AND row = 1 AND seq > \(lastLogged)")
        #expect(logged == 1, "an update of the added column alone is in the change log")
        let reopened = try Store(path: path, model: StoreModel(version: 2, records: [DfltLite.self]))
        try reopened.write { tx in
            var item = DfltLite()
            item.title = "Café du monde"
            try tx.insert(&item)
            _ = try tx.delete(DfltLite.self, id: RecordID(2))
        }
        #expect(try reopened.count(request) == 2_000, "one added, one deleted, through the kept index")
        #expect(try reopened.count(RecordRequest<DfltLite>(predicate: #Predicate { $0.flag == false })) == 1)
        try reopened.close()
    }

    /// The same migration on a table that a custom step writes: the step may change the
    /// searchable text, so the keys are computed again and the index made again, as before.
    @Test func aCustomStepStillRefoldsAndRebuildsTheIndex() throws {
        try seed(100)
        let before = try rootPages()
        let step = MigrationStep("retitle") { db in try db.execute(sql: "UPDATE dflt SET title = 'Ünïcode ' || id WHERE id <= 10")
        }
        let store = try Store(path: path, model: StoreModel(version: 2, records: [DfltItemV2.self], steps: [step]))
        var request = RecordRequest<DfltItemV2>()
        request.search = TextSearch("unicode")
        #expect(try store.count(request) == 10)
        request.search = TextSearch("cafe")
        #expect(try store.count(request) == 90)
        try store.close()
        let after = try rootPages()
        #expect(
            before.keys.filter { $0.hasPrefix("folio_dflt_fts") }.contains { after[$0] != before[$0] }, "the index was made again"
        )
    }
}
