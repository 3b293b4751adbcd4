import Foundation

/// A feed item that could not be imported, and why.
struct ItemProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The item's position in the feed, from 0.
    var index: Int
    /// The item's title, when it has a readable one.
    var title: String?
    /// The item's url, when it has a readable one.
    var url: String?
    /// What is wrong.
    var reason: String

    /// `item 3 ("Apple releases…", https://…): "published" is missing`
    var description: String {
        var names: [String] = []
        if let title, !title.isEmpty { names.append("\"\(title.truncated(to: 60))\"") }
        if let url, !url.isEmpty { names.append(url) }
        let named = names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"
        return "item \(index + 1)\(named): \(reason)"
    }
}

/// What a feed document holds: the valid items, in feed order, and the invalid ones.
struct ParsedFeed: Sendable, Equatable {
    /// Valid items with their position in the feed.
    var items: [(index: Int, item: FeedItem)]
    /// Items that were skipped, with the reason.
    var problems: [ItemProblem]
    /// How many items there were in all.
    var total: Int

    static func == (lhs: ParsedFeed, rhs: ParsedFeed) -> Bool {
        lhs.items.map(\.index) == rhs.items.map(\.index) && lhs.items.map(\.item) == rhs.items.map(\.item)
            && lhs.problems == rhs.problems && lhs.total == rhs.total
    }
}

/// Reads feed JSON, item by item, so that one bad item does not cost the others.
///
/// A feed is a JSON array of items, or an object whose `items` is one. An item is an
/// object with `title` and `url` (http or https) and `published` (ISO 8601), and
/// optionally `summary`, `source` (by default the url's host) and `imageURL`
/// (`image_url` and `imageUrl` are read too). An item `export` wrote for an item
/// identified by its guid has a `guid:` key as `url` and its `guid`; `undated: true` marks
/// an item whose feed gave no date. Unknown keys are ignored.
///
/// `parse(_:source:)` given a ``FeedDocument`` reads any feed FeedLoader knows: this
/// JSON, a JSON Feed 1.1, RSS 2.0 (and 1.0) or Atom, told apart by content type and
/// content (see `FeedParser+Formats.swift`).
enum FeedParser {
    /// Reads FeedLoader's own JSON: a list of items, or an object with an `items` list.
    static func parse(_ data: Data, source: String) throws -> ParsedFeed {
        try parseItems(json(data, source: source), source: source)
    }

    /// The JSON value of `data`.
    /// - Throws: ``FeedLoaderError/malformedJSON(source:line:column:detail:)`` naming where it breaks.
    static func json(_ data: Data, source: String) throws -> Any {
        do {
            return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw malformed(data, source: source, error: error)
        }
    }

    /// Reads FeedLoader's own JSON from its parsed value.
    static func parseItems(_ root: Any, source: String) throws -> ParsedFeed {
        let list: [Any]
        if let array = root as? [Any] {
            list = array
        } else if let object = root as? [String: Any], let array = object["items"] as? [Any] {
            list = array
        } else {
            throw FeedLoaderError.notAFeed(source: source, found: describe(root))
        }
        var parsed = ParsedFeed(items: [], problems: [], total: list.count)
        for (index, element) in list.enumerated() {
            switch item(element) {
            case .success(let item): parsed.items.append((index, item))
            case .failure(let problem):
                var problem = problem
                problem.index = index
                parsed.problems.append(problem)
            }
        }
        return parsed
    }

