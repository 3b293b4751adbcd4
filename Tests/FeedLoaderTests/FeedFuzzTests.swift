import Foundation
import Testing
@testable import FeedLoader

/// Valid feeds, mutated at random — bytes flipped, cut short, `<`, `&` and NUL inserted,
/// huge entity-like text, deep nesting, entity bombs, other encodings and declarations —
/// are read without a crash or a hang: each is a feed or a ``FeedLoaderError``. The seed
/// is fixed, so a failure repeats; the case that failed is in the message.
@Suite("Fuzzing the feed readers")
struct FeedFuzzTests {
    /// SplitMix64: small, fast and the same everywhere.
    struct Random: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let guidRSS = """
        <?xml version="1.0" encoding="ISO-8859-1"?>
        <rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>G</title>
        <item><title>Guid</title><guid isPermaLink="false">g-1</guid><dc:date>2025-06-13T10:00:00Z</dc:date></item>
        <item><title>Undated &amp; &#233;</title><link>https://example.com/u</link><description><![CDATA[<p>x</p>]]></description></item>
        </channel></rss>
        """

    static let rdf = """
        <?xml version="1.0"?>
        <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
        <channel rdf:about="https://example.com/"><title>R</title></channel>
        <item rdf:about="https://example.com/r1"><title>R1</title><link>https://example.com/r1</link></item>
        </rdf:RDF>
        """

    static let ownJSON = """
        [{"title": "A", "url": "https://example.com/a", "published": "2025-06-13T10:00:00Z", "summary": "s"},
         {"title": "B", "url": "guid:x b", "guid": "b", "published": "2025-06-13T10:00:00Z", "undated": true}]
        """

    static let xmlSeeds = [Fixtures.rss, Fixtures.atom, guidRSS, rdf, Fixtures.smallRSS(0..<3)]
    static let jsonSeeds = [Fixtures.jsonFeed, ownJSON]

    static let encodingNames =
        Array(EncodingLabels.standard.keys).sorted() + Array(EncodingLabels.aliases.keys).sorted() + [
            "UTF-32", "UCS-4", "x-bogus", "EBCDIC-CP-US", "",
        ]

