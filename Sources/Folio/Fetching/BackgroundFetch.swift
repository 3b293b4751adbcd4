import Foundation

/// A fetch running in the background, with its progress and a way to cancel it: Folio's
/// `NSAsynchronousFetchRequest`. Create one with ``Store/fetchInBackground(_:priority:)``.
///
/// ```swift
/// var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.title)])
/// request.batchSize = 50
/// let fetch = store.fetchInBackground(request)
/// progressView.observedProgress = fetch.progress   // or: for await step in fetch.progressUpdates
/// let results = try await fetch.value               // FetchedRecords<Article>
/// ```
///
/// The fetch starts at once, on a read connection of the store and off the caller's
/// actor; writes go on meanwhile (in a file store), and the fetch sees the database as
/// it was when it began. It keeps running if the handle is dropped.
///
/// **Progress.** Unlike Core Data, which can only divide by the request's
/// `estimatedResultCount`, Folio asks the database for the exact number of results first
/// (in the same read transaction as the rows, so the two agree): ``progress`` gets that
/// total before any row is read, then advances about every 4,096 rows, and ends with
/// `completedUnitCount == totalUnitCount`. When the request has an
/// ``RecordRequest/estimatedResultCount``, no count is run and the estimate is honoured
/// as `NSAsynchronousFetchRequest` does: it is the total, doubled each time the rows read
/// reach it (so the fraction can fall back, from 0.9 to 0.45 say), and set to the rows
/// read at the end, so that a successful fetch always finishes at exactly 1.0.
///
/// **Cancellation.** ``cancel()``, `progress.cancel()` (or cancelling a parent progress),
/// and cancelling a task that awaits ``value`` all stop the fetch: SQLite is interrupted
/// even in the middle of one long statement (a sort, a scan), ``value`` throws
/// `CancellationError`, and the store stays usable.
public final class BackgroundFetch<R: PersistentRecord>: Sendable {
    /// The fetch's progress, as a Foundation `Progress`, to bind to a progress view or to
    /// add to a parent (`parent.addChild(fetch.progress, withPendingUnitCount: 1)`).
    ///
    /// Created as a child of the calling thread's current progress, if any (the
    /// `becomeCurrent(withPendingUnitCount:)` pattern). Its `totalUnitCount` is `-1`
    /// (indeterminate) until the database has counted the results, or the estimate from
    /// the start; `completedUnitCount` is the rows read so far. It is cancellable:
    /// `progress.cancel()` cancels the fetch, and a cancelled fetch cancels it.
    public let progress: Progress

    let storage: BackgroundFetchStorage
    private let task: Task<FetchedRecords<R>, any Error>

    init(storage: BackgroundFetchStorage, task: Task<FetchedRecords<R>, any Error>) {
        self.storage = storage
        self.progress = storage.progress
        self.task = task
        storage.attach(stopWork: { task.cancel() })
    }

    /// The results, once the fetch has read them.
    ///
    /// With a ``RecordRequest/batchSize``, the background work reads the identifiers only
    /// and the results load their records batch by batch as they are accessed, like
    /// the synchronous `Store.fetch(_:)`; without one, every record is loaded in the background.
    ///
    /// Can be awaited any number of times, from any task. Cancelling a task that awaits it
    /// cancels the fetch (for every awaiter).
    ///
    /// - Complexity: O(1) once the fetch has ended: awaiting does no database work.
    /// - Throws: `CancellationError` when the fetch was cancelled; a ``FolioError`` for
    ///   an invalid request (an untranslatable predicate, say), a closed store or an
    ///   SQLite error.
    public var value: FetchedRecords<R> {
        get async throws {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: { [storage] in
                storage.cancel()
            }
        }
    }

    /// The progress steps, as an asynchronous sequence: the latest step first (if the
    /// total is known yet), then one about every 4,096 rows read and one each time the
    /// total changes. The sequence ends after the last step of a successful fetch,
    /// ``FetchProgress/completed`` `==` ``FetchProgress/total`` and
    /// ``FetchProgress/fractionCompleted`` `== 1.0`; it ends early, without that step, if
    /// the fetch fails or is cancelled.
    ///
    /// Each access makes a new stream, so several tasks can follow the same fetch. Without
    /// an estimate, ``FetchProgress/fractionCompleted`` never decreases.
    ///
    /// ```swift
    /// for await step in fetch.progressUpdates {
    ///     print("\(step.completed) of \(step.total)")
    /// }
    /// ```
    ///
    /// - Complexity: O(1) per access; each stream buffers the steps its consumer has not
    ///   read yet (at most one per 4,096 rows, plus one per doubling of an estimate).
    public var progressUpdates: AsyncStream<FetchProgress> { storage.makeStream() }

    /// Cancels the fetch: interrupts SQLite if it is reading, ends the progress streams,
    /// cancels ``progress``, and makes ``value`` throw `CancellationError`. Does nothing
    /// once the fetch has ended.
    public func cancel() { storage.cancel() }

    /// Whether the fetch was cancelled (by ``cancel()``, its progress, or an awaiting task).
    public var isCancelled: Bool { storage.isCancelled }
}
