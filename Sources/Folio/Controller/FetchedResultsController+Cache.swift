import Foundation

extension FetchedResultsController {
    // MARK: Persistent cache

    func scheduleCacheWrite(
        _ state: ResultsState, fingerprint: SectionCache.Fingerprint, token: ChangeToken, to url: URL, delay: Bool
    ) {
        cacheWriteTask?.cancel()
        cacheWriteTask = Task.detached(priority: .utility) {
            if delay { try? await Task.sleep(for: .milliseconds(500)) }
            guard !Task.isCancelled else { return }
            try? SectionCache.write(state, fingerprint: fingerprint, token: token, to: url)
        }
    }

    /// Waits for a pending cache write (tests, and before quitting).
    /// - Complexity: O(1); suspends until the write ends.
    public func flushCache() async {
        await cacheWriteTask?.value
    }

    /// Deletes the cache file with `name` (all of the store's caches when `nil`).
    /// - Complexity: O(cache files).
    public static func deleteCache(withName name: String?, in store: Store) throws {
        try SectionCache.delete(name: name, in: store)
    }
}
