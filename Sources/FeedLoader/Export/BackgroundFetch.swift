import Foundation
import Folio

/// Progress of a background fetch.
struct FetchProgressUpdate: Sendable {
    var completed: Int
    var total: Int
}

/// Adapter over `store.fetchInBackground(_:)` (a stand-in until it lands).
final class BackgroundFetch: Sendable {
    private let task: Task<FetchedResults<Feed>, any Error>
    let progressUpdates: AsyncStream<FetchProgressUpdate>

    init(store: Store, request: FetchRequest<Feed>) {
        let (stream, continuation) = AsyncStream.makeStream(of: FetchProgressUpdate.self)
        progressUpdates = stream
        task = Task.detached {
            defer { continuation.finish() }
            let total = try await store.read { _ in 0 }
            continuation.yield(FetchProgressUpdate(completed: 0, total: total))
            let results = try await store.fetch(request)
            continuation.yield(FetchProgressUpdate(completed: results.count, total: results.count))
            return results
        }
    }

    var value: FetchedResults<Feed> {
        get async throws { try await task.value }
    }

    func cancel() { task.cancel() }
}