    /// One random change to `bytes`.
    static func mutate(_ bytes: inout [UInt8], _ random: inout Random) -> Int {
        let kind = Int.random(in: 0..<15, using: &random)
        defer { _ = kind }
        func position() -> Int { bytes.isEmpty ? 0 : Int.random(in: 0...bytes.count, using: &random) }
        func insert(_ inserted: [UInt8]) { bytes.insert(contentsOf: inserted, at: position()) }
        switch kind {
        case 0:
            for _ in 0..<Int.random(in: 1...8, using: &random) where !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            }
        case 1: bytes.removeLast(bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random))
        case 2: for _ in 0..<Int.random(in: 1...5, using: &random) { insert(Array("<".utf8)) }
        case 3: for _ in 0..<Int.random(in: 1...5, using: &random) { insert(Array("&".utf8)) }
        case 4: for _ in 0..<Int.random(in: 1...3, using: &random) { insert([0]) }
        case 5:
            let length = Int.random(in: 1_000...50_000, using: &random)
            let body =
                Bool.random(using: &random) ? String(repeating: "a", count: length) : "#" + String(repeating: "9", count: length)
            insert(Array(("&" + body + ";").utf8))
        case 6:
            let depth = Int.random(in: 50...3_000, using: &random)
            let open = ["<a>", "[", "{\"a\":", "<x:y xmlns:x='u'>"].randomElement(using: &random)!
            insert(Array(String(repeating: open, count: depth).utf8))
        case 7: bytes = reencode(bytes, &random)
        case 8:
            // Another declaration, with any encoding name (or none at all).
            let name = encodingNames.randomElement(using: &random)!
            let declaration = #"<?xml version="1.0" encoding="\#(name)"?>"#
            if let end = bytes.firstIndex(of: UInt8(ascii: ">")), bytes.starts(with: Array("<?xml".utf8)) {
                bytes.replaceSubrange(...end, with: Array(declaration.utf8))
            } else {
                bytes.insert(contentsOf: Array(declaration.utf8), at: 0)
            }
        case 9:
            guard bytes.count > 2 else { return kind }
            let start = Int.random(in: 0..<bytes.count - 1, using: &random)
            let end = Int.random(in: start...min(bytes.count - 1, start + 500), using: &random)
            if Bool.random(using: &random) { bytes.removeSubrange(start...end) } else { insert(Array(bytes[start...end])) }
        case 10: insert((0..<Int.random(in: 1...16, using: &random)).map { _ in UInt8.random(in: 0x80...0xFF, using: &random) })
        case 11:
            // Entities that refer to entities, ten times each: a billion laughs.
            var doctype = "<!DOCTYPE rss [<!ENTITY l0 \"lol\">"
            for level in 1...9 { doctype += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">" }
            doctype += "]>"
            let at = bytes.starts(with: Array("<?xml".utf8)) ? (bytes.firstIndex(of: UInt8(ascii: ">")).map { $0 + 1 } ?? 0) : 0
            bytes.insert(contentsOf: Array(doctype.utf8), at: at)
            insert(Array("&l9;".utf8))
        case 12:
            let first =
                [
                    [0x00, 0x00, 0x00, 0x3C], [0x3C, 0x00, 0x00, 0x00], [0x00, 0x00, 0x3C, 0x00], [0x00, 0x3C, 0x00, 0x00],
                    [0x4C, 0x6F, 0xA7, 0x94], [0xFE, 0xFF], [0xFF, 0xFE], [0xEF, 0xBB, 0xBF], [0x00, 0x00, 0xFE, 0xFF],
                    [0xFF, 0xFE, 0x00, 0x00], [0x2B, 0x2F, 0x76],
                ] as [[UInt8]]
            bytes.insert(contentsOf: first.randomElement(using: &random)!, at: 0)
        case 13:
            // Declarations whose absent parts FoundationXML read as null pointers.
            let declarations = Self.crashingDeclarations.shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random))
            let doctype = "<!DOCTYPE rss [" + declarations.joined() + "]>"
            let at = bytes.starts(with: Array("<?xml".utf8)) ? (bytes.firstIndex(of: UInt8(ascii: ">")).map { $0 + 1 } ?? 0) : 0
            bytes.insert(contentsOf: Array(doctype.utf8), at: min(at, bytes.count))
        default:
            let snippets = [
                "]]>", "<![CDATA[", "<!--", "-->", "&#0;", "&#xD800;", "&nbsp;", "</item>", "<item>", "\"", "'", "?>",
                "<?xml version='1.0' encoding='UTF-32'?>", "\u{FEFF}", "\u{1F600}", "xmlns:a='", "\\u0000", "\\ud800", "null",
                "1e999999",
            ]
            insert(Array(snippets.randomElement(using: &random)!.utf8))
        }
        return kind
    }

    /// Each crashed FoundationXML (a null pointer read as a string), in a document's type
    /// or, for the instruction, anywhere.
    static let crashingDeclarations = [
        "<!ATTLIST rss x CDATA #IMPLIED>", #"<!NOTATION n SYSTEM "n">"#, #"<!NOTATION n PUBLIC "p">"#,
        #"<!ENTITY e SYSTEM "x" NDATA n>"#, #"<!ENTITY % p "<!ATTLIST rss y CDATA #IMPLIED>"> %p;"#, "<?pi?>",
        #"<!ENTITY lt2 "&#60;?pi?>">"#, #"<!ENTITY nbsp "&#160;">"#, "<!-- a comment -->", "<!ELEMENT rss ANY>",
    ]

    @Test(arguments: crashingDeclarations)
    func declarationsThatCrashedFoundationXMLAreLeftOut(declaration: String) throws {
        let rss = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [
              \(declaration)
              <!ENTITY nbsp "&#160;">
            ]>
            <rss version="2.0"><?empty?><channel><title>T</title>
            <item><title>A&nbsp;B<?x?></title><link>https://example.com/a</link></item></channel></rss>
            """
        let parsed = try FeedParser.parse(FeedDocument(data: Data(rss.utf8), contentType: nil), source: "x")
        // (FoundationXML drops the text of a declared entity: "AB".)
        #expect(parsed.items.map { $0.item.title.filter(\.isLetter) } == ["AB"])
        // An entity whose text is markup is not declared: a reference to it is an error, not a crash.
        let referenced = rss.replacingOccurrences(of: "A&nbsp;B", with: "&lt2;")
        #expect(throws: FeedLoaderError.self) {
            try FeedParser.parse(FeedDocument(data: Data(referenced.utf8), contentType: nil), source: "x")
        }
    }

    @Test func errorsAfterADroppedDeclarationNameTheirLine() {
        let rss = "<!DOCTYPE rss [\n<!ATTLIST rss\n x CDATA #IMPLIED>\n]>\n<rss>\n<channel>\n</rss>"
        #expect(
            throws: FeedLoaderError.malformedXML(
                source: "x", line: 7, column: 7, detail: "an end tag does not match its start tag")
        ) {
            try FeedParser.parse(FeedDocument(data: Data(rss.utf8), contentType: nil), source: "x")
        }
        #expect(XMLSafety.sanitized(Array("<a><?b?></a>".utf8)) == Array("<a><?b ?></a>".utf8))
        #expect(
            XMLSafety.sanitized(Array("<a><![CDATA[<?b?>]]><!--<?c?>--></a>".utf8))
                == Array("<a><![CDATA[<?b?>]]><!--<?c?>--></a>".utf8))
    }

    /// The bytes as text (UTF-8 where they are, U+FFFD elsewhere) in another Unicode form,
    /// with or without a byte order mark.
    static func reencode(_ bytes: [UInt8], _ random: inout Random) -> [UInt8] {
        let form = FeedEncodingTests.Form.allCases.randomElement(using: &random)!
        var encoded = form.encode(String(decoding: bytes, as: UTF8.self), mark: Bool.random(using: &random))
        // Sometimes cut in the middle of a character.
        if Int.random(in: 0..<4, using: &random) == 0, !encoded.isEmpty { encoded.removeLast() }
        return encoded
    }

    /// Reads `bytes` as every kind of document FeedLoader accepts; anything but a feed or
    /// a ``FeedLoaderError`` fails. What the XML parser would be given is UTF-8 and says
    /// so. Returns whether some reading found a feed.
    @discardableResult
    static func read(_ bytes: [UInt8], case number: Int) -> Bool {
        var found = false
        for contentType in [nil, "application/xml", "application/json"] as [String?] {
            do {
                _ = try FeedParser.parse(FeedDocument(data: Data(bytes), contentType: contentType), source: "fuzz")
                found = true
            } catch is FeedLoaderError {
            } catch {
                Issue.record("case \(number) (\(contentType ?? "no type")): \(error)")
            }
        }
        if let unicode = try? XMLEncoding.unicodeAsUTF8(Data(bytes), source: "fuzz"),
            let given = try? XMLEncoding.utf8Document(unicode, source: "fuzz")
        {
            let declared = XMLEncoding.declaredEncoding(Array(given.data)[...])
            #expect(declared == nil || declared == "UTF-8", "case \(number): the parser would be told \(declared ?? "")")
            #expect(XMLEncoding.detect(Array(given.data.prefix(4))).bomLength == 0, "case \(number)")
        }
        return found
    }

    /// Runs `count` cases from `seeds` with 1…3 mutations each; returns the slowest case's
    /// time and how many cases were still a feed.
    static func fuzz(_ seeds: [String], seed: UInt64, count: Int) -> (slowest: Duration, feeds: Int) {
        var random = Random(state: seed)
        var slowest = Duration.zero
        var feeds = 0
        let clock = ContinuousClock()
        for number in 0..<count {
            var bytes = Array(seeds[number % seeds.count].utf8)
            var kinds: [Int] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) { kinds.append(mutate(&bytes, &random)) }
            if trace {
                FileHandle.standardError.write(Data("case \(number) kinds \(kinds)\n".utf8))
                try? Data(bytes).write(to: URL(fileURLWithPath: "/tmp/feedloader-fuzz-case"))
            }
            let elapsed = clock.measure { if read(bytes, case: number) { feeds += 1 } }
            if ProcessInfo.processInfo.environment["FEEDLOADER_FUZZ_SLOW"] != nil, elapsed > .milliseconds(40) {
                print("SLOW case \(number) seed \(number % seeds.count) kinds \(kinds) bytes \(bytes.count): \(elapsed)")
            }
            slowest = max(slowest, elapsed)
        }
        return (slowest, feeds)
    }

    static let trace = ProcessInfo.processInfo.environment["FEEDLOADER_FUZZ_TRACE"] != nil
    /// Added to the fixed seeds (`FEEDLOADER_FUZZ_SEED`), to explore other cases by hand.
    static let extraSeed = ProcessInfo.processInfo.environment["FEEDLOADER_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0

    /// Cases a test runs (`FEEDLOADER_FUZZ_CASES` changes it; `FEEDLOADER_FUZZ_SLOW` prints
    /// the cases that take longer than 40 ms; `FEEDLOADER_FUZZ_TRACE` names each case
    /// before it runs and writes it to /tmp/feedloader-fuzz-case, for a crash).
    static let cases = ProcessInfo.processInfo.environment["FEEDLOADER_FUZZ_CASES"].flatMap(Int.init) ?? 1_500

    @Test func mutatedXMLFeedsAreReadOrRefusedNeverACrash() {
        let clock = ContinuousClock()
        let start = clock.now
        let (slowest, feeds) = Self.fuzz(Self.xmlSeeds, seed: 0x5EED_F00D &+ Self.extraSeed, count: Self.cases)
        let total = clock.now - start
        #expect(feeds > Self.cases / 20, "the mutations left \(feeds) feeds of \(Self.cases) cases")
        #expect(total < .seconds(30), "\(Self.cases) cases took \(total)")
        #expect(slowest < .seconds(5), "a case took \(slowest)")
    }

    @Test func mutatedJSONFeedsAreReadOrRefusedNeverACrash() {
        let clock = ContinuousClock()
        let start = clock.now
        let (slowest, feeds) = Self.fuzz(Self.jsonSeeds, seed: 0xC0FF_EE15 &+ Self.extraSeed, count: Self.cases)
        let total = clock.now - start
        #expect(feeds > Self.cases / 10, "the mutations left \(feeds) feeds of \(Self.cases) cases")
        #expect(total < .seconds(30), "\(Self.cases) cases took \(total)")
        #expect(slowest < .seconds(5), "a case took \(slowest)")
    }
}
