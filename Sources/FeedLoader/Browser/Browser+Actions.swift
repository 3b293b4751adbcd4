import Foundation
import Folio

/// What the list's keys do to the store: delete, star, import (in the background, each a
/// write whose change the live controller delivers to the list).
extension Browser {
    func deleteSelected() {
        guard let cursor else { return }
        let id = model.identifier(at: cursor)
        let name = record(at: cursor)?.title ?? "\(id)"
        let store = self.store
        let post = self.post
        Task.detached {
            do {
                try await store.write { tx in _ = try tx.delete(Feed.self, id: id) }
                post.yield(.message("Deleted “\(name.truncated(to: 60))”"))
            } catch {
                post.yield(.message("Cannot delete: \(error)"))
            }
        }
    }

    /// Stars the selected item, or takes its star away: one `UPDATE` of its row (found by
    /// its unique url), which the live controller reports as an update of that row. A new
    /// star goes to the end of the starred order.
    func toggleStarOfSelected() {
        guard let cursor, let feed = record(at: cursor) else { return }
        let url = feed.url, starred = !feed.starred
        let name = feed.title
        let store = self.store
        let post = self.post
        Task.detached {
            do {
                try await store.write { tx in
                    var changes: [Assignment<Feed>] = [.set(\.starred, to: starred)]
                    if starred { changes.append(.set(\.starOrder, to: try Feed.nextStarOrder(tx))) }
                    try tx.updateAll(Feed.self, where: #Predicate { $0.url == url }, set: changes)
                }
                post.yield(.message("\(starred ? "Starred" : "Unstarred") “\(name.truncated(to: 60))”"))
            } catch {
                post.yield(.message("Cannot star: \(error)"))
            }
        }
    }

    /// Imports in the background while the list stays live: the feed at the `--url`
    /// address, the refresh file, or five pages of simulated live news a little apart
    /// (each page is one transaction).
    func startImport() {
        guard importTask == nil else {
            show("An import is already running")
            return
        }
        let store = self.store, post = self.post, refresh = self.refresh
        switch refresh {
        case .liveNews: show("Fetching live news in the background…")
        case .file(let file): show("Importing \((file as NSString).lastPathComponent) in the background…")
        case .server(let fetcher, _): show("Fetching \(fetcher.name) in the background…")
        }
        importTask = Task.detached {
            let importer = FeedImporter(store: store)
            do {
                if case .server(let fetcher, let conditional) = refresh {
                    let report = try await importer.importFeed(from: fetcher, conditional: conditional)
                    post.yield(.message(report.notModified ? "\(report)" : "Imported \(report)"))
                } else if case .file(let file) = refresh {
                    let report = try await importer.importFeed(from: FileFeedFetcher(path: file))
                    post.yield(.message("Imported \(report)"))
                } else {
                    let run = UInt64.random(in: 1...UInt64(UInt32.max))
                    let start = Date().addingTimeInterval(-20)
                    let pages = 5
                    for page in 0..<pages {
                        try Task.checkCancellation()
                        let report = try await importer.importFeed(from: LiveNewsFetcher(page: page, run: run, start: start))
                        post.yield(.message("Live news \(page + 1)/\(pages): \(report.inserted) new, \(report.updated) updated"))
                        if page < pages - 1 { try await Task.sleep(for: .milliseconds(700)) }
                    }
                }
            } catch is CancellationError {
            } catch {
                post.yield(.message("Import failed: \(error)"))
            }
            post.yield(.importFinished)
        }
    }

    /// Marks the item at `indexPath` read (leaving its detail): one `UPDATE`; in the unread
    /// view the item then leaves the list as a change set.
    func markRead(at indexPath: IndexPath?) {
        guard let indexPath, var feed = record(at: indexPath), !feed.isRead else { return }
        feed.isRead = true
        do {
            try store.write { [feed] tx in try tx.update(feed) }
        } catch {
            show("Cannot mark the item read: \(error)")
        }
    }
}
