import Foundation
import Testing
import Folio

// The README's quick start, verbatim between the markers, so that it always compiles;
// `theDocumentsShowThisCode` checks that the README shows this very code.

// quick-start-begin
@PersistentRecord
struct Bookmark {
    var id: RecordID?
    var title = ""
    @Stored(.indexed) var created = Date()
    var starred = false
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

// The complete example of the DocC article Relationships, verbatim between the markers.

// relationships-begin
@PersistentRecord
struct Author {
    var id: RecordID?
    @Stored(.indexed) var name = ""
    @ToMany(\Book.author, deleteRule: .cascade) var books: RecordRequest<Book>  // deleting an author deletes their books
}

@PersistentRecord
struct Book {
    var id: RecordID?
    var title = ""
    @Stored(.indexed) var year = 0
    var author = ToOne<Author>()  // the author's identifier, or nil: a reference column, with an index
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
    var hers = austen.books  // RecordRequest<Book>(relatedTo: austen.id, through: \.author)
    hers.sortBy = [SortDescriptor(\.year)]
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
    /// The package's root: this file is `Tests/FolioTests/PublicAPI/QuickStartTests.swift`.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The lines after the line holding `begin`, up to the line holding `end`.
    static func lines(after begin: String, upTo end: String, in text: String) -> [Substring]? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.firstIndex(where: { $0.contains(begin) }),
            let last = lines[(first + 1)...].firstIndex(where: { $0.contains(end) })
        else { return nil }
        return Array(lines[(first + 1)..<last])
    }

    /// The Swift code of a Markdown block between two markers, without its fence and the
    /// `import` lines that open it.
    static func documentedCode(_ document: String, between begin: String, and end: String) throws -> String {
        let text = try String(contentsOf: packageRoot.appendingPathComponent(document), encoding: .utf8)
        let block = try #require(Self.lines(after: begin, upTo: end, in: text), "\(document) has no \(begin) … \(end)")
        #expect(block.first == "```swift" && block.last == "```", "\(document): the code between the markers is one fenced block")
        var code = Array(block.dropFirst().dropLast())
        while let line = code.first, line.hasPrefix("import ") || line.isEmpty { code.removeFirst() }
        return code.joined(separator: "\n")
    }

    /// The README's quick start and the *Relationships* article's complete example are this
    /// file's code, word for word (the README's also has the `import` lines it needs).
    @Test func theDocumentsShowThisCode() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        for (document, begin, end, marker) in [
            ("README.md", "<!-- quick-start-begin", "<!-- quick-start-end -->", "quick-start"),
            (
                "Sources/Folio/Folio.docc/Relationships.md", "<!-- relationships-begin", "<!-- relationships-end -->",
                "relationships"
            ),
        ] {
            let compiled = try #require(Self.lines(after: "// \(marker)-begin", upTo: "// \(marker)-end", in: source))
            #expect(
                try Self.documentedCode(document, between: begin, and: end) == compiled.joined(separator: "\n"),
                "\(document) shows other code than QuickStartTests.swift compiles between its \(marker) markers: copy it over")
        }
    }

    @Test @MainActor func quickStartRuns() async throws {
        let result = try await quickStart()
        #expect(result == ["1970-02-11", "Bookmark 999", "1970-02-16"])
    }

    @Test @MainActor func relationshipsExampleRuns() async throws {
        let result = try await relationships()
        #expect(result == ["2", "Emma", "Austen, Jane, George Eliot"])
    }

    /// The relationships example's macro entities are the ones it declared by hand before: a
    /// file made with them opens without a migration.
    @Test func theMacroEntitiesAreTheHandWrittenOnes() {
        let author = EntityDescription<Author>(
            "author", [AttributeDescription(\.name, indexed: true)],
            relationships: [.toMany(\Book.author, deleteRule: .cascade)])
        let book = EntityDescription<Book>(
            "book", [AttributeDescription(\.title), AttributeDescription(\.year, indexed: true)],
            relationships: [.toOne(\.author)])
        expectSameEntity(Author.entity, author)
        expectSameEntity(Book.entity, book)
    }
}
