import Foundation
import Folio

/// A stand-in for the fetched results controller until it lands: refetches everything
/// when the store's change token moves and reports a reload.
@MainActor
final class InterimListSource: FeedListSource {
    let store: Store
    private(set) var request: FetchRequest<Feed>
    private var sections: [RowModel.Section] = []
    private var records: [RecordID: Feed] = [:]
    private var continuation: AsyncStream<ChangeSet>.Continuation?
    let changes: AsyncStream<ChangeSet>
    private var token: Int64 = 0
    private var poller: Task<Void, Never>?

    init(_ request: FetchRequest<Feed>, store: Store) {
        self.store = store
        self.request = request
        (changes, continuation) = AsyncStream.makeStream(of: ChangeSet.self)
    }

    func performFetch() throws {
        var all = request
        all.batchSize = 0
        let results = try store.fetch(all)
        token = try store.changeToken(for: Feed.self)
        records = [:]
        sections = []
        for case let feed? in results {
            let day = FeedGenerator.datePath(feed.published).replacingOccurrences(of: "/", with: "-")
            if sections.last?.name != day { sections.append(RowModel.Section(name: day, identifiers: [])) }
            sections[sections.count - 1].identifiers.append(feed.id!)
            records[feed.id!] = feed
        }
        if poller == nil {
            poller = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(300))
                    guard let self else { return }
                    if let now = try? self.store.changeToken(for: Feed.self), now != self.token {
                        try? self.performFetch()
                        self.continuation?.yield(.reload)
                    }
                }
            }
        }
    }

    func currentSections() -> [RowModel.Section] { sections }
    func section(at index: Int) -> RowModel.Section { sections[index] }
    func record(_ id: RecordID, at indexPath: IndexPath) -> Feed? { records[id] }

    func setRequest(_ request: FetchRequest<Feed>) throws {
        self.request = request
        try performFetch()
        continuation?.yield(.reload)
    }
}
