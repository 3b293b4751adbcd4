import Foundation
import GRDB
import Testing
@testable import Folio

// A to-one added to an existing entity, renamed, and removed, across model versions. The
// target ("shelf") declares the to-many with a cascade in the versions that have one.

struct Shelf: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<Shelf>("shelf", [AttributeDescription(\.name)])
}

struct ShelfCascading: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<ShelfCascading>(
        "shelf", [AttributeDescription(\.name)], relationships: [.toMany(\BookOnShelf.shelf, deleteRule: .cascade)])
}

struct ShelfCascadingRenamed: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<ShelfCascadingRenamed>(
        "shelf", [AttributeDescription(\.name)], relationships: [.toMany(\BookOnCase.bookcase, deleteRule: .cascade)])
}

/// Version 1: no relationship.
struct ShelfBook: PersistentRecord {
    var id: RecordID?
    var title = ""
    static let entity = EntityDescription<ShelfBook>("book", [AttributeDescription(\.title)])
}

/// Version 2: a to-one added.
struct BookOnShelf: PersistentRecord {
    var id: RecordID?
    var title = ""
    var shelf = ToOne<ShelfCascading>()
    static let entity = EntityDescription<BookOnShelf>("book", [AttributeDescription(\.title)], relationships: [.toOne(\.shelf)])
}

/// Version 3: the to-one renamed.
struct BookOnCase: PersistentRecord {
    var id: RecordID?
    var title = ""
    var bookcase = ToOne<ShelfCascadingRenamed>()
    static let entity = EntityDescription<BookOnCase>(
        "book", [AttributeDescription(\.title)], relationships: [.toOne(\.bookcase, renamedFrom: "shelf")])
}

@Suite("Migration: relationships")
struct RelationshipMigrationTests {
    static let titles = ["α", "β", "γ", "δ"]

    static func objects(_ path: String) throws -> String {
        try Shell.sqlite3(
            path,
            "SELECT name FROM sqlite_master WHERE tbl_name IN ('book', 'shelf') AND name NOT LIKE 'sqlite_%' ORDER BY name")
    }

    @Test func aToOneIsAddedRenamedAndRemovedKeepingEveryRow() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("books.sqlite")
        // Version 1: books and shelves, unrelated.
        var store = try Store(path: path, model: StoreModel(version: 1, records: [Shelf.self, ShelfBook.self]))
        try store.write { tx in
            for name in ["top", "bottom"] {
                var shelf = Shelf(name: name)
                try tx.insert(&shelf)
            }
            for title in Self.titles {
                var book = ShelfBook(title: title)
                try tx.insert(&book)
            }
        }
        try store.close()

        // Version 2: the to-one added, a nullable indexed column, empty in every row.
        store = try Store(path: path, model: StoreModel(version: 2, records: [ShelfCascading.self, BookOnShelf.self]))
        var books = try store.fetch(RecordRequest<BookOnShelf>(sortBy: [SortDescriptor(\.title)])).compactMap { $0 }
        #expect(books.map(\.title) == Self.titles && books.allSatisfy { $0.shelf.id == nil })
        #expect(try Self.objects(path).contains("book_shelf_index"))
        #expect(try Self.objects(path).contains("folio_rule_shelf_book_shelf"))
        try store.write { tx in
            for index in books.indices {
                books[index].shelf = ToOne(RecordID(index < 2 ? 1 : 2))
                try tx.update(books[index])
            }
        }
        try store.close()

        // Version 3: renamed; the references and the rule follow.
        store = try Store(path: path, model: StoreModel(version: 3, records: [ShelfCascadingRenamed.self, BookOnCase.self]))
        let renamed = try store.fetch(RecordRequest<BookOnCase>(sortBy: [SortDescriptor(\.title)])).compactMap { $0 }
        #expect(renamed.map(\.bookcase.id) == [1, 1, 2, 2].map { RecordID(Int64($0)) })
        let objects = try Self.objects(path)
        #expect(objects.contains("book_bookcase_index") && !objects.contains("book_shelf_index"))
        #expect(objects.contains("folio_rule_shelf_book_bookcase") && !objects.contains("folio_rule_shelf_book_shelf"))
        try store.write { tx in try tx.delete(ShelfCascadingRenamed.self, id: RecordID(2)) }
        #expect(try store.count(RecordRequest<BookOnCase>(sortBy: [SortDescriptor(\.title)])) == 2)
        try store.close()

        // Version 4: removed. Refused while it holds references, unless they may be dropped.
        #expect(throws: FolioError.migrationDiscardsData(entity: "book", attribute: "bookcase", rows: 2)) {
            try Store(path: path, model: StoreModel(version: 4, records: [Shelf.self, ShelfBook.self]))
        }
        store = try Store(
            path: path,
            model: StoreModel(
                version: 4, records: [Shelf.self, ShelfBook.self], discarding: [.attribute("bookcase", of: "book")]))
        #expect(
            try store.fetch(RecordRequest<ShelfBook>(sortBy: [SortDescriptor(\.title)])).compactMap { $0?.title } == ["α", "β"])
        let left = try Self.objects(path)
        #expect(!left.contains("bookcase") && !left.contains("folio_rule_"))
        // Deleting a shelf no longer touches the books.
        try store.write { tx in try tx.delete(Shelf.self, id: RecordID(1)) }
        #expect(try store.count(RecordRequest<ShelfBook>(sortBy: [SortDescriptor(\.title)])) == 2)
        try store.close()
    }

    @Test func aMigrationStepDeletesUnderTheFilesRulesAndTheRenamedRuleHoldsAfter() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("steps.sqlite")
        var store = try Store(path: path, model: StoreModel(version: 2, records: [ShelfCascading.self, BookOnShelf.self]))
        try store.write { tx in
            var shelves = [ShelfCascading(name: "one"), ShelfCascading(name: "two")]
            for index in shelves.indices { try tx.insert(&shelves[index]) }
            for (index, title) in Self.titles.enumerated() {
                var book = BookOnShelf(title: title, shelf: ToOne(shelves[index / 2]))
                try tx.insert(&book)
            }
        }
        try store.close()
        // The step runs under the file's rules (its shelf's books go with it); the renamed
        // to-one's rule holds after.
        let step = MigrationStep("drop the first shelf") { db in try db.execute(sql: "DELETE FROM shelf WHERE name = 'one'") }
        store = try Store(
            path: path, model: StoreModel(version: 3, records: [ShelfCascadingRenamed.self, BookOnCase.self], steps: [step]))
        #expect(
            try store.fetch(RecordRequest<BookOnCase>(sortBy: [SortDescriptor(\.title)])).compactMap { $0?.title } == ["γ", "δ"])
        try Shell.sqlite3(path, "DELETE FROM shelf")
        try store.synchronize()
        #expect(try store.count(RecordRequest<BookOnCase>(sortBy: [SortDescriptor(\.title)])) == 0)
        try store.close()
    }
}
