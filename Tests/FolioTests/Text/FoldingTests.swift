import Foundation
import Testing
@testable import Folio

/// folio-fold-2 against its definition: hand-checked examples, a second implementation
/// (``ReferenceFolding``) on random text over all of Unicode, Foundation's own folding where
/// the two are documented to agree, and the properties every folded key relies on.
@Suite("Text folding")
struct FoldingTests {
    @Test(arguments: [
        ("Straße", "strasse"), ("STRASSE", "strasse"), ("\u{1E9E}", "ss"), ("ß", "ss"),
        ("\u{212A}elvin", "kelvin"), ("KELVIN", "kelvin"), ("\u{212B}", "a"),
        ("ΣΟΦΟΣ", "σοφοσ"), ("σοφος", "σοφοσ"), ("ς", "σ"),
        ("İstanbul", "istanbul"), ("ISTANBUL", "istanbul"), ("ıstanbul", "istanbul"), ("istanbul", "istanbul"),
        ("Émile", "emile"), ("e\u{301}mile", "emile"), ("E\u{301}MILE", "emile"), ("Café", "cafe"), ("CAFÉ", "cafe"),
        ("iPad", "ipad"), ("Łódź", "łodz"), ("Ø", "ø"), ("Æsir", "æsir"), ("ﬁle", "file"), ("①", "1"), ("Ａｂｃ", "abc"),
        ("ᾳ", "αι"), ("ΐ", "ι"), ("Ǆ", "dz"), ("ǅ", "dz"), ("µ", "μ"), ("ſ", "s"), ("が", "か"), ("ｶﾞ", "カ"),
        ("Ꭰ", "ꭰ"), ("ꭰ", "ꭰ"), ("a\u{0}B", "a\u{0}b"), ("\u{0}", "\u{0}"), ("", ""), ("x^y`z", "x^y`z"),
        ("😀👍🏽", "😀👍🏽"), ("🇫🇷", "🇫🇷"), ("👨‍👩‍👧", "👨‍👩‍👧"), ("\u{301}", ""), ("Ὀδυσσεύς", "οδυσσευσ"),
        ("≠", "="), ("\u{FFFD}", "\u{FFFD}"),
        // Step 7: Hangul composed, typed composed or as jamo (conjoining or compatibility).
        ("한국", "한국"), ("\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}", "한국"), ("ㄱㅏ", "가"), ("가\u{11A8}", "각"),
        ("\u{320E}", "(가)"), ("أ", "أ"), ("\u{627}\u{654}", "أ"), ("\u{BC6}\u{BBE}", "\u{BCA}"), ("\u{CCB}", "\u{CCB}"),
    ])
    func examples(_ text: String, _ expected: String) {
        let folded = TextFolding.fold(text)
        #expect(Array(folded.unicodeScalars) == Array(expected.unicodeScalars), "\(codePoints(text)) → \(codePoints(folded))")
        #expect(text.folded == folded)
    }

    /// Characters assigned after Unicode 15.0 are kept as they are, so keys do not depend
    /// on the platform's Unicode tables: U+A7DC (Unicode 16, the capital of ƛ) stays capital,
    /// and an accent next to it is still removed.
    @Test func charactersNewerThanTheDefinitionAreKept() {
        #expect(ReferenceFolding.isNewerThanDefinition("\u{A7DC}"))
        #expect(TextFolding.fold("\u{A7DC}") == "\u{A7DC}")
        #expect(TextFolding.fold("É\u{A7DC}É") == "e\u{A7DC}e")
        #expect(TextFolding.fold("\u{E0000}X") == "\u{E0000}x")  // unassigned
        #expect(TextFolding.fold("\u{F0000}X") == "\u{F0000}x")  // private use
    }

