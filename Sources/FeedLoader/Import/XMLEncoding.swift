import Foundation

/// Reads the bytes of an XML document in whichever encoding it is, and gives them to the
/// parser as UTF-8 only.
///
/// FoundationXML on Linux hands the bytes to the system's libxml2, which detects the
/// encoding itself; libxml2 2.9 dereferences a null pointer when a document it detected
/// as UCS-4 (first bytes `00 00 00 3C`) declares `encoding="UTF-32"`, and misreads UTF-16
/// and UTF-32 in other ways ("XML error 6003"). So FeedLoader detects the encoding as
/// the XML specification's Appendix F says — a byte order mark, else the first four
/// bytes, else the `encoding` of the XML declaration, else UTF-8 — decodes the document,
/// and hands the parser UTF-8 whose declaration says `UTF-8`. The parser never sees
/// another encoding.
enum XMLEncoding {
    /// The encodings of the Unicode family that Appendix F tells apart by their first bytes.
    enum Family: Equatable {
        case utf8
        case utf16BigEndian
        case utf16LittleEndian
        case utf32BigEndian
        case utf32LittleEndian

        var name: String {
            switch self {
            case .utf8: "UTF-8"
            case .utf16BigEndian: "UTF-16 (big-endian)"
            case .utf16LittleEndian: "UTF-16 (little-endian)"
            case .utf32BigEndian: "UTF-32 (big-endian)"
            case .utf32LittleEndian: "UTF-32 (little-endian)"
            }
        }

        /// Bytes a code unit.
        var width: Int {
            switch self {
            case .utf8: 1
            case .utf16BigEndian, .utf16LittleEndian: 2
            case .utf32BigEndian, .utf32LittleEndian: 4
            }
        }

        /// The text of `bytes` (without a byte order mark); `nil` when they are not
        /// characters in this form, cut in the middle of a code unit included (Foundation
        /// drops such a last byte).
        func decode(_ bytes: some Collection<UInt8>) -> String? {
            guard bytes.count % width == 0 else { return nil }
            return String(bytes: bytes, encoding: encoding)
        }

        var encoding: String.Encoding {
            switch self {
            case .utf8: .utf8
            case .utf16BigEndian: .utf16BigEndian
            case .utf16LittleEndian: .utf16LittleEndian
            case .utf32BigEndian: .utf32BigEndian
            case .utf32LittleEndian: .utf32LittleEndian
            }
        }
    }

    /// How FeedLoader decodes an encoding named in an XML declaration.
    enum Decoder: Equatable {
        /// UTF-8 as it is (also for a declaration of UTF-16 or UTF-32 on bytes that are
        /// not: the bytes decide).
        case utf8
        /// windows-1252 as the WHATWG Encoding Standard defines it, which is also how
        /// browsers read ISO-8859-1 and US-ASCII (feeds that declare them often hold
        /// windows-1252's quotes and dashes).
        case windows1252
        /// EUC-JP, which Foundation on Linux does not decode: read through ISO-2022-JP.
        case eucJP
        /// A Foundation encoding (raw values above 0x80000000 are CoreFoundation's
        /// encodings, as `CFStringConvertEncodingToNSStringEncoding` gives them).
        case foundation(UInt)
    }

