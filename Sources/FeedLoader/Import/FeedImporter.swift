import Foundation
import Folio

/// What one import did.
struct ImportReport: Sendable, Equatable, CustomStringConvertible {
    /// Where the feed came from.
    var source: String
    /// Items in the feed, valid or not.
    var total = 0
    /// New items stored.
    var inserted = 0
    /// Items already stored whose content changed, updated in place.
    var updated = 0
    /// Items already stored, unchanged.
    var unchanged = 0
    /// Items repeating the url of an earlier item of the same feed (the later one wins).
    var repeated = 0
    /// Items skipped because they are malformed.
    var problems: [ItemProblem] = []
    /// The server answered "304 Not Modified": nothing was read or written.
    var notModified = false

    /// `sample-feed.json: 400 items, 12 new, 3 updated, 385 unchanged, 1 skipped`, or
    /// `https://example.com/feed.xml: not modified since the last import`.
    var description: String {
        if notModified { return "\(shortSource): not modified since the last import; nothing written" }
        var parts = [
            "\(total.formatted()) item\(total == 1 ? "" : "s")", "\(inserted.formatted()) new", "\(updated.formatted()) updated",
        ]
        parts.append("\(unchanged.formatted()) unchanged")
        if repeated > 0 { parts.append("\(repeated.formatted()) repeated") }
        if !problems.isEmpty { parts.append("\(problems.count.formatted()) skipped") }
        return "\(shortSource): " + parts.joined(separator: ", ")
    }

    /// A file's name, or an address whole.
    var shortSource: String {
        ServerFeedFetcher.looksLikeAddress(source) ? source : (source as NSString).lastPathComponent
    }
}

/// Stores the items of a feed: new urls are inserted, known urls whose content changed
/// are updated, and the rest is left alone — all in one transaction, so an import is
/// stored whole or not at all (the reference app's `FeedBuilder` and `FeedDataManager`).
///
/// Malformed items are skipped and reported in ``ImportReport/problems``; the valid
/// items are still imported.
struct FeedImporter: Sendable {
    let store: Store

    /// Fetches, parses and stores a feed.
    ///
    /// For a fetcher with a ``FeedFetcher/validatorKey``, the validators stored by the last
    /// import are sent; "not modified" then returns a report that says so, having written
    /// nothing. Otherwise the items, and the new validators, are stored in one transaction
    /// — only once the whole feed was fetched and read.
    ///
    /// - Parameter conditional: send the stored validators (`false` fetches the feed whole,
    ///   as for a first import).
    /// - Throws: ``FeedLoaderError`` when the feed cannot be fetched or read; nothing is
    ///   written then.
    func importFeed(from fetcher: some FeedFetcher, conditional: Bool = true) async throws -> ImportReport {
        let key = fetcher.validatorKey
        var sent: FeedValidators?
        if let key, conditional {
            let request = RecordRequest<FeedEndpoint>(predicate: #Predicate { $0.address == key }, limit: 1)
            sent = try await store.fetch(request).first??.validators
        }
        switch try await fetcher.fetchFeed(validators: sent) {
        case .notModified:
            return ImportReport(source: fetcher.name, notModified: true)
        case .document(let document):
            let parsed = try FeedParser.parse(document, source: fetcher.name)
            let now = Date()
            return try await store.write { tx in
                let report = try Self.store(parsed, source: fetcher.name, in: tx)
                if let key { try Self.storeValidators(document.validators, for: key, fetched: now, in: tx) }
                return report
            }
        }
    }

    /// Records the validators of a feed address (one row per address).
    static func storeValidators(_ validators: FeedValidators, for address: String, fetched: Date, in tx: WriteTransaction) throws
    {
        var endpoint = FeedEndpoint(address: address, validators: validators, fetched: fetched)
        try tx.upsert(&endpoint, onConflict: \.address)
    }

    /// Stores parsed items in one transaction, off the caller's thread.
    func store(_ parsed: ParsedFeed, source: String) async throws -> ImportReport {
        try await store.write { tx in try Self.store(parsed, source: source, in: tx) }
    }

    /// Stores parsed items in one transaction.
    func storeNow(_ parsed: ParsedFeed, source: String) throws -> ImportReport {
        try store.write { tx in try Self.store(parsed, source: source, in: tx) }
    }

    /// How many urls one lookup query asks about.
    static let lookupChunk = 500

    static func store(_ parsed: ParsedFeed, source: String, in tx: WriteTransaction) throws -> ImportReport {
        var report = ImportReport(source: source, total: parsed.total, problems: parsed.problems)
        // The last item with a url wins, at the position of the first.
        var order: [String] = []
        var latest: [String: FeedItem] = [:]
        for (_, item) in parsed.items {
            if latest.updateValue(item, forKey: item.url) == nil {
                order.append(item.url)
            } else {
                report.repeated += 1
            }
        }
        let sources = try Self.sources(for: order.compactMap { latest[$0] }, in: tx)
        var start = 0
        while start < order.count {
            let urls = Array(order[start..<min(start + lookupChunk, order.count)])
            start += lookupChunk
            let existing = try tx.fetchAll(RecordRequest<Feed>(predicate: #Predicate { urls.contains($0.url) }))
            let stored = Dictionary(existing.map { ($0.url, $0) }, uniquingKeysWith: { first, _ in first })
            for url in urls {
                guard var item = latest[url] else { continue }
                let source = sources[item.source] ?? ToOne()
                if let current = stored[url] {
                    if item.undated {
                        // No date again: the time of the first import stays (or the date
                        // an earlier import was given).
                        item.published = current.published
                        item.undated = current.undated
                    }
                    if current.matches(item) && current.source == source {
                        report.unchanged += 1
                        continue
                    }
                    var record = current
                    record.apply(item)
                    record.source = source
                    try tx.upsert(&record, onConflict: \.url)
                    report.updated += 1
                } else {
                    var record = Feed(item, source: source)
                    try tx.upsert(&record, onConflict: \.url)
                    report.inserted += 1
                }
            }
        }
        return report
    }

    /// The source of each of the items' source names (``FeedItem/source``): the stored one
    /// with that ``Source/feedName``, or a new one — named so, with the origin of the first
    /// of its items' web addresses. A stored source without a `siteURL` gains one; nothing
    /// else of a stored source changes (the reader's name and mute stay).
    static func sources(for items: [FeedItem], in tx: WriteTransaction) throws -> [String: ToOne<Source>] {
        var names: [String] = []
        var seen: Set<String> = []
        var sites: [String: String] = [:]
        for item in items {
            if seen.insert(item.source).inserted { names.append(item.source) }
            if sites[item.source] == nil, let site = Source.site(of: item.url) { sites[item.source] = site }
        }
        var found: [String: ToOne<Source>] = [:]
        var start = 0
        while start < names.count {
            let chunk = Array(names[start..<min(start + lookupChunk, names.count)])
            start += lookupChunk
            for var stored in try tx.fetchAll(RecordRequest<Source>(predicate: #Predicate { chunk.contains($0.feedName) })) {
                if stored.siteURL == nil, let site = sites[stored.feedName] {
                    stored.siteURL = site
                    try tx.update(stored)
                }
                found[stored.feedName] = ToOne(stored)
            }
        }
        for name in names where found[name] == nil {
            var source = Source(feedName: name, siteURL: sites[name])
            try tx.insert(&source)
            found[name] = ToOne(source)
        }
        return found
    }
}
