import Foundation
import Folio

/// A feed address FeedLoader has imported from, with the HTTP validators of its last
/// successful import: a row of the `feed_endpoint` table.
///
/// ``FeedImporter`` writes it in the same transaction as the feed's items, and only
/// after the feed was read whole; the next import of the address sends the validators
/// back (`If-None-Match`, `If-Modified-Since`), and a `304 Not Modified` then costs one
/// request and no write.
@PersistentRecord("feed_endpoint")
struct FeedEndpoint: Equatable {
    var id: RecordID?
    /// The address as the user gave it (before redirects), absolute.
    @Stored(.unique) var address = ""
    /// The `ETag` of the last successful fetch.
    var entityTag: String?
    /// The `Last-Modified` of the last successful fetch.
    var lastModified: String?
    /// When the feed was last fetched and stored whole.
    var fetched = Date(timeIntervalSince1970: 0)

    init() {}

    init(address: String, validators: FeedValidators, fetched: Date) {
        self.address = address
        self.entityTag = validators.entityTag
        self.lastModified = validators.lastModified
        self.fetched = fetched
    }

    var validators: FeedValidators { FeedValidators(entityTag: entityTag, lastModified: lastModified) }
}
