import Foundation
import Folio
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes the results of a request as a JSON feed (the format `import` reads), from a
/// background fetch: the fetch counts the results exactly and reads their identifiers
/// off the main actor, then the records are read batch by batch as they are written.
/// The file appears only when complete: it is written under a temporary name beside the
/// destination and renamed at the end, and the temporary file is removed if the export
/// fails or is cancelled.
struct FeedExporter: Sendable {
    let store: Store
    let request: RecordRequest<Feed>
    let destination: URL

    enum Phase: Sendable { case fetching, writing }

    /// Runs the export; `progress` gets the phase, the items done and the exact total.
    /// Returns the number of items written.
    /// - Throws: `CancellationError` when the task is cancelled (nothing is left behind).
    @MainActor
    func run(progress: @escaping @MainActor (Phase, Int, Int) -> Void) async throws -> Int {
        let directory = destination.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(
            ".\(destination.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).partial")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw FeedLoaderError.cannotWrite(destination.path, reason: "cannot create a file in \(directory.path)")
        }
        var complete = false
        defer { if !complete { try? FileManager.default.removeItem(at: temporary) } }
        let handle = try FileHandle(forWritingTo: temporary)
        defer { try? handle.close() }

        // Phase 1: the background fetch, with its exact progress.
        let fetch = store.fetchInBackground(request)
        let watcher = Task { @MainActor in
            for await step in fetch.progressUpdates { progress(.fetching, step.completed, step.total) }
        }
        defer { watcher.cancel() }
        let results = try await fetch.value  // cancelling this task cancels the fetch
        let total = results.count
        progress(.writing, 0, total)

        // Phase 2: records batch by batch, written in chunks.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var buffer = Data("[\n".utf8)
        var written = 0
        for (index, feed) in results.enumerated() {
            if index % 500 == 0 {
                try Task.checkCancellation()
                progress(.writing, index, total)
                await Task.yield()
            }
            guard let feed else { continue }  // deleted since the fetch
            if written > 0 { buffer.append(contentsOf: Array(",\n".utf8)) }
            buffer.append(contentsOf: Array("  ".utf8))
            buffer.append(try encoder.encode(feed.item))
            written += 1
            if buffer.count > 1 << 20 {
                try handle.write(contentsOf: buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        buffer.append(contentsOf: Array("\n]\n".utf8))
        try handle.write(contentsOf: buffer)
        try handle.synchronize()
        try Task.checkCancellation()
        if rename(temporary.path, destination.path) != 0 {
            throw FeedLoaderError.cannotWrite(destination.path, reason: String(cString: strerror(errno)))
        }
        complete = true
        progress(.writing, total, total)
        return written
    }
}
