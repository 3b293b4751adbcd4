import Foundation
import Observation
import Testing
@testable import Folio

/// Counts the Observation notifications an observer that reads what `read` reads would get.
///
/// Stricter than SwiftUI, which coalesces every change of one main-actor turn into one
/// update: the counter re-arms inside each notification, so every `willSet` of a property
/// `read` reads counts — two properties changed by one commit count two (the results and
/// the error, which the model changes as one, count one).
@MainActor
final class ObservationCounter {
    private(set) var count = 0
    private let read: @MainActor () -> Void

    init(_ read: @escaping @MainActor () -> Void) {
        self.read = read
        arm()
    }

    /// Returns the count and starts again from zero.
    func take() -> Int {
        defer { count = 0 }
        return count
    }

    private func arm() {
        withObservationTracking {
            read()
        } onChange: { [weak self] in
            // Observation calls this synchronously in the property's `willSet`, on the
            // main actor here (the model is main-actor isolated).
            MainActor.assumeIsolated {
                guard let self else { return }
                self.count += 1
                self.arm()
            }
        }
    }
}

/// A second entity: commits to it must not reach a model over `Article`.
struct Note: PersistentRecord, Equatable {
    var id: RecordID?
    var text = ""

    static let entity = EntityDescription<Note>("note", [AttributeDescription(\.text)])

    init() {}
    init(text: String) { self.text = text }
}

/// Reads everything a list shows without loading a record: every section's identity, name
/// and count, and every row's identifier (what SwiftUI's `List` and `ForEach` read).
@MainActor
func readEverythingButRecords(_ model: FetchedResultsModel<Article>) {
    for section in model.sections {
        _ = section.id
        _ = section.name
        for item in section.items { _ = item.id }
    }
    for item in model.items { _ = item.id }
    _ = model.loadingState
    _ = model.lastError
    _ = model.fetchRequest
}

/// The model's rows as section names and identifiers.
struct ModelShape: Equatable, CustomStringConvertible {
    var sections: [String]
    var counts: [Int]
    var ids: [RecordID]

    @MainActor
    init(_ model: FetchedResultsModel<Article>) {
        sections = model.sections.map(\.name)
        counts = model.sections.map(\.items.count)
        ids = model.sections.flatMap { $0.items.map(\.id) }
        #expect(ids == model.items.map(\.id), "the sections' rows are the model's rows, in order")
    }

    /// What a fresh controller fetching `request` shows.
    @MainActor
    init(fresh request: RecordRequest<Article>, store: Store, sectionBy: SectionKey<Article>?) throws {
        let fresh = FetchedResultsController(request, store: store, sectionBy: sectionBy)
        try fresh.performFetch()
        sections = fresh.sections.map(\.name)
        counts = fresh.sections.map(\.numberOfObjects)
        ids = Array(fresh.snapshot.identifiers)
        #expect(ids == Array(try store.fetchIdentifiers(request)), "the fresh controller agrees with a plain fetch")
    }

    var description: String { "\(sections.count) sections \(counts.prefix(8))…, \(ids.count) rows" }
}

/// Whether the model shows what a fresh fetch of its own request shows.
@MainActor
func expectFresh(_ model: FetchedResultsModel<Article>, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let fresh = try ModelShape(fresh: model.fetchRequest, store: model.store, sectionBy: model.sectionKey)
    #expect(ModelShape(model) == fresh, "the model differs from a fresh fetch", sourceLocation: sourceLocation)
}

/// A request sorted by `sortBy`, with a batch size.
func articles(
    _ predicate: Predicate<Article>? = nil, sortBy: [SortDescriptor<Article>] = [SortDescriptor(\.score)], batchSize: Int = 50
) -> RecordRequest<Article> {
    var request = RecordRequest<Article>(predicate: predicate, sortBy: sortBy)
    request.batchSize = batchSize
    return request
}

/// The synchronous `performFetch()`, callable from async tests (where the async overload wins).
@MainActor
func performFetchSync<R: PersistentRecord>(_ model: FetchedResultsModel<R>) throws {
    try model.performFetch()
}
