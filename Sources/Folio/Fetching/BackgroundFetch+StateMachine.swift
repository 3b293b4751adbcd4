import Foundation

/// Decides, under the storage's lock, what a background fetch does next: which progress
/// step to publish, when the fetch is over, what cancelling must stop. It performs no
/// side effect itself; ``BackgroundFetchStorage`` carries them out.
struct BackgroundFetchStateMachine {
    typealias Continuation = AsyncStream<FetchProgress>.Continuation

    enum Phase: Equatable {
        case running, succeeded, failed, cancelled
    }

    private(set) var phase = Phase.running
    /// The total is an estimate, doubled whenever the rows read reach it.
    private let isEstimated: Bool
    /// The last published step; `nil` until the total is known.
    private(set) var latest: FetchProgress?
    /// Live `progressUpdates` streams.
    private(set) var subscribers: [Int: Continuation] = [:]
    private var nextSubscriberID = 0
    /// Stops the background work (cancels its task); `nil` once the fetch is over.
    private var stopWork: (@Sendable () -> Void)?

    init(estimatedTotal: Int?) {
        if let estimatedTotal {
            isEstimated = true
            latest = FetchProgress(completed: 0, total: estimatedTotal)
        } else {
            isEstimated = false
        }
    }

    /// Registers what stops the work. Returns it back when the fetch is already over, to
    /// be called at once.
    mutating func attach(stopWork: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        guard phase == .running else { return phase == .cancelled ? stopWork : nil }
        self.stopWork = stopWork
        return nil
    }

    /// The database counted the results.
    mutating func counted(_ total: Int) -> FetchProgress? {
        guard phase == .running, !isEstimated else { return nil }
        return publish(FetchProgress(completed: 0, total: total))
    }

    /// `rows` rows have been read.
    mutating func read(_ rows: Int) -> FetchProgress? {
        guard phase == .running else { return nil }
        var total = latest?.total ?? rows
        if isEstimated {
            // NSAsynchronousFetchRequest: `if (fetched >= estimate) estimate *= 2`.
            if rows >= total {
                total = max(total, 1)
                while rows >= total { total *= 2 }
            }
        } else {
            total = max(total, rows)
        }
        let next = FetchProgress(completed: rows, total: total)
        guard next != latest else { return nil }
        return publish(next)
    }

    enum Completion {
        /// The fetch succeeded: publish the last step and end the streams.
        case succeeded(FetchProgress, finishing: [Continuation])
        /// A cancellation won the race: the fetch ends with `CancellationError`.
        case cancelled
    }

    /// The work read its last row, `rows` in all.
    mutating func succeed(rows: Int) -> Completion {
        guard phase == .running else { return .cancelled }
        phase = .succeeded
        stopWork = nil
        let step = publish(FetchProgress(completed: rows, total: rows, isFinished: true))
        return .succeeded(step, finishing: takeSubscribers())
    }

    /// The work threw. Returns the streams to end, and whether the Foundation progress must
    /// be marked cancelled (the work was cancelled from outside ``cancel()``).
    mutating func fail(isCancellation: Bool) -> (finishing: [Continuation], cancelProgress: Bool) {
        guard phase == .running else { return (takeSubscribers(), false) }
        phase = isCancellation ? .cancelled : .failed
        stopWork = nil
        return (takeSubscribers(), isCancellation)
    }

    /// `cancel()` was called. Returns `nil` when the fetch is already over; otherwise what
    /// stops the work (if attached yet) and the streams to end.
    mutating func cancel() -> (stopWork: (@Sendable () -> Void)?, finishing: [Continuation])? {
        guard phase == .running else { return nil }
        phase = .cancelled
        let stop = stopWork
        stopWork = nil
        return (stop, takeSubscribers())
    }

    /// A new identifier for a `progressUpdates` stream.
    mutating func makeSubscriberID() -> Int {
        nextSubscriberID += 1
        return nextSubscriberID
    }

    /// A stream starts: it is kept while the fetch runs. Returns whether it must be ended
    /// at once (the fetch is over). Either way it first receives ``latest``.
    mutating func subscribe(_ id: Int, _ continuation: Continuation) -> Bool {
        guard phase == .running else { return true }
        subscribers[id] = continuation
        return false
    }

    /// A stream was dropped. Returns its continuation, to be released after the lock.
    mutating func unsubscribe(_ id: Int) -> Continuation? {
        subscribers.removeValue(forKey: id)
    }

    private mutating func publish(_ next: FetchProgress) -> FetchProgress {
        latest = next
        return next
    }

    private mutating func takeSubscribers() -> [Continuation] {
        let taken = Array(subscribers.values)
        subscribers = [:]
        return taken
    }
}

