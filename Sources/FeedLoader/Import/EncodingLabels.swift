/// The names a document or a server may give its encoding, and the ``TextEncoding`` each
/// names.
///
/// ``standard`` is the WHATWG Encoding Standard's table of labels
/// (https://encoding.spec.whatwg.org/#names-and-labels), whole: 228 labels of 40 encodings,
/// matched as the standard matches them — ASCII white space around the label trimmed,
/// ASCII letters in any case. ``aliases`` adds the names real feeds declare that the
/// standard does not list (`windows_1252`, `cp936`, `tcvn`, `koi8-t`, `maccyrillic`…).
enum EncodingLabels {
    /// The encoding `label` names; `nil` for a label neither table has.
    static func encoding(forLabel label: String) -> TextEncoding? {
        let key = normalized(label)
        return standard[key] ?? aliases[key]
    }

    /// A label as the tables hold it: without leading and trailing ASCII white space (tab,
    /// line feed, form feed, carriage return, space), ASCII letters lowercased (only those:
    /// `İ` does not become `i`).
    static func normalized(_ label: String) -> String {
        let whiteSpace: Set<UInt8> = [0x09, 0x0A, 0x0C, 0x0D, 0x20]
        let bytes = Array(label.utf8)
        guard let first = bytes.firstIndex(where: { !whiteSpace.contains($0) }),
            let last = bytes.lastIndex(where: { !whiteSpace.contains($0) })
        else { return "" }
        let lowered = bytes[first...last].map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
        return String(decoding: lowered, as: UTF8.self)
    }

    /// Every label of the Encoding Standard, by encoding, as the standard lists them.
    static let standardLabels: [(TextEncoding, [String])] = [
        (.utf8, ["unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8"]),
        (.ibm866, ["866", "cp866", "csibm866", "ibm866"]),
        (
            .iso8859_2,
            ["csisolatin2", "iso-8859-2", "iso-ir-101", "iso8859-2", "iso88592", "iso_8859-2", "iso_8859-2:1987", "l2", "latin2"]
        ),
        (
            .iso8859_3,
            ["csisolatin3", "iso-8859-3", "iso-ir-109", "iso8859-3", "iso88593", "iso_8859-3", "iso_8859-3:1988", "l3", "latin3"]
        ),
        (
            .iso8859_4,
            ["csisolatin4", "iso-8859-4", "iso-ir-110", "iso8859-4", "iso88594", "iso_8859-4", "iso_8859-4:1988", "l4", "latin4"]
        ),
        (
            .iso8859_5,
            [
                "csisolatincyrillic", "cyrillic", "iso-8859-5", "iso-ir-144", "iso8859-5", "iso88595", "iso_8859-5",
                "iso_8859-5:1988",
            ]
        ),
        (
            .iso8859_6,
            [
                "arabic", "asmo-708", "csiso88596e", "csiso88596i", "csisolatinarabic", "ecma-114", "iso-8859-6", "iso-8859-6-e",
                "iso-8859-6-i", "iso-ir-127", "iso8859-6", "iso88596", "iso_8859-6", "iso_8859-6:1987",
            ]
        ),
        (
            .iso8859_7,
            [
                "csisolatingreek", "ecma-118", "elot_928", "greek", "greek8", "iso-8859-7", "iso-ir-126", "iso8859-7", "iso88597",
                "iso_8859-7", "iso_8859-7:1987", "sun_eu_greek",
            ]
        ),
        (
            .iso8859_8,
            [
                "csiso88598e", "csisolatinhebrew", "hebrew", "iso-8859-8", "iso-8859-8-e", "iso-ir-138", "iso8859-8", "iso88598",
                "iso_8859-8", "iso_8859-8:1988", "visual",
            ]
        ),
        (.iso8859_8I, ["csiso88598i", "iso-8859-8-i", "logical"]),
        (.iso8859_10, ["csisolatin6", "iso-8859-10", "iso-ir-157", "iso8859-10", "iso885910", "l6", "latin6"]),
        (.iso8859_13, ["iso-8859-13", "iso8859-13", "iso885913"]),
        (.iso8859_14, ["iso-8859-14", "iso8859-14", "iso885914"]),
        (.iso8859_15, ["csisolatin9", "iso-8859-15", "iso8859-15", "iso885915", "iso_8859-15", "l9"]),
        (.iso8859_16, ["iso-8859-16"]),
        (.koi8R, ["cskoi8r", "koi", "koi8", "koi8-r", "koi8_r"]),
        (.koi8U, ["koi8-ru", "koi8-u"]),
        (.macintosh, ["csmacintosh", "mac", "macintosh", "x-mac-roman"]),
        (.windows874, ["dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874"]),
        (.windows1250, ["cp1250", "windows-1250", "x-cp1250"]),
        (.windows1251, ["cp1251", "windows-1251", "x-cp1251"]),
        (
            .windows1252,
            [
                "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100", "iso8859-1",
                "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252", "x-cp1252",
            ]
        ),
        (.windows1253, ["cp1253", "windows-1253", "x-cp1253"]),
        (
            .windows1254,
            [
                "cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599", "iso_8859-9", "iso_8859-9:1989",
                "l5", "latin5", "windows-1254", "x-cp1254",
            ]
        ),
        (.windows1255, ["cp1255", "windows-1255", "x-cp1255"]),
        (.windows1256, ["cp1256", "windows-1256", "x-cp1256"]),
        (.windows1257, ["cp1257", "windows-1257", "x-cp1257"]),
        (.windows1258, ["cp1258", "windows-1258", "x-cp1258"]),
        (.xMacCyrillic, ["x-mac-cyrillic", "x-mac-ukrainian"]),
        (
            .gbk,
            ["chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80", "gbk", "iso-ir-58", "x-gbk"]
        ),
        (.gb18030, ["gb18030"]),
        (.big5, ["big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"]),
        (.eucJP, ["cseucpkdfmtjapanese", "euc-jp", "x-euc-jp"]),
        (.iso2022JP, ["csiso2022jp", "iso-2022-jp"]),
        (.shiftJIS, ["csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis", "windows-31j", "x-sjis"]),
        (
            .eucKR,
            [
                "cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601",
                "ksc_5601", "windows-949",
            ]
        ),
        (.replacement, ["csiso2022kr", "hz-gb-2312", "iso-2022-cn", "iso-2022-cn-ext", "iso-2022-kr", "replacement"]),
        (.utf16BE, ["unicodefffe", "utf-16be"]),
        (.utf16LE, ["csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16", "utf-16le"]),
        (.xUserDefined, ["x-user-defined"]),
    ]

