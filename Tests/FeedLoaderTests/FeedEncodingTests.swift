import Foundation
import Testing
@testable import FeedLoader

/// Feeds in every encoding XML allows that FeedLoader claims to read: UTF-8, UTF-16 and
/// UTF-32 (both byte orders, with and without a byte order mark, declared or not), and
/// the legacy encodings a declaration names, each decoded from real bytes; an encoding
/// it cannot read is named.
@Suite("Reading feeds in their encodings")
struct FeedEncodingTests {
    /// A Unicode encoding form, as bytes.
    enum Form: String, CaseIterable, CustomTestStringConvertible {
        case utf8, utf16BE, utf16LE, utf32BE, utf32LE
        var testDescription: String { rawValue }

        var declaredName: String {
            switch self {
            case .utf8: "UTF-8"
            case .utf16BE, .utf16LE: "UTF-16"
            case .utf32BE, .utf32LE: "UTF-32"
            }
        }

        func encode(_ text: String, mark: Bool) -> [UInt8] {
            let body = mark ? "\u{FEFF}" + text : text
            var bytes: [UInt8] = []
            switch self {
            case .utf8: return Array(body.utf8)
            case .utf16BE, .utf16LE:
                bytes.reserveCapacity(body.utf16.count * 2)
                for unit in body.utf16 {
                    let (high, low) = (UInt8(unit >> 8), UInt8(unit & 0xFF))
                    if self == .utf16BE { bytes += [high, low] } else { bytes += [low, high] }
                }
            case .utf32BE, .utf32LE:
                bytes.reserveCapacity(body.unicodeScalars.count * 4)
                for scalar in body.unicodeScalars {
                    let v = scalar.value
                    let big = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
                    bytes += self == .utf32BE ? big : big.reversed()
                }
            }
            return bytes
        }
    }

    /// How the document says (or does not say) its encoding.
    enum Declaration: String, CaseIterable, CustomTestStringConvertible {
        /// No XML declaration at all.
        case none
        /// A declaration without `encoding`.
        case versionOnly
        /// `encoding="UTF-16"` (or whichever the form is).
        case declared
        /// White space before the declaration (a common slip, read anyway).
        case spaceThenDeclared
        var testDescription: String { rawValue }

        func prolog(_ form: Form) -> String {
            switch self {
            case .none: ""
            case .versionOnly: #"<?xml version="1.0"?>"# + "\n"
            case .declared: #"<?xml version="1.0" encoding="\#(form.declaredName)"?>"# + "\n"
            case .spaceThenDeclared: "\n  " + #"<?xml version='1.0' encoding='\#(form.declaredName)' standalone='yes'?>"# + "\n"
            }
        }
    }

    static let title = "Grüße, 日本, 𝄞 & “quotes”"

    static func rss(prolog: String, title: String = title) -> String {
        prolog + """
            <rss version="2.0"><channel><title>Encodings</title><link>https://example.com/</link>
            <item><title>\(title.replacingOccurrences(of: "&", with: "&amp;"))</title><link>https://example.com/1</link>
            <pubDate>Fri, 13 Jun 2025 10:00:00 GMT</pubDate></item>
            <item><title>Second</title><guid isPermaLink="false">second</guid>
            <pubDate>Fri, 13 Jun 2025 11:00:00 GMT</pubDate></item>
            </channel></rss>
            """
    }

    static func parse(_ bytes: [UInt8], contentType: String? = nil) throws -> ParsedFeed {
        try FeedParser.parse(FeedDocument(data: Data(bytes), contentType: contentType), source: "x")
    }

    @Test(arguments: Form.allCases, [false, true])
    func everyUnicodeFormIsReadWithEveryKindOfDeclaration(form: Form, mark: Bool) throws {
        for declaration in Declaration.allCases {
            // A document whose encoding the first bytes tell needs no declaration of it, a
            // byte order mark or not; a file without a content type is sniffed, too.
            for contentType in [nil, "application/rss+xml"] as [String?] {
                let bytes = form.encode(Self.rss(prolog: declaration.prolog(form)), mark: mark)
                let parsed = try Self.parse(bytes, contentType: contentType)
                #expect(parsed.items.map(\.item.title) == [Self.title, "Second"], "\(declaration) \(contentType ?? "sniffed")")
                #expect(parsed.problems.isEmpty)
            }
        }
    }

