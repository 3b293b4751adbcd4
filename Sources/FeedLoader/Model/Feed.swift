import Foundation
import Folio

/// One news item, as FeedLoader stores it: a row of the `feed` table.
///
/// The `url` is unique: it is how an import recognises an item it already has.
/// `published` is indexed, because the list sorts and sections by it. `starred` is the
/// reader's own mark (`*` toggles it): imports never change it. `title` and `source` are
/// searchable: the list's `/` filter is a full-text search of them ("ipad" finds "iPad",
/// "cafe" finds "Café").
struct Feed: PersistentRecord, Equatable {
    var id: RecordID?
    var title = ""
    var url = ""
    var published = Date(timeIntervalSince1970: 0)
    var summary = ""
    var source = ""
    var imageURL: String?
    var starred = false

    static let entity = EntityDescription<Feed>(
        "feed",
        [
            // Model version 2: in the full-text index.
            AttributeDescription(\.title, searchable: true),
            AttributeDescription(\.url, unique: true),
            AttributeDescription(\.published, indexed: true),
            AttributeDescription(\.summary),
            AttributeDescription(\.source, searchable: true),
            AttributeDescription(\.imageURL),
            // Model version 1: items stored before it are not starred.
            AttributeDescription(\.starred, defaultValue: false),
        ])

    init() {}

    init(_ item: FeedItem) {
        self.init()
        apply(item)
    }

    /// Copies the item's fields; the identifier and the star stay.
    mutating func apply(_ item: FeedItem) {
        title = item.title
        url = item.url
        published = item.published
        summary = item.summary
        source = item.source
        imageURL = item.imageURL
    }

    /// Whether the stored record already says what `item` says.
    func matches(_ item: FeedItem) -> Bool {
        title == item.title && url == item.url && published == item.published
            && summary == item.summary && source == item.source && imageURL == item.imageURL
    }

    /// The record as a feed item, for export.
    var item: FeedItem {
        FeedItem(title: title, url: url, published: published, summary: summary, source: source, imageURL: imageURL)
    }
}

/// A news item as a feed file carries it.
///
/// In JSON: `title`, `url` (http or https), `published` (ISO 8601), `summary`,
/// `source`, and `imageURL` (also read as `image_url` or `imageUrl`; optional).
struct FeedItem: Sendable, Equatable, Codable {
    var title: String
    var url: String
    var published: Date
    var summary: String
    var source: String
    var imageURL: String?
}

extension Feed {
    /// Newest first: the list's default order.
    static let newestFirst = [SortDescriptor(\Feed.published, order: .reverse)]
    /// Oldest first.
    static let oldestFirst = [SortDescriptor(\Feed.published, order: .forward)]

    /// The record types of FeedLoader's store: the items, and the addresses they were
    /// imported from (a database made before ``FeedEndpoint`` existed gains its table).
    static let recordTypes: [any PersistentRecord.Type] = [Feed.self, FeedEndpoint.self]

    /// FeedLoader's model and its history:
    ///
    /// | version | what changed |
    /// |---|---|
    /// | 0 | `feed` (FeedLoader up to f4075a8; `feed_endpoint` added without a version) |
    /// | 1 | `feed.starred`, false for the items already stored |
    /// | 2 | `feed.title` and `feed.source` searchable (folded keys and a full-text index) |
    ///
    /// Opening a database of an older version migrates it (one transaction, every item
    /// kept); one of a newer version is refused and left as it is.
    static let model = StoreModel(version: 2, records: recordTypes)

    /// The store FeedLoader opens.
    static func openStore(at path: String) throws -> Store {
        try Store(path: path, model: model)
    }
}