    /// Encodes items as a feed document (a JSON array), as `export` writes them.
    static func encode(_ items: [FeedItem]) throws -> Data {
        try encoder.encode(items)
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    // MARK: Items

    private static func item(_ element: Any) -> Result<FeedItem, ItemProblem> {
        guard let object = element as? [String: Any] else {
            return .failure(ItemProblem(index: 0, reason: "expected an object, found \(describe(element))"))
        }
        let title = (object["title"] as? String)?.trimmingCharacters(in: .whitespacesAndNewlines)
        let url = (object["url"] as? String)?.trimmingCharacters(in: .whitespacesAndNewlines)
        func fail(_ reason: String) -> Result<FeedItem, ItemProblem> {
            .failure(ItemProblem(index: 0, title: title, url: url, reason: reason))
        }
        guard let rawTitle = object["title"], !(rawTitle is NSNull) else { return fail("\"title\" is missing") }
        guard let title else { return fail("\"title\" is not text, found \(describe(rawTitle))") }
        guard !title.isEmpty else { return fail("\"title\" is empty") }

        guard let rawURL = object["url"], !(rawURL is NSNull) else { return fail("\"url\" is missing") }
        guard let url else { return fail("\"url\" is not text, found \(describe(rawURL))") }
        // An item identified by its guid, as `export` writes it: its key and its guid.
        let guid = (object["guid"] as? String).flatMap { FeedItem.isGuidKey(url) && !$0.isEmpty ? $0 : nil }
        guard let host = webHost(url) ?? guid.map({ _ in "" }) else {
            return fail("\"url\" is not an http or https address: \"\(url.truncated(to: 80))\"")
        }

        guard let rawPublished = object["published"], !(rawPublished is NSNull) else { return fail("\"published\" is missing") }
        guard let publishedText = rawPublished as? String else {
            return fail("\"published\" is not text, found \(describe(rawPublished))")
        }
        guard let published = parseDate(publishedText) else {
            return fail("\"published\" is not an ISO 8601 date: \"\(publishedText.truncated(to: 40))\"")
        }

        var summary = ""
        if let raw = object["summary"], !(raw is NSNull) {
            guard let text = raw as? String else { return fail("\"summary\" is not text, found \(describe(raw))") }
            summary = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var source = host.hasPrefix("www.") ? String(host.dropFirst(4)) : host
        if let raw = object["source"], !(raw is NSNull) {
            guard let text = raw as? String else { return fail("\"source\" is not text, found \(describe(raw))") }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.isEmpty { source = trimmed }
        }
        var imageURL: String?
        for key in ["imageURL", "image_url", "imageUrl"] {
            guard let raw = object[key], !(raw is NSNull) else { continue }
            guard let text = raw as? String else { return fail("\"\(key)\" is not text, found \(describe(raw))") }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty { continue }
            guard webHost(trimmed) != nil else {
                return fail("\"\(key)\" is not an http or https address: \"\(trimmed.truncated(to: 80))\"")
            }
            imageURL = trimmed
            break
        }
        return .success(
            FeedItem(
                title: title, url: url, published: published, summary: summary, source: source, imageURL: imageURL, guid: guid,
                undated: object["undated"] as? Bool == true))
    }

    /// The host of an http(s) URL, or `nil`.
    static func webHost(_ text: String) -> String? {
        guard let components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else { return nil }
        return host
    }

    /// ISO 8601, with or without fractional seconds, `Z` or an offset; a plain date
    /// (`2025-06-13`) is midnight UTC.
    static func parseDate(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let date = try? Date(trimmed, strategy: .iso8601) { return date }
        if let date = try? Date(trimmed, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        if let date = try? Date(trimmed, strategy: Date.ISO8601FormatStyle().year().month().day()) { return date }
        return nil
    }

    // MARK: Messages

    /// A JSON value in words, for messages: `the number 42`, `an object`.
    static func describe(_ value: Any) -> String {
        switch value {
        case is NSNull: "null"
        case is [Any]: "a list"
        case is [String: Any]: "an object"
        case let string as String: "the text \"\(string.truncated(to: 30))\""
        case let number as NSNumber:
            // JSONSerialization gives booleans as NSNumber too.
            String(cString: number.objCType) == "c" ? (number.boolValue ? "true" : "false") : "the number \(number)"
        default: "\(type(of: value))"
        }
    }

    /// Turns JSONSerialization's "around character N" into a line and a column.
    private static func malformed(_ data: Data, source: String, error: any Error) -> FeedLoaderError {
        let debug = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
        var offset = data.count
        if let range = debug.range(of: #"character (\d+)"#, options: .regularExpression),
            let number = Int(debug[range].split(separator: " ").last ?? "")
        {
            offset = min(number, data.count)
        }
        var line = 1, column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        var detail = debug
        if let around = detail.range(of: #" around (line \d+, column \d+|character \d+)"#, options: .regularExpression) {
            detail.removeSubrange(around)
        }
        detail = detail.trimmingCharacters(in: CharacterSet(charactersIn: ". "))
        if offset < data.count,
            let found = String(bytes: data[data.index(data.startIndex, offsetBy: offset)...].prefix(1), encoding: .utf8)
        {
            detail += ", found \"\(found)\""
        }
        if data.isEmpty { detail = "the file is empty" }
        return .malformedJSON(source: source, line: line, column: column, detail: detail)
    }
}

extension String {
    /// The string cut to `length` characters, with an ellipsis when cut.
    func truncated(to length: Int) -> String {
        guard count > length else { return self }
        return String(prefix(max(0, length - 1))) + "…"
    }
}