/// The shared state of a ``BackgroundFetch``: the state machine under a lock, and the side
/// effects it decides, performed after the lock is released (setting the Foundation
/// `Progress`, whose observers are user code; ending streams, which runs their
/// termination handlers; cancelling the task).
///
/// One exception, on purpose: a progress step is yielded to the streams while the lock is
/// held, so that every stream sees the steps in order even when one subscribes while a
/// step is published. `yield` calls nothing of ours (termination handlers run only on
/// `finish`, on cancellation of the consumer, or when a continuation is released, which
/// all happen after the lock), so it cannot re-enter.
final class BackgroundFetchStorage: Sendable {
    let progress: Progress
    private let state: Locked<BackgroundFetchStateMachine>

    init(estimatedTotal: Int?) {
        // `Progress(totalUnitCount:)` becomes a child of the thread's current progress,
        // as NSAsynchronousFetchRequest's does (the `becomeCurrent` pattern).
        progress = Progress(totalUnitCount: Int64(estimatedTotal ?? -1))
        state = Locked(BackgroundFetchStateMachine(estimatedTotal: estimatedTotal))
        progress.isCancellable = true
        progress.isPausable = false
        progress.cancellationHandler = { [weak self] in self?.cancel() }
    }

    func attach(stopWork: @escaping @Sendable () -> Void) {
        let stopNow = state.withLock { $0.attach(stopWork: stopWork) }
        stopNow?()
    }

    func counted(_ total: Int) {
        publish { $0.counted(total) }
    }

    func read(_ rows: Int) {
        publish { $0.read(rows) }
    }

    /// Ends a fetch that read all its rows; throws `CancellationError` if `cancel()` came first.
    func succeed(rows: Int) throws {
        let completion = state.withLock { machine -> BackgroundFetchStateMachine.Completion in
            let completion = machine.succeed(rows: rows)
            if case .succeeded(let step, let finishing) = completion {
                for continuation in finishing { continuation.yield(step) }
            }
            return completion
        }
        switch completion {
        case .cancelled:
            throw CancellationError()
        case .succeeded(let step, let finishing):
            apply(step)
            for continuation in finishing { continuation.finish() }
            progress.cancellationHandler = nil
        }
    }

    func fail(_ error: any Error) {
        let (finishing, cancelProgress) = state.withLock { $0.fail(isCancellation: error is CancellationError) }
        for continuation in finishing { continuation.finish() }
        progress.cancellationHandler = nil
        if cancelProgress && !progress.isCancelled { progress.cancel() }
    }

    func cancel() {
        guard let (stopWork, finishing) = state.withLock({ $0.cancel() }) else { return }
        stopWork?()
        for continuation in finishing { continuation.finish() }
        if !progress.isCancelled { progress.cancel() }
    }

    var isCancelled: Bool { state.withLock { $0.phase == .cancelled } }

    /// A new `progressUpdates` stream: it starts with the latest step, if any.
    func makeStream() -> AsyncStream<FetchProgress> {
        let (stream, continuation) = AsyncStream.makeStream(of: FetchProgress.self, bufferingPolicy: .unbounded)
        let id = state.withLock { $0.makeSubscriberID() }
        continuation.onTermination = { [weak self] _ in
            let removed = self?.state.withLock { $0.unsubscribe(id) }
            _ = removed  // released here, after the lock
        }
        let endNow = state.withLock { machine -> Bool in
            if let latest = machine.latest { continuation.yield(latest) }
            return machine.subscribe(id, continuation)
        }
        if endNow { continuation.finish() }
        return stream
    }

    private func publish(_ decide: (inout BackgroundFetchStateMachine) -> FetchProgress?) {
        let step = state.withLock { machine -> FetchProgress? in
            guard let step = decide(&machine) else { return nil }
            for continuation in machine.subscribers.values { continuation.yield(step) }
            return step
        }
        if let step { apply(step) }
    }

    /// Moves the Foundation progress to the step, never through a fraction above 1: a
    /// growing total is set before the rows read, a shrinking one after. An empty result
    /// finishes as 1 of 1, since Foundation calls 0 of 0 indeterminate, not complete.
    private func apply(_ step: FetchProgress) {
        let empty = step.isFinished && step.total == 0
        let total = empty ? 1 : Int64(step.total)
        let completed = empty ? 1 : Int64(step.completed)
        if total >= progress.totalUnitCount {
            progress.totalUnitCount = total
            progress.completedUnitCount = completed
        } else {
            progress.completedUnitCount = completed
            progress.totalUnitCount = total
        }
    }
}