    /// Bytes that are not UTF-8 (raw SQL can store them) fold as their repaired text.
    @Test func invalidUTF8FoldsAsRepairedText() {
        for bytes: [UInt8] in [
            [0xFF], [0x41, 0xC3], [0xC3, 0x28, 0x45], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x00, 0x80],
        ] {
            let folded = bytes.withUnsafeBufferPointer { TextFolding.fold(utf8: $0) }
            #expect(folded == TextFolding.fold(String(decoding: bytes, as: UTF8.self)))
            #expect(folded.unicodeScalars.contains("\u{FFFD}"))
        }
        let ascii = Array("MiXeD".utf8)
        #expect(ascii.withUnsafeBufferPointer { TextFolding.fold(utf8: $0) } == "mixed")
    }

    /// Random text over all of Unicode: the same folding as the reference implementation,
    /// idempotent, insensitive to NFC/NFD and to case, lowercase and free of removed marks.
    @Test func randomTextAgainstTheReference() {
        var generator = FoldingText(rng: SplitMix64(seed: 0xF01D))
        var checked = 0
        for round in 0..<20_000 {
            let text = generator.next(length: round % 100 == 0 ? 400 : 12)
            let folded = TextFolding.fold(text)
            let reference = ReferenceFolding.fold(text)
            guard Array(folded.unicodeScalars) == Array(reference.unicodeScalars) else {
                Issue.record("\(codePoints(text)): \(codePoints(folded)), reference \(codePoints(reference))")
                return
            }
            #expect(TextFolding.fold(folded) == folded, "not idempotent: \(codePoints(text))")
            if !text.unicodeScalars.contains(where: ReferenceFolding.isNewerThanDefinition) {
                let nfc = Array(folded.precomposedStringWithCanonicalMapping.unicodeScalars)
                #expect(nfc == Array(folded.unicodeScalars), "not NFC: \(codePoints(text)) → \(codePoints(folded))")
            }
            for scalar in folded.unicodeScalars where !ReferenceFolding.isNewerThanDefinition(scalar) {
                #expect(!TextFolding.isRemovedMark(scalar), "\(codePoints(text)) keeps a mark")
                #expect(!scalar.properties.changesWhenLowercased, "\(codePoints(text)) keeps \(codePoints(String(scalar)))")
            }
            if !text.unicodeScalars.contains(where: ReferenceFolding.isNewerThanDefinition) {
                let nfc = TextFolding.fold(text.precomposedStringWithCanonicalMapping)
                let nfd = TextFolding.fold(text.decomposedStringWithCanonicalMapping)
                #expect(Array(nfc.unicodeScalars) == Array(folded.unicodeScalars), "NFC differs: \(codePoints(text))")
                #expect(Array(nfd.unicodeScalars) == Array(folded.unicodeScalars), "NFD differs: \(codePoints(text))")
            }
            checked += 1
        }
        #expect(checked == 20_000)
    }

    /// Every assigned character alone, against the reference; each one of Unicode 15.0 folds
    /// to NFC text, decomposed (NFD) or not — which checks step 7's table of compositions
    /// against Foundation's NFC over every composite character.
    @Test func everyCharacterAgainstTheReference() {
        var differences: [String] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value), scalar.properties.generalCategory != .unassigned else { continue }
            let text = String(scalar)
            let folded = TextFolding.fold(text)
            if Array(folded.unicodeScalars) != Array(ReferenceFolding.fold(text).unicodeScalars) {
                differences.append(codePoints(text))
            }
            if TextFolding.fold(folded) != folded { differences.append("idempotence \(codePoints(text))") }
            guard !ReferenceFolding.isNewerThanDefinition(scalar) else { continue }
            if Array(folded.precomposedStringWithCanonicalMapping.unicodeScalars) != Array(folded.unicodeScalars) {
                differences.append("not NFC \(codePoints(text))")
            }
            let decomposed = text.decomposedStringWithCanonicalMapping
            if decomposed.unicodeScalars.count > 1,
                !TextFolding.fold(decomposed).unicodeScalars.elementsEqual(folded.unicodeScalars)
            {
                differences.append("NFD \(codePoints(text))")
            }
        }
        #expect(differences.isEmpty, "\(differences.prefix(20))")
    }

    /// Case changes made by Swift do not change the folded text (letters of the classic
    /// alphabets, where no case mapping leads to a character newer than the definition).
    @Test func caseChangesDoNotChangeTheFoldedText() {
        var generator = FoldingText(rng: SplitMix64(seed: 7))
        for _ in 0..<5_000 {
            let text = generator.foundationComparable() + String(generator.rng.pick(FoldingText.special))
            let folded = TextFolding.fold(text)
            #expect(TextFolding.fold(text.uppercased()) == folded, "\(codePoints(text))")
            #expect(TextFolding.fold(text.lowercased()) == folded, "\(codePoints(text))")
        }
    }

    /// Where the article says they agree, Foundation's own folding gives the same text (up
    /// to canonical equivalence: Foundation recomposes, Folio does not).
    @Test func agreesWithFoundationWhereDocumented() {
        var generator = FoldingText(rng: SplitMix64(seed: 0xF0))
        for _ in 0..<20_000 {
            let text = generator.foundationComparable()
            let foundation = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            let folded = TextFolding.fold(text)
            #expect(
                Array(folded.unicodeScalars) == Array(foundation.decomposedStringWithCanonicalMapping.unicodeScalars),
                "\(codePoints(text)): Folio \(codePoints(folded)), Foundation \(codePoints(foundation))")
        }
    }

    /// The deliberate differences from Foundation, each as documented.
    @Test func documentedDifferencesFromFoundation() {
        func foundation(_ text: String) -> String {
            text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).decomposedStringWithCanonicalMapping
        }
        for (text, folio) in [
            ("ı", "i"), ("Ⅻ", "xii"), ("①", "1"), ("Ａ", "a"), ("ᾳ", "αι"), ("が", "か"), ("\u{301}", ""),
            ("1️⃣", "1\u{FE0F}\u{20E3}"), ("ĳ", "ij"),
        ] {
            #expect(TextFolding.fold(text) == folio)
            #expect(foundation(text) != folio, "Foundation now folds \(codePoints(text)) as Folio does: update the article")
        }
    }
}
