import Foundation
import GRDB
import Testing

@testable import Folio

/// Values another program (or an older version of the app) stored that the declared types
/// cannot hold read as `FolioError.decoding` naming the column: never a truncation, never
/// a trap, never `nil` for an optional.
@Suite("Attribute types: values that no longer decode")
struct UndecodableValueTests {
    /// A store with one default gadget, and its id.
    func oneGadget() throws -> (Store, RecordID) {
        let store = try Store.inMemory(records: [Gadget.self])
        var g = Gadget("g")
        try store.write { tx in try tx.insert(&g) }
        return (store, g.id!)
    }

    static let cases: [(column: String, literal: String)] = [
        ("i8", "300"), ("i8", "-129"), ("i16", "32768"), ("i32", "9223372036854775807"), ("i32", "-2147483649"),
        ("u8", "-1"), ("u8", "256"), ("u16", "-1"), ("u32", "4294967296"), ("u64", "-1"), ("word", "-9223372036854775808"),
        ("i32", "1.5"), ("u64", "'text'"), ("i16", "x'01'"), ("optionalI32", "2147483648"),
        ("optionalU64", "-5"), ("optionalI32", "0.5"),
        ("status", "'deleted'"), ("status", "'Draft'"), ("status", "'draft '"), ("status", "7"),
        ("optionalStatus", "'deleted'"), ("priority", "3"), ("priority", "300"), ("priority", "'high'"),
        ("optionalPriority", "2"),
        ("size", #"'{"w":1}'"#), ("size", "'not json'"), ("size", "42"), ("size", "x'7b7d'"), ("tags", #"'{"a":1}'"#),
        ("tags", #"'[1,2]'"#), ("spec", #"'{"parts":[{"name":"a"}]}'"#), ("shape", #"'{"triangle":{}}'"#),
        ("optionalSize", "'[]'"), ("optionalTags", "'null'"),
        ("link", "''"), ("ratio", "'abc'"), ("optionalRatio", "1e39"),
    ]

    @Test(arguments: cases)
    func aStoredValueTheTypeCannotHoldIsANamedError(column: String, literal: String) throws {
        let (store, id) = try oneGadget()
        try execute(store, "UPDATE gadget SET \(column) = \(literal)")
        func isNamed(_ error: any Error) -> Bool {
            guard case FolioError.decoding(let named, let reason) = error else { return false }
            return named == column && !reason.isEmpty
        }
        #expect { try store.fetchOne(Gadget.self, id: id) } throws: { isNamed($0) }
        // A fetch without a batch size reads every record now, and throws.
        #expect { try store.fetch(RecordRequest<Gadget>()) } throws: { isNamed($0) }
        // Through a batch-faulting fetch: record(at:) throws, the subscript is nil with the error kept.
        var request = RecordRequest<Gadget>()
        request.batchSize = 10
        let results = try store.fetch(request)
        #expect(results.count == 1, "the list is read without records")
        #expect { try results.record(at: 0) } throws: { isNamed($0) }
        #expect(results[0] == nil)
        #expect(results.lastError.map(isNamed) == true)
        // Inside a write, too.
        #expect { try store.write { tx in try tx.fetchAll(RecordRequest<Gadget>()) } } throws: { isNamed($0) }
    }

    @Test func textInAnIntColumnIsANamedErrorAsBefore() throws {
        let store = try Store.inMemory(records: [Article.self])
        var article = Article(title: "a", score: 1)
        try store.write { tx in try tx.insert(&article) }
        try execute(store, "UPDATE article SET score = 'many'")
        #expect {
            try store.fetchOne(Article.self, id: article.id!)
        } throws: { error in
            guard case FolioError.decoding(let column, _) = error else { return false }
            return column == "score"
        }
    }

    @Test func theOtherRowsOfTheBatchStillRead() throws {
        let store = try Store.inMemory(records: [Gadget.self])
        try store.write { tx in
            for i in 0..<5 {
                var g = Gadget("g\(i)")
                g.status = .live
                try tx.insert(&g)
            }
        }
        try execute(store, "UPDATE gadget SET status = 'removed-case' WHERE name = 'g2'")
        var request = RecordRequest<Gadget>(sortBy: [SortDescriptor(\.name)])
        request.batchSize = 5
        let results = try store.fetch(request)
        #expect(results.map { $0?.name } == ["g0", "g1", nil, "g3", "g4"])
        // The list itself — filtered, sorted and sectioned by the raw value — needs no record.
        let live = GadgetStatus.live
        #expect(try store.count(RecordRequest<Gadget>(predicate: #Predicate { $0.status == live })) == 4)
    }

    @Test func storedInRangeValuesOfAnotherStorageClassFollowSQLiteAffinity() throws {
        // SQLite's INTEGER affinity turns the text '12' and the real 3.0 into integers: they
        // are integers when read, and in range, so they read.
        let (store, id) = try oneGadget()
        try execute(store, "UPDATE gadget SET i8 = '12', i32 = 3.0, u8 = '255'")
        let read = try #require(try store.fetchOne(Gadget.self, id: id))
        #expect(read.i8 == 12 && read.i32 == 3 && read.u8 == 255)
    }

    @Test func decodingAValueDirectlyNamesTheColumnAndTheValue() throws {
        #expect(throws: FolioError.decoding(column: "c", reason: "300 is outside the range of Int8 (-128...127)")) {
            try Int8.decode(stored: 300.databaseValue, column: "c")
        }
        #expect(throws: FolioError.decoding(column: "c", reason: "-1 is outside the range of UInt64 (0...18446744073709551615)"))
        {
            try UInt64.decode(stored: (-1).databaseValue, column: "c")
        }
        #expect {
            try GadgetPriority.decode(stored: 2.databaseValue, column: "p")
        } throws: { error in
            guard case FolioError.decoding(let column, let reason) = error else { return false }
            return column == "p" && reason.contains("GadgetPriority")
        }
        #expect(try GadgetPriority.decode(stored: 9.databaseValue, column: "p") == .high)
        #expect(throws: FolioError.self) { try Float.decode(stored: (1e39).databaseValue, column: "f") }
        #expect(try Float.decode(stored: Double.infinity.databaseValue, column: "f") == .infinity)
        #expect(try Float.decode(stored: Int64.max.databaseValue, column: "f") == Float(Int64.max))
        #expect(throws: FolioError.self) { try URL.decode(stored: "".databaseValue, column: "u") }
    }

    @Test func aDefaultValueThatCannotBeStoredIsRefusedWhenTheStoreOpens() throws {
        struct BigDefault: PersistentRecord {
            var id: RecordID?
            var size: UInt64 = 0
            static let entity = EntityDescription<BigDefault>(
                "big_default", [AttributeDescription(\.size, column: "size", defaultValue: .max)])
        }
        struct NaNDefault: PersistentRecord {
            var id: RecordID?
            var spec = GadgetSpec()
            static let entity = EntityDescription<NaNDefault>(
                "nan_default", [AttributeDescription(\.spec, column: "spec", defaultValue: GadgetSpec(maybe: .nan))])
        }
        #expect {
            try Store.inMemory(records: [BigDefault.self])
        } throws: { error in
            guard case FolioError.invalidSchema(let entity, let reason) = error else { return false }
            return entity == "big_default" && reason.contains("'size'") && reason.contains("Int64.max")
        }
        #expect {
            try Store.inMemory(records: [NaNDefault.self])
        } throws: { error in
            guard case FolioError.invalidSchema(let entity, let reason) = error else { return false }
            return entity == "nan_default" && reason.contains("'spec'") && reason.contains("JSON")
        }
    }
}
