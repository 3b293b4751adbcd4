import Foundation
import GRDB
import Testing
@testable import Folio

/// Live sections are identified by the bytes of their value (NUL, look-alike and
/// differently normalized characters are distinct sections) and follow the sort.
@Suite("Live sections: identity by bytes, order by the sort")
@MainActor
struct LiveSectionTests: LiveListSuite {
    /// Section values with a NUL (`"a\0b"` was cut to `"a"`: performFetch threw "Sections
    /// are not contiguous"), precomposed and decomposed é (Swift's `String ==` merged them),
    /// "K" and the Kelvin sign (likewise, for `.firstLetter`) — every section key kind, in
    /// performFetch, live changes, names and the persistent cache.
    @Test(.tags(Testing.Tag.threadSanitized), arguments: ["attribute", "firstLetter", "computed"])
    func sectionIdentityIsTheBytesOfTheValue(kind: String) async throws {
        let store = try Store.temporary(records: [Article.self])
        let values = ["a", "a\0b", "a\0c", "\u{E9}", "e\u{301}", "K", "\u{212A}", "", "\u{212A}\u{212A}", "\0z"]
        try writeSync(store) { tx in
            for (i, value) in values.enumerated() {
                var a = Article(title: value + (kind == "firstLetter" ? "tail" : ""), url: "u\(i)", category: value)
                try tx.insert(&a)
            }
        }
        let (key, request): (SectionKey<Article>, RecordRequest<Article>) =
            switch kind {
            case "attribute": (.attribute(\.category), sorted([SortDescriptor(\.category)]))
            case "firstLetter": (.firstLetter(\.title), sorted([SortDescriptor(\.title)]))
            default: (.computed(\.title, name: "whole") { $0 }, sorted([SortDescriptor(\.title)]))
            }
        let live = try await LiveHarness(store, request, sectionBy: key, cacheName: "bytes-\(kind)")
        let names = live.controller.sections.map(\.name)
        let expected: Int =
            switch kind {
            // a (for a, a\0b, a\0c), é (NFC), e (the NFD form's first letter), K, the Kelvin
            // sign, t (for "" + "tail") and NUL.
            case "firstLetter": 7
            default: values.count
            }
        #expect(names.count == expected, "sections: \(names.map { Array($0.utf8) })")
        #expect(Set(names.map { Array($0.utf8) }).count == names.count, "names keep their bytes")
        // Live: one more row in every section, and a row moved between the look-alikes.
        let inserted = try await live.step { tx in
            for (i, value) in values.enumerated() {
                var a = Article(title: value + (kind == "firstLetter" ? "tail" : ""), url: "w\(i)", category: value)
                try tx.insert(&a)
            }
        }
        #expect(inserted.first?.insertedSections == [], "no section was split or merged")
        #expect(inserted.first?.insertedItems.count == values.count)
        try await live.step { tx in
            try tx.database.execute(
                sql: "UPDATE article SET category = ?, title = ? WHERE url = 'w3'",
                arguments: ["e\u{301}", "e\u{301}" + (kind == "firstLetter" ? "tail" : "")])
        }
        // The cache keeps the bytes: a second controller reuses it and shows the same sections.
        await live.controller.flushCache()
        let again = FetchedResultsController(request, store: store, sectionBy: key, cacheName: "bytes-\(kind)")
        try Self.fetch(again)
        #expect(again.lastCacheOutcome == .reused)
        #expect(again.snapshot == live.controller.snapshot)
        #expect(again.sections.map { Array($0.name.utf8) } == live.controller.sections.map { Array($0.name.utf8) })
    }

    /// Section names were once cached by value under Swift's `==`: with sections "a" and the
    /// Kelvin sign shown, a new section "K" was named "\u{212A}". Each is named by its own bytes.
    @Test func aSectionIsNamedByItsOwnBytes() async throws {
        let store = try Store.inMemory(records: [Article.self])
        var request = sorted([SortDescriptor(\.category), SortDescriptor(\.score, order: .reverse)])
        request.batchSize = 5
        let live = try await LiveHarness(store, request, sectionBy: .attribute(\.category))
        try await live.step { tx in
            for (i, category) in ["a", "\u{212A}"].enumerated() {
                var x = Article(title: "x\(i)", category: category)
                try tx.insert(&x)
            }
        }
        try await live.step { tx in
            var k = Article(title: "k", category: "K")
            try tx.insert(&k)
        }
        #expect(
            live.controller.sections.map { Array($0.name.utf8) } == [Array("K".utf8), Array("a".utf8), Array("\u{212A}".utf8)])
    }

    /// `updateAll` setting category "a\0b" on half the rows: the rows are in their own section,
    /// not inside section "a" (as when the value was read as a C string).
    @Test func aNULInASectionValueKeepsItsSection() async throws {
        let store = try Store.inMemory(records: [Article.self])
        var request = sorted([SortDescriptor(\.category), SortDescriptor(\.score, order: .reverse)])
        request.batchSize = 20
        let live = try await LiveHarness(store, request, sectionBy: .attribute(\.category))
        try await live.step { tx in
            try tx.database.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 299)
                    INSERT INTO article (title, url, published, score, category, isRead)
                    SELECT 'T' || i, 'u' || i, i, i, CASE i % 4 WHEN 0 THEN NULL WHEN 1 THEN 'a' WHEN 2 THEN 'b' ELSE 'é' END, i % 2 FROM n
                    """)
        }
        try await live.step { tx in
            try tx.updateAll(
                Article.self, where: #Predicate { $0.isRead == false }, set: [.set(\.category, to: "a\0b"), .set(\.score, to: 6)])
        }
        #expect(live.controller.sections.map(\.numberOfObjects) == [75, 150, 75])
        #expect(live.controller.sections.map(\.name) == ["a", "a\0b", "é"])
    }

    /// Upper-casing the first letter made sections that do not follow the binary sort
    /// ("A…" < "B…" < "a…" gave sections A, B, A): the section "A" appeared twice and change
    /// sets were built from a wrong section map. First letters keep their case.
    @Test(.tags(Testing.Tag.threadSanitized)) func firstLetterSectionsFollowTheSort() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try writeSync(store) { tx in
            for title in ["apple", "Banana", "Apple", "cherry", "éclair", "Éclair"] {
                var a = Article(title: title)
                try tx.insert(&a)
            }
        }
        let (controller, recorder, before) = try tracked(
            store, Self.request([SortDescriptor(\.title)]), sectionBy: .firstLetter(\.title))
        var model = before
        #expect(controller.sections.map(\.name) == ["A", "B", "a", "c", "É", "é"])
        #expect(controller.sections.map(\.numberOfObjects) == [1, 1, 1, 1, 1, 1])
        #expect(controller.sectionIndexTitles == ["A", "B", "C", "É"])
        #expect(controller.section(forSectionIndexTitle: "C", at: 2) == 3)
        try TableViewModel.check(dataSource: controller.snapshot)
        try writeSync(store) { tx in
            var a = Article(title: "avocado")
            try tx.insert(&a)
            var b = Article(title: "Aardvark")
            try tx.insert(&b)
        }
        await controller.waitForChanges()
        let change = try #require(recorder.changeSets.last)
        #expect(change.insertedSections.isEmpty)
        #expect(change.insertedItems == [IndexPath(item: 0, section: 0), IndexPath(item: 1, section: 2)])
        try model.apply(change, dataSource: controller.snapshot)
        #expect(model == (try freshModel(controller)))
    }
}
