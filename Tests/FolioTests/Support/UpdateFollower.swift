import Testing
@testable import Folio

/// Follows a controller's ``FetchedResultsController/updates`` as an app does, and knows how
/// many updates the controller has sent (its delegate hears each one as it is sent), so that
/// a test waits for exactly those to come through the sequence rather than yielding and
/// hoping the consumer has run.
@MainActor
final class UpdateFollower<R: PersistentRecord> {
    /// What the controller sent: each change set and each failure is also one update.
    private let counter = DeliveryRecorder<R>()
    private var sent: Int { counter.changeSets.count + counter.errors.count }
    /// The updates received and not yet taken (failures left out).
    private var received: [ControllerUpdate] = []
    private var receivedCount = 0
    private var waiter: CheckedContinuation<Void, Never>?
    private var task: Task<Void, Never>?

    /// Becomes `controller`'s delegate and subscribes to its updates.
    init(_ controller: FetchedResultsController<R>) {
        controller.delegate = counter
        let updates = controller.updates
        task = Task { [weak self] in
            for await update in updates {
                guard let self else { return }
                self.receive(update)
            }
        }
    }

    deinit { task?.cancel() }

    private func receive(_ update: ControllerUpdate) {
        receivedCount += 1
        if update.error == nil { received.append(update) }
        if receivedCount >= sent, let waiter {
            self.waiter = nil
            waiter.resume()
        }
    }

    /// Waits until every update the controller has sent so far has come through the sequence,
    /// and returns those not taken before (failures left out), in the order sent.
    func take() async -> [ControllerUpdate] {
        if receivedCount < sent { await withCheckedContinuation { waiter = $0 } }
        defer { received = [] }
        return received
    }
}
