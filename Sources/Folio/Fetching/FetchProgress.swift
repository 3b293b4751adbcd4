import Foundation

/// One step of a background fetch's progress: rows read out of a total.
///
/// A ``BackgroundFetch`` publishes these through ``BackgroundFetch/progressUpdates``
/// (and mirrors them on its Foundation ``BackgroundFetch/progress``): about one per
/// 4,096 rows read, one when the total changes, and a last one when the fetch succeeds,
/// with ``completed`` equal to ``total`` and ``fractionCompleted`` exactly `1.0`.
///
/// ```swift
/// for await step in fetch.progressUpdates {
///     progressBar.value = step.fractionCompleted
/// }
/// ```
public struct FetchProgress: Sendable, Hashable, CustomStringConvertible {
    /// The rows read so far.
    public var completed: Int
    /// The rows the fetch will read: counted exactly by the database before any row is
    /// read, or, when the request has an
    /// ``RecordRequest/estimatedResultCount``, that estimate (doubled whenever the rows
    /// read reach it, as `NSAsynchronousFetchRequest` does) until the fetch ends.
    public var total: Int
    /// Whether the fetch has read its last row. Only the last update of a successful
    /// fetch is finished.
    public var isFinished: Bool

    /// Creates a progress step.
    public init(completed: Int, total: Int, isFinished: Bool = false) {
        self.completed = completed
        self.total = total
        self.isFinished = isFinished
    }

    /// `completed / total`, in `0...1`: exactly `1.0` when the fetch is finished (an
    /// empty result included). Before that it reaches `1.0` only once every counted row
    /// is read (never with an estimate, which is doubled first).
    public var fractionCompleted: Double {
        if isFinished { return 1 }
        guard total > 0 else { return 0 }
        return min(1, Double(completed) / Double(total))
    }

    /// `completed/total`, with `finished` at the end.
    public var description: String {
        "\(completed)/\(total)" + (isFinished ? " finished" : "")
    }
}
