import Foundation

/// Reads the bytes of an XML document in whichever encoding it is, and gives them to the
/// parser as UTF-8 only.
///
/// FoundationXML on Linux hands the bytes to the system's libxml2, which detects the
/// encoding itself; libxml2 2.9 dereferences a null pointer when a document it detected
/// as UCS-4 (first bytes `00 00 00 3C`) declares `encoding="UTF-32"`, and misreads UTF-16
/// and UTF-32 in other ways ("XML error 6003"). So FeedLoader detects the encoding as
/// the XML specification's Appendix F and RFC 7303 say — a byte order mark, else the first
/// four bytes, else the HTTP `charset`, else the `encoding` of the XML declaration, else
/// UTF-8 — decodes the document (any label of the WHATWG Encoding Standard, see
/// ``EncodingLabels`` and ``TextEncoding``), and hands the parser UTF-8 whose declaration
/// says `UTF-8`. The parser never sees another encoding.
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

    /// What ``utf8Document(_:source:)`` read.
    struct Transcoded {
        /// UTF-8, without a byte order mark; the XML declaration (if any) says `UTF-8`.
        var data: Data
        /// The encoding the document was read in: `UTF-8`, `UTF-16 (little-endian)`, or
        /// the label that decided it as written (the HTTP charset's or the declaration's).
        var encoding: String
    }

    /// The document as UTF-8, for the parser.
    ///
    /// What decides the encoding, first to last (RFC 7303, section 3, as browsers read XML):
    /// a byte order mark; else, for UTF-16 and UTF-32, the first bytes (Appendix F); else
    /// `charset`, the HTTP `Content-Type`'s (when it is a label ``EncodingLabels`` knows: an
    /// unknown one is ignored, as browsers ignore it); else the `encoding` of the XML
    /// declaration; else UTF-8. A label of a Unicode form (`utf-16`, `utf-32`) on bytes
    /// whose first characters are ASCII names the wrong encoding: the bytes decide, UTF-8.
    ///
    /// - Throws: ``FeedLoaderError/unsupportedEncoding(source:encoding:)`` for a declared
    ///   encoding FeedLoader does not know; ``FeedLoaderError/replacementEncoding(source:encoding:)``
    ///   for one the Encoding Standard reads as U+FFFD (ISO-2022-KR, HZ…);
    ///   ``FeedLoaderError/undecodable(source:encoding:)`` when the bytes are not valid in
    ///   the encoding the document is in.
    static func utf8Document(_ data: Data, source: String, charset: String? = nil) throws -> Transcoded {
        let bytes = [UInt8](data)
        let (family, bomLength) = detect(bytes)
        let body = bytes[bomLength...]
        if family != .utf8 {
            guard let text = family.decode(body) else {
                throw FeedLoaderError.undecodable(source: source, encoding: family.name)
            }
            return Transcoded(data: Data(declaringUTF8(text).utf8), encoding: family.name)
        }
        // Eight bits a character. A byte order mark says UTF-8 whatever the rest says.
        guard bomLength == 0 else { return Transcoded(data: declaringUTF8(bytes: body), encoding: "UTF-8") }
        let label: String
        let encoding: TextEncoding
        if let charset, let named = EncodingLabels.encoding(forLabel: charset) {
            (label, encoding) = (charset, named)
        } else if let declared = declaredEncoding(body) {
            guard let named = EncodingLabels.encoding(forLabel: declared) else {
                throw FeedLoaderError.unsupportedEncoding(source: source, encoding: declared)
            }
            (label, encoding) = (declared, named)
        } else {
            return Transcoded(data: declaringUTF8(bytes: body), encoding: "UTF-8")
        }
        if encoding.isUnicodeForm {
            // The parser reports bytes that are not UTF-8, with their line and column.
            return Transcoded(data: declaringUTF8(bytes: body), encoding: label)
        }
        guard encoding != .replacement else {
            throw FeedLoaderError.replacementEncoding(source: source, encoding: label)
        }
        guard let text = encoding.decodeWithoutMark(body) else {
            throw FeedLoaderError.undecodable(source: source, encoding: label)
        }
        return Transcoded(data: Data(declaringUTF8(text).utf8), encoding: label)
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
}
