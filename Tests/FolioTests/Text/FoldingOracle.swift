import Foundation
@testable import Folio

/// A second implementation of the folding, written from its documented definition without
/// looking at ``TextFolding``'s code paths: one character at a time, with `String`'s own
/// `uppercased()` and `lowercased()`, no ASCII fast path, no shortcut for characters that
/// have no case, and Foundation's own NFC for step 7 (where Folio has a table of its own).
/// Slow and simple; the tests compare the two on random text.
enum ReferenceFolding {
    /// folio-fold-2, the current folding.
    static func fold(_ text: String) -> String { fold(text, composing: true) }

    /// folio-fold-1: the same without step 7 (Hangul keys are jamo) — the keys a file
    /// written by an older Folio holds.
    static func foldVersion1(_ text: String) -> String { fold(text, composing: false) }

    /// folio-fold-1 as a ``TextFolding/Definition``: a Folio that still says version 1.
    static let version1 = TextFolding.Definition(
        version: "folio-fold-1", fold: { foldVersion1(String(decoding: $0, as: UTF8.self)) })

    private static func fold(_ text: String, composing: Bool) -> String {
        var result: [Unicode.Scalar] = []
        var piece: [Unicode.Scalar] = []
        for scalar in text.unicodeScalars {
            if isNewerThanDefinition(scalar) {
                result += foldPiece(piece, composing: composing)
                piece = []
                result.append(scalar)
            } else {
                piece.append(scalar)
            }
        }
        result += foldPiece(piece, composing: composing)
        var view = String.UnicodeScalarView()
        view.append(contentsOf: result)
        return String(view)
    }

    /// Unassigned, or assigned after Unicode 15.0.
    static func isNewerThanDefinition(_ scalar: Unicode.Scalar) -> Bool {
        guard let age = scalar.properties.age else { return true }
        return age.major > 15 || (age.major == 15 && age.minor > 0)
    }

    private static func foldPiece(_ piece: [Unicode.Scalar], composing: Bool) -> [Unicode.Scalar] {
        if piece.isEmpty { return [] }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: piece)
        var cased = ""
        for scalar in String(view).decomposedStringWithCompatibilityMapping.unicodeScalars {
            var character = String(scalar)
            for _ in 0..<8 {
                let next = character.uppercased().lowercased()
                if next == character && Array(next.unicodeScalars) == Array(character.unicodeScalars) { break }
                character = next
            }
            cased += character
        }
        let kept = cased.decomposedStringWithCompatibilityMapping.unicodeScalars.filter { scalar in
            !(scalar.properties.generalCategory == .nonspacingMark && scalar.properties.isDiacritic)
        }
        guard composing else { return Array(kept) }
        var left = String.UnicodeScalarView()
        left.append(contentsOf: kept)
        return Array(String(left).precomposedStringWithCanonicalMapping.unicodeScalars)
    }
}

/// Random text for the folding tests, from pools that cover the trouble: case pairs that are
/// not one-to-one (ß, ẞ, Kelvin sign, ς, the four Turkish i), precomposed letters and their
/// decompositions, combining marks alone or stacked, compatibility forms, scripts with marks
/// that are not accents, emoji with skin tones and ZWJ, flags, NUL, and any scalar at all.
struct FoldingText {
    var rng: SplitMix64

    static let ascii: [Unicode.Scalar] = (0x20...0x7E).map { Unicode.Scalar($0)! }
    static let latin: [Unicode.Scalar] = (0xC0...0x24F).compactMap { Unicode.Scalar($0) }
    static let greek: [Unicode.Scalar] = (0x370...0x3FF).compactMap { Unicode.Scalar($0) }
    static let greekExtended: [Unicode.Scalar] = (0x1F00...0x1FFF).compactMap { Unicode.Scalar($0) }
    static let cyrillic: [Unicode.Scalar] = (0x400...0x52F).compactMap { Unicode.Scalar($0) }
    static let marks: [Unicode.Scalar] =
        (0x300...0x36F).compactMap { Unicode.Scalar($0) } + [
            "\u{1AB0}", "\u{1DC0}", "\u{20D0}", "\u{FE20}", "\u{3099}", "\u{309A}", "\u{5B4}", "\u{64E}", "\u{93C}", "\u{94D}",
            "\u{E48}", "\u{E34}", "\u{FE0F}", "\u{34F}",
        ]
    static let special: [Unicode.Scalar] = [
        "ß", "\u{1E9E}", "\u{212A}", "\u{212B}", "\u{2126}", "ı", "İ", "I", "i", "ς", "σ", "Σ", "ﬁ", "ﬀ", "ﬃ", "ŉ", "ǰ", "Ǆ",
        "ǅ", "ǆ", "ΐ", "ᾳ", "ᾼ", "\u{345}", "µ", "ſ", "ẛ", "①", "½", "Ⅻ", "㎏", "Ａ", "ｶ", "ﾞ", "\u{0}", "\u{FFFD}", "ꭰ", "Ꭰ",
        "ᏸ", "Ᏸ", "ა", "Ა", "≠", "∉", "¨", "´", "^", "`", "·", "Ŀ", "ĸ",
    ]
    static let emoji: [String] = [
        "😀", "👍🏽", "👨‍👩‍👧", "🏳️‍🌈", "🇫🇷", "🇯🇵", "🇺🇸", "❤️", "1️⃣", "🧑🏿‍🦱",
    ]
    static let otherScripts: [Unicode.Scalar] = {
        let ranges: [ClosedRange<UInt32>] = [
            0x900...0x97F, 0xE00...0xE7F, 0x3040...0x30FF, 0xAC00...0xAC40, 0x5D0...0x5EA, 0x620...0x64A, 0xFF01...0xFF9F,
            0x13A0...0x13FD, 0xAB70...0xABBF, 0x1D400...0x1D4FF,
        ]
        return ranges.flatMap { range in range.compactMap { Unicode.Scalar($0) } }
    }()

