import Foundation
import Testing
@testable import FeedLoader

/// Every label of the WHATWG Encoding Standard names an encoding FeedLoader decodes, and
/// each encoding decodes real bytes as the standard says; labels match as the standard
/// matches them; bytes that are not characters never crash or hang.
@Suite("WHATWG encoding labels and decoders")
struct EncodingLabelTests {
    /// Text in each encoding, as another implementation (Python's codecs; iconv for
    /// KOI8-T, TCVN and VISCII, which Python lacks) writes it.
    static let samples: [(encoding: TextEncoding, text: String, bytes: [UInt8])] = [
        (.utf8, "Grüße €", [0x47, 0x72, 0xC3, 0xBC, 0xC3, 0x9F, 0x65, 0x20, 0xE2, 0x82, 0xAC]),
        (.ibm866, "Привет ё №", [0x8F, 0xE0, 0xA8, 0xA2, 0xA5, 0xE2, 0x20, 0xF1, 0x20, 0xFC]),
        (.iso8859_2, "Zażółć", [0x5A, 0x61, 0xBF, 0xF3, 0xB3, 0xE6]),
        (.iso8859_3, "Ħ ĝ ż", [0xA1, 0x20, 0xF8, 0x20, 0xBF]),
        (.iso8859_4, "Ąčę ŧ", [0xA1, 0xE8, 0xEA, 0x20, 0xBC]),
        (.iso8859_5, "Привет №", [0xBF, 0xE0, 0xD8, 0xD2, 0xD5, 0xE2, 0x20, 0xF0]),
        (.iso8859_6, "مرحبا", [0xE5, 0xD1, 0xCD, 0xC8, 0xC7]),
        (.iso8859_7, "Καλημέρα", [0xCA, 0xE1, 0xEB, 0xE7, 0xEC, 0xDD, 0xF1, 0xE1]),
        (.iso8859_8, "שלום", [0xF9, 0xEC, 0xE5, 0xED]),
        (.iso8859_8I, "שלום", [0xF9, 0xEC, 0xE5, 0xED]),
        (.iso8859_10, "Ŋŧ ĸ", [0xAF, 0xBB, 0x20, 0xFF]),
        (.iso8859_13, "ąčę ”", [0xE0, 0xE8, 0xE6, 0x20, 0xA1]),
        (.iso8859_14, "Ḃḟ Ŵ", [0xA1, 0xB1, 0x20, 0xD0]),
        (.iso8859_15, "€ œ Ÿ", [0xA4, 0x20, 0xBD, 0x20, 0xBE]),
        (.iso8859_16, "Științe €", [0xAA, 0x74, 0x69, 0x69, 0x6E, 0xFE, 0x65, 0x20, 0xA4]),
        (.koi8R, "Привет", [0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4]),
        (.koi8U, "Привіт ґ", [0xF0, 0xD2, 0xC9, 0xD7, 0xA6, 0xD4, 0x20, 0xAD]),
        (.macintosh, "Café ∑ €", [0x43, 0x61, 0x66, 0x8E, 0x20, 0xB7, 0x20, 0xDB]),
        (.windows874, "สวัสดี €", [0xCA, 0xC7, 0xD1, 0xCA, 0xB4, 0xD5, 0x20, 0x80]),
        (
            .windows1250, "Příliš žluťoučký",
            [0x50, 0xF8, 0xED, 0x6C, 0x69, 0x9A, 0x20, 0x9E, 0x6C, 0x75, 0x9D, 0x6F, 0x75, 0xE8, 0x6B, 0xFD]
        ),
        (.windows1251, "Привет €", [0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2, 0x20, 0x88]),
        (.windows1252, "“Smart” €", [0x93, 0x53, 0x6D, 0x61, 0x72, 0x74, 0x94, 0x20, 0x80]),
        (.windows1253, "Καλημέρα", [0xCA, 0xE1, 0xEB, 0xE7, 0xEC, 0xDD, 0xF1, 0xE1]),
        (.windows1254, "Günaydın ğ", [0x47, 0xFC, 0x6E, 0x61, 0x79, 0x64, 0xFD, 0x6E, 0x20, 0xF0]),
        (.windows1255, "שלום ₪", [0xF9, 0xEC, 0xE5, 0xED, 0x20, 0xA4]),
        (.windows1256, "مرحبا ک", [0xE3, 0xD1, 0xCD, 0xC8, 0xC7, 0x20, 0x98]),
        (.windows1257, "ąčę", [0xE0, 0xE8, 0xE6]),
        (.windows1258, "Xin chào ₫", [0x58, 0x69, 0x6E, 0x20, 0x63, 0x68, 0xE0, 0x6F, 0x20, 0xFE]),
        (.xMacCyrillic, "Привет", [0x8F, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2]),
        (.gbk, "你好，世界", [0xC4, 0xE3, 0xBA, 0xC3, 0xA3, 0xAC, 0xCA, 0xC0, 0xBD, 0xE7]),
        (.gb18030, "你好 €𠀀", [0xC4, 0xE3, 0xBA, 0xC3, 0x20, 0xA2, 0xE3, 0x95, 0x32, 0x82, 0x36]),
        (.big5, "你好世界", [0xA7, 0x41, 0xA6, 0x6E, 0xA5, 0x40, 0xAC, 0xC9]),
        (.eucJP, "こんにちは ｶﾀ", [0xA4, 0xB3, 0xA4, 0xF3, 0xA4, 0xCB, 0xA4, 0xC1, 0xA4, 0xCF, 0x20, 0x8E, 0xB6, 0x8E, 0xC0]),
        (
            .iso2022JP, "こんにちは",
            [0x1B, 0x24, 0x42, 0x24, 0x33, 0x24, 0x73, 0x24, 0x4B, 0x24, 0x41, 0x24, 0x4F, 0x1B, 0x28, 0x42]
        ),
        (.shiftJIS, "こんにちは ①", [0x82, 0xB1, 0x82, 0xF1, 0x82, 0xC9, 0x82, 0xBF, 0x82, 0xCD, 0x20, 0x87, 0x40]),
        (.eucKR, "안녕하세요 갂", [0xBE, 0xC8, 0xB3, 0xE7, 0xC7, 0xCF, 0xBC, 0xBC, 0xBF, 0xE4, 0x20, 0x81, 0x41]),
        (.replacement, "\u{FFFD}", [0x41, 0x1B, 0x24, 0x29, 0x43, 0x0E, 0x21, 0x21]),
        (.utf16BE, "Grüße 𝄞", [0x00, 0x47, 0x00, 0x72, 0x00, 0xFC, 0x00, 0xDF, 0x00, 0x65, 0x00, 0x20, 0xD8, 0x34, 0xDD, 0x1E]),
        (.utf16LE, "Grüße 𝄞", [0x47, 0x00, 0x72, 0x00, 0xFC, 0x00, 0xDF, 0x00, 0x65, 0x00, 0x20, 0x00, 0x34, 0xD8, 0x1E, 0xDD]),
        (.xUserDefined, "A\u{7F}\u{F780}\u{F7FF}", [0x41, 0x7F, 0x80, 0xFF]),
        (.ibm437, "Café ñ", [0x43, 0x61, 0x66, 0x82, 0x20, 0xA4]),
        (.koi8T, "Тоҷикӣ", [0xF4, 0xCF, 0x8D, 0xC9, 0xCB, 0xA5]),
        (.tcvn5712, "Việt Nam", [0x56, 0x69, 0xD6, 0x74, 0x20, 0x4E, 0x61, 0x6D]),
        (.viscii, "Việt Nam", [0x56, 0x69, 0xAE, 0x74, 0x20, 0x4E, 0x61, 0x6D]),
        (.utf32BE, "Aé𝄞", [0x00, 0x00, 0x00, 0x41, 0x00, 0x00, 0x00, 0xE9, 0x00, 0x01, 0xD1, 0x1E]),
        (.utf32LE, "Aé𝄞", [0x41, 0x00, 0x00, 0x00, 0xE9, 0x00, 0x00, 0x00, 0x1E, 0xD1, 0x01, 0x00]),
    ]

