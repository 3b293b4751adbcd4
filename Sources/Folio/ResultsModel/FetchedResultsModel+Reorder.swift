import Foundation

extension FetchedResultsModel {
    // MARK: Reordering by hand

    /// Shows a move the user made in a SwiftUI `List` — the arguments of `onMove` — at
    /// once, in one observation notification, and writes it in the background in one
    /// transaction (see ``FetchedResultsController/moveObjects(fromOffsets:toOffset:inSection:)``,
    /// which this calls, for what the request must be and what is written). Its commit
    /// notifies nothing more; a failed write moves the rows back, sets ``lastError`` and
    /// notifies once.
    ///
    /// ```swift
    /// ForEach(Array(model.sections.enumerated()), id: \.element.id) { index, section in
    ///     Section(section.name) {
    ///         ForEach(section.items) { item in Row(item) }
    ///             .onMove { source, destination in
    ///                 try? model.move(fromOffsets: source, toOffset: destination, inSection: index)
    ///             }
    ///     }
    /// }
    /// ```
    ///
    /// Several rows move as `Array.move(fromOffsets:toOffset:)` moves them: only the moved
    /// rows are written, each right after the row it follows in the new order.
    ///
    /// - Parameters:
    ///   - source: the offsets of the moved rows in the section, before the move.
    ///   - destination: the offset, before the move, that the rows are placed before.
    ///   - section: the section's index.
    /// - Throws: what ``FetchedResultsController/moveObjects(fromOffsets:toOffset:inSection:)``
    ///   throws (the arguments, the request); nothing is moved then.
    /// - Complexity: O(n) for the n rows of the section on the main actor; the write in the
    ///   background.
    public func move(fromOffsets source: IndexSet, toOffset destination: Int, inSection section: Int = 0) throws {
        guard !source.isEmpty else { return }
        applyingRequest = true
        var succeeded = false
        defer {
            applyingRequest = false
            // The rows and a cleared error as one change.
            show(makeContent(request: content.request, sectionBy: content.sectionKey), clearingError: succeeded)
        }
        do {
            try controller.moveObjects(fromOffsets: source, toOffset: destination, inSection: section)
            succeeded = true
        } catch {
            throw fail(error)
        }
    }
}