    /// Names feeds declare that the standard does not list, and the encoding each means.
    static let aliasLabels: [(TextEncoding, [String])] = [
        (.utf8, ["utf_8"]),
        (.ibm866, ["ibm-866", "dos-866", "cp-866"]),
        (.iso8859_2, ["iso_8859_2", "iso8859_2", "latin-2"]),
        (.iso8859_3, ["iso_8859_3", "iso8859_3", "latin-3"]),
        (.iso8859_4, ["iso_8859_4", "iso8859_4", "latin-4"]),
        (.iso8859_5, ["iso_8859_5", "iso8859_5"]),
        (.iso8859_6, ["iso_8859_6", "iso8859_6"]),
        (.iso8859_7, ["iso_8859_7", "iso8859_7"]),
        (.iso8859_8, ["iso_8859_8", "iso8859_8"]),
        (.iso8859_10, ["iso_8859-10", "iso_8859_10", "iso8859_10", "latin-6"]),
        (.iso8859_13, ["iso_8859-13", "iso_8859_13", "iso8859_13", "latin7", "latin-7", "l7"]),
        (.iso8859_14, ["iso_8859-14", "iso_8859_14", "iso8859_14", "latin8", "latin-8", "l8"]),
        (.iso8859_15, ["iso_8859_15", "iso8859_15", "latin9", "latin-9", "latin0"]),
        (.iso8859_16, ["iso_8859-16", "iso_8859_16", "iso8859-16", "iso8859_16", "iso885916", "latin10", "latin-10", "l10"]),
        (.koi8R, ["koi8r"]),
        (.koi8U, ["koi8u", "koi8_u", "koi8ru"]),
        (.macintosh, ["macroman", "mac-roman", "macintosh-roman", "x-macroman"]),
        (.windows874, ["cp874", "windows_874", "tis620", "ms874"]),
        (.windows1250, ["windows_1250", "win-1250", "win1250", "ms-ee"]),
        (.windows1251, ["windows_1251", "win-1251", "win1251", "ms-cyrl"]),
        (.windows1252, ["windows_1252", "win-1252", "win1252", "ms-ansi", "latin-1", "iso8859_1", "iso_8859_1"]),
        (.windows1252, ["iso646-us", "csascii", "us", "iso_646.irv:1991", "ibm367", "cp367"]),
        (.windows1253, ["windows_1253", "win-1253", "win1253", "ms-greek"]),
        (.windows1254, ["windows_1254", "win-1254", "win1254", "ms-turk", "iso8859_9", "iso_8859_9", "latin-5"]),
        (.windows1255, ["windows_1255", "win-1255", "win1255", "ms-hebr"]),
        (.windows1256, ["windows_1256", "win-1256", "win1256", "ms-arab"]),
        (.windows1257, ["windows_1257", "win-1257", "win1257", "winbaltrim"]),
        (.windows1258, ["windows_1258", "win-1258", "win1258"]),
        (.xMacCyrillic, ["maccyrillic", "mac-cyrillic", "x-mac-cyrillic-ukrainian", "macukrainian", "mac-ukrainian"]),
        (.gbk, ["cp936", "windows-936", "ms936", "euc-cn", "euccn", "x-euc-cn", "gb2312-80", "gb_2312-1980"]),
        (.gb18030, ["gb-18030", "gb18030-2000", "gb18030-2005", "gb18030-2022"]),
        (.big5, ["big-5", "big5hkscs", "big5_hkscs", "cp950", "windows-950", "ms950", "x-big5"]),
        (.eucJP, ["eucjp", "euc_jp", "ujis", "x-eucjp", "eucjp-ms", "euc-jp-ms"]),
        (.iso2022JP, ["iso2022jp", "cp50220", "cp50221", "cp50222"]),
        (.shiftJIS, ["shiftjis", "s-jis", "s_jis", "cp932", "windows-932", "x-ms-cp932", "csWindows31J"]),
        (.eucKR, ["euckr", "euc_kr", "cp949", "ms949", "uhc", "x-windows-949", "ks_c_5601"]),
        (.utf16BE, ["utf16be", "utf_16be", "ucs-2be", "unicodebigunmarked"]),
        (.utf16LE, ["utf16", "utf16le", "utf_16", "utf_16le", "ucs-2le", "unicodelittleunmarked"]),
        (.utf32BE, ["utf-32be", "utf32be", "ucs-4be"]),
        (.utf32LE, ["utf-32", "utf-32le", "utf32", "utf32le", "ucs-4", "ucs-4le", "iso-10646-ucs-4", "csucs4"]),
        (.ibm437, ["ibm437", "cp437", "437", "cspc8codepage437", "ibm-437", "dos-437"]),
        (.koi8T, ["koi8-t", "koi8t", "koi8_t", "cskoi8t"]),
        (.tcvn5712, ["tcvn", "tcvn-5712", "tcvn5712", "tcvn5712-1", "tcvn5712-1:1993", "tcvn-5712-1", "x-viet-tcvn5712"]),
        (.viscii, ["viscii", "csviscii", "viscii1.1-1"]),
    ]

    /// ``standardLabels``, by label.
    static let standard: [String: TextEncoding] = table(standardLabels)

    /// ``aliasLabels``, by label (normalized: lowercase), none of them one of the standard's.
    static let aliases: [String: TextEncoding] = table(aliasLabels).filter { standard[$0.key] == nil }

    private static func table(_ lists: [(TextEncoding, [String])]) -> [String: TextEncoding] {
        var table: [String: TextEncoding] = [:]
        for (encoding, labels) in lists {
            for label in labels { table[normalized(label)] = encoding }
        }
        return table
    }
}
