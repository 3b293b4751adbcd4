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

@Suite("README quick start")
struct QuickStartTests {
    @Test @MainActor func quickStartRuns() async throws {
        let result = try await quickStart()
        #expect(result == ["1970-02-11", "Bookmark 999", "1970-02-16"])
    }
}
