import Foundation

/// Reads a JSON Feed (version 1.1, and 1.0, https://www.jsonfeed.org/version/1.1/).
///
/// An item's `title` is its title (or, for a title-less post, the start of its text);
/// `url` (else `external_url`, else an `id` that is a web address) its address — an item
/// without one is identified by its `id`, with the feed's `feed_url`, `home_page_url` or
/// title; `date_published` (else `date_modified`, RFC 3339; else none: the time of
/// import) its date; `summary` (else
/// `content_text`, else `content_html` as plain text) its summary; `image` (else
/// `banner_image`) its picture. The feed's `title` is every item's source. Relative
/// addresses resolve against the feed's own address.
enum JSONFeedReader {
    /// Whether a JSON object is a JSON Feed: its `version` is a jsonfeed.org address.
    static func isJSONFeed(_ object: [String: Any]) -> Bool {
        guard let version = object["version"] as? String else { return false }
        return version.hasPrefix("https://jsonfeed.org/version/") || version.hasPrefix("http://jsonfeed.org/version/")
    }

    static func read(_ object: [String: Any], source: String, baseURL: URL?) throws -> ParsedFeed {
        guard let list = object["items"] as? [Any] else {
            let found = object["items"].map { "a JSON Feed whose \"items\" is \(FeedParser.describe($0))" }
            throw FeedLoaderError.notAFeed(source: source, found: found ?? "a JSON Feed without an \"items\" list")
        }
        let feedTitle = (object["title"] as? String).map(HTMLText.collapse)
        let base = (object["feed_url"] as? String).flatMap { URL(string: $0, relativeTo: baseURL) } ?? baseURL
        let feedKey =
            [object["feed_url"], object["home_page_url"], object["title"]].lazy.compactMap { $0 as? String }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.first { !$0.isEmpty }
            ?? XMLFeedReader.fallbackKey(source: source, baseURL: baseURL)
        var parsed = ParsedFeed(items: [], problems: [], total: list.count)
        for (index, element) in list.enumerated() {
            switch item(element, feedTitle: feedTitle, feedKey: feedKey, base: base) {
            case .success(let item): parsed.items.append((index, item))
            case .failure(var problem):
                problem.index = index
                parsed.problems.append(problem)
            }
        }
        return parsed
    }

    private static func item(_ element: Any, feedTitle: String?, feedKey: String, base: URL?) -> Result<FeedItem, ItemProblem> {
        guard let object = element as? [String: Any] else {
            return .failure(ItemProblem(index: 0, reason: "expected an object, found \(FeedParser.describe(element))"))
        }
        var title: String?
        var url: String?
        func fail(_ reason: String) -> Result<FeedItem, ItemProblem> {
            .failure(ItemProblem(index: 0, title: title, url: url, reason: reason))
        }
        /// The text of `key`; a failure when it is there but not text.
        func text(_ key: String) -> Result<String?, ItemProblem> {
            guard let raw = object[key], !(raw is NSNull) else { return .success(nil) }
            guard let value = raw as? String else {
                return .failure(
                    ItemProblem(
                        index: 0, title: title, url: url, reason: "\"\(key)\" is not text, found \(FeedParser.describe(raw))"))
            }
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            return .success(trimmed.isEmpty ? nil : trimmed)
        }
        do throws(ItemProblem) {
            title = try text("title").get().map(HTMLText.collapse)
            let rawURL = try text("url").get()
            let external = try text("external_url").get()
            // JSON Feed 1.0 allowed a number as `id`.
            let id = object["id"].flatMap { $0 is NSNull ? nil : "\($0)".trimmingCharacters(in: .whitespacesAndNewlines) }
                .flatMap { $0.isEmpty ? nil : $0 }
            url = FeedItemBuilder.webAddress(rawURL, base: base) ?? FeedItemBuilder.webAddress(external, base: base)
            if url == nil, rawURL == nil, external == nil { url = FeedItemBuilder.webAddress(id, base: nil) }
            if url == nil {
                if let rawURL { return fail("\"url\" is not an http or https address: \"\(rawURL.truncated(to: 80))\"") }
                if let external {
                    return fail("\"external_url\" is not an http or https address: \"\(external.truncated(to: 80))\"")
                }
            }
            let guid = url == nil ? id : nil
            guard let address = url ?? guid.map({ FeedItem.guidKey(feed: feedKey, guid: $0) }) else {
                return fail("\"url\" and \"id\" are missing: nothing identifies the item from one import to the next")
            }
            url = address

            let summaryField = try text("summary").get().map(HTMLText.collapse)
            let contentText = try text("content_text").get().map(HTMLText.collapse)
            let contentHTML = try text("content_html").get().map(HTMLText.plain)
            let summary = FeedItemBuilder.summary(summaryField ?? contentText ?? contentHTML ?? "")
            guard let shownTitle = FeedItemBuilder.title(title, summary: summary) else {
                return fail("\"title\" is missing (and there is no summary or content to make one from)")
            }

            let hasPublished = object["date_published"].map { !($0 is NSNull) } ?? false
            let dateKey = hasPublished ? "date_published" : "date_modified"
            var published = FeedItemBuilder.importTime()
            let dateText = try text(dateKey).get()
            if let dateText {
                guard let date = FeedDate.rfc3339(dateText) else {
                    return fail("\"\(dateKey)\" is not an RFC 3339 date: \"\(dateText.truncated(to: 40))\"")
                }
                published = date
            }

            let image = try text("image").get()
            let banner = try text("banner_image").get()
            let picture = FeedItemBuilder.webAddress(image, base: base) ?? FeedItemBuilder.webAddress(banner, base: base)
            return .success(
                FeedItem(
                    title: shownTitle, url: address, published: published, summary: summary,
                    source: FeedItemBuilder.source(feedTitle, url: address), imageURL: picture, guid: guid,
                    undated: dateText == nil))
        } catch {
            return .failure(error)
        }
    }
}
