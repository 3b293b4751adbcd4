import Foundation
import Folio

/// One news item, as FeedLoader stores it: a row of the `feed` table.
///
/// The `url` is unique: it is how an import recognises an item it already has.
/// `published` is indexed, because the list sorts and sections by it.
struct Feed: PersistentRecord, Equatable {
    var id: RecordID?
    var title = ""
    var url = ""
    var published = Date(timeIntervalSince1970: 0)
    var summary = ""
    var source = ""
    var imageURL: String?

    static let entity = EntityDescription<Feed>(
        "feed",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.url, unique: true),
            AttributeDescription(\.published, indexed: true),
            AttributeDescription(\.summary),
            AttributeDescription(\.source),
            AttributeDescription(\.imageURL),
        ])

    init() {}

    init(_ item: FeedItem) {
        self.init()
        apply(item)
    }

    /// Copies the item's fields; the identifier stays.
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

    /// The store FeedLoader opens.
    static func openStore(at path: String) throws -> Store {
        try Store(path: path, records: recordTypes)
    }
}
