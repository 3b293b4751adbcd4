import Foundation
import Folio

/// A delegate that notes when each commit's change set reaches it, for any record type: the
/// one delivery recorder of the benchmark's live measurements.
///
/// A commit's change set counts as delivered at the callback named by ``Moment``: the
/// change-set callback, or the snapshot callback that the controller makes last (after
/// building the snapshot). Either way the controller makes both callbacks; only the time noted
/// differs.
@MainActor
final class DeliveryRecorder<R: PersistentRecord>: FetchedResultsControllerDelegate {
    typealias ResultType = R

    /// The callback at which a change set counts as delivered.
    enum Moment {
        /// `controller(_:didChangeContentWith:)` with the change set.
        case changeSet
        /// `controller(_:didChangeContentWith:)` with the snapshot: the last callback of a commit.
        case snapshot
    }

    let moment: Moment
    /// Seconds ``next(timeout:)`` waits by default.
    let timeout: Double
    private var lastChange: ChangeSet?
    private var received: [(change: ChangeSet, at: UInt64)] = []
    private var waiter: CheckedContinuation<Void, Never>?

    init(at moment: Moment = .changeSet, timeout: Double = 30) {
        self.moment = moment
        self.timeout = timeout
    }

    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith changes: ChangeSet) {
        switch moment {
        case .changeSet: note(changes)
        case .snapshot: lastChange = changes
        }
    }

    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith snapshot: Snapshot) {
        guard moment == .snapshot else { return }
        note(lastChange ?? ChangeSet())
        lastChange = nil
    }

    private func note(_ change: ChangeSet) {
        received.append((change, now()))
        waiter?.resume()
        waiter = nil
    }

    /// The next delivered change set and when it arrived, or `nil` after `timeout` seconds
    /// (the recorder's own by default).
    func next(timeout: Double? = nil) async -> (change: ChangeSet, at: UInt64)? {
        if received.isEmpty {
            let seconds = timeout ?? self.timeout
            let timer = Task { @MainActor [weak self] in
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                guard !Task.isCancelled, let self, let waiter = self.waiter else { return }
                self.waiter = nil
                waiter.resume()
            }
            await withCheckedContinuation { waiter = $0 }
            timer.cancel()
        }
        return received.isEmpty ? nil : received.removeFirst()
    }

    /// Change sets delivered and not yet taken by ``next(timeout:)``.
    var backlog: Int { received.count }
}
