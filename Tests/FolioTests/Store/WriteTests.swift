import Foundation
import GRDB
import Testing
@testable import Folio

/// Collects what the change hub reports for one table.
final class CommitRecorder: CommitSubscriber, @unchecked Sendable {
    // @unchecked Sendable: `commits` is only touched under its lock.
    let table: String
    private let commits = Locked<[Set<Int64>]>([])
    init(table: String) { self.table = table }
    func didCommit(changedRowIDs: Set<Int64>, in db: Database) { commits.withLock { $0.append(changedRowIDs) } }
    func didChangeExternally(in db: Database) { commits.withLock { $0.append([-1]) } }
    var all: [Set<Int64>] { commits.current }
}

@Suite("Writes")
struct WriteTests {
    @Test func insertAssignsTheRowidOrUsesTheOneGiven() throws {
        let store = try Store.inMemory(records: [Article.self])
        var first = Article(title: "first")
        var chosen = Article(title: "chosen")
        chosen.id = RecordID(500)
        var next = Article(title: "next")
        try store.write { tx in
            try tx.insert(&first)
            try tx.insert(&chosen)
            try tx.insert(&next)
        }
        #expect(first.id == RecordID(1))
        #expect(chosen.id == RecordID(500))
        #expect(next.id == RecordID(501))
        #expect(try store.fetchOne(Article.self, id: RecordID(500)) == chosen)
        #expect(try store.fetchOne(Article.self, id: RecordID(501)) == next)
        #expect(try store.fetchOne(Article.self, id: RecordID(2)) == nil)
    }

