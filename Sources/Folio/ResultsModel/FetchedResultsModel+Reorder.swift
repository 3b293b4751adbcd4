import Foundation

extension FetchedResultsModel {
    // MARK: Reordering by hand

    /// Writes a move the user made in a SwiftUI `List` — the arguments of `onMove` — and
    /// shows it: one observation notification for the move, none for its commit (see
    /// ``FetchedResultsController/moveObject(at:to:)``, which this calls, for what the
    /// request must be and what is written).
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
    /// Several rows move as `Array.move(fromOffsets:toOffset:)` moves them, in one
    /// notification: only the moved rows are written, each right after the row it follows
    /// in the new order (a commit that lands meanwhile may add or remove rows around them).
    ///
    /// - Parameters:
    ///   - source: the offsets of the moved rows in the section, before the move.
    ///   - destination: the offset, before the move, that the rows are placed before.
    ///   - section: the section's index.
    /// - Throws: what ``FetchedResultsController/moveObject(at:to:)`` throws; the rows
    ///   already moved stay moved, and the model shows what was written.
    /// - Complexity: one ``FetchedResultsController/moveObject(at:to:)`` per moved row, and
    ///   O(n) to find each moved row and its new neighbour in the section.
    public func move(fromOffsets source: IndexSet, toOffset destination: Int, inSection section: Int = 0) throws {
        guard !source.isEmpty else { return }
        let rows = sections.indices.contains(section) ? sections[section].items.map(\.id) : []
        guard let last = source.last, last < rows.count, destination >= 0, destination <= rows.count else {
            throw FolioError.invalidArgument(
                "move(fromOffsets:toOffset:inSection:): offsets \(Array(source)) to \(destination) are not in section \(section)")
        }
        // The section as Array.move(fromOffsets:toOffset:) leaves it.
        let moved = source.map { rows[$0] }
        var order = rows.enumerated().filter { !source.contains($0.offset) }.map(\.element)
        order.insert(contentsOf: moved, at: destination - source.count(in: 0..<destination))
        applyingRequest = true
        defer {
            applyingRequest = false
            content = makeContent(request: content.request, sectionBy: content.sectionKey)
        }
        do {
            // Only the moved rows are written, one at a time in their final order, each put
            // right after the row it follows in `order`, wherever the controller shows the
            // rows now: a move rebased on other commits may have added or removed rows.
            for id in moved {
                guard let from = controller.indexPath(for: id) else { continue }
                let shown = controller.snapshot.identifiers(inSection: from.section).filter { $0 != id }
                let before = order[..<order.firstIndex(of: id)!].reversed().lazy.compactMap { shown.firstIndex(of: $0) }.first
                let target = before.map { $0 + 1 } ?? 0
                guard target != from.item else { continue }
                try controller.moveObject(at: from, to: IndexPath(item: target, section: from.section))
            }
            lastError = nil
        } catch {
            throw fail(error)
        }
    }
}