    static func sample(_ encoding: TextEncoding) -> (text: String, bytes: [UInt8])? {
        samples.first { $0.encoding == encoding }.map { ($0.text, $0.bytes) }
    }

    /// Every label of either table, with the encoding it names.
    static let allLabels: [String] = EncodingLabels.standard.keys.sorted() + EncodingLabels.aliases.keys.sorted()

    @Test func theStandardsTableIsWhole() {
        // encodings.json of the Encoding Standard: 228 labels of 40 encodings.
        #expect(EncodingLabels.standard.count == 228)
        #expect(EncodingLabels.standardLabels.map(\.1.count).reduce(0, +) == 228, "no label listed twice")
        #expect(Set(EncodingLabels.standard.values) == Set(TextEncoding.allCases.filter(\.isWHATWG)))
        #expect(TextEncoding.allCases.filter(\.isWHATWG).count == 40)
        // Every encoding's own name is one of its labels (the others' names are aliases).
        for encoding in TextEncoding.allCases {
            #expect(EncodingLabels.encoding(forLabel: encoding.name) == encoding, "\(encoding.name)")
        }
        #expect(Set(Self.samples.map(\.encoding)) == Set(TextEncoding.allCases), "a sample for every encoding")
    }

    /// Whether this system decodes `encoding`: CoreFoundation (on Apple platforms) has no
    /// KOI8-T and no TCVN 5712; glibc's iconv has every one.
    static func systemDecodes(_ encoding: TextEncoding) -> Bool {
        #if canImport(Glibc)
        true
        #else
        encoding.iconvName == nil || encoding.coreFoundationEncoding != nil
        #endif
    }

