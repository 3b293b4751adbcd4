import Foundation
import Folio

// The list's request (filter, order, grouping, screen) on the live controller, and the
// records it draws.
extension Browser {
    /// The list's request for the filter, the order, the grouping and the screen.
    func listRequest(grouping: FeedListSource.Grouping) -> RecordRequest<Feed> {
        .feedList(
            filter: filter, newestFirst: newestFirst, batchSize: Self.batchSize(for: size), grouping: grouping,
            unreadOnly: unreadOnly)
    }

    /// Changes the live controller's request. The difference is delivered (and applied
    /// to the rows) before `setRequest` returns; then the list starts from the top, unless
    /// `keepingPosition`.
    func replaceRequest(keepingPosition: Bool = false) {
        isChangingRequest = true
        defer { isChangingRequest = false }
        do {
            try source.setRequest(listRequest(grouping: source.grouping))
            if !keepingPosition { moveToTop() }
        } catch {
            show("Cannot change the request: \(error)")
        }
    }

    /// The record drawn at `indexPath`, loaded through the controller's batches.
    func record(at indexPath: IndexPath) -> Feed? {
        source.record(model.identifier(at: indexPath), at: indexPath)
    }
}
