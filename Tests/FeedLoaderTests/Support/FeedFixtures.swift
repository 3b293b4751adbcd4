import Foundation
@testable import FeedLoader

/// Feed documents in each format, with what they must import as.
enum Fixtures {
    /// 2025-06-13T10:00:00Z.
    static let tenUTC = Date(timeIntervalSince1970: 1_749_808_800)

    // MARK: RSS 2.0

    /// RSS 2.0 with namespaces (content, dc, media, atom), CDATA, character and entity
    /// references, RFC 822 dates in several zones, a relative link, a guid as link, and
    /// two malformed items.
    static let rss = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" \
        xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:media="http://search.yahoo.com/mrss/" \
        xmlns:atom="http://www.w3.org/2005/Atom">
        <channel>
          <title>Example &amp; Co News</title>
          <link>https://news.example.com/</link>
          <atom:link href="https://news.example.com/feed.xml" rel="self" type="application/rss+xml"/>
          <item>
            <title>Apple&#8217;s M5 chip &amp; the &lt;video&gt; element</title>
            <link>https://news.example.com/2025/06/13/m5</link>
            <description><![CDATA[<p>The <b>M5</b> is here &amp; it&rsquo;s fast.</p><script>alert("no")</script>]]></description>
            <pubDate>Fri, 13 Jun 2025 10:00:00 GMT</pubDate>
            <guid isPermaLink="false">tag:example,2025:m5</guid>
            <enclosure url="https://img.example.com/m5.jpg" length="1234" type="image/jpeg"/>
          </item>
          <item>
            <title>Relative link, +0200 zone</title>
            <link>/2025/06/13/relative</link>
            <description>Plain &amp;amp; double-escaped</description>
            <pubDate>Fri, 13 Jun 2025 12:30:00 +0200</pubDate>
            <media:thumbnail url="https://img.example.com/thumb.png"/>
          </item>
          <item>
            <title>  Guid as link,
               EST zone, no day name  </title>
            <guid>https://news.example.com/guid-link</guid>
            <pubDate>13 Jun 2025 06:00 EST</pubDate>
            <content:encoded><![CDATA[<div>Only content:encoded</div>]]></content:encoded>
            <source url="https://other.example.org/rss">Other Outlet</source>
          </item>
          <item>
            <description>No title: the summary stands in for it.</description>
            <link>https://news.example.com/untitled</link>
            <dc:date>2025-06-12T23:59:59Z</dc:date>
          </item>
          <item>
            <title>Bad date</title>
            <link>https://news.example.com/bad-date</link>
            <pubDate>Friday the 13th</pubDate>
          </item>
          <item>
            <title>No link</title>
            <pubDate>Fri, 13 Jun 2025 10:00:00 GMT</pubDate>
          </item>
        </channel>
        </rss>
        """

    /// What ``rss`` imports as, fetched from `base` (relative links resolve against it).
    static func rssItems(base: URL) -> [FeedItem] {
        [
            FeedItem(
                title: "Apple’s M5 chip & the <video> element", url: "https://news.example.com/2025/06/13/m5",
                published: tenUTC, summary: "The M5 is here & it’s fast.", source: "Example & Co News",
                imageURL: "https://img.example.com/m5.jpg"),
            FeedItem(
                title: "Relative link, +0200 zone", url: URL(string: "/2025/06/13/relative", relativeTo: base)!.absoluteString,
                published: tenUTC.addingTimeInterval(1_800), summary: "Plain & double-escaped", source: "Example & Co News",
                imageURL: "https://img.example.com/thumb.png"),
            FeedItem(
                title: "Guid as link, EST zone, no day name", url: "https://news.example.com/guid-link",
                published: tenUTC.addingTimeInterval(3_600), summary: "Only content:encoded", source: "Other Outlet",
                imageURL: nil),
            FeedItem(
                title: "No title: the summary stands in for it.", url: "https://news.example.com/untitled",
                published: Date(timeIntervalSince1970: 1_749_772_799), summary: "No title: the summary stands in for it.",
                source: "Example & Co News", imageURL: nil),
        ]
    }

    static let rssProblems = [
        #"item 5 ("Bad date", https://news.example.com/bad-date): <pubDate> is not an RFC 822 date: "Friday the 13th""#,
        #"item 6 ("No link"): <link> and <guid> are missing: nothing identifies the item from one import to the next"#,
    ]

    // MARK: Atom

    /// Atom under a prefix (`a:`), with `xml:base`, html and xhtml text constructs, CDATA,
    /// character references, RFC 3339 dates with offsets, fractions, a lower-case `t` and a
    /// space, and one malformed entry.
    static let atom = """
        <?xml version="1.0" encoding="utf-8"?>
        <a:feed xmlns:a="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" \
        xml:base="https://blog.example.net/">
          <a:title type="html">Six &amp;lt;Colors&amp;gt;</a:title>
          <a:id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</a:id>
          <a:updated>2025-06-13T10:00:00Z</a:updated>
          <a:entry>
            <a:title>Atom &amp; entities: caf&#233;</a:title>
            <a:link href="posts/one"/>
            <a:link rel="enclosure" type="image/png" href="https://blog.example.net/one.png"/>
            <a:id>tag:blog.example.net,2025:1</a:id>
            <a:published>2025-06-13T12:00:00.250+02:00</a:published>
            <a:updated>2025-06-14T00:00:00Z</a:updated>
            <a:summary type="html"><![CDATA[<p>CDATA <em>summary</em> &amp; more</p>]]></a:summary>
          </a:entry>
          <a:entry>
            <a:title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">XHTML <b>title</b></div></a:title>
            <a:link rel="alternate" type="application/pdf" href="https://blog.example.net/two.pdf"/>
            <a:link rel="alternate" type="text/html" href="https://blog.example.net/two"/>
            <a:id>https://blog.example.net/two-id</a:id>
            <a:updated>2025-06-13t08:00:00z</a:updated>
            <a:content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>First</p><p>Second</p></div></a:content>
            <a:source><a:title>Guest Blog</a:title></a:source>
            <media:thumbnail url="https://blog.example.net/two.jpg"/>
          </a:entry>
          <a:entry>
            <a:title>Id as link, no published</a:title>
            <a:id>https://blog.example.net/three</a:id>
            <a:updated>2025-06-13 09:00:00-00:00</a:updated>
          </a:entry>
          <a:entry>
            <a:title>Bad date</a:title>
            <a:link href="https://blog.example.net/bad"/>
            <a:updated>2025-06-31T10:00:00Z</a:updated>
          </a:entry>
        </a:feed>
        """

    static let atomItems = [
        FeedItem(
            title: "Atom & entities: café", url: "https://blog.example.net/posts/one",
            published: tenUTC.addingTimeInterval(0.25), summary: "CDATA summary & more", source: "Six <Colors>",
            imageURL: "https://blog.example.net/one.png"),
        FeedItem(
            title: "XHTML title", url: "https://blog.example.net/two", published: tenUTC.addingTimeInterval(-7_200),
            summary: "First Second", source: "Guest Blog", imageURL: "https://blog.example.net/two.jpg"),
        FeedItem(
            title: "Id as link, no published", url: "https://blog.example.net/three",
            published: tenUTC.addingTimeInterval(-3_600), summary: "", source: "Six <Colors>", imageURL: nil),
    ]

    static let atomProblems = [
        #"item 4 ("Bad date", https://blog.example.net/bad): <updated> is not an RFC 3339 date: "2025-06-31T10:00:00Z""#
    ]

    // MARK: JSON Feed 1.1

    /// JSON Feed 1.1: every way to give an address, a title, a date, a summary and a
    /// picture, and three malformed items (an item without a date is not one: see
    /// `FeedIdentityTests`).
    static let jsonFeed = """
        {
          "version": "https://jsonfeed.org/version/1.1",
          "title": "Daring Example",
          "home_page_url": "https://df.example.com/",
          "feed_url": "https://df.example.com/feed.json",
          "items": [
            {"id": "1", "url": "https://df.example.com/2025/06/one", "title": "JSON Feed one", "summary": "A summary.",
             "content_html": "<p>Not used: there is a summary</p>", "image": "https://df.example.com/one.jpg",
             "date_published": "2025-06-13T10:00:00Z"},
            {"id": "2", "url": "/2025/06/two", "content_html": "<p>Title-less post &mdash; a microblog entry.</p>",
             "date_published": "2025-06-13T09:00:00-07:00"},
            {"id": "https://df.example.com/three", "external_url": "https://elsewhere.example.org/story",
             "title": "Linked elsewhere", "content_text": "Text\\n\\nwith lines", "banner_image": "https://df.example.com/banner.png",
             "date_modified": "2025-06-12T10:00:00+00:00"},
            {"id": "4", "url": "https://df.example.com/four", "title": "Bad date", "date_published": "soon"},
            {"id": "5", "url": "ftp://df.example.com/five", "title": "Not the web", "date_published": "2025-06-13T10:00:00Z"},
            {"id": "6", "url": "https://df.example.com/six", "title": 6, "date_published": "2025-06-13T10:00:00Z"}
          ]
        }
        """

    static let jsonFeedItems = [
        FeedItem(
            title: "JSON Feed one", url: "https://df.example.com/2025/06/one", published: tenUTC, summary: "A summary.",
            source: "Daring Example", imageURL: "https://df.example.com/one.jpg"),
        FeedItem(
            title: "Title-less post — a microblog entry.", url: "https://df.example.com/2025/06/two",
            published: tenUTC.addingTimeInterval(6 * 3_600), summary: "Title-less post — a microblog entry.",
            source: "Daring Example", imageURL: nil),
        FeedItem(
            title: "Linked elsewhere", url: "https://elsewhere.example.org/story", published: tenUTC.addingTimeInterval(-86_400),
            summary: "Text with lines", source: "Daring Example", imageURL: "https://df.example.com/banner.png"),
    ]

    static let jsonFeedProblems = [
        #"item 4 ("Bad date", https://df.example.com/four): "date_published" is not an RFC 3339 date: "soon""#,
        #"item 5 ("Not the web"): "url" is not an http or https address: "ftp://df.example.com/five""#,
        #"item 6: "title" is not text, found the number 6"#,
    ]

    // MARK: Small feeds

    /// An RSS feed of the items numbered `range`, item `n` dated `n` × `spacing` seconds
    /// before `newest`.
    static func smallRSS(
        _ range: Range<Int>, newest: Date = tenUTC, spacing: TimeInterval = 3_600, title: (Int) -> String = { "Story \($0)" }
    ) -> String {
        let items = range.map { n in
            """
              <item><title>\(title(n))</title><link>https://example.com/story/\(n)</link>\
            <description>Summary \(n)</description>\
            <pubDate>\(rfc822(newest.addingTimeInterval(Double(-n) * spacing)))</pubDate></item>
            """
        }
        return """
            <?xml version="1.0"?>
            <rss version="2.0"><channel><title>Small</title>
            \(items.joined(separator: "\n"))
            </channel></rss>
            """
    }

    /// `Fri, 13 Jun 2025 10:00:00 GMT`.
    static func rfc822(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