    /// Any scalar: assigned or not, private use, new in Unicode 16 and 17.
    mutating func anyScalar() -> Unicode.Scalar {
        while true {
            let value =
                rng.chance(0.5) ? UInt32.random(in: 0...0x2FFFF, using: &rng) : UInt32.random(in: 0...0x10FFFF, using: &rng)
            if let scalar = Unicode.Scalar(value) { return scalar }
        }
    }

    /// Up to `length` pieces from every pool.
    mutating func next(length: Int = 12) -> String {
        var text = ""
        for _ in 0..<Int.random(in: 0...length, using: &rng) {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: text.unicodeScalars.append(rng.pick(Self.ascii))
            case 1: text.unicodeScalars.append(rng.pick(Self.latin))
            case 2: text.unicodeScalars.append(rng.pick(rng.chance(0.5) ? Self.greek : Self.greekExtended))
            case 3: text.unicodeScalars.append(rng.pick(Self.cyrillic))
            case 4: text.unicodeScalars.append(rng.pick(Self.marks))
            case 5: text.unicodeScalars.append(rng.pick(Self.special))
            case 6: text += rng.pick(Self.emoji)
            case 7: text.unicodeScalars.append(rng.pick(Self.otherScripts))
            case 8: text.unicodeScalars.append(anyScalar())
            default: text += rng.pick(["Straße", "ÉMILE", "e\u{301}mile", "İstanbul", "DIYARBAKIR", "Ὀδυσσεύς", "\u{212A}elvin"])
            }
        }
        return text
    }

    /// Text that Foundation folds as Folio does: Latin, Greek and Cyrillic letters (but the
    /// compatibility forms `Ĳ`, `ĳ`, `Ŀ`, `ŀ`, `ŉ`, and `ı`), combining accents after a letter, `ß`, `ẞ`,
    /// the Kelvin and Angstrom signs, ASCII, NUL, emoji and flags (not keycaps, which
    /// Foundation reduces to their digit).
    static let foundationLetters: [Unicode.Scalar] =
        ascii + (0xC0...0x17F).compactMap { Unicode.Scalar($0) }.filter { !"×÷ıĸĲĳĿŀŉ".unicodeScalars.contains($0) }
        + (0x386...0x3CE).compactMap { Unicode.Scalar($0) }.filter { $0.properties.generalCategory != .unassigned }
        + (0x400...0x45F).compactMap { Unicode.Scalar($0) } + ["ß", "\u{1E9E}", "\u{212A}", "\u{212B}", "\u{0}"]
    /// Letters a combining accent may follow in ``foundationComparable(length:)``.
    static let foundationBases: [Unicode.Scalar] = foundationLetters.filter { $0.properties.isAlphabetic }
    /// Combining accents Foundation removes after a letter (not U+0345, which case-folds to ι).
    static let foundationMarks: [Unicode.Scalar] = (0x300...0x36F).compactMap { Unicode.Scalar($0) }.filter {
        $0 != "\u{345}" && $0.properties.isDiacritic
    }

    mutating func foundationComparable(length: Int = 12) -> String {
        var text = ""
        for _ in 0..<Int.random(in: 0...length, using: &rng) {
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: text += rng.pick(Self.emoji.filter { $0 != "1️⃣" })
            case 1:
                // A mark only after a letter: Foundation keeps one that has no letter before it.
                text.unicodeScalars.append(rng.pick(Self.foundationBases))
                text.unicodeScalars.append(rng.pick(Self.foundationMarks))
            default: text.unicodeScalars.append(rng.pick(Self.foundationLetters))
            }
        }
        return text
    }
}

/// Scalars as `U+XXXX` for messages.
func codePoints(_ text: String) -> String {
    text.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
}
