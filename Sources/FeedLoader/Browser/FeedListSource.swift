import Foundation
import Folio

/// What the list needs from a fetched results controller: sections of identifiers,
/// records by identifier, a live request, and one change set per commit.
@MainActor
protocol FeedListSource: AnyObject {
    /// The request in force.
    var request: FetchRequest<Feed> { get }
    /// Runs the request.
    func performFetch() throws
    /// Every section with its identifiers, loading no record.
    func currentSections() -> [RowModel.Section]
    /// One section as it is now.
    func section(at index: Int) -> RowModel.Section
    /// The record with `id`, expected at `indexPath` (batch faulting); `nil` if deleted.
    func record(_ id: RecordID, at indexPath: IndexPath) -> Feed?
    /// Changes the request on the live results; the difference arrives on ``changes``.
    func setRequest(_ request: FetchRequest<Feed>) throws
    /// One change set per commit (or request change) that touched the results, in order.
    var changes: AsyncStream<ChangeSet> { get }
}

extension FetchRequest where R == Feed {
    /// The list's request: `filter` in title or source, sorted by date, in batches.
    static func feedList(filter: String, newestFirst: Bool, batchSize: Int) -> FetchRequest<Feed> {
        var request = FetchRequest<Feed>(sortBy: newestFirst ? Feed.newestFirst : Feed.oldestFirst, batchSize: batchSize)
        let text = filter.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty {
            // Folio's `contains` is exact (SQLite instr); also match a capitalised first letter.
            let capitalized = text.prefix(1).uppercased() + text.dropFirst()
            request.predicate = #Predicate<Feed> {
                $0.title.contains(text) || $0.source.contains(text)
                    || $0.title.contains(capitalized) || $0.source.contains(capitalized)
            }
        }
        return request
    }
}
