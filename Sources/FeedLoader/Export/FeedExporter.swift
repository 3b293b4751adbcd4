import Foundation
import Folio

/// Writes the results of a request as a JSON feed (the format `import` reads), from a
/// background fetch: the fetch reports exact progress, records are read batch by batch,
/// and the file appears only when complete — under a temporary name until then, removed
/// if the export fails or is cancelled.
struct FeedExporter: Sendable {
    let store: Store
    let request: FetchRequest<Feed>
    let destination: URL

    /// Runs the export; `progress` gets (written, total). Returns the number of items.
    /// - Throws: `CancellationError` when cancelled (nothing is left behind).
    @MainActor
    func run(progress: @escaping @MainActor (Int, Int) -> Void) async throws -> Int {
        let directory = destination.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(destination.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).partial")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw FeedLoaderError.cannotWrite(destination.path, reason: "cannot create a file in \(directory.path)")
        }
        var complete = false
        defer { if !complete { try? FileManager.default.removeItem(at: temporary) } }
        let handle = try FileHandle(forWritingTo: temporary)
        defer { try? handle.close() }

        let fetch = BackgroundFetch(store: store, request: request)
        let watcher = Task { @MainActor in
            for await update in fetch.progressUpdates { progress(0, update.total) }
        }
        let results: FetchedResults<Feed>
        do {
            results = try await withTaskCancellationHandler {
                try await fetch.value
            } onCancel: {
                fetch.cancel()
            }
        } catch {
            watcher.cancel()
            throw error
        }
        watcher.cancel()
        let total = results.count
        progress(0, total)

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var buffer = Data("[\n".utf8)
        for (index, feed) in results.enumerated() {
            if index % 1_000 == 0 {
                try Task.checkCancellation()
                progress(index, total)
                await Task.yield()
            }
            guard let feed else { continue }  // deleted since the fetch
            if index > 0 { buffer.append(contentsOf: Array(",\n".utf8)) }
            buffer.append(contentsOf: Array("  ".utf8))
            buffer.append(try encoder.encode(feed.item))
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
        progress(total, total)
        return total
    }
}
