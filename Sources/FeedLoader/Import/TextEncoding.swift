import Foundation

/// A character encoding FeedLoader decodes: the forty encodings of the WHATWG Encoding
/// Standard (https://encoding.spec.whatwg.org/#names-and-labels), which is how browsers
/// read the web, and a few more that real feeds declare and the standard does not name
/// (IBM437, KOI8-T, TCVN 5712, VISCII, UTF-32).
///
/// ``EncodingLabels`` says which label (`cp1252`, `latin1`, `windows_1252`…) names which
/// encoding; `TextEncoding+Decoding.swift` decodes bytes: the system's iconv on Linux,
/// CoreFoundation on Apple platforms, and FeedLoader's own code for windows-1252,
/// x-user-defined, the replacement encoding and the Unicode forms.
enum TextEncoding: String, CaseIterable, Sendable {
    // The Encoding Standard's, by its names.
    case utf8 = "UTF-8"
    case ibm866 = "IBM866"
    case iso8859_2 = "ISO-8859-2"
    case iso8859_3 = "ISO-8859-3"
    case iso8859_4 = "ISO-8859-4"
    case iso8859_5 = "ISO-8859-5"
    case iso8859_6 = "ISO-8859-6"
    case iso8859_7 = "ISO-8859-7"
    case iso8859_8 = "ISO-8859-8"
    case iso8859_8I = "ISO-8859-8-I"
    case iso8859_10 = "ISO-8859-10"
    case iso8859_13 = "ISO-8859-13"
    case iso8859_14 = "ISO-8859-14"
    case iso8859_15 = "ISO-8859-15"
    case iso8859_16 = "ISO-8859-16"
    case koi8R = "KOI8-R"
    case koi8U = "KOI8-U"
    case macintosh = "macintosh"
    case windows874 = "windows-874"
    case windows1250 = "windows-1250"
    case windows1251 = "windows-1251"
    case windows1252 = "windows-1252"
    case windows1253 = "windows-1253"
    case windows1254 = "windows-1254"
    case windows1255 = "windows-1255"
    case windows1256 = "windows-1256"
    case windows1257 = "windows-1257"
    case windows1258 = "windows-1258"
    case xMacCyrillic = "x-mac-cyrillic"
    case gbk = "GBK"
    case gb18030 = "gb18030"
    case big5 = "Big5"
    case eucJP = "EUC-JP"
    case iso2022JP = "ISO-2022-JP"
    case shiftJIS = "Shift_JIS"
    case eucKR = "EUC-KR"
    case replacement = "replacement"
    case utf16BE = "UTF-16BE"
    case utf16LE = "UTF-16LE"
    case xUserDefined = "x-user-defined"

    // Not in the standard; declared by real feeds.
    case ibm437 = "IBM437"
    case koi8T = "KOI8-T"
    case tcvn5712 = "TCVN5712-1"
    case viscii = "VISCII"
    case utf32BE = "UTF-32BE"
    case utf32LE = "UTF-32LE"

    /// The name the standard (or, for the others, the IANA registry) gives the encoding.
    var name: String { rawValue }

    /// Whether the Encoding Standard defines the encoding.
    var isWHATWG: Bool {
        switch self {
        case .ibm437, .koi8T, .tcvn5712, .viscii, .utf32BE, .utf32LE: false
        default: true
        }
    }

    /// Whether the encoding is a form of Unicode, which a document's first bytes tell apart
    /// (XML 1.0, Appendix F): a label naming one does not override the bytes.
    var isUnicodeForm: Bool {
        switch self {
        case .utf8, .utf16BE, .utf16LE, .utf32BE, .utf32LE: true
        default: false
        }
    }

    /// Whether each byte is one character (and the encoding keeps no state between bytes).
    var isSingleByte: Bool {
        switch self {
        case .ibm866, .iso8859_2, .iso8859_3, .iso8859_4, .iso8859_5, .iso8859_6, .iso8859_7, .iso8859_8, .iso8859_8I,
            .iso8859_10, .iso8859_13, .iso8859_14, .iso8859_15, .iso8859_16, .koi8R, .koi8U, .macintosh, .windows874,
            .windows1250, .windows1251, .windows1252, .windows1253, .windows1254, .windows1255, .windows1256, .windows1257,
            .windows1258, .xMacCyrillic, .xUserDefined, .ibm437, .koi8T, .viscii:
            true
        default: false
        }
    }

