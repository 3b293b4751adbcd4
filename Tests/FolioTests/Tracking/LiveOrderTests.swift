import Foundation
import GRDB
import Testing
@testable import Folio

/// A live list orders values exactly as SQLite does: integers near `Int64.max` beside reals,
/// and text that is not valid UTF-8 (``ExactOrderTests`` checks the comparison itself).
@Suite("Live order of values SQLite compares exactly")
@MainActor
struct LiveOrderTests {
    /// Integers near `Int64.max` and above 2⁵³ beside reals written by raw SQL (an INTEGER
    /// column keeps a real it cannot convert exactly): `RowOrder.compareNumbers` compared
    /// through `Double`, so `Int64.max` tied with the real 2⁶³ and 2⁵³ + 1 with 2⁵³; the
    /// binary search then placed rows where SQLite does not, and the tracker trapped.
    @Test(.tags(Testing.Tag.threadSanitized)) func integersNearInt64MaxBesideRealsAreOrderedExactly() async throws {
        let store = try Store.inMemory(records: [Article.self])
        let values: [String] = [
            "9223372036854775807.0", "9007199254740992.0", "-9223372036854775808.0", "1.5", "-0.0", "1e300",
        ]
        // Reals first (smaller rowids), then the integers that used to tie with them.
        for value in values {
            try execute(
                store, "INSERT INTO article (title, url, published, score, isRead) VALUES ('r', ?, 0, \(value), 0)", [value])
        }
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.score)]))
        let integers: [Int64] = [.max, .max - 1, 9_007_199_254_740_993, .min, .min + 1, 0, 1, 2]
        for (i, value) in integers.enumerated() {
            try await live.step { tx in
                try tx.database.execute(
                    sql: "INSERT INTO article (title, url, published, score, isRead) VALUES ('i', ?, 0, ?, 0)",
                    arguments: ["i\(i)", value])
            }
        }
        // Moving updates between them, and a real that becomes an integer and back.
        let ids = live.controller.snapshot.identifiers.map(\.rawValue)
        for (i, id) in ids.enumerated() where i % 3 == 0 {
            try await live.step { tx in
                try tx.database.execute(
                    sql: "UPDATE article SET score = ? WHERE id = ?",
                    arguments: [i % 2 == 0 ? Int64.max - Int64(i) : Int64.min + Int64(i), id])
            }
        }
        try await live.step { tx in
            try tx.database.execute(sql: "UPDATE article SET score = 9223372036854775807.0 WHERE score = 1")
            try tx.database.execute(sql: "UPDATE article SET score = 9223372036854775807 WHERE score = 2")
        }
        #expect(live.controller.snapshot.numberOfItems == values.count + integers.count)
    }

    /// Text written by raw SQL that is not valid UTF-8 used to be read through a Swift
    /// `String`, which replaced it with U+FFFD: `x'ff'` then tied with a real "\u{FFFD}",
    /// and a row inserted live landed on the wrong side of it.
    @Test(.tags(Testing.Tag.threadSanitized)) func invalidUTF8SortKeysAreOrderedByTheirBytes() async throws {
        let store = try Store.inMemory(records: [Article.self])
        for (i, bytes) in ([[0xFF], [0xC3], [0x7A], [0xEF, 0xBF, 0xBE], [0xF0, 0x9F]] as [[UInt8]]).enumerated() {
            try execute(
                store, "INSERT INTO article (title, url, published, score, isRead) VALUES (\(textLiteral(bytes)), ?, 0, 0, 0)",
                ["u\(i)"])
        }
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.title)]))
        for (i, title) in ["\u{FFFD}", "\u{FFFD}\u{FFFD}", "z", "é", ""].enumerated() {
            try await live.step { tx in
                var a = Article(title: title, url: "v\(i)")
                try tx.insert(&a)
            }
        }
        try await live.step { tx in
            try tx.database.execute(sql: "UPDATE article SET title = \(textLiteral([0xFF, 0x00])) WHERE url = 'v2'")
        }
        #expect(live.controller.snapshot.numberOfItems == 10)
    }

    /// Ranks Int64.max, Int64.max − 1, 1, 2⁵³ + 1, Int64.min; then raw SQL makes row 3 the REAL
    /// 2⁶³. The order is [5, 4, 2, 1, 3] (Int64.max < 2⁶³ as SQLite compares exactly), not
    /// [5, 4, 3, 2, 1] as a comparison through `Double` gives.
    @Test func aRealAboveInt64MaxSortsAfterIt() async throws {
        let store = try Store.inMemory(records: [Article.self])
        let ascending = try await LiveHarness(
            store, sorted([SortDescriptor(\.score), SortDescriptor(\.published, order: .reverse)]))
        let descending = try await LiveHarness(
            store, sorted([SortDescriptor(\.score, order: .reverse)]), sectionBy: .attribute(\.score))
        try await ascending.step { tx in
            for score in [Int.max, Int.max - 1, 1, (1 << 53) + 1, Int.min] {
                var a = Article(title: "s", score: score)
                try tx.insert(&a)
            }
        }
        try await descending.settle()
        try await ascending.step { tx in
            try tx.database.execute(sql: "UPDATE article SET score = 9.223372036854775807e18 WHERE id = 3")
        }
        try await descending.settle()
        #expect(ascending.controller.snapshot.identifiers.map(\.rawValue) == [5, 4, 2, 1, 3])
        #expect(descending.controller.snapshot.identifiers.map(\.rawValue) == [3, 1, 2, 4, 5])
    }
}
