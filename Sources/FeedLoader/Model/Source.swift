import Foundation
import Folio

/// Where items come from — "The Verge", "Macworld": a row of the `source` table, which
/// each item points to (``Feed/source``).
///
/// `feedName` is the source's identity: the name its items carry in the feeds (the item's
/// or the feed's name, else the host; ``FeedItem/source``). An import finds the source of
/// each item by it, and creates the source the first time it meets the name. `name` is the
/// name shown, the feed's name at first: the reader may rename it (`n`), and the next
/// import still finds it by `feedName`. `siteURL` is the origin of the first web address
/// met (`https://www.theverge.com/`), `nil` when no item had one. A muted source's items
/// are left out of the list (`m` mutes, `M` unmutes every source).
///
/// Deleting a source deletes its items (the `.cascade` rule of its to-many).
@PersistentRecord("source")
struct Source: Equatable {
    var id: RecordID?
    @Stored(.unique) var feedName = ""
    @Stored(.indexed) var name = ""
    var siteURL: String?
    @Stored(defaultValue: false) var muted = false
    /// The source's items: deleting a source deletes them.
    @ToMany(\Feed.source, deleteRule: .cascade) var items: RecordRequest<Feed>

    init() {}

    /// A new source for the items named `feedName` in their feeds.
    init(feedName: String, siteURL: String?) {
        self.feedName = feedName
        self.name = feedName
        self.siteURL = siteURL
    }

    /// The list's and the detail view's name: `(no name)` for a source whose feed gave none.
    var shownName: String { Self.shownName(name) }

    static func shownName(_ name: String) -> String { name.isEmpty ? "(no name)" : name }

    /// The origin of an item's web address — `https://host/` — or `nil` for a guid key or
    /// anything that is not an http(s) address. The same text as the model-4 migration's SQL
    /// (``siteSQL(_:)``): the scheme, `://`, everything up to the next `/`, and a `/`.
    static func site(of url: String) -> String? {
        guard let scheme = ["https://", "http://"].first(where: { url.hasPrefix($0) }) else { return nil }
        let rest = url.dropFirst(scheme.count)
        let host = rest.prefix { $0 != "/" }
        return host.isEmpty ? nil : scheme + host + "/"
    }

    /// ``site(of:)`` in SQL, of the text expression `url`.
    static func siteSQL(_ url: String) -> String {
        let rest = "substr(\(url), instr(\(url), '://') + 3)"
        let host = "CASE WHEN instr(\(rest), '/') > 0 THEN substr(\(rest), 1, instr(\(rest), '/') - 1) ELSE \(rest) END"
        return """
            CASE WHEN (substr(\(url), 1, 8) = 'https://' OR substr(\(url), 1, 7) = 'http://') AND \(host) <> '' \
            THEN substr(\(url), 1, instr(\(url), '://') + 2) || \(host) || '/' END
            """
    }
}
