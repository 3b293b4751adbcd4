import Foundation
import Testing
@testable import Folio

/// The delegate code Core Data's users write, driving a strict model of a table view: the
/// per-change callbacks are collected as one batch update (sections and rows deleted at old
/// index paths, inserted at new ones, moved, reloaded), and each cell a callback configures
/// is configured from `object(at: newIndexPath)`, as Core Data's users are told to — the
/// record read must be the row's, with its stored values. At
/// `controllerDidChangeContent` the batch is applied with UIKit's rules (``TableViewModel``)
/// against what the controller shows then.
@MainActor
final class ClassicTableDelegate<R: PersistentRecord>: FetchedResultsControllerDelegate {
    /// What the table shows: rows by section.
    var table: TableViewModel
    /// Each configured cell's record, by identifier (the last configuration wins).
    var cells: [RecordID: R] = [:]
    /// What went wrong in a callback (a record read at `newIndexPath` that is not the row's).
    var problems: [String] = []
    /// Batches applied.
    var batches = 0
    private var batch = ChangeSet()
    /// How each configured record's stored values are read for comparison (the test's own SQL).
    let stored: (RecordID) -> R?
    let same: (R, R) -> Bool

    init(showing snapshot: Snapshot, stored: @escaping (RecordID) -> R?, same: @escaping (R, R) -> Bool) {
        table = TableViewModel(snapshot)
        self.stored = stored
        self.same = same
    }

    func controllerWillChangeContent(_ controller: FetchedResultsController<R>) {
        batch = ChangeSet()
    }

    func controller(
        _ controller: FetchedResultsController<R>, didChange section: SectionInfo, atSectionIndex sectionIndex: Int,
        for type: FetchedResultsChangeType
    ) {
        switch type {
        case .insert: batch.insertedSections.append(sectionIndex)
        case .delete: batch.deletedSections.append(sectionIndex)
        default: problems.append("section change \(type)")
        }
    }

    func controller(
        _ controller: FetchedResultsController<R>, didChangeObject id: RecordID, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        switch type {
        case .insert:
            guard let newIndexPath else { return problems.append("insert \(id) without newIndexPath") }
            batch.insertedItems.append(newIndexPath)
            batch.insertedIdentifiers.append(id)
            configure(id, controller, at: newIndexPath)
        case .delete:
            guard let indexPath else { return problems.append("delete \(id) without indexPath") }
            batch.deletedItems.append(indexPath)
            batch.deletedIdentifiers.append(id)
            cells[id] = nil
        case .move:
            guard let indexPath, let newIndexPath else { return problems.append("move \(id) without paths") }
            batch.movedItems.append(ChangeSet.Move(from: indexPath, to: newIndexPath, isUpdated: true))
            batch.movedIdentifiers.append(id)
            configure(id, controller, at: newIndexPath)
        case .update:
            guard let indexPath, let newIndexPath else { return problems.append("update \(id) without paths") }
            batch.updatedItems.append(indexPath)
            batch.updatedIdentifiers.append(id)
            configure(id, controller, at: newIndexPath)
        }
    }

    /// `configureCell(cell, at: newIndexPath)`: the record at the new index path.
    private func configure(_ id: RecordID, _ controller: FetchedResultsController<R>, at path: IndexPath) {
        guard path.section < controller.sections.count, path.item < controller.sections[path.section].numberOfObjects
        else { return problems.append("\(id): newIndexPath \(path) is past the results shown") }
        guard let record = controller.object(at: path) else {
            return problems.append("\(id): no record at newIndexPath \(path)")
        }
        guard record.id == id else {
            return problems.append("\(id): the record at newIndexPath \(path) is \(record.id.map { "\($0)" } ?? "nil")")
        }
        if let stored = stored(id), !same(stored, record) {
            problems.append("\(id): the record at newIndexPath \(path) is not the stored one")
        }
        cells[id] = record
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController<R>) {
        // `tableView.endUpdates()`: applied below, where a reload (no per-change callbacks)
        // can be told from a batch.
        batches += 1
        batch.deletedSections.sort()
        batch.insertedSections.sort()
        (batch.deletedItems, batch.deletedIdentifiers) = sorted(batch.deletedItems, batch.deletedIdentifiers)
        (batch.insertedItems, batch.insertedIdentifiers) = sorted(batch.insertedItems, batch.insertedIdentifiers)
        (batch.updatedItems, batch.updatedIdentifiers) = sorted(batch.updatedItems, batch.updatedIdentifiers)
    }

    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith changes: ChangeSet) {
        // A reload or a completion has no per-change callbacks: the table reloads.
        if changes.isReload || changes.isCompletion {
            table = TableViewModel(controller.snapshot)
            return
        }
        do {
            try table.apply(batch, dataSource: controller.snapshot)
        } catch {
            problems.append("batch \(batches): \(error)")
        }
    }

    private func sorted(_ paths: [IndexPath], _ ids: [RecordID]) -> ([IndexPath], [RecordID]) {
        let order = paths.indices.sorted { (paths[$0].section, paths[$0].item) < (paths[$1].section, paths[$1].item) }
        return (order.map { paths[$0] }, order.map { ids[$0] })
    }
}
