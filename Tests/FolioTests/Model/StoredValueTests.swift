import Foundation
import GRDB
import Testing
@testable import Folio

@Suite("Stored values")
struct StoredValueTests {
    static let hostile = [
        "O'Brien", #""double" quotes"#, "'; DROP TABLE article; --", #"Robert"); DROP TABLE "article"; --"#,
        "a\0b", "\0", "trailing NUL\0", "\0leading NUL", "emoji 🎉 and family 👩‍👩‍👧", "back\\slash", "%_*?[]",
        "\u{FEFF}byte order mark", "line\nbreak\ttab", "", " ", "Ärger ünd Øre", "日本語のテキスト",
    ]

    @Test func hostileStringsAreStoredAndMatchedExactly() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 10)
        let schemaBefore = try rawSchema(store)
        let ids: [String: RecordID] = try store.write { tx in
            var ids: [String: RecordID] = [:]
            for (i, text) in Self.hostile.enumerated() {
                var a = Article(title: text, url: "hostile:" + text, score: 1_000 + i, category: text)
                try tx.insert(&a)
                ids[text] = a.id!
            }
            return ids
        }
        #expect(try rawSchema(store) == schemaBefore)
        #expect(try store.count(RecordRequest<Article>()) == 10 + Self.hostile.count)

        var batched = RecordRequest<Article>(predicate: #Predicate { $0.score >= 1_000 }, sortBy: [SortDescriptor(\.score)])
        batched.batchSize = 4
        let unbatched = RecordRequest<Article>(predicate: #Predicate { $0.score >= 1_000 }, sortBy: [SortDescriptor(\.score)])
        for results in [try store.fetch(batched), try store.fetch(unbatched)] {
            #expect(results.map { $0?.title } == Self.hostile)
            #expect(results.map { $0?.url } == Self.hostile.map { "hostile:" + $0 })
            #expect(results.map { $0?.category } == Self.hostile)
        }
        for text in Self.hostile {
            let id = ids[text]!
            #expect(try store.fetchOne(Article.self, id: id)?.title == text)
            let equal = try store.fetchIdentifiers(RecordRequest<Article>(predicate: #Predicate { $0.title == text }))
            #expect(Array(equal) == [id], "== \(text.debugDescription)")
            let optionalEqual = try store.fetchIdentifiers(RecordRequest<Article>(predicate: #Predicate { $0.category == text }))
            #expect(Array(optionalEqual) == [id], "optional == \(text.debugDescription)")
            let member = try store.fetchIdentifiers(
                RecordRequest<Article>(predicate: #Predicate { [text, "zzz"].contains($0.title) }))
            #expect(Array(member) == [id], "IN \(text.debugDescription)")
        }
        // contains and starts(with:) agree with Swift on every stored string, NULs included.
        let everything = try store.fetch(RecordRequest<Article>()).map { $0! }
        for needle in ["\0", "a\0", "\0b", "'", "🎉", "--", "%", "NUL\0", "O'"] {
            let contains = #Predicate<Article> { $0.title.contains(needle) }
            let startsWith = #Predicate<Article> { $0.title.starts(with: needle) }
            for predicate in [contains, startsWith] {
                let expected = try everything.filter { try predicate.evaluate($0) }.map { $0.id! }
                #expect(
                    Array(try store.fetchIdentifiers(RecordRequest(predicate: predicate))) == expected,
                    "needle \(needle.debugDescription)")
            }
            #expect(try everything.contains { try contains.evaluate($0) })
        }
    }

    @Test func hostileStringsAsUpsertKeysAndBatchUpdateValues() throws {
        let store = try Store.inMemory(records: [Article.self])
        for text in Self.hostile {
            try store.write { tx in
                var first = Article(title: "first", url: text)
                try tx.upsert(&first, onConflict: \.url)
                var second = Article(title: text, url: text, score: 7)
                try tx.upsert(&second, onConflict: \.url)
                #expect(first.id == second.id, "upsert by \(text.debugDescription) inserted twice")
            }
        }
        #expect(try store.count(RecordRequest<Article>()) == Self.hostile.count)
        let all = try store.fetch(RecordRequest<Article>()).map { $0! }
        #expect(all.map(\.url) == Self.hostile)
        #expect(all.map(\.title) == Self.hostile)
        for text in Self.hostile {
            let changed = try store.write { tx in
                try tx.updateAll(Article.self, where: #Predicate { $0.url == text }, set: [.set(\.category, to: text)])
            }
            #expect(changed == 1)
        }
        #expect(try store.fetch(RecordRequest<Article>()).map { $0!.category } == Self.hostile)
    }

    @Test func everyAttributeTypeRoundTrips() throws {
        let store = try Store.inMemory(records: [Sample.self])
        var full = Sample(name: "full", value: -12.5, taken: Date(timeIntervalSince1970: 1_700_000_000.25))
        full.count64 = .min
        full.flag = true
        full.payload = Data([0, 1, 2, 0xFF, 0])
        full.token = UUID()
        full.note = "note"
        full.optionalValue = 0.1
        full.optionalDate = Date(timeIntervalSince1970: -1e9)
        full.optionalData = Data()
        full.optionalToken = UUID()
        full.optionalCount = .max
        full.optionalFlag = false
        var empty = Sample(name: "empty")
        empty.count64 = .max
        try store.write { tx in
            try tx.insert(&full)
            try tx.insert(&empty)
        }
        let typeof = try store.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT typeof(value), typeof(taken), typeof(count64), typeof(flag), typeof(payload), typeof(token),
                           typeof(optionalData), length(token) FROM sample WHERE name = 'full'
                    """)!
        }
        let expectedTypes =
            ["real", "real", "integer", "integer", "blob", "blob", "blob"].map(\.databaseValue) + [16.databaseValue]
        #expect(Array(typeof.databaseValues) == expectedTypes)
        var request = RecordRequest<Sample>(sortBy: [SortDescriptor(\.name, order: .reverse)])
        for batchSize in [0, 1] {
            request.batchSize = batchSize
            let fetched = try store.fetch(request).map { $0! }
            #expect(fetched.count == 2)
            #expect(sameStoredContent(fetched[0], full), "\(fetched[0])")
            #expect(sameStoredContent(fetched[1], empty), "\(fetched[1])")
        }
        #expect(try store.fetchOne(Sample.self, id: full.id!).map { sameStoredContent($0, full) } == true)
        // Each type is matched by value in a predicate.
        let minimum = Int64.min
        let token = full.token, payload = full.payload, taken = full.taken, optionalToken = full.optionalToken
        let predicates: [Predicate<Sample>] = [
            #Predicate { $0.token == token }, #Predicate { $0.payload == payload }, #Predicate { $0.taken == taken },
            #Predicate { $0.count64 == minimum }, #Predicate { $0.flag }, #Predicate { $0.optionalToken == optionalToken },
            #Predicate { $0.optionalFlag == false }, #Predicate { $0.optionalCount != nil },
        ]
        for predicate in predicates {
            #expect(Array(try store.fetchIdentifiers(RecordRequest(predicate: predicate))) == [full.id!])
        }
    }

    @Test func largeStringsAndBlobsRoundTrip() throws {
        let store = try Store.temporary(records: [Sample.self])
        var big = Sample(name: String(repeating: "ab'c\0", count: 2_000_000) + "end")  // 10 MB
        big.payload = Data(repeating: 0xA5, count: 10_000_000)
        for (offset, byte) in [(0, 0 as UInt8), (4_999_999, 0xFF), (9_999_999, 7)] { big.payload[offset] = byte }
        try store.write { tx in try tx.insert(&big) }
        store.diagnostics.resetCounters()
        let back = try store.fetchOne(Sample.self, id: big.id!)
        #expect(back?.name.utf8.count == 10_000_003)
        #expect(back?.name == big.name)
        #expect(back?.payload == big.payload)
        let suffix = "\0end"
        #expect(try store.count(RecordRequest<Sample>(predicate: #Predicate { $0.name.contains(suffix) })) == 1)
    }
}