    /// The encodings FeedLoader reads from a declaration, by lowercased IANA name and
    /// alias. Each is decoded by a test (`XMLEncodingTests`). Not here: GBK's own
    /// CoreFoundation encoding (it decodes nothing on Linux: GB18030, a superset, does),
    /// `.macOSRoman` (it misreads on Linux: CoreFoundation's Mac Roman does not), and
    /// `.japaneseEUC` (it decodes nothing on Linux), and IBM866 (CoreFoundation misreads it
    /// on Linux).
    static let decoders: [String: Decoder] = {
        var table: [String: Decoder] = [:]
        func add(_ decoder: Decoder, _ names: String...) {
            for name in names { table[name] = decoder }
        }
        add(.utf8, "utf-8", "utf8", "unicode-1-1-utf-8")
        add(.utf8, "utf-16", "utf-16le", "utf-16be", "utf-32", "utf-32le", "utf-32be", "ucs-2", "ucs-4")
        add(.utf8, "iso-10646-ucs-2", "iso-10646-ucs-4", "unicode", "csunicode")
        add(.windows1252, "windows-1252", "cp1252", "x-cp1252", "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1")
        add(.windows1252, "latin-1", "l1", "iso-ir-100", "ibm819", "cp819", "csisolatin1", "iso_8859-1:1987")
        add(.windows1252, "us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us", "csascii")
        add(.foundation(String.Encoding.isoLatin2.rawValue), "iso-8859-2", "iso8859-2", "iso_8859-2", "latin2", "l2")
        add(.foundation(String.Encoding.windowsCP1250.rawValue), "windows-1250", "cp1250", "x-cp1250")
        add(.foundation(String.Encoding.windowsCP1251.rawValue), "windows-1251", "cp1251", "x-cp1251")
        add(.foundation(String.Encoding.windowsCP1253.rawValue), "windows-1253", "cp1253")
        add(.foundation(String.Encoding.windowsCP1254.rawValue), "windows-1254", "cp1254")
        add(.foundation(0x8000_0505), "windows-1255", "cp1255")
        add(.foundation(0x8000_0506), "windows-1256", "cp1256")
        add(.foundation(0x8000_0507), "windows-1257", "cp1257")
        add(.foundation(0x8000_0508), "windows-1258", "cp1258")
        add(.foundation(0x8000_041D), "windows-874", "cp874", "tis-620", "tis620")
        add(.foundation(0x8000_0203), "iso-8859-3", "iso8859-3", "iso_8859-3", "latin3")
        add(.foundation(0x8000_0204), "iso-8859-4", "iso8859-4", "iso_8859-4", "latin4")
        add(.foundation(0x8000_0205), "iso-8859-5", "iso8859-5", "iso_8859-5", "cyrillic")
        add(.foundation(0x8000_0206), "iso-8859-6", "iso8859-6", "iso_8859-6", "arabic")
        add(.foundation(0x8000_0207), "iso-8859-7", "iso8859-7", "iso_8859-7", "greek")
        add(.foundation(0x8000_0208), "iso-8859-8", "iso8859-8", "iso_8859-8", "iso-8859-8-i", "hebrew")
        add(.foundation(0x8000_0209), "iso-8859-9", "iso8859-9", "iso_8859-9", "latin5")
        add(.foundation(0x8000_020A), "iso-8859-10", "iso8859-10", "latin6")
        add(.foundation(0x8000_020B), "iso-8859-11", "iso8859-11")
        add(.foundation(0x8000_020D), "iso-8859-13", "iso8859-13", "latin7")
        add(.foundation(0x8000_020E), "iso-8859-14", "iso8859-14", "latin8")
        add(.foundation(0x8000_020F), "iso-8859-15", "iso8859-15", "iso_8859-15", "latin-9", "latin9")
        add(.foundation(0x8000_0210), "iso-8859-16", "iso8859-16", "latin10")
        add(.foundation(0x8000_0A02), "koi8-r", "koi8r", "cskoi8r")
        add(.foundation(0x8000_0A08), "koi8-u", "koi8u")
        add(.foundation(0x8000_0400), "ibm437", "cp437", "437")
        add(.foundation(0x8000_0000), "macintosh", "x-mac-roman", "macroman", "mac", "csmacintosh")
        add(.foundation(String.Encoding.shiftJIS.rawValue), "shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji")
        add(.foundation(String.Encoding.shiftJIS.rawValue), "csshiftjis", "windows-31j", "cp932")
        add(.eucJP, "euc-jp", "eucjp", "x-euc-jp", "cseucpkdfmtjapanese")
        add(.foundation(String.Encoding.iso2022JP.rawValue), "iso-2022-jp", "csiso2022jp")
        add(.foundation(0x8000_0632), "gb2312", "gbk", "gb18030", "cp936", "x-gbk", "euc-cn", "csgb2312", "chinese")
        add(.foundation(0x8000_0632), "windows-936", "gb_2312-80")
        add(.foundation(0x8000_0A03), "big5", "big-5", "cn-big5", "csbig5", "x-x-big5")
        add(.foundation(0x8000_0A06), "big5-hkscs")
        add(.foundation(0x8000_0940), "euc-kr", "ks_c_5601-1987", "korean", "cseuckr", "windows-949", "cp949")
        return table
    }()

