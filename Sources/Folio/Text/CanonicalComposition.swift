/// Step 7 of the folding (``TextFolding``): the folded text put back in Unicode's normalization
/// form C — marks in canonical order, then canonical composition — so that it is the text
/// Swift's `String` comparisons see. Swift compares strings by their NFC forms; a folded key
/// in NFC is its own NFC form, so its order by UTF-8 bytes (SQLite's `BINARY`) is Swift's
/// `<`, and equal bytes are Swift's `==`.
///
/// Steps 1–6 leave their text decomposed (NFKD) with some marks removed. What can then
/// still compose is small and fixed:
///
/// - **Hangul**: a leading consonant (U+1100–U+1112) and a vowel (U+1161–U+1175) make a
///   syllable, and an LV syllable and a trailing consonant (U+11A8–U+11C2) an LVT syllable,
///   by the arithmetic of Unicode's section 3.12 (U+AC00–U+D7A3);
/// - the 50 canonical compositions of Unicode 15.0 whose second character is not a mark the
///   folding removes (``pairs``): Arabic letters with hamza or madda (`أ`, `آ`), the two-part
///   vowel signs of Bengali, Oriya, Tamil, Telugu, Kannada, Malayalam, Sinhala, Myanmar and
///   Balinese, and a few of Chakma, Grantha, Tirhuta, Siddham and Dives Akuru. Every other
///   canonical composition has a diacritic as its second character (`é` is `e` + U+0301),
///   which step 6 removed.
///
/// No other character is changed. Removing a mark of combining class 0 (Thai U+0E47, say)
/// can leave two runs of marks side by side: they are put in canonical order again (a
/// stable sort by combining class, as Unicode's canonical ordering is).
///
/// The composition is Unicode's: a character composes with the last starter before it
/// unless a character between them has combining class 0 or one not lower than its own.
/// The table is fixed here rather than read from the platform (Unicode's stability policy
/// forbids new compositions of characters already assigned), so keys do not depend on the
/// platform's Unicode version; the tests check it against Foundation's NFC over every
/// character.
enum CanonicalComposition {
    /// The canonical compositions (first, second, composite) that can apply to folded text,
    /// Hangul aside: those of Unicode 15.0 whose second character is not removed by step 6.
    static let pairs: [(first: UInt32, second: UInt32, composite: UInt32)] = [
        (0x627, 0x653, 0x622), (0x627, 0x654, 0x623), (0x648, 0x654, 0x624), (0x627, 0x655, 0x625),
        (0x64A, 0x654, 0x626), (0x6D5, 0x654, 0x6C0), (0x6C1, 0x654, 0x6C2), (0x6D2, 0x654, 0x6D3),
        (0x9C7, 0x9BE, 0x9CB), (0x9C7, 0x9D7, 0x9CC), (0xB47, 0xB56, 0xB48), (0xB47, 0xB3E, 0xB4B),
        (0xB47, 0xB57, 0xB4C), (0xB92, 0xBD7, 0xB94), (0xBC6, 0xBBE, 0xBCA), (0xBC7, 0xBBE, 0xBCB),
        (0xBC6, 0xBD7, 0xBCC), (0xC46, 0xC56, 0xC48), (0xCBF, 0xCD5, 0xCC0), (0xCC6, 0xCD5, 0xCC7),
        (0xCC6, 0xCD6, 0xCC8), (0xCC6, 0xCC2, 0xCCA), (0xCCA, 0xCD5, 0xCCB), (0xD46, 0xD3E, 0xD4A),
        (0xD47, 0xD3E, 0xD4B), (0xD46, 0xD57, 0xD4C), (0xDD9, 0xDCF, 0xDDC), (0xDD9, 0xDDF, 0xDDE),
        (0x1025, 0x102E, 0x1026), (0x1B05, 0x1B35, 0x1B06), (0x1B07, 0x1B35, 0x1B08), (0x1B09, 0x1B35, 0x1B0A),
        (0x1B0B, 0x1B35, 0x1B0C), (0x1B0D, 0x1B35, 0x1B0E), (0x1B11, 0x1B35, 0x1B12), (0x1B3A, 0x1B35, 0x1B3B),
        (0x1B3C, 0x1B35, 0x1B3D), (0x1B3E, 0x1B35, 0x1B40), (0x1B3F, 0x1B35, 0x1B41), (0x1B42, 0x1B35, 0x1B43),
        (0x11131, 0x11127, 0x1112E), (0x11132, 0x11127, 0x1112F), (0x11347, 0x1133E, 0x1134B),
        (0x11347, 0x11357, 0x1134C), (0x114B9, 0x114BA, 0x114BB), (0x114B9, 0x114B0, 0x114BC),
        (0x114B9, 0x114BD, 0x114BE), (0x115B8, 0x115AF, 0x115BA), (0x115B9, 0x115AF, 0x115BB),
        (0x11935, 0x11930, 0x11938),
    ]

