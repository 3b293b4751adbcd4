import Foundation

/// Reads RSS 2.0 (and RSS 1.0) and Atom from an ``XMLTree``.
///
/// Elements are matched by namespace and local name, so any prefix works (`<atom:feed>`,
/// `<dc:date>`). Text is taken as the document gives it — CDATA sections and character
/// references decoded — then made plain: summaries lose their HTML, titles their line
/// breaks. Relative links resolve against `xml:base` and the feed's own address.
enum XMLFeedReader {
    typealias Element = XMLTree.Element
    typealias Namespace = XMLTree.Namespace

    /// The items of an RSS or Atom document. A feed without items — `<rss/>`, a `<channel>`
    /// or an Atom `<feed>` without any — is a feed of 0 items.
    /// - Throws: ``FeedLoaderError/notAFeed(source:found:)`` when the root is neither.
    static func read(_ root: Element, source: String, baseURL: URL?) throws -> ParsedFeed {
        switch (root.name, root.namespace) {
        case ("rss", _):
            // `<rss></rss>`: a feed with nothing in it yet.
            let channel = root.child("channel", in: root.namespace)
            return rss(
                channel: channel, items: channel?.children("item", in: root.namespace) ?? [], base: baseURL,
                feedKey: fallbackKey(source: source, baseURL: baseURL))
        case ("RDF", Namespace.rdf):
            let channel = root.child("channel", in: Namespace.rss10)
            return rss(
                channel: channel, items: root.children("item", in: Namespace.rss10), base: baseURL,
                feedKey: fallbackKey(source: source, baseURL: baseURL))
        case ("feed", Namespace.atom), ("feed", Namespace.atom03), ("feed", ""):
            return atom(feed: root, base: baseURL, feedKey: fallbackKey(source: source, baseURL: baseURL))
        default:
            let prefix = root.namespace.isEmpty ? "" : " (namespace \(root.namespace))"
            throw FeedLoaderError.notAFeed(source: source, found: "an XML document whose root element is <\(root.name)>\(prefix)")
        }
    }

    /// What identifies a feed that names itself neither by address nor by title: the
    /// address it was fetched from, else its source (a file's path).
    static func fallbackKey(source: String, baseURL: URL?) -> String {
        baseURL?.absoluteString ?? source
    }

    // MARK: RSS

    /// RSS: `title`, `link` (else a permalink `guid`; else the `guid` identifies an item
    /// without an address, with the channel's `link` or title), `pubDate` (RFC 822; else
    /// `dc:date`, RFC 3339; else none: the time of import), `description` (else
    /// `content:encoded`), `source` (else the channel's title), and a picture from
    /// `enclosure`, `media:content` or `media:thumbnail`.
    static func rss(channel: Element?, items: [Element], base: URL?, feedKey: String = "") -> ParsedFeed {
        let ns = channel?.namespace ?? ""
        let channelTitle = channel?.child("title", in: ns)?.trimmedText.map { HTMLText.collapse(HTMLText.decode($0)) }
        let feedKey = channel?.child("link", in: ns)?.trimmedText ?? channelTitle ?? feedKey
        let base = resolveBase(channel, against: base)
        var parsed = ParsedFeed(items: [], problems: [], total: items.count)
        for (index, element) in items.enumerated() {
            switch rssItem(
                element, ns: ns, channelTitle: channelTitle, feedKey: feedKey, base: resolveBase(element, against: base))
            {
            case .success(let item): parsed.items.append((index, item))
            case .failure(var problem):
                problem.index = index
                parsed.problems.append(problem)
            }
        }
        return parsed
    }

