import Foundation
import Testing
import Folio

// The README's quick start, verbatim between the markers, so that it always compiles.

// quick-start-begin
struct Bookmark: PersistentRecord {
    var id: RecordID?
    var title = ""
    var created = Date()
    var starred = false

    static let entity = EntityDescription<Bookmark>(
        "bookmark",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.created, indexed: true),
            AttributeDescription(\.starred),
        ])
}

@MainActor
func quickStart() async throws -> [String] {
    let store = try Store.temporary(records: [Bookmark.self])  // or Store(path: "bookmarks.sqlite", records: [Bookmark.self])
    try await store.write { tx in
        for i in 0..<1_000 {
            var bookmark = Bookmark(
                id: nil, title: "Bookmark \(i)", created: Date(timeIntervalSince1970: Double(i) * 3_600), starred: i % 3 == 0)
            try tx.insert(&bookmark)
        }
    }

    var request = RecordRequest<Bookmark>(
        predicate: #Predicate { $0.starred },
        sortBy: [SortDescriptor(\.created, order: .reverse)])
    request.batchSize = 50

    let controller = FetchedResultsController(request, store: store, sectionBy: .day(\.created))
    try await controller.performFetch()  // identifiers and sections only: no record loaded
    let firstDay = controller.sections[0]  // name "1970-02-11", 8 bookmarks
    let newest = controller.object(at: IndexPath(item: 0, section: 0))  // loads one batch of 50

    let changes = controller.changes  // one ChangeSet per commit
    try await store.write { tx in
        var bookmark = Bookmark(id: nil, title: "Fresh", created: Date(timeIntervalSince1970: 4_000_000), starred: true)
        try tx.insert(&bookmark)
    }
    for await change in changes {
        print(change.insertedSections, change.insertedItems)  // [0] [] — a new day, at the top
        break
    }
    return [firstDay.name, newest?.title ?? "", controller.sections[0].name]
}
// quick-start-end

// The README's relationships example, verbatim between the markers.

// relationships-begin
struct Author: PersistentRecord {
    var id: RecordID?
    var name = ""

    static let entity = EntityDescription<Author>(
        "author",
        [AttributeDescription(\.name, indexed: true)],
        relationships: [.toMany(\Book.author, deleteRule: .cascade)])  // deleting an author deletes their books
}

struct Book: PersistentRecord {
    var id: RecordID?
    var title = ""
    var year = 0
    var author = ToOne<Author>()  // the author's identifier, or nil

    static let entity = EntityDescription<Book>(
        "book",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.year, indexed: true),
        ],
        relationships: [.toOne(\.author)])  // a reference column, with an index
}

@MainActor
func relationships() async throws -> [String] {
    let store = try Store.temporary(records: [Author.self, Book.self])
    let austen = try await store.write { tx -> Author in
        var austen = Author(name: "Jane Austen")
        var eliot = Author(name: "George Eliot")
        try tx.insert(&austen)
        try tx.insert(&eliot)
        for (title, year, author) in [("Emma", 1815, austen), ("Persuasion", 1817, austen), ("Middlemarch", 1871, eliot)] {
            var book = Book(title: title, year: year, author: ToOne(author))
            try tx.insert(&book)
        }
        return austen
    }

    // A to-many is a request: counted and fetched lazily, through the reference index.
    let hers = RecordRequest<Book>(relatedTo: austen.id, through: \.author, sortBy: [SortDescriptor(\.year)])
    let count = try store.count(hers)  // 2, no record loaded
    let first = try await store.fetch(hers).first  // Emma

    // Sorts, sections and predicates through a to-one; the list follows the authors live.
    let byAuthor = RecordRequest<Book>(sortBy: [SortDescriptor(\Book.author.name), SortDescriptor(\.year)])
    let controller = FetchedResultsController(byAuthor, store: store, sectionBy: .attribute(\Book.author.name))
    try await controller.performFetch()  // sections "George Eliot", "Jane Austen"
    let changes = controller.changes
    try await store.write { tx in
        var renamed = austen
        renamed.name = "Austen, Jane"
        try tx.update(renamed)  // reads only her books, through the index
    }
    for await change in changes {
        print(change.deletedSections, change.insertedSections)  // [1] [0]: her section moves to the top
        break
    }
    return ["\(count)", first??.title ?? "", controller.sections.map(\.name).joined(separator: ", ")]
}
// relationships-end

@Suite("README quick start")
struct QuickStartTests {
    @Test @MainActor func quickStartRuns() async throws {
        let result = try await quickStart()
        #expect(result == ["1970-02-11", "Bookmark 999", "1970-02-16"])
    }

    @Test @MainActor func relationshipsExampleRuns() async throws {
        let result = try await relationships()
        #expect(result == ["2", "Emma", "Austen, Jane, George Eliot"])
    }
}