    /// What ``utf8Document(_:source:)`` read.
    struct Transcoded {
        /// UTF-8, without a byte order mark; the XML declaration (if any) says `UTF-8`.
        var data: Data
        /// The encoding the document was read in: `UTF-8`, `UTF-16 (little-endian)`, or
        /// the declared name as written.
        var encoding: String
    }

    /// The document as UTF-8, for the parser.
    ///
    /// - Throws: ``FeedLoaderError/unsupportedEncoding(source:encoding:)`` for a declared
    ///   encoding FeedLoader cannot decode; ``FeedLoaderError/undecodable(source:encoding:)``
    ///   when the bytes are not valid in the encoding the document is in.
    static func utf8Document(_ data: Data, source: String) throws -> Transcoded {
        let bytes = [UInt8](data)
        let (family, bomLength) = detect(bytes)
        let body = bytes[bomLength...]
        if family != .utf8 {
            guard let text = family.decode(body) else {
                throw FeedLoaderError.undecodable(source: source, encoding: family.name)
            }
            return Transcoded(data: Data(declaringUTF8(text).utf8), encoding: family.name)
        }
        // Eight bits a character: the declaration says which encoding (UTF-8 when none
        // does, or a byte order mark does).
        // A byte order mark says UTF-8 whatever the declaration says.
        guard bomLength == 0, let declared = declaredEncoding(body) else {
            return Transcoded(data: declaringUTF8(bytes: body), encoding: "UTF-8")
        }
        guard let decoder = decoders[declared.lowercased()] else {
            throw FeedLoaderError.unsupportedEncoding(source: source, encoding: declared)
        }
        let text: String?
        switch decoder {
        case .utf8:
            // The parser reports bytes that are not UTF-8, with their line and column.
            return Transcoded(data: declaringUTF8(bytes: body), encoding: declared)
        case .windows1252: text = windows1252(body)
        case .eucJP: text = eucJP(body)
        case .foundation(let raw): text = String(bytes: body, encoding: String.Encoding(rawValue: raw))
        }
        guard let text else { throw FeedLoaderError.undecodable(source: source, encoding: declared) }
        return Transcoded(data: Data(declaringUTF8(text).utf8), encoding: declared)
    }

    /// A document in UTF-16 or UTF-32 (told by a byte order mark or its first bytes) as
    /// UTF-8, and a UTF-8 one without its byte order mark; any other as it is.
    /// - Throws: ``FeedLoaderError/undecodable(source:encoding:)``.
    static func unicodeAsUTF8(_ data: Data, source: String) throws -> Data {
        let (family, bomLength) = detect(Array(data.prefix(4)))
        if family == .utf8 { return bomLength == 0 ? data : Data(data.dropFirst(bomLength)) }
        guard let text = family.decode(data.dropFirst(bomLength)) else {
            throw FeedLoaderError.undecodable(source: source, encoding: family.name)
        }
        return Data(text.utf8)
    }