    private static func rssItem(
        _ item: Element, ns: String, channelTitle: String?, feedKey: String, base: URL?
    ) -> Result<FeedItem, ItemProblem> {
        // RSS titles are plain text, but feeds escape HTML in them: decode, do not strip.
        let title = item.child("title", in: ns)?.trimmedText.map { HTMLText.collapse(HTMLText.decode($0)) }
        let rawLink = item.child("link", in: ns)?.trimmedText
        var url = FeedItemBuilder.webAddress(rawLink, base: base)
        if url == nil, rawLink == nil {
            // A guid is the item's address unless it says isPermaLink="false".
            if let guid = item.child("guid", in: ns), guid.attributes["isPermaLink"]?.lowercased() != "false" {
                url = FeedItemBuilder.webAddress(guid.trimmedText, base: base)
            }
            if url == nil { url = atomLink(in: item, base: base) }
        }
        func fail(_ reason: String) -> Result<FeedItem, ItemProblem> {
            .failure(ItemProblem(index: 0, title: title, url: url ?? rawLink, reason: reason))
        }
        if let rawLink, url == nil {
            return fail("<link> is not an http or https address: \"\(rawLink.truncated(to: 80))\"")
        }
        let guid = url == nil ? item.child("guid", in: ns)?.trimmedText : nil
        guard let address = url ?? guid.map({ FeedItem.guidKey(feed: feedKey, guid: $0) }) else {
            return fail("<link> and <guid> are missing: nothing identifies the item from one import to the next")
        }

        let description =
            item.child("description", in: ns)?.trimmedText ?? item.child("encoded", in: Namespace.content)?.trimmedText
        let summary = FeedItemBuilder.summary(description.map(HTMLText.plain) ?? "")
        guard let shownTitle = FeedItemBuilder.title(title, summary: summary) else {
            return fail("<title> is missing (and there is no <description> to make one from)")
        }

        var published = FeedItemBuilder.importTime()
        var undated = false
        if let text = item.child("pubDate", in: ns)?.trimmedText {
            // Some feeds write ISO dates in pubDate: read them too.
            guard let date = FeedDate.rfc822(text) ?? FeedDate.rfc3339(text) else {
                return fail("<pubDate> is not an RFC 822 date: \"\(text.truncated(to: 40))\"")
            }
            published = date
        } else if let text = item.child("date", in: Namespace.dublinCore)?.trimmedText {
            guard let date = FeedDate.rfc3339(text) else {
                return fail("<dc:date> is not an RFC 3339 date: \"\(text.truncated(to: 40))\"")
            }
            published = date
        } else {
            undated = true
        }

        let itemSource = item.child("source", in: ns)?.trimmedText.map { HTMLText.collapse(HTMLText.decode($0)) }
        return .success(
            FeedItem(
                title: shownTitle, url: address, published: published, summary: summary,
                source: FeedItemBuilder.source(itemSource ?? channelTitle, url: address), imageURL: image(in: item, base: base),
                guid: guid, undated: undated))
    }

    /// An `<atom:link rel="alternate">` inside an RSS item, which some feeds use.
    private static func atomLink(in item: Element, base: URL?) -> String? {
        for link in item.children("link", in: Namespace.atom) where (link.attributes["rel"] ?? "alternate") == "alternate" {
            if let href = FeedItemBuilder.webAddress(link.attributes["href"], base: base) { return href }
        }
        return nil
    }

    // MARK: Atom

    /// Atom: `title` (a text construct), the `alternate` `link` (else an `id` that is a web
    /// address; else the `id` identifies an entry without an address, with the feed's
    /// `id` or title), `published` (else `updated`, RFC 3339; else none: the time of
    /// import), `summary` (else `content`), the entry's `source` title (else the feed's
    /// title), and a picture from an `enclosure` link or `media:thumbnail`.
    static func atom(feed: Element, base: URL?, feedKey: String = "") -> ParsedFeed {
        let ns = feed.namespace
        let feedTitle = feed.child("title", in: ns).flatMap(textConstruct)
        let feedKey = feed.child("id", in: ns)?.trimmedText ?? feedTitle ?? feedKey
        let base = resolveBase(feed, against: base)
        let entries = feed.children("entry", in: ns)
        var parsed = ParsedFeed(items: [], problems: [], total: entries.count)
        for (index, element) in entries.enumerated() {
            switch atomEntry(element, ns: ns, feedTitle: feedTitle, feedKey: feedKey, base: resolveBase(element, against: base))
            {
            case .success(let item): parsed.items.append((index, item))
            case .failure(var problem):
                problem.index = index
                parsed.problems.append(problem)
            }
        }
        return parsed
    }

