import Foundation
import Folio

/// One news item, as FeedLoader stores it: a row of the `feed` table.
///
/// The `url` is unique: it is how an import recognises an item it already has. An item
/// without a web address is identified by its feed's `guid` (RSS) or `id` (Atom, JSON
/// Feed) instead: its `url` is then the key `guid:<feed> <guid>` (see
/// ``FeedItem/guidKey(feed:guid:)``) and `guid` holds the guid as the feed wrote it.
/// An item without a date has the time of its first import as `published`, and
/// `undated` says so (a later import keeps that time).
/// `published` is indexed, because the list sorts and sections by it. `starred` is the
/// reader's own mark (`*` toggles it): imports never change it. `title` and `sourceName`
/// (the source's name as the feed gave it, in the column `source`) are searchable: the
/// list's `/` filter is a full-text search of them ("ipad" finds "iPad", "cafe" finds
/// "Café"). `source` points to the item's ``Source`` (column `source_id`; model version 4),
/// found or created by `sourceName` at import.
@PersistentRecord("feed")
struct Feed: Equatable {
    var id: RecordID?
    /// Model version 2: in the full-text index.
    @Stored(.searchable) var title = ""
    @Stored(.unique) var url = ""
    @Stored(.indexed) var published = Date(timeIntervalSince1970: 0)
    var summary = ""
    @Stored(.searchable, column: "source") var sourceName = ""
    var imageURL: String?
    /// Model version 1: items stored before it are not starred.
    @Stored(defaultValue: false) var starred = false
    /// Model version 3: items stored before it have a web address and a date.
    var guid: String?
    @Stored(defaultValue: false) var undated = false
    /// Model version 4: filled by the migration step `Feed.sourcesStep`.
    @Stored(column: "source_id") var source = ToOne<Source>()
    /// The place of a starred item in the reader's own order (model version 5): the starred
    /// view sorts by it, and its keys move items as a drag would (`moveObject(at:to:)`).
    /// 0 for items stored before it; the step orders the starred ones.
    @Stored(.indexed, defaultValue: 0) var starOrder = 0
    /// Whether the reader has read the item (model version 6): set when its detail is left;
    /// `u` shows the unread items only, through the index `(isRead, published)`. Items
    /// stored before it are unread.
    @Stored(defaultValue: false) var isRead = false

    // Model version 6: the unread items newest first, read from the index alone.
    #CompoundIndex<Feed>(\.isRead, \.published)

    init() {}

    init(_ item: FeedItem, source: ToOne<Source> = ToOne()) {
        self.init()
        apply(item)
        self.source = source
    }

    /// Copies the item's fields; the identifier, the star (and its place) and the source stay.
    mutating func apply(_ item: FeedItem) {
        title = item.title
        url = item.url
        published = item.published
        summary = item.summary
        sourceName = item.source
        imageURL = item.imageURL
        guid = item.guid
        undated = item.undated
    }

    /// Whether the stored record already says what `item` says.
    func matches(_ item: FeedItem) -> Bool {
        title == item.title && url == item.url && published == item.published
            && summary == item.summary && sourceName == item.source && imageURL == item.imageURL && guid == item.guid
            && undated == item.undated
    }

    /// The record as a feed item, for export.
    var item: FeedItem {
        FeedItem(
            title: title, url: url, published: published, summary: summary, source: sourceName, imageURL: imageURL, guid: guid,
            undated: undated)
    }

    /// The item's web address; `nil` for an item identified by its guid.
    var link: String? { FeedItem.isGuidKey(url) ? nil : url }
}

/// A news item as a feed file carries it.
///
/// In JSON: `title`, `url` (http or https), `published` (ISO 8601), `summary`,
/// `source`, and `imageURL` (also read as `image_url` or `imageUrl`; optional). An item
/// identified by its guid has its key as `url` and its `guid`; an item whose feed gave no
/// date has `"undated": true` (both written only when so).
struct FeedItem: Sendable, Equatable, Encodable {
    var title: String
    /// The web address; for an item without one, ``guidKey(feed:guid:)``.
    var url: String
    /// The date the feed gives; for an ``undated`` item, the time of its first import.
    var published: Date
    var summary: String
    var source: String
    var imageURL: String?
    /// The guid (RSS) or id (Atom, JSON Feed) that identifies an item without a web address.
    var guid: String? = nil
    /// The feed gave no date.
    var undated = false