    /// The Unicode family of the document and the length of its byte order mark, from its
    /// first four bytes (XML 1.0, Appendix F.1). A document of ASCII-compatible bytes
    /// (whatever it declares) is `.utf8` here.
    static func detect(_ bytes: [UInt8]) -> (Family, bomLength: Int) {
        let head = Array(bytes.prefix(4)) + Array(repeating: 0xA5, count: max(0, 4 - bytes.count))
        switch (head[0], head[1], head[2], head[3]) {
        case (0x00, 0x00, 0xFE, 0xFF): return (.utf32BigEndian, 4)
        case (0xFF, 0xFE, 0x00, 0x00): return (.utf32LittleEndian, 4)
        case (0xFE, 0xFF, _, _): return (.utf16BigEndian, 2)
        case (0xFF, 0xFE, _, _): return (.utf16LittleEndian, 2)
        case (0xEF, 0xBB, 0xBF, _): return (.utf8, 3)
        // No mark: the first character is `<` or white space, which says the width and order.
        case (0x00, 0x00, 0x00, let a) where a != 0 && bytes.count >= 4: return (.utf32BigEndian, 0)
        case (let a, 0x00, 0x00, 0x00) where a != 0 && bytes.count >= 4: return (.utf32LittleEndian, 0)
        case (0x00, let a, 0x00, let b) where a != 0 && b != 0: return (.utf16BigEndian, 0)
        case (let a, 0x00, let b, 0x00) where a != 0 && b != 0: return (.utf16LittleEndian, 0)
        default: return (.utf8, 0)
        }
    }

    /// How far into the document the XML declaration is looked for.
    static let prologLimit = 1_024

    /// The `encoding` of the XML declaration that starts the bytes (after white space),
    /// as written; `nil` when there is none.
    static func declaredEncoding(_ bytes: ArraySlice<UInt8>) -> String? {
        guard let prolog = String(bytes: bytes.prefix(prologLimit), encoding: .isoLatin1),
            let declaration = declarationRange(prolog)
        else { return nil }
        return encodingAttribute(in: String(prolog[declaration]))?.value
    }

    /// Where the XML declaration is: `<?xml` (after white space) up to its `?>` — or, in a
    /// declaration that is not closed, up to the first `>` or the end of the prolog, where
    /// the parser would still read an encoding.
    static func declarationRange(_ text: String) -> Range<String.Index>? {
        let start = text.firstIndex { !isSpace($0) } ?? text.endIndex
        let rest = text[start...].prefix(prologLimit)
        guard rest.hasPrefix("<?xml"), let next = rest.dropFirst(5).first, isSpace(next) else { return nil }
        if let end = rest.range(of: "?>") { return start..<end.upperBound }
        if let end = rest.firstIndex(of: ">") { return start..<rest.index(after: end) }
        return start..<rest.endIndex
    }

    /// Whether a character is XML's white space (a carriage return and a line feed are one
    /// `Character`).
    static func isSpace(_ character: Character) -> Bool {
        character.unicodeScalars.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
    }

    /// The `encoding="…"` pseudo-attribute of a declaration (quoted or not, with or without
    /// white space before it, as a lenient parser reads it): where it is and its value.
    static func encodingAttribute(in declaration: String) -> (range: Range<String.Index>, value: String)? {
        guard
            let match = declaration.range(of: encodingPattern, options: .regularExpression)
        else { return nil }
        let attribute = declaration[match]
        guard let equals = attribute.firstIndex(of: "=") else { return nil }
        let quoted = attribute[attribute.index(after: equals)...].trimmingCharacters(in: .whitespacesAndNewlines)
        let value = quoted.trimmingCharacters(in: CharacterSet(charactersIn: "\"'")).trimmingCharacters(in: .whitespaces)
        return (match, value)
    }

    /// The pattern of an `encoding` pseudo-attribute.
    static let encodingPattern = #"encoding\s*=\s*("[^"]*"|'[^']*'|[^\s"'?>]*)"#