    @Test(arguments: allLabels)
    func everyLabelNamesAnEncodingThatDecodesItsSample(label: String) throws {
        let encoding = try #require(EncodingLabels.encoding(forLabel: label), "\(label) is refused")
        guard Self.systemDecodes(encoding) else { return }
        let sample = try #require(Self.sample(encoding))
        #expect(encoding.decode(sample.bytes) == sample.text, "\(label) → \(encoding.name)")
    }

    @Test(arguments: [
        ("cp1252", TextEncoding.windows1252), ("windows_1252", .windows1252), ("x-mac-roman", .macintosh),
        ("ibm866", .ibm866), ("koi8-t", .koi8T), ("maccyrillic", .xMacCyrillic), ("tcvn", .tcvn5712),
        ("tcvn-5712", .tcvn5712), ("TCVN5712-1", .tcvn5712), ("x-mac-ukrainian", .xMacCyrillic), ("latin1", .windows1252),
        ("iso-8859-9", .windows1254), ("tis-620", .windows874), ("iso-8859-11", .windows874), ("gb2312", .gbk),
        ("big5-hkscs", .big5), ("windows-31j", .shiftJIS), ("windows-949", .eucKR), ("unicode", .utf16LE),
        ("iso-2022-kr", .replacement), ("hz-gb-2312", .replacement), ("utf-32", .utf32LE), ("cp437", .ibm437),
    ])
    func labelsFeedsDeclareNameTheStandardsEncoding(label: String, encoding: TextEncoding) {
        #expect(EncodingLabels.encoding(forLabel: label) == encoding)
    }

    // MARK: Matching

    @Test func labelsMatchInAnyCaseWithAsciiWhiteSpaceAroundThem() {
        for label in ["WINDOWS-1252", "Windows-1252", " windows-1252", "\twindows-1252\n", "\u{0C}\r windows-1252 \r\n\t"] {
            #expect(EncodingLabels.encoding(forLabel: label) == .windows1252, "\(label.debugDescription)")
        }
        #expect(EncodingLabels.encoding(forLabel: "  Shift_JIS ") == .shiftJIS)
        #expect(EncodingLabels.encoding(forLabel: "KOI8-T") == .koi8T)
    }

    @Test func onlyAsciiWhiteSpaceAndAsciiLettersAreFolded() {
        // No-break space and an ideographic space are not ASCII white space.
        #expect(EncodingLabels.encoding(forLabel: "\u{A0}utf-8") == nil)
        #expect(EncodingLabels.encoding(forLabel: "utf-8\u{3000}") == nil)
        // The Kelvin sign lowercases to "k" in Unicode, not in ASCII.
        #expect("\u{212A}oi8-r".lowercased() == "koi8-r")
        #expect(EncodingLabels.encoding(forLabel: "\u{212A}oi8-r") == nil)
        // White space inside a label is part of it.
        #expect(EncodingLabels.encoding(forLabel: "windows -1252") == nil)
        #expect(EncodingLabels.encoding(forLabel: "utf-8\u{0}") == nil)
    }

