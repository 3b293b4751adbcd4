import Foundation
@testable import Folio

/// Random text for the order tests: Hangul syllables, conjoining jamo in sequences that
/// compose and that do not (a vowel or a trailing consonant alone, two leading consonants,
/// archaic jamo, fillers, a trailing consonant after a syllable that has one), compatibility
/// and half-width jamo, the other compositions folding keeps (Arabic hamza, Indic two-part
/// vowels), marks that a removed mark of class 0 separates, other scripts, case pairs that
/// are not one-to-one (ß, ẞ, the Kelvin sign, the four Turkish i, final sigma), and NUL.
/// Every character is of Unicode 15.0 (or unassigned): the definition's domain.
struct HangulText {
    var rng: SplitMix64

    static func scalars(_ ranges: ClosedRange<UInt32>...) -> [Unicode.Scalar] {
        ranges.flatMap { $0.compactMap(Unicode.Scalar.init) }.filter { !ReferenceFolding.isNewerThanDefinition($0) }
    }

    static let leads = scalars(0x1100...0x1112)
    static let vowels = scalars(0x1161...0x1175)
    static let trails = scalars(0x11A8...0x11C2)
    /// Archaic jamo and fillers: no composition.
    static let archaic = scalars(0x1113...0x1160, 0x1176...0x11A7, 0x11C3...0x11FF, 0xA960...0xA97C, 0xD7B0...0xD7FB)
    static let compatibility = scalars(0x3131...0x318E, 0xFFA0...0xFFDC, 0x3200...0x321E, 0x3260...0x327E)
    static let others = scalars(
        0x20...0x7E, 0xC0...0x17F, 0x391...0x3C9, 0x410...0x44F, 0x4E00...0x4E40, 0x3041...0x30FF, 0x620...0x64A,
        0x900...0x97F, 0xE01...0xE5B, 0xBC6...0xBD7, 0xCBF...0xCD6, 0x1F600...0x1F640, 0xFF01...0xFF5E, 0x2160...0x216F)
    static let special: [String] = [
        "ß", "SS", "ss", "\u{1E9E}", "K", "k", "\u{212A}", "ı", "I", "İ", "i", "Σ", "σ", "ς", "\u{0}", "a\u{0}b", "\u{0}\u{0}",
        "Straße", "STRASSE", "ﬁ", "①", "Ａ", "\u{627}\u{654}", "أ", "\u{627}\u{653}", "\u{BC6}\u{BBE}", "\u{CC6}\u{CC2}\u{CD5}",
        "\u{1025}\u{102E}", "a\u{655}\u{E47}\u{654}", "a\u{654}\u{E47}\u{655}", "\u{627}\u{E47}\u{654}", "é", "e\u{301}",
        "\u{FFFD}", "한", "\u{1112}\u{1161}\u{11AB}", "中", "가", "\u{AC00}\u{11A8}", "\u{1100}\u{1100}\u{1161}",
    ]

    /// One piece: a syllable, a jamo sequence, or a character from another pool.
    mutating func piece() -> String {
        var view = String.UnicodeScalarView()
        switch Int.random(in: 0..<12, using: &rng) {
        case 0, 1: view.append(Unicode.Scalar(UInt32.random(in: 0xAC00...0xD7A3, using: &rng))!)
        case 2:
            view.append(rng.pick(Self.leads))
            view.append(rng.pick(Self.vowels))
            if rng.chance(0.5) { view.append(rng.pick(Self.trails)) }
        case 3:
            // Jamo in any order: some compose, some do not.
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let pool = rng.pick([Self.leads, Self.vowels, Self.trails, Self.archaic])
                view.append(rng.pick(pool))
            }
        case 4: view.append(rng.pick(Self.compatibility))
        case 5:
            // A syllable (with or without a trailing consonant) and a trailing consonant.
            view.append(Unicode.Scalar(UInt32.random(in: 0xAC00...0xD7A3, using: &rng))!)
            view.append(rng.pick(Self.trails))
        case 6, 7: return rng.pick(Self.special)
        default: view.append(rng.pick(Self.others))
        }
        return String(view)
    }

    /// Up to `length` pieces, then as typed, in NFC or in NFD.
    mutating func next(length: Int = 6) -> String {
        var text = ""
        for _ in 0..<Int.random(in: 0...length, using: &rng) { text += piece() }
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: return text.precomposedStringWithCanonicalMapping
        case 1: return text.decomposedStringWithCanonicalMapping
        default: return text
        }
    }
}

/// Swift's order of two strings (`<`, `==`), as -1, 0 or 1.
func swiftOrder(_ a: String, _ b: String) -> Int {
    a < b ? -1 : (a == b ? 0 : 1)
}

/// SQLite's `BINARY` order of two texts' bytes, as -1, 0 or 1.
func byteOrder(_ a: String, _ b: String) -> Int {
    SQLiteValue.compareBytes(Array(a.utf8), Array(b.utf8)).signum()
}