    /// `text` with its declaration's encoding changed to `UTF-8` (a document without a
    /// declaration, or one without an encoding, is UTF-8 already).
    static func declaringUTF8(_ text: String) -> String {
        let prolog = String(text.prefix(prologLimit))
        guard let range = declarationRange(prolog) else { return text }
        let declaration = String(prolog[range])
        guard encodingAttribute(in: declaration) != nil else { return text }
        // Every one, should there be more: the parser must see UTF-8 only.
        let rewritten = declaration.replacingOccurrences(
            of: encodingPattern, with: "encoding=\"UTF-8\"", options: .regularExpression)
        let scalars = prolog.unicodeScalars
        let start = text.unicodeScalars.index(
            text.startIndex, offsetBy: scalars.distance(from: scalars.startIndex, to: range.lowerBound))
        let end = text.unicodeScalars.index(
            text.startIndex, offsetBy: scalars.distance(from: scalars.startIndex, to: range.upperBound))
        return String(text.unicodeScalars[..<start]) + rewritten + String(text.unicodeScalars[end...])
    }

    /// Bytes of an ASCII-compatible encoding with their declaration's encoding changed to
    /// `UTF-8`; the rest of the bytes as they are.
    static func declaringUTF8(bytes: ArraySlice<UInt8>) -> Data {
        // ISO-8859-1 has one character a byte: offsets in the text are offsets in the bytes.
        guard let prolog = String(bytes: bytes.prefix(prologLimit), encoding: .isoLatin1),
            let range = declarationRange(prolog),
            let rewritten = declaringUTF8(String(prolog[range])).data(using: .isoLatin1)
        else { return Data(bytes) }
        let scalars = prolog.unicodeScalars
        let start = bytes.startIndex + scalars.distance(from: scalars.startIndex, to: range.lowerBound)
        let end = bytes.startIndex + scalars.distance(from: scalars.startIndex, to: range.upperBound)
        return Data(bytes[..<start]) + rewritten + Data(bytes[end...])
    }

    // MARK: Decoders Foundation lacks on Linux

    /// windows-1252's characters for 0x80…0x9F; the five it leaves undefined stand for
    /// themselves (U+0081…), as in the WHATWG Encoding Standard.
    private static let windows1252High: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E,
        0x0178,
    ]

    /// windows-1252 (which decodes every byte).
    static func windows1252(_ bytes: ArraySlice<UInt8>) -> String {
        // Every character is in the Basic Multilingual Plane: one UTF-16 code unit a byte.
        String(
            decoding: bytes.map { (0x80...0x9F).contains($0) ? UInt16(windows1252High[Int($0) - 0x80]) : UInt16($0) },
            as: UTF16.self)
    }

    /// EUC-JP: ASCII, JIS X 0208 (two bytes 0xA1…0xFE, decoded as ISO-2022-JP) and half-width
    /// katakana (0x8E and a byte); `nil` for anything else (JIS X 0212's 0x8F is not read).
    static func eucJP(_ bytes: ArraySlice<UInt8>) -> String? {
        var result = ""
        var jis: [UInt8] = []
        func flush() -> Bool {
            guard !jis.isEmpty else { return true }
            let escaped = [0x1B, 0x24, 0x42] + jis + [0x1B, 0x28, 0x42]
            jis.removeAll()
            guard let text = String(bytes: escaped, encoding: .iso2022JP) else { return false }
            result += text
            return true
        }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte < 0x80 {
                guard flush() else { return nil }
                result.unicodeScalars.append(Unicode.Scalar(byte))
                index += 1
            } else if (0xA1...0xFE).contains(byte), index + 1 < bytes.endIndex, (0xA1...0xFE).contains(bytes[index + 1]) {
                jis += [byte - 0x80, bytes[index + 1] - 0x80]
                index += 2
            } else if byte == 0x8E, index + 1 < bytes.endIndex, (0xA1...0xDF).contains(bytes[index + 1]) {
                guard flush() else { return nil }
                result.unicodeScalars.append(Unicode.Scalar(0xFF61 + UInt32(bytes[index + 1] - 0xA1))!)
                index += 2
            } else {
                return nil
            }
        }
        guard flush() else { return nil }
        return result
    }
}
