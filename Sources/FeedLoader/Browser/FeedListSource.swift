import Foundation
import Folio

/// The list's data source: a ``FetchedResultsController`` of feeds sectioned by day or by
/// source, whose change sets reach the list through the delegate.
///
/// The delegate is called on the main actor at the moment the controller moves to its
/// new state, so the list applies each change set while the controller's sections and
/// identifiers are exactly the ones the change set leads to — what a table view's
/// `performBatchUpdates` relies on. (A `for await` over `changes` runs later, when the
/// controller may already be a commit further.)
@MainActor
final class FeedListSource: FetchedResultsControllerDelegate {
    typealias ResultType = Feed

    /// What the list is sectioned by.
    enum Grouping: Sendable, Equatable {
        /// By day of `published` (`2025-06-13`), newest or oldest day first.
        case day
        /// By the source's name (A to Z), then by date.
        case source
        /// The starred items only, in the reader's own order (one section).
        case starred

        /// The section key of the grouping (`nil`: one section).
        var sectionKey: SectionKey<Feed>? {
            switch self {
            case .day: .day(\.published, timeZone: FeedListSource.timeZone)
            case .source: .attribute(\Feed.source.name)
            case .starred: nil
            }
        }
    }

    private(set) var controller: FetchedResultsController<Feed>
    private(set) var grouping: Grouping
    let store: Store
    let tracking: Bool
    /// Called with each change set, as the controller delivers it.
    var onChange: ((ChangeSet) -> Void)?

    /// - Parameter tracking: follow the store's changes (the list) or not (a report).
    init(_ request: RecordRequest<Feed>, store: Store, tracking: Bool, grouping: Grouping = .day, cacheName: String? = nil) {
        self.store = store
        self.tracking = tracking
        self.grouping = grouping
        self.cacheName = cacheName
        controller = Self.makeController(request, store: store, grouping: grouping, cacheName: cacheName)
        if tracking { controller.delegate = self }
    }

    /// The persistent section cache's name, for the list (by day only: one cache file).
    private let cacheName: String?

    /// A controller, with the section cache when sectioned by day. The list reads through
    /// each item's source (muted sources are left out): the cache is valid at the change
    /// token of both tables, so a source muted or renamed since invalidates it.
    private static func makeController(
        _ request: RecordRequest<Feed>, store: Store, grouping: Grouping, cacheName: String?
    ) -> FetchedResultsController<Feed> {
        let controller = FetchedResultsController(
            request, store: store, sectionBy: grouping.sectionKey, cacheName: grouping == .day ? cacheName : nil)
        // The list shows its first screen at once and completes in the background.
        controller.completesInBackground = true
        switch grouping {
        case .day: controller.sectionIndexTitle = { String($0.prefix(7)) }  // by month: "2025-06"
        case .source: controller.sectionIndexTitle = { String($0.prefix(1)).uppercased() }
        case .starred: break
        }
        return controller
    }

    /// Sections the list by `grouping`, with `request` (whose first sort must be the
    /// grouping's): a new controller, fetched. The list reloads from ``currentSections()``.
    func setGrouping(_ grouping: Grouping, request: RecordRequest<Feed>) throws {
        let next = Self.makeController(request, store: store, grouping: grouping, cacheName: cacheName)
        try next.performFetch()
        controller.delegate = nil
        controller = next
        self.grouping = grouping
        if tracking { controller.delegate = self }
    }

    /// The time zone of the day sections, the one times are shown in: the user's
    /// (`TimeZone.current`, which honours the `TZ` environment variable), with its
    /// daylight-saving time, taken once when the list starts.
    nonisolated static let timeZone = TimeZone.current

    var request: RecordRequest<Feed> { controller.fetchRequest }
    /// Whether every item of the list is known (a long list completes in the background).
    var isComplete: Bool { controller.isComplete }
    /// Items read so far while the list completes.
    var rowsKnown: Int { controller.rowsKnown }

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

    /// Tells the controller the reader moved a row (the row model already shows it): Folio
    /// writes the item's new `starOrder`; the commit is not reported back.
    func moveObject(at from: IndexPath, to: IndexPath) throws {
        try controller.moveObject(at: from, to: to)
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
    /// The list's request: items whose source is not muted (an item without a source is
    /// shown: `!= true`, where `== false` would leave it out) and whose title or source has
    /// the words of `filter` (each matching the words it begins, case- and
    /// diacritic-insensitively: "ipad" finds "iPad", "cafe" finds "Café"), sorted by date —
    /// by source name first when sectioned by source — in batches. `unreadOnly` keeps the
    /// unread items (not in the starred view, which shows every starred item).
    static func feedList(
        filter: String, newestFirst: Bool, batchSize: Int, grouping: FeedListSource.Grouping = .day,
        unreadOnly: Bool = false
    ) -> RecordRequest<Feed> {
        let byDate = newestFirst ? Feed.newestFirst : Feed.oldestFirst
        let sort: [SortDescriptor<Feed>]
        switch grouping {
        case .day: sort = byDate
        case .source: sort = [SortDescriptor(\Feed.source.name)] + byDate
        case .starred: sort = Feed.starredOrder
        }
        let predicate =
            grouping == .starred ? Feed.starredNotMuted : unreadOnly ? Feed.unreadNotMuted : Feed.notMuted
        var request = RecordRequest<Feed>(predicate: predicate, sortBy: sort, batchSize: batchSize)
        let text = filter.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty { request.search = TextSearch(text, matchingPrefixes: true) }
        return request
    }
}

extension Feed {
    /// The items whose source is not muted, and those without a source.
    static let notMuted = #Predicate<Feed> { $0.source.muted != true }
    /// The unread items whose source is not muted (and those without a source).
    static let unreadNotMuted = #Predicate<Feed> { $0.isRead == false && $0.source.muted != true }
    /// The starred items whose source is not muted.
    static let starredNotMuted = #Predicate<Feed> { $0.starred == true && $0.source.muted != true }
}