    @Test func updateChangesEveryAttributeOfTheRow() throws {
        let store = try Store.inMemory(records: [Article.self])
        var a = Article(title: "before", url: "u", score: 1, category: "x")
        try store.write { tx in try tx.insert(&a) }
        var changed = a
        changed.title = "after"
        changed.score = 2
        changed.category = nil
        changed.isRead = true
        changed.published = Date(timeIntervalSince1970: 86_400)
        let recorder = SQLRecorder(store)
        try store.write { tx in try tx.update(changed) }
        #expect(
            queries(recorder) == [
                #"UPDATE "article" SET "title" = ?, "url" = ?, "published" = ?, "score" = ?, "category" = ?, "isRead" = ? WHERE "id" = ?"#
            ])
        #expect(try store.fetchOne(Article.self, id: a.id!) == changed)
    }

    @Test func updateOfAMissingRecordThrowsAndChangesNothing() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 5)
        let before = try rawRows(store, "article")
        expectError(.recordNotFound(entity: "article", id: nil)) {
            try store.write { tx in try tx.update(Article(title: "no id")) }
        }
        var gone = try store.fetchOne(Article.self, id: RecordID(3))!
        try store.write { tx in try tx.delete(gone) }
        let afterDelete = try rawRows(store, "article")
        gone.title = "resurrected?"
        var other = try store.fetchOne(Article.self, id: RecordID(1))!
        expectError(.recordNotFound(entity: "article", id: RecordID(3))) {
            try store.write { tx in
                other.title = "rolled back with the failed update"
                try tx.update(other)
                try tx.update(gone)
            }
        }
        #expect(try rawRows(store, "article") == afterDelete)
        #expect(afterDelete.count == before.count - 1)
    }

    @Test func deleteAndDeleteByIdentifier() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 4)
        let one = try store.fetchOne(Article.self, id: RecordID(1))!
        let recorder = SQLRecorder(store)
        let results: [Bool] = try store.write { tx in
            [
                try tx.delete(one), try tx.delete(one),
                try tx.delete(Article.self, id: RecordID(2)), try tx.delete(Article.self, id: RecordID(2)),
                try tx.delete(Article(title: "never inserted")),
            ]
        }
        #expect(results == [true, false, true, false, false])
        #expect(queries(recorder) == Array(repeating: #"DELETE FROM "article" WHERE "id" = ?"#, count: 4))
        #expect(try store.fetchIdentifiers(RecordRequest<Article>()).map(\.rawValue) == [3, 4])
    }

    @Test func upsertInsertsThenUpdatesByTheUniqueColumn() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 3)
        let recorder = SQLRecorder(store)
        var fresh = Article(title: "fresh", url: "https://example.com/new", score: 10)
        try store.write { tx in try tx.upsert(&fresh, onConflict: \.url) }
        #expect(fresh.id == RecordID(4))
        #expect(try store.count(RecordRequest<Article>()) == 4)

        var again = Article(title: "updated", url: "https://example.com/new", score: 11, category: "z")
        try store.write { tx in try tx.upsert(&again, onConflict: \.url) }
        #expect(again.id == fresh.id)
        #expect(try store.count(RecordRequest<Article>()) == 4)
        #expect(try store.fetchOne(Article.self, id: fresh.id!) == again)

        // An existing seeded row, by its url.
        var seeded = Article(title: "seeded, updated", url: "https://example.com/1", score: 99)
        try store.write { tx in try tx.upsert(&seeded, onConflict: \.url) }
        #expect(seeded.id == RecordID(2))
        #expect(try store.fetchOne(Article.self, id: RecordID(2))?.title == "seeded, updated")
        let upsert =
            #"INSERT INTO "article" ("title", "url", "published", "score", "category", "isRead") VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT("url") DO UPDATE SET "title" = excluded."title", "published" = excluded."published", "score" = excluded."score", "category" = excluded."category", "isRead" = excluded."isRead" RETURNING "id""#
        #expect(queries(recorder).filter { $0.hasPrefix("INSERT") } == [upsert, upsert, upsert])
    }

    @Test func upsertOnANonUniqueColumnThrowsAndChangesNothing() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 3)
        let before = try rawRows(store, "article")
        var a = Article(title: "Article 1", url: "https://example.com/other")
        expectError(.invalidArgument("upsert needs a unique attribute; 'title' of 'article' is not unique")) {
            try store.write { tx in try tx.upsert(&a, onConflict: \.title) }
        }
        #expect(a.id == nil)
        #expect(try rawRows(store, "article") == before)
    }

    @Test func updateAllChangesRowsInSQLWithoutLoadingRecords() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 200)
        let all = try store.fetch(RecordRequest<Article>()).map { $0! }
        let predicate = #Predicate<Article> { $0.score >= 150 || $0.category == nil }
        let expected = try all.filter { try predicate.evaluate($0) }
        store.diagnostics.resetCounters()
        let recorder = SQLRecorder(store)
        let changed = try store.write { tx in
            try tx.updateAll(Article.self, where: predicate, set: [.set(\.isRead, to: true), .set(\.category, to: "done")])
        }
        #expect(changed == expected.count)
        #expect(changed == 50 + 37)  // 150..<200, plus 3, 7, …, 147 (category nil)
        #expect(store.diagnostics.counters.recordsMaterialized == 0)
        #expect(
            queries(recorder) == [
                #"UPDATE "article" SET "isRead" = ?, "category" = ? WHERE (("score" >= ?) OR ("category" IS NULL))"#
            ])
        let after = try store.fetch(RecordRequest<Article>()).map { $0! }
        let ids = Set(expected.map(\.id))
        for (old, new) in zip(all, after) {
            if ids.contains(old.id) {
                #expect(new.isRead && new.category == "done" && new.title == old.title)
            } else {
                #expect(new == old)
            }
        }
        // Without a predicate every row changes; with one that matches nothing, none.
        #expect(try store.write { tx in try tx.updateAll(Article.self, set: [.set(\.score, to: 0)]) } == 200)
        #expect(
            try store.write { tx in
                try tx.updateAll(Article.self, where: #Predicate { $0.score > 0 }, set: [.set(\.score, to: 1)])
            } == 0)
    }

    @Test func updateAllWithoutAssignmentsThrows() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 3)
        let before = try rawRows(store, "article")
        expectError(.invalidArgument("updateAll needs at least one assignment")) {
            try store.write { tx in try tx.updateAll(Article.self, set: []) }
        }
        #expect(try rawRows(store, "article") == before)
    }

    @Test func deleteAllDeletesRowsInSQLWithoutLoadingRecords() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 100)
        let all = try store.fetch(RecordRequest<Article>()).map { $0! }
        let predicate = #Predicate<Article> { $0.title.contains("7") && $0.category != "a" }
        let survivors = try all.filter { try !predicate.evaluate($0) }
        store.diagnostics.resetCounters()
        let recorder = SQLRecorder(store)
        let deleted = try store.write { tx in try tx.deleteAll(Article.self, where: predicate) }
        #expect(deleted == all.count - survivors.count)
        #expect(deleted > 0)
        #expect(store.diagnostics.counters.recordsMaterialized == 0)
        #expect(queries(recorder) == [#"DELETE FROM "article" WHERE ((instr("title", ?) > 0) AND ("category" IS NOT ?))"#])
        #expect(try store.fetch(RecordRequest<Article>()).map { $0! } == survivors)
        #expect(try store.write { tx in try tx.deleteAll(Article.self) } == survivors.count)
        #expect(try store.count(RecordRequest<Article>()) == 0)
    }

    @Test func aThrowingWriteRollsBackEverything() throws {
        struct Abort: Error {}
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 3)
        let before = try rawRows(store, "article")
        #expect(throws: Abort.self) {
            try store.write { tx in
                var a = Article(title: "doomed")
                try tx.insert(&a)
                try tx.deleteAll(Article.self)
                try tx.database.execute(sql: "UPDATE article SET score = 1000")
                throw Abort()
            }
        }
        #expect(try rawRows(store, "article") == before)
    }

    @Test func aConstraintViolationIsAnSQLiteErrorAndRollsBack() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 3)
        let before = try rawRows(store, "article")
        let error = folioError {
            try store.write { tx in
                var ok = Article(title: "would be fine", url: "https://example.com/unique")
                try tx.insert(&ok)
                var duplicate = Article(title: "dup", url: "https://example.com/0")
                try tx.insert(&duplicate)
            }
        }
        guard case .sqlite(let code, let message, let sql, _)? = error else {
            Issue.record("expected an SQLite error, got \(String(describing: error))")
            return
        }
        #expect(code == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(message.contains("UNIQUE constraint failed: article.url"))
        #expect(sql?.hasPrefix(#"INSERT INTO "article""#) == true)
        #expect(try rawRows(store, "article") == before)
    }

    @Test func rawSQLThroughTheTransactionIsSeenByFetchesAndTheChangeHub() throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 5)
        let subscriber = CommitRecorder(table: "article")
        store.hub.subscribe(subscriber)
        defer { store.hub.unsubscribe(subscriber) }
        let tokenBefore = try store.changeToken(for: Article.self)
        try store.write { tx in
            try tx.database.execute(
                sql: "INSERT INTO article (title, url, published, score, category, isRead) VALUES (?, ?, 0, 42, NULL, 0)",
                arguments: ["raw", "raw:1"])
            try tx.database.execute(sql: "UPDATE article SET score = score + 100 WHERE id IN (2, 3)")
            try tx.database.execute(sql: "DELETE FROM article WHERE id = 5")
        }
        #expect(subscriber.all == [[2, 3, 5, 6]])
        #expect(try store.changeToken(for: Article.self) != tokenBefore)
        let fetched = try store.fetch(RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])).map { $0! }
        #expect(fetched.map(\.score) == [0, 3, 42, 101, 102])
        #expect(fetched[2].title == "raw")
        // Raw reads go through store.read.
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM article") } == 5)
        // Deleting every row with raw SQL is reported row by row.
        try store.write { tx in try tx.database.execute(sql: "DELETE FROM article") }
        #expect(subscriber.all.last == [1, 2, 3, 4, 6])
        // A rolled-back write reports nothing.
        struct Abort: Error {}
        _ = try? store.write { tx in
            try tx.database.execute(sql: "INSERT INTO article (title, url, published, score, isRead) VALUES ('x', 'y', 0, 0, 0)")
            throw Abort()
        }
        #expect(subscriber.all.count == 2)
    }

    @Test func asyncWriteCommits() async throws {
        let store = try Store.temporary(records: [Article.self])
        let id = try await store.write { tx in
            var a = Article(title: "async", url: "async:1")
            try tx.insert(&a)
            return a.id!
        }
        #expect(try store.fetchOne(Article.self, id: id)?.title == "async")
        #expect(try await store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM article") } == 1)
    }

    @Test func countAndFetchAllInsideATransactionSeeItsOwnWrites() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 4)
        let (count, titles) = try store.write { tx in
            var a = Article(title: "inside", url: "inside:1", score: 100)
            try tx.insert(&a)
            let request = RecordRequest<Article>(predicate: #Predicate { $0.score >= 3 }, sortBy: [SortDescriptor(\.score)])
            return (try tx.count(request), try tx.fetchAll(request).map(\.title))
        }
        #expect(count == 2)
        #expect(titles == ["Article 3", "inside"])
    }
}