    @Test func aUTF32BigEndianDocumentDeclaringUTF32IsReadNotACrash() throws {
        // Handed to libxml2 as they are, these bytes made it dereference a null pointer.
        let bytes = Form.utf32BE.encode(Self.rss(prolog: #"<?xml version="1.0" encoding="UTF-32"?>"#), mark: false)
        #expect(Array(bytes.prefix(4)) == [0, 0, 0, 0x3C])
        #expect(try Self.parse(bytes).items.count == 2)
        // As the parser receives it: UTF-8, saying so.
        let utf8 = try XMLEncoding.utf8Document(Data(bytes), source: "x")
        #expect(String(decoding: utf8.data.prefix(38), as: UTF8.self) == #"<?xml version="1.0" encoding="UTF-8"?>"#)
        #expect(utf8.encoding == "UTF-32 (big-endian)")
    }

    @Test(arguments: [
        (Form.utf8, [0x3C, 0x3F, 0x78, 0x6D] as [UInt8]), (.utf16BE, [0x00, 0x3C, 0x00, 0x3F]),
        (.utf16LE, [0x3C, 0x00, 0x3F, 0x00]),
        (.utf32BE, [0x00, 0x00, 0x00, 0x3C]), (.utf32LE, [0x3C, 0x00, 0x00, 0x00]),
    ])
    func theFirstBytesTellTheEncodingAsAppendixFSays(form: Form, head: [UInt8]) {
        let bytes = form.encode(#"<?xml version="1.0"?><a/>"#, mark: false)
        #expect(Array(bytes.prefix(4)) == head)
        let expected: XMLEncoding.Family =
            switch form {
            case .utf8: .utf8
            case .utf16BE: .utf16BigEndian
            case .utf16LE: .utf16LittleEndian
            case .utf32BE: .utf32BigEndian
            case .utf32LE: .utf32LittleEndian
            }
        #expect(XMLEncoding.detect(bytes).0 == expected)
        let marked = XMLEncoding.detect(form.encode("<a/>", mark: true))
        #expect(marked.0 == expected)
        #expect(marked.bomLength == (form == .utf8 ? 3 : form.rawValue.hasPrefix("utf16") ? 2 : 4))
    }

    @Test func aJSONFeedInUTF16IsReadToo() throws {
        let json =
            #"{"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": [{"id": "1", "url": "https://example.com/j", "title": "Grüße 𝄞", "date_published": "2025-06-13T10:00:00Z"}]}"#
        for form in Form.allCases {
            for mark in [false, true] {
                let parsed = try Self.parse(form.encode(json, mark: mark))
                #expect(parsed.items.map(\.item.title) == ["Grüße 𝄞"], "\(form) \(mark)")
            }
        }
    }

    /// Each legacy encoding FeedLoader claims, by the name a feed declares, with text in
    /// it (bytes as Python's codecs write them) and what it reads as.
    static let legacy: [(name: String, text: String, bytes: [UInt8])] = [
        ("ISO-8859-1", "Café déjà vu", [0x43, 0x61, 0x66, 0xE9, 0x20, 0x64, 0xE9, 0x6A, 0xE0, 0x20, 0x76, 0x75]),
        (
            "windows-1252", "“Smart” quotes – €",
            [0x93, 0x53, 0x6D, 0x61, 0x72, 0x74, 0x94, 0x20, 0x71, 0x75, 0x6F, 0x74, 0x65, 0x73, 0x20, 0x96, 0x20, 0x80]
        ),
        // Declared ISO-8859-1 but written by Windows: read as browsers read it.
        ("iso-8859-1", "“Smart” €", [0x93, 0x53, 0x6D, 0x61, 0x72, 0x74, 0x94, 0x20, 0x80]),
        ("US-ASCII", "Plain", [0x50, 0x6C, 0x61, 0x69, 0x6E]),
        ("ISO-8859-2", "Zażółć gęślą", [0x5A, 0x61, 0xBF, 0xF3, 0xB3, 0xE6, 0x20, 0x67, 0xEA, 0xB6, 0x6C, 0xB1]),
        (
            "windows-1250", "Příliš žluťoučký",
            [0x50, 0xF8, 0xED, 0x6C, 0x69, 0x9A, 0x20, 0x9E, 0x6C, 0x75, 0x9D, 0x6F, 0x75, 0xE8, 0x6B, 0xFD]
        ),
        ("windows-1251", "Привет мир", [0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2, 0x20, 0xEC, 0xE8, 0xF0]),
        ("windows-1253", "Καλημέρα", [0xCA, 0xE1, 0xEB, 0xE7, 0xEC, 0xDD, 0xF1, 0xE1]),
        ("windows-1254", "Günaydın", [0x47, 0xFC, 0x6E, 0x61, 0x79, 0x64, 0xFD, 0x6E]),
        ("windows-1255", "שלום", [0xF9, 0xEC, 0xE5, 0xED]),
        ("windows-1256", "مرحبا", [0xE3, 0xD1, 0xCD, 0xC8, 0xC7]),
        (
            "windows-1257", "Labas rytas ąčę",
            [0x4C, 0x61, 0x62, 0x61, 0x73, 0x20, 0x72, 0x79, 0x74, 0x61, 0x73, 0x20, 0xE0, 0xE8, 0xE6]
        ),
        ("windows-1258", "Xin chào", [0x58, 0x69, 0x6E, 0x20, 0x63, 0x68, 0xE0, 0x6F]),
        ("windows-874", "สวัสดี", [0xCA, 0xC7, 0xD1, 0xCA, 0xB4, 0xD5]),
        ("TIS-620", "สวัสดี", [0xCA, 0xC7, 0xD1, 0xCA, 0xB4, 0xD5]),
        ("ISO-8859-3", "Ħelow", [0xA1, 0x65, 0x6C, 0x6F, 0x77]),
        ("ISO-8859-4", "Ąčę", [0xA1, 0xE8, 0xEA]),
        ("ISO-8859-5", "Привет", [0xBF, 0xE0, 0xD8, 0xD2, 0xD5, 0xE2]),
        ("ISO-8859-6", "مرحبا", [0xE5, 0xD1, 0xCD, 0xC8, 0xC7]),
        ("ISO-8859-7", "Καλημέρα", [0xCA, 0xE1, 0xEB, 0xE7, 0xEC, 0xDD, 0xF1, 0xE1]),
        ("ISO-8859-8", "שלום", [0xF9, 0xEC, 0xE5, 0xED]),
        ("ISO-8859-9", "Günaydın", [0x47, 0xFC, 0x6E, 0x61, 0x79, 0x64, 0xFD, 0x6E]),
        ("ISO-8859-10", "Ŋŧ", [0xAF, 0xBB]),
        ("ISO-8859-11", "สวัสดี", [0xCA, 0xC7, 0xD1, 0xCA, 0xB4, 0xD5]),
        ("ISO-8859-13", "Labas ąčę", [0x4C, 0x61, 0x62, 0x61, 0x73, 0x20, 0xE0, 0xE8, 0xE6]),
        ("ISO-8859-14", "Ḃḟ", [0xA1, 0xB1]),
        (
            "ISO-8859-15", "Prix: 5 €, œuvre",
            [0x50, 0x72, 0x69, 0x78, 0x3A, 0x20, 0x35, 0x20, 0xA4, 0x2C, 0x20, 0xBD, 0x75, 0x76, 0x72, 0x65]
        ),
        ("ISO-8859-16", "Științe", [0xAA, 0x74, 0x69, 0x69, 0x6E, 0xFE, 0x65]),
        ("KOI8-R", "Привет мир", [0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4, 0x20, 0xCD, 0xC9, 0xD2]),
        ("KOI8-U", "Привіт світ", [0xF0, 0xD2, 0xC9, 0xD7, 0xA6, 0xD4, 0x20, 0xD3, 0xD7, 0xA6, 0xD4]),
        ("IBM866", "Привет", [0x8F, 0xE0, 0xA8, 0xA2, 0xA5, 0xE2]),
        ("IBM437", "Café", [0x43, 0x61, 0x66, 0x82]),
        ("macintosh", "Café ∑", [0x43, 0x61, 0x66, 0x8E, 0x20, 0xB7]),
        ("x-mac-roman", "Café ∑", [0x43, 0x61, 0x66, 0x8E, 0x20, 0xB7]),
        (
            "Shift_JIS", "こんにちは世界",
            [0x82, 0xB1, 0x82, 0xF1, 0x82, 0xC9, 0x82, 0xBF, 0x82, 0xCD, 0x90, 0xA2, 0x8A, 0x45]
        ),
        (
            "EUC-JP", "こんにちは世界 ｶﾀｶﾅ",
            [
                0xA4, 0xB3, 0xA4, 0xF3, 0xA4, 0xCB, 0xA4, 0xC1, 0xA4, 0xCF, 0xC0, 0xA4, 0xB3, 0xA6, 0x20, 0x8E, 0xB6, 0x8E, 0xC0,
                0x8E, 0xB6, 0x8E, 0xC5,
            ]
        ),
        (
            "ISO-2022-JP", "こんにちは世界",
            [
                0x1B, 0x24, 0x42, 0x24, 0x33, 0x24, 0x73, 0x24, 0x4B, 0x24, 0x41, 0x24, 0x4F, 0x40, 0x24, 0x33, 0x26, 0x1B, 0x28,
                0x42,
            ]
        ),
        ("GB2312", "你好世界", [0xC4, 0xE3, 0xBA, 0xC3, 0xCA, 0xC0, 0xBD, 0xE7]),
        ("GBK", "你好，世界", [0xC4, 0xE3, 0xBA, 0xC3, 0xA3, 0xAC, 0xCA, 0xC0, 0xBD, 0xE7]),
        ("GB18030", "你好世界", [0xC4, 0xE3, 0xBA, 0xC3, 0xCA, 0xC0, 0xBD, 0xE7]),
        ("Big5", "你好世界", [0xA7, 0x41, 0xA6, 0x6E, 0xA5, 0x40, 0xAC, 0xC9]),
        ("EUC-KR", "안녕하세요", [0xBE, 0xC8, 0xB3, 0xE7, 0xC7, 0xCF, 0xBC, 0xBC, 0xBF, 0xE4]),
    ]

    static func legacyDocument(_ name: String, _ bytes: [UInt8], quote: String = "\"") -> [UInt8] {
        let head = "<?xml version=\"1.0\" encoding=\(quote)\(name)\(quote)?>\n<rss version=\"2.0\"><channel><title>L</title>"
        let item = "<item><link>https://example.com/l</link><pubDate>Fri, 13 Jun 2025 10:00:00 GMT</pubDate><title>"
        return Array((head + item).utf8) + bytes + Array("</title></item></channel></rss>".utf8)
    }

    @Test(arguments: legacy.map { ($0.name, $0.text, $0.bytes) })
    func aDeclaredLegacyEncodingIsDecoded(name: String, text: String, bytes: [UInt8]) throws {
        let parsed = try Self.parse(Self.legacyDocument(name, bytes))
        #expect(parsed.items.map(\.item.title) == [text])
        // The name is a name whatever its case and quotes.
        let lower = try Self.parse(Self.legacyDocument(name.lowercased(), bytes, quote: "'"))
        #expect(lower.items.map(\.item.title) == [text])
    }

    @Test func everyNameInTheTableDecodesOnThisPlatform() {
        // ASCII decodes in every encoding the tables name (ISO-2022-JP too), so a name
        // the platform cannot decode would show here; the replacement encoding reads
        // nothing (EncodingLabelTests).
        let labels = EncodingLabels.standard.merging(EncodingLabels.aliases) { first, _ in first }
        for (name, encoding) in labels where encoding != .replacement {
            let document = Self.legacyDocument(name, Array("Plain".utf8))
            #expect((try? Self.parse(document))?.items.map(\.item.title) == ["Plain"], "\(name)")
        }
    }

    @Test(arguments: ["x-klingon", "EBCDIC-CP-US", "UTF-7", "utf-8 ; charset", ""])
    func anEncodingFeedLoaderCannotReadIsNamed(name: String) {
        let document = Self.legacyDocument(name, Array("Plain".utf8))
        #expect(throws: FeedLoaderError.unsupportedEncoding(source: "x", encoding: name)) { try Self.parse(document) }
        let message = FeedLoaderError.unsupportedEncoding(source: "x", encoding: name).description
        #expect(message.contains("\"\(name)\"") && message.hasSuffix("Nothing was imported."))
    }

    @Test func bytesThatAreNotTheEncodingTheDocumentIsInAreAnError() {
        // Shift_JIS with a lead byte and no trail byte.
        #expect(throws: FeedLoaderError.undecodable(source: "x", encoding: "Shift_JIS")) {
            try Self.parse(Self.legacyDocument("Shift_JIS", [0x82, 0xFF]))
        }
        #expect(throws: FeedLoaderError.undecodable(source: "x", encoding: "EUC-JP")) {
            try Self.parse(Self.legacyDocument("EUC-JP", [0xA4]))
        }
        // UTF-16 cut in the middle of a character, and a lone surrogate.
        let utf16 = Form.utf16LE.encode(Self.rss(prolog: ""), mark: true)
        #expect(throws: FeedLoaderError.undecodable(source: "x", encoding: "UTF-16 (little-endian)")) {
            try Self.parse(Array(utf16.dropLast()))
        }
        #expect(throws: FeedLoaderError.undecodable(source: "x", encoding: "UTF-16 (big-endian)")) {
            try Self.parse([0xFE, 0xFF, 0x00, 0x3C, 0x00, 0x61, 0xD8, 0x00, 0x00, 0x2F, 0x00, 0x3E])
        }
    }

    @Test func aDeclarationOfUTF16OnBytesThatAreNotIsReadAsUTF8() throws {
        // The bytes decide (no mark, `<?xm` in ASCII): the declaration is wrong.
        let document = Array(Self.rss(prolog: #"<?xml version="1.0" encoding="UTF-16"?>"#).utf8)
        #expect(try Self.parse(document).items.map(\.item.title) == [Self.title, "Second"])
    }

    @Test func utf8WithAndWithoutAByteOrderMarkIsRead() throws {
        for prolog in ["", #"<?xml version="1.0" encoding="utf-8"?>"#, #"<?xml version="1.0" encoding="UTF8"?>"#] {
            let plain = Array(Self.rss(prolog: prolog).utf8)
            #expect(try Self.parse(plain).items.first?.item.title == Self.title)
            #expect(try Self.parse([0xEF, 0xBB, 0xBF] + plain).items.first?.item.title == Self.title)
        }
    }

    @Test func theDeclarationIsRewrittenNotTheText() {
        let text = #"<?xml version="1.0" encoding = 'KOI8-R' standalone="no"?><a>encoding="x"</a>"#
        #expect(
            XMLEncoding.declaringUTF8(text) == #"<?xml version="1.0" encoding="UTF-8" standalone="no"?><a>encoding="x"</a>"#)
        #expect(XMLEncoding.declaringUTF8("<a encoding='x'/>") == "<a encoding='x'/>")
        #expect(XMLEncoding.declaredEncoding(Array(#"<?xml version="1.0"?><a encoding="x"/>"#.utf8)[...]) == nil)
    }
}