    @Test(arguments: ["", "   ", "x-klingon", "utf-7", "ebcdic-cp-us", "windows-1252x", "iso-8859-12", "utf8;"])
    func anUnknownLabelIsNoEncodingAndADocumentDeclaringItIsANamedError(label: String) {
        #expect(EncodingLabels.encoding(forLabel: label) == nil)
        let document = FeedEncodingTests.legacyDocument(label, Array("Plain".utf8))
        #expect(throws: FeedLoaderError.unsupportedEncoding(source: "x", encoding: label.trimmingCharacters(in: .whitespaces))) {
            try FeedEncodingTests.parse(document)
        }
    }

    // MARK: What the standard says, encoding by encoding

    @Test func windowsCodePagesReadTheStandardsIndexNotTheSystemsTable() {
        // windows-1252 0x80 is the euro sign; ISO-8859-1 and US-ASCII labels read it too.
        for label in ["windows-1252", "iso-8859-1", "us-ascii", "latin1", "cp1252"] {
            #expect(EncodingLabels.encoding(forLabel: label)?.decode([0x80, 0x81, 0x9F]) == "€\u{81}Ÿ", "\(label)")
        }
        // Bytes Windows leaves undefined are C1 controls, as in the standard's indexes
        // (glibc's CP1250 refuses 0x81).
        #expect(TextEncoding.windows1250.decode([0x81, 0x83, 0x88, 0x90, 0x98]) == "\u{81}\u{83}\u{88}\u{90}\u{98}")
        #expect(TextEncoding.windows1253.decode([0x81, 0x88]) == "\u{81}\u{88}")
        #expect(TextEncoding.windows874.decode([0x81]) == "\u{81}")
        // windows-1255 0xCA is HEBREW POINT HOLAM HASER FOR VAV in the standard.
        #expect(TextEncoding.windows1255.decode([0xCA]) == "\u{05BA}")
        // ISO-8859-9 and TIS-620 are read as their Windows supersets.
        #expect(EncodingLabels.encoding(forLabel: "iso-8859-9")?.decode([0x80, 0xD0]) == "€Ğ")
        #expect(EncodingLabels.encoding(forLabel: "tis-620")?.decode([0x80, 0xA1]) == "€ก")
    }

    @Test func cyrillicEncodingsReadTheStandardsLetters() {
        // KOI8-U is KOI8-RU in the standard: 0xAE and 0xBE are Belarusian ў and Ў.
        #expect(TextEncoding.koi8U.decode([0xAE, 0xBE, 0xA4, 0xB4]) == "ўЎєЄ")
        // x-mac-cyrillic 0xFF is the euro sign (Mac OS 9 on), 0xA2 Ґ.
        #expect(TextEncoding.xMacCyrillic.decode([0xFF, 0xA2, 0xDF]) == "€Ґя")
        #expect(TextEncoding.ibm866.decode([0xF0, 0xF1, 0xFC, 0xFF]) == "Ёё№\u{A0}")
        #expect(TextEncoding.koi8R.decode([0xB3, 0xA3]) == "Ёё")
    }

    @Test func eastAsianEncodingsReadTheVendorsExtensionsTheStandardIncludes() {
        // Shift_JIS is windows-31j: 0x5C is a backslash, 0x7E a tilde, NEC's row 13 read.
        #expect(TextEncoding.shiftJIS.decode([0x5C, 0x7E, 0x87, 0x40]) == "\\~①")
        // EUC-JP reads JIS X 0212 (0x8F) and NEC's row 13.
        #expect(TextEncoding.eucJP.decode([0x8F, 0xB0, 0xA1, 0xAD, 0xA1]) == "丂①")
        // EUC-KR is windows-949 (UHC).
        #expect(TextEncoding.eucKR.decode([0x81, 0x41, 0xB0, 0xA1]) == "갂가")
        // gb18030's four-byte sequences; GBK labels read them too.
        #expect(TextEncoding.gb18030.decode([0x81, 0x30, 0x81, 0x30]) == "\u{80}")
        #expect(EncodingLabels.encoding(forLabel: "gb2312")?.decode([0x81, 0x30, 0x81, 0x30, 0xC4, 0xE3]) == "\u{80}你")
        // Big5 is Big5-HKSCS.
        #expect(TextEncoding.big5.decode([0x88, 0x40, 0xA4, 0x40]) == "\u{31C0}一")
        #expect(TextEncoding.iso2022JP.decode([0x41, 0x1B, 0x24, 0x42, 0x30, 0x21, 0x1B, 0x28, 0x42, 0x42]) == "A亜B")
    }

    @Test func utf16IsReadWithAndWithoutAByteOrderMarkAndTheMarkDecides() {
        let little: [UInt8] = [0x41, 0x00, 0xE9, 0x00, 0x3D, 0xD8, 0x00, 0xDE]
        let big: [UInt8] = [0x00, 0x41, 0x00, 0xE9, 0xD8, 0x3D, 0xDE, 0x00]
        #expect(TextEncoding.utf16LE.decode(little) == "Aé😀")
        #expect(TextEncoding.utf16BE.decode(big) == "Aé😀")
        #expect(TextEncoding.utf16LE.decode([0xFF, 0xFE] + little) == "Aé😀")
        #expect(TextEncoding.utf16BE.decode([0xFE, 0xFF] + big) == "Aé😀")
        // The Encoding Standard's "decode": a byte order mark overrides the label.
        #expect(TextEncoding.utf16BE.decode([0xFF, 0xFE] + little) == "Aé😀")
        #expect(TextEncoding.windows1252.decode([0xFE, 0xFF] + big) == "Aé😀")
        #expect(TextEncoding.shiftJIS.decode([0xEF, 0xBB, 0xBF, 0xE2, 0x82, 0xAC]) == "€")
    }

    @Test func theReplacementEncodingReadsAnythingAsOneReplacementCharacter() {
        for label in ["iso-2022-kr", "csiso2022kr", "hz-gb-2312", "iso-2022-cn", "iso-2022-cn-ext", "replacement"] {
            let encoding = EncodingLabels.encoding(forLabel: label)
            #expect(encoding == .replacement, "\(label)")
            #expect(encoding?.decode([]) == "")
            #expect(encoding?.decode(Array(repeating: 0x41, count: 10_000)) == "\u{FFFD}")
        }
    }

    @Test func xUserDefinedMapsHighBytesToPrivateUse() {
        let bytes = (0...255).map { UInt8($0) }
        let decoded = TextEncoding.xUserDefined.decode(bytes).map { Array($0.unicodeScalars.map(\.value)) }
        #expect(decoded == (0..<0x80).map { UInt32($0) } + (0xF780...0xF7FF).map { UInt32($0) })
    }

    // MARK: Bytes that are not characters

    @Test func bytesThatAreNotCharactersAreRefusedNotMisread() {
        #expect(TextEncoding.shiftJIS.decode([0x82, 0xFF]) == nil)
        #expect(TextEncoding.eucKR.decode([0xBE]) == nil, "cut in the middle of a character")
        #expect(TextEncoding.gb18030.decode([0x81, 0x30]) == nil)
        #expect(TextEncoding.big5.decode([0xA4]) == nil)
        #expect(TextEncoding.eucJP.decode([0x8F, 0xB0]) == nil)
        #expect(TextEncoding.iso2022JP.decode([0x1B, 0x24, 0x42, 0x30]) == nil)
        #expect(TextEncoding.windows1253.decode([0x41, 0xAA]) == nil, "0xAA is undefined in windows-1253")
        #expect(TextEncoding.iso8859_6.decode([0xA1]) == nil)
        #expect(TextEncoding.utf8.decode([0x41, 0xC3]) == nil)
        #expect(TextEncoding.utf16LE.decode([0x41, 0x00, 0x42]) == nil)
        #expect(TextEncoding.utf16BE.decode([0xD8, 0x00, 0x00, 0x41]) == nil, "a lone surrogate")
    }

    @Test(arguments: TextEncoding.allCases)
    func randomBytesNeitherCrashNorHang(encoding: TextEncoding) {
        var generator = SystemRandomNumberGenerator()
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for length in [1, 2, 3, 7, 64, 4_096] {
                for _ in 0..<20 {
                    let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    if let text = encoding.decode(bytes) { #expect(text.utf8.count < 8 * bytes.count + 8) }
                }
            }
        }
        #expect(elapsed < .seconds(10), "\(encoding.name)")
    }

    @Test func aLongDocumentDecodesWholeThroughIconvsOutputChunks() {
        // More output than one chunk of iconv's output, and a character across chunks.
        let text = String(repeating: "こんにちは世界", count: 20_000)
        var shiftJIS: [UInt8] = []
        for _ in 0..<20_000 { shiftJIS += [0x82, 0xB1, 0x82, 0xF1, 0x82, 0xC9, 0x82, 0xBF, 0x82, 0xCD, 0x90, 0xA2, 0x8A, 0x45] }
        #expect(TextEncoding.shiftJIS.decode(shiftJIS) == text)
    }
}