    /// The name glibc's iconv knows the encoding by, for the encodings FeedLoader does not
    /// decode itself. Where the standard's encoding is a vendor's extension of the one its
    /// name says, this names the extension: Shift_JIS is Microsoft's CP932, EUC-KR is
    /// CP949 (UHC), GBK is decoded as gb18030, Big5 is Big5-HKSCS, EUC-JP has the NEC and
    /// IBM rows (EUC-JP-MS), KOI8-U has KOI8-RU's Belarusian letters.
    var iconvName: String? {
        switch self {
        case .ibm866: "CP866"
        case .iso8859_2: "ISO-8859-2"
        case .iso8859_3: "ISO-8859-3"
        case .iso8859_4: "ISO-8859-4"
        case .iso8859_5: "ISO-8859-5"
        case .iso8859_6: "ISO-8859-6"
        case .iso8859_7: "ISO-8859-7"
        case .iso8859_8, .iso8859_8I: "ISO-8859-8"
        case .iso8859_10: "ISO-8859-10"
        case .iso8859_13: "ISO-8859-13"
        case .iso8859_14: "ISO-8859-14"
        case .iso8859_15: "ISO-8859-15"
        case .iso8859_16: "ISO-8859-16"
        case .koi8R: "KOI8-R"
        case .koi8U: "KOI8-RU"
        case .macintosh: "MACINTOSH"
        case .windows874: "CP874"
        case .windows1250: "CP1250"
        case .windows1251: "CP1251"
        case .windows1253: "CP1253"
        case .windows1254: "CP1254"
        case .windows1255: "CP1255"
        case .windows1256: "CP1256"
        case .windows1257: "CP1257"
        case .windows1258: "CP1258"
        case .xMacCyrillic: "MAC-CYRILLIC"
        case .gbk, .gb18030: "GB18030"
        case .big5: "BIG5-HKSCS"
        case .eucJP: "EUC-JP-MS"
        case .iso2022JP: "ISO-2022-JP"
        case .shiftJIS: "CP932"
        case .eucKR: "CP949"
        case .ibm437: "IBM437"
        case .koi8T: "KOI8-T"
        case .tcvn5712: "TCVN5712-1"
        case .viscii: "VISCII"
        case .utf8, .windows1252, .replacement, .utf16BE, .utf16LE, .xUserDefined, .utf32BE, .utf32LE: nil
        }
    }

    /// The CoreFoundation encoding (`CFStringEncoding`) that decodes the encoding on Apple
    /// platforms; `nil` where CoreFoundation has none (KOI8-T, TCVN 5712) or FeedLoader
    /// decodes it itself.
    var coreFoundationEncoding: UInt32? {
        switch self {
        case .ibm866: 0x0413
        case .iso8859_2: 0x0202
        case .iso8859_3: 0x0203
        case .iso8859_4: 0x0204
        case .iso8859_5: 0x0205
        case .iso8859_6: 0x0206
        case .iso8859_7: 0x0207
        case .iso8859_8, .iso8859_8I: 0x0208
        case .iso8859_10: 0x020A
        case .iso8859_13: 0x020D
        case .iso8859_14: 0x020E
        case .iso8859_15: 0x020F
        case .iso8859_16: 0x0210
        case .koi8R: 0x0A02
        case .koi8U: 0x0A08
        case .macintosh: 0x0000
        case .windows874: 0x041D
        case .windows1250: 0x0501
        case .windows1251: 0x0502
        case .windows1253: 0x0503
        case .windows1254: 0x0504
        case .windows1255: 0x0505
        case .windows1256: 0x0506
        case .windows1257: 0x0507
        case .windows1258: 0x0508
        case .xMacCyrillic: 0x0007
        case .gbk, .gb18030: 0x0632
        case .big5: 0x0A06
        case .eucJP: 0x0920
        case .iso2022JP: 0x0820
        case .shiftJIS: 0x0420
        case .eucKR: 0x0422
        case .ibm437: 0x0400
        case .viscii: 0x0A07
        case .koi8T, .tcvn5712: nil
        case .utf8, .windows1252, .replacement, .utf16BE, .utf16LE, .xUserDefined, .utf32BE, .utf32LE: nil
        }
    }

    /// Where the standard's index of a single-byte encoding differs from the system's
    /// table: the character the standard gives a byte that iconv (or CoreFoundation)
    /// refuses or reads otherwise. Windows code pages give a byte they leave undefined
    /// between 0x80 and 0x9F the C1 control of the same number (as Windows does); see
    /// ``singleByteTable``.
    var standardOverrides: [UInt8: Unicode.Scalar] {
        switch self {
        case .windows1255: [0xCA: "\u{05BA}"]
        case .xMacCyrillic: [0xFF: "\u{20AC}"]
        default: [:]
        }
    }

    /// Whether bytes 0x80…0x9F the system leaves undefined are the C1 controls of the same
    /// number, as in the standard's indexes of Windows code pages.
    var fillsC1Controls: Bool {
        switch self {
        case .windows874, .windows1250, .windows1251, .windows1252, .windows1253, .windows1254, .windows1255, .windows1256,
            .windows1257, .windows1258:
            true
        default: false
        }
    }
}
