import Foundation

extension FetchedResultsModel {
    // MARK: Reordering by hand

    /// Writes a move the user made in a SwiftUI `List` — the arguments of `onMove` — and
    /// shows it: one observation notification for the move, none for its commit (see
    /// ``FetchedResultsController/moveObject(at:to:)``, which this calls, for what the
    /// request must be and what is written).
    ///
    /// ```swift
    /// ForEach(section.items) { item in Row(item) }
    ///     .onMove { source, destination in
    ///         try? model.move(fromOffsets: source, toOffset: destination, inSection: section.index)
    ///     }
    /// ```
    ///
    /// Several rows move as `Array.move(fromOffsets:toOffset:)` moves them, one write each,
    /// in one notification.
    ///
    /// - Parameters:
    ///   - source: the offsets of the moved rows in the section, before the move.
    ///   - destination: the offset, before the move, that the rows are placed before.
    ///   - section: the section's index.
    /// - Throws: what ``FetchedResultsController/moveObject(at:to:)`` throws; the rows
    ///   already moved stay moved, and the model shows what was written.
    /// - Complexity: one ``FetchedResultsController/moveObject(at:to:)`` per moved row.
    public func move(fromOffsets source: IndexSet, toOffset destination: Int, inSection section: Int = 0) throws {
        guard !source.isEmpty else { return }
        // Where each row ends, as Array.move(fromOffsets:toOffset:) puts it.
        var order = Array(0..<(sections.indices.contains(section) ? sections[section].items.count : 0))
        guard let last = source.last, last < order.count, destination >= 0, destination <= order.count else {
            throw FolioError.invalidArgument(
                "move(fromOffsets:toOffset:inSection:): offsets \(Array(source)) to \(destination) are not in section \(section)")
        }
        let moved = source.map { order[$0] }
        order.removeAll { source.contains($0) }
        order.insert(contentsOf: moved, at: destination - source.count(in: 0..<destination))
        applyingRequest = true
        defer {
            applyingRequest = false
            content = makeContent(request: content.request, sectionBy: content.sectionKey)
        }
        do {
            // Rows move one at a time, each to its final offset, in final order.
            var current = Array(0..<order.count)
            for (target, original) in order.enumerated() where current[target] != original {
                let from = current.firstIndex(of: original)!
                try controller.moveObject(
                    at: IndexPath(item: from, section: section), to: IndexPath(item: target, section: section))
                current.insert(current.remove(at: from), at: target)
            }
            lastError = nil
        } catch {
            throw fail(error)
        }
    }
}