    /// The key of an item identified by its guid: `guid:`, the feed (its address, id or
    /// title; spaces escaped, so that the first space ends it), a space, the guid.
    static func guidKey(feed: String, guid: String) -> String {
        "guid:" + feed.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: " ", with: "%20") + " " + guid
    }

    /// Whether `url` is a guid key rather than an address.
    static func isGuidKey(_ url: String) -> Bool { url.hasPrefix("guid:") }

    private enum CodingKeys: String, CodingKey {
        case title, url, published, summary, source, imageURL, guid, undated
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(title, forKey: .title)
        try container.encode(url, forKey: .url)
        try container.encode(published, forKey: .published)
        try container.encode(summary, forKey: .summary)
        try container.encode(source, forKey: .source)
        try container.encodeIfPresent(imageURL, forKey: .imageURL)
        try container.encodeIfPresent(guid, forKey: .guid)
        if undated { try container.encode(true, forKey: .undated) }
    }
}

extension Feed {
    /// Newest first: the list's default order.
    static let newestFirst = [SortDescriptor(\Feed.published, order: .reverse)]
    /// Oldest first.
    static let oldestFirst = [SortDescriptor(\Feed.published, order: .forward)]
    /// The starred view's order: the reader's own.
    static let starredOrder = [SortDescriptor(\Feed.starOrder)]

    /// The record types of FeedLoader's store: the items, their sources, and the addresses
    /// they were imported from (a database made before ``FeedEndpoint`` existed gains its table).
    static let recordTypes: [any PersistentRecord.Type] = [Feed.self, Source.self, FeedEndpoint.self]

    /// FeedLoader's model and its history:
    ///
    /// | version | what changed |
    /// |---|---|
    /// | 0 | `feed` (the first FeedLoader; `feed_endpoint` added without a version) |
    /// | 1 | `feed.starred`, false for the items already stored |
    /// | 2 | `feed.title` and `feed.source` searchable (folded keys and a full-text index) |
    /// | 3 | `feed.guid` (null) and `feed.undated` (false) for the items already stored |
    /// | 4 | `source`, and `feed.source_id`: a source per distinct `feed.source`, each item pointing to its own |
    /// | 5 | `feed.starOrder` (indexed): the starred items in their order, newest first, 2²⁰ apart; 0 for the others |
    /// | 6 | `feed.isRead`, false for the items already stored, and the index `(isRead, published)` |
    ///
    /// Opening a database of an older version migrates it (one transaction, every item
    /// kept); one of a newer version is refused and left as it is.
    static let model = StoreModel(version: 6, records: recordTypes, steps: [sourcesStep, starOrderStep])

    /// The gap between neighbours of the starred order (Folio's own, for lists ordered by hand).
    static let starOrderSpacing = 1 << 20

    /// The place after the last starred item: one read through `starOrder`'s index.
    static func nextStarOrder(_ tx: WriteTransaction) throws -> Int {
        let last = try tx.fetchAll(
            RecordRequest<Feed>(
                predicate: #Predicate { $0.starred == true }, sortBy: [SortDescriptor(\.starOrder, order: .reverse)], limit: 1)
        ).first
        return (last?.starOrder ?? 0) + starOrderSpacing
    }

    /// Model version 5: the starred items take places newest first, 2²⁰ apart (`starOrder`
    /// is 0 for every item before it).
    static let starOrderStep = MigrationStep("feedloader: the starred items' order") { db in
        try db.execute(
            sql: """
                UPDATE feed SET starOrder = (
                    SELECT ranked.place FROM (
                        SELECT id, row_number() OVER (ORDER BY published DESC, id) AS place FROM feed WHERE starred = 1
                    ) AS ranked WHERE ranked.id = feed.id) * \(starOrderSpacing)
                WHERE starred = 1
                """)
    }

    /// Model version 4: one ``Source`` per distinct name the items give (`feed.source`,
    /// even an empty one), with the origin of its first item's web address as `siteURL`,
    /// and every item pointed to its source — so every item kept has one.
    static let sourcesStep = MigrationStep("feedloader: a source per feed name") { db in
        let firstURL =
            "(SELECT first.url FROM feed AS first WHERE first.source = feed.source"
            + " AND (substr(first.url, 1, 8) = 'https://' OR substr(first.url, 1, 7) = 'http://')"
            + " ORDER BY first.id LIMIT 1)"
        try db.execute(
            sql: """
                INSERT INTO source (feedName, name, siteURL, muted)
                SELECT feed.source, feed.source, \(Source.siteSQL(firstURL)), 0 FROM feed
                GROUP BY feed.source ORDER BY feed.source;
                UPDATE feed SET source_id = (SELECT source.id FROM source WHERE source.feedName = feed.source);
                """)
    }

    /// The store FeedLoader opens.
    static func openStore(at path: String) throws -> Store {
        try Store(path: path, model: model)
    }
}
