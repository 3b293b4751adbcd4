import Foundation
import Folio

/// The list's data source: a ``FetchedResultsController`` of feeds sectioned by day,
/// whose change sets reach the list through the delegate.
///
/// The delegate is called on the main actor at the moment the controller moves to its
/// new state, so the list applies each change set while the controller's sections and
/// identifiers are exactly the ones the change set leads to — what a table view's
/// `performBatchUpdates` relies on. (A `for await` over `changes` runs later, when the
/// controller may already be a commit further.)
@MainActor
final class FeedListSource: FetchedResultsControllerDelegate {
    typealias ResultType = Feed

    let controller: FetchedResultsController<Feed>
    /// Called with each change set, as the controller delivers it.
    var onChange: ((ChangeSet) -> Void)?

    /// - Parameter tracking: follow the store's changes (the list) or not (a report).
    init(_ request: RecordRequest<Feed>, store: Store, tracking: Bool, cacheName: String? = nil) {
        controller = FetchedResultsController(
            request, store: store, sectionBy: .day(\.published, timeZone: Self.timeZone), cacheName: cacheName)
        // Index titles by month: "2025-06".
        controller.sectionIndexTitle = { String($0.prefix(7)) }
        if tracking { controller.delegate = self }
    }

    /// The fixed offset of the day sections, the one times are shown in.
    nonisolated static let timeZone = TimeZone(secondsFromGMT: TimeZone.current.secondsFromGMT()) ?? .gmt

    var request: RecordRequest<Feed> { controller.fetchRequest }

    func performFetch() throws { try controller.performFetch() }

    /// Every section with its identifiers, from the controller's snapshot: no record is loaded.
    func currentSections() -> [RowModel.Section] {
        let snapshot = controller.snapshot
        return snapshot.sections.indices.map { section(at: $0, in: snapshot) }
    }

    /// One section as the controller has it now.
    func section(at index: Int) -> RowModel.Section {
        section(at: index, in: controller.snapshot)
    }

    private func section(at index: Int, in snapshot: Snapshot) -> RowModel.Section {
        RowModel.Section(name: snapshot.sections[index].name, identifiers: Array(snapshot.identifiers(inSection: index)))
    }

    /// The months of the section index.
    var indexTitles: [String] { controller.sectionIndexTitles }

    /// The record with `id`, expected at `indexPath`: read through the controller's
    /// batches; `nil` if it was deleted.
    func record(_ id: RecordID, at indexPath: IndexPath) -> Feed? {
        let sections = controller.sections
        if indexPath.section < sections.count, indexPath.item < sections[indexPath.section].numberOfObjects,
            controller.identifier(at: indexPath) == id
        {
            return controller.object(at: indexPath)
        }
        return controller.indexPath(for: id).flatMap { controller.object(at: $0) }
    }

    /// Changes the request of the live controller; the difference comes to ``onChange``.
    func setRequest(_ request: RecordRequest<Feed>) throws {
        try controller.setRequest(request)
    }

    func controller(_ controller: FetchedResultsController<Feed>, didChangeContentWith changes: ChangeSet) {
        onChange?(changes)
    }
}

extension RecordRequest where R == Feed {
    /// The list's request: items whose title or source has the words of `filter` (each
    /// matching the words it begins, case- and diacritic-insensitively: "ipad" finds "iPad",
    /// "cafe" finds "Café"), sorted by date, in batches.
    static func feedList(filter: String, newestFirst: Bool, batchSize: Int) -> RecordRequest<Feed> {
        var request = RecordRequest<Feed>(sortBy: newestFirst ? Feed.newestFirst : Feed.oldestFirst, batchSize: batchSize)
        let text = filter.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty { request.search = TextSearch(text, matchingPrefixes: true) }
        return request
    }
}