    private static func atomEntry(
        _ entry: Element, ns: String, feedTitle: String?, feedKey: String, base: URL?
    ) -> Result<FeedItem, ItemProblem> {
        let title = entry.child("title", in: ns).flatMap(textConstruct)
        let links = entry.children("link", in: ns)
        let alternates = links.filter { ($0.attributes["rel"] ?? "alternate") == "alternate" }
        // A web page first (type text/html or none), then any alternate.
        let preferred =
            alternates.filter { ($0.attributes["type"] ?? "text/html").lowercased().contains("html") } + alternates
        var url: String?
        var rawLink: String?
        for link in preferred {
            let href = link.attributes["href"]
            if rawLink == nil { rawLink = href }
            if let address = FeedItemBuilder.webAddress(href, base: resolveBase(link, against: base)) {
                url = address
                break
            }
        }
        let id = entry.child("id", in: ns)?.trimmedText
        if url == nil, rawLink == nil { url = FeedItemBuilder.webAddress(id, base: nil) }
        func fail(_ reason: String) -> Result<FeedItem, ItemProblem> {
            .failure(ItemProblem(index: 0, title: title, url: url ?? rawLink, reason: reason))
        }
        if let rawLink, url == nil {
            return fail("<link href> is not an http or https address: \"\(rawLink.truncated(to: 80))\"")
        }
        let guid = url == nil ? id : nil
        guard let address = url ?? guid.map({ FeedItem.guidKey(feed: feedKey, guid: $0) }) else {
            return fail("<link rel=\"alternate\"> and <id> are missing: nothing identifies the entry from one import to the next")
        }

        let summaryText = entry.child("summary", in: ns).flatMap(textConstruct) ?? entry.child("content", in: ns).flatMap(content)
        let summary = FeedItemBuilder.summary(summaryText ?? "")
        guard let shownTitle = FeedItemBuilder.title(title, summary: summary) else {
            return fail("<title> is missing (and there is no <summary> to make one from)")
        }

        let dateElement = entry.child("published", in: ns) ?? entry.child("updated", in: ns) ?? entry.child("issued", in: ns)
        var published = FeedItemBuilder.importTime()
        let undated = dateElement?.trimmedText == nil
        if let dateElement, let dateText = dateElement.trimmedText {
            guard let date = FeedDate.rfc3339(dateText) else {
                return fail("<\(dateElement.name)> is not an RFC 3339 date: \"\(dateText.truncated(to: 40))\"")
            }
            published = date
        }

        let entrySource = entry.child("source", in: ns)?.child("title", in: ns).flatMap(textConstruct)
        var image: String?
        for link in links where link.attributes["rel"] == "enclosure" && isImage(link.attributes["type"], link.attributes["href"])
        {
            image = FeedItemBuilder.webAddress(link.attributes["href"], base: base)
            if image != nil { break }
        }
        return .success(
            FeedItem(
                title: shownTitle, url: address, published: published, summary: summary,
                source: FeedItemBuilder.source(entrySource ?? feedTitle, url: address),
                imageURL: image ?? self.image(in: entry, base: base), guid: guid, undated: undated))
    }

    /// An Atom text construct as plain text: `type="html"` loses its markup, `xhtml` keeps
    /// the text of its elements, `text` is as written; `nil` when empty.
    static func textConstruct(_ element: Element) -> String? {
        let type = element.attributes["type"]?.lowercased() ?? "text"
        let text: String
        switch type {
        case "html", "text/html": text = HTMLText.plain(element.allText)
        case "xhtml", "application/xhtml+xml": text = HTMLText.collapse(xhtmlText(element))
        default: text = HTMLText.collapse(element.allText)
        }
        return text.isEmpty ? nil : text
    }

    /// The text of inline XHTML, with a space where a block (a paragraph, a list item)
    /// begins or ends, so that `<p>One</p><p>Two</p>` reads `One Two`.
    static func xhtmlText(_ element: Element) -> String {
        element.content.map { part in
            switch part {
            case .text(let text): text
            case .element(let child):
                HTMLText.isBlock(child.name.lowercased()) ? " " + xhtmlText(child) + " " : xhtmlText(child)
            }
        }.joined()
    }

    /// An Atom `content`: a text construct, unless it points elsewhere (`src`) or is not
    /// text (a media type other than text or XML).
    private static func content(_ element: Element) -> String? {
        guard element.attributes["src"] == nil else { return nil }
        let type = element.attributes["type"]?.lowercased() ?? "text"
        guard ["text", "html", "xhtml"].contains(type) || type.hasPrefix("text/") || type.hasSuffix("xml") else { return nil }
        return textConstruct(element)
    }

    // MARK: Shared

    /// A picture for the item: an image `enclosure`, then `media:content`, then
    /// `media:thumbnail` (also inside a `media:group`).
    private static func image(in item: Element, base: URL?) -> String? {
        for enclosure in item.children("enclosure", in: item.namespace)
        where isImage(enclosure.attributes["type"], enclosure.attributes["url"]) {
            if let url = FeedItemBuilder.webAddress(enclosure.attributes["url"], base: base) { return url }
        }
        let groups = [item] + item.children("group", in: Namespace.media)
        for group in groups {
            for media in group.children("content", in: Namespace.media)
            where media.attributes["medium"] == "image" || isImage(media.attributes["type"], media.attributes["url"]) {
                if let url = FeedItemBuilder.webAddress(media.attributes["url"], base: base) { return url }
            }
        }
        for group in groups {
            for thumbnail in group.children("thumbnail", in: Namespace.media) {
                if let url = FeedItemBuilder.webAddress(thumbnail.attributes["url"], base: base) { return url }
            }
        }
        return nil
    }

    /// Whether a media type (or, without one, an address's extension) is a picture's.
    private static func isImage(_ type: String?, _ address: String?) -> Bool {
        if let type { return type.lowercased().hasPrefix("image/") }
        let path = address.flatMap { URL(string: $0)?.path.lowercased() } ?? ""
        return [".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif"].contains { path.hasSuffix($0) }
    }

    /// `base` changed by the element's `xml:base`, if it has one.
    private static func resolveBase(_ element: Element?, against base: URL?) -> URL? {
        guard let value = element?.attributes["xml:base"] ?? element?.attributes["base"], !value.isEmpty else { return base }
        return URL(string: value, relativeTo: base)?.absoluteURL ?? base
    }
}