    /// ``pairs`` by second character: its possible firsts and their composites.
    private static let bySecond: [UInt32: [(first: UInt32, composite: UInt32)]] = Dictionary(
        grouping: pairs, by: \.second
    ).mapValues { $0.map { ($0.first, $0.composite) } }

    /// The smallest second character of ``pairs``: below it, only Hangul composes.
    private static let smallestSecond: UInt32 = 0x653

    // Hangul (Unicode 15.0, section 3.12).
    private static let syllableBase: UInt32 = 0xAC00, leadBase: UInt32 = 0x1100, vowelBase: UInt32 = 0x1161
    private static let trailBase: UInt32 = 0x11A7
    private static let leadCount: UInt32 = 19, vowelCount: UInt32 = 21, trailCount: UInt32 = 28
    private static let syllableCount: UInt32 = 11_172

    /// The primary composite of two characters, or `nil`.
    static func composite(_ first: Unicode.Scalar, _ second: Unicode.Scalar) -> Unicode.Scalar? {
        let a = first.value, b = second.value
        if b >= vowelBase && b < vowelBase + vowelCount {
            guard a >= leadBase && a < leadBase + leadCount else { return nil }
            return Unicode.Scalar(syllableBase + ((a - leadBase) * vowelCount + (b - vowelBase)) * trailCount)
        }
        if b > trailBase && b < trailBase + trailCount {
            guard a >= syllableBase && a < syllableBase + syllableCount, (a - syllableBase) % trailCount == 0 else {
                return nil
            }
            return Unicode.Scalar(a + (b - trailBase))
        }
        guard b >= smallestSecond, let candidates = bySecond[b] else { return nil }
        for candidate in candidates where candidate.first == a { return Unicode.Scalar(candidate.composite) }
        return nil
    }

    /// The combining class of a character (none below U+0300 has one).
    @inline(__always)
    private static func combiningClass(_ scalar: Unicode.Scalar) -> UInt8 {
        scalar.value < 0x300 ? 0 : scalar.properties.canonicalCombiningClass.rawValue
    }

    /// NFC of text that is NFKD but for removed marks: its marks put in canonical order
    /// again where a removal joined two runs, then composed. O(n), O(n log n) within a run
    /// of marks to reorder.
    static func compose(_ scalars: [Unicode.Scalar]) -> [Unicode.Scalar] {
        let classes = scalars.map(combiningClass)
        var ordered = scalars
        var start = 0
        while start < ordered.count {
            guard classes[start] != 0 else {
                start += 1
                continue
            }
            var end = start + 1, sorted = true
            while end < ordered.count && classes[end] != 0 {
                if classes[end] < classes[end - 1] { sorted = false }
                end += 1
            }
            if !sorted {
                let order = (start..<end).sorted { a, b in classes[a] != classes[b] ? classes[a] < classes[b] : a < b }
                ordered.replaceSubrange(start..<end, with: order.map { scalars[$0] })
            }
            start = end
        }
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(ordered.count)
        // The last starter's index in `result`, and the class of the last character kept
        // after it (0 while none).
        var starter: Int? = nil
        var lastClass: UInt8 = 0
        for scalar in ordered {
            let currentClass = combiningClass(scalar)
            if let starter {
                let adjacent = starter == result.count - 1
                let blocked = !adjacent && (lastClass == 0 || lastClass >= currentClass)
                if !blocked, let composite = composite(result[starter], scalar) {
                    result[starter] = composite
                    continue
                }
            }
            if currentClass == 0 { starter = result.count }
            lastClass = currentClass
            result.append(scalar)
        }
        return result
    }
}
