import Foundation

/// Folio's one definition of case- and diacritic-insensitive text: the folding behind
/// `String.folded`, folded attributes, folded sorts and sections, and full-text search.
///
/// **Version `folio-fold-2`** (``version``). The folded form of a text is computed as follows:
///
/// 1. The text's UTF-8 is decoded; an invalid sequence (raw SQL can store one) becomes U+FFFD.
/// 2. The text is split at every character assigned after Unicode 15.0 (or unassigned):
///    such a character is kept as it is, so that the folding does not depend on the
///    Unicode version of the platform. Each piece between them is folded as follows.
/// 3. **Compatibility decomposition** (NFKD): `é` → `e` + U+0301, `ﬁ` → `fi`, `①` → `1`,
///    full-width `Ａ` → `A`, the Kelvin sign → `K`, `Ǆ` → `DŽ` (`D`, `Z`, U+030C).
/// 4. **Case folding**, character by character: a character becomes the lowercase of its
///    uppercase, repeated until nothing changes (Unicode's full mappings, no locale). This is
///    Unicode full case folding — `ß` → `ss`, `ẞ` → `ss`, final `ς` → `σ`, `ᾳ` → `αι` — with
///    one addition: the Turkish dotless `ı` folds to `i`.
/// 5. NFKD again (case mappings may leave marks out of canonical order).
/// 6. **Diacritic removal**: every nonspacing mark (general category Mn) that has the
///    Unicode `Diacritic` property is removed: accents, cedillas, the dot of `İ`, Hebrew
///    and Arabic vowel points, kana voicing marks (`が` → `か`). Other marks stay (Indic
///    vowel signs, variation selectors), and so do spacing accents such as `^` and `` ` ``.
/// 7. **Canonical composition** (NFC, ``CanonicalComposition``): what steps 3–6 decomposed
///    and left whole is composed again. Hangul syllables — `"한"` folds to U+D55C, whether it
///    was typed composed or as its three jamo — and 50 other letters and vowel signs whose
///    parts survive step 6 (Arabic `أ`, `آ`; the two-part vowel signs of Bengali, Oriya,
///    Tamil, Telugu, Kannada, Malayalam, Sinhala, Myanmar, Balinese…). Latin, Greek and
///    Cyrillic letters have nothing left to compose: `"Émile"` folds to `"emile"`.
///
/// The result is in NFC: its order by UTF-8 bytes — SQLite's, in a folded sort or a `<` of
/// folded keys — is the order of Swift's `<` on the folded strings, and equal keys are
/// equal bytes. (Version `folio-fold-1` was this definition without step 7: its Hangul
/// keys were jamo, which sorted in SQL before `"中"` while `"한" < "中"` is false in Swift.)
/// Folding never changes NUL, digits, punctuation, spaces, emoji (skin tones and ZWJ
/// sequences included) or flags, and folding a folded text changes nothing.
///
/// **The Turkish i.** The folding is the same in every locale, so it cannot apply Turkish
/// casing (`I` ↔ `ı`, `İ` ↔ `i`). Instead all four fold to `i`: `I` and `i` by case, `İ`
/// by losing its dot, and `ı` by the addition above — so "Diyarbakır", "DIYARBAKIR" and
/// "diyarbakir" are found by one another, whatever the keyboard.
///
/// **Against Foundation.** `String.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)`
/// gives the same text, up to canonical equivalence, for Latin, Greek and Cyrillic letters
/// with combining accents, `ß`, `ẞ`, the Kelvin and Angstrom signs, digits, punctuation,
/// NUL, emoji and flags. It differs on purpose where Folio folds more: compatibility forms
/// (Foundation keeps `Ⅻ`, `①`, `ĳ`, full-width letters), `ı`, Greek iota subscripts
/// (Foundation drops them), kana voicing marks and the vowel points of other scripts
/// (Foundation keeps them), and a combining mark with no letter before it (Foundation keeps
/// it); and where Folio folds less: a keycap emoji stays whole (Foundation reduces `1️⃣` to `1`).
///
/// A store records the version with the folded keys it keeps (in `folio_metadata`, one key
/// per entity); a store opened by a Folio with another version — older or newer — computes
/// every key again and rebuilds the full-text index at open (``FoldedKeys``).
enum TextFolding {
    /// The version of the definition above, recorded beside every folded key.
    static let version = "folio-fold-2"

    /// A folding as a file's keys record it: its version, and the keys it gives stored text.
    /// Folio always uses ``current``; a test opens a file as a Folio of another version would.
    struct Definition: Sendable {
        var version: String
        var fold: @Sendable (UnsafeBufferPointer<UInt8>) -> String
        /// This Folio's: ``TextFolding/version``.
        static let current = Definition(version: TextFolding.version, fold: { TextFolding.fold(utf8: $0) })
    }

    /// The newest Unicode version whose characters are folded; later ones are kept as they are.
    static let unicodeVersion = (major: 15, minor: 0)

    /// The folded form of `text`.
    static func fold(_ text: String) -> String {
        var text = text
        // ASCII, the common case: lowercase the bytes, nothing else changes.
        if let ascii = text.withUTF8({ asciiFolded($0) }) { return ascii }
        var output = String.UnicodeScalarView()
        var piece = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isBeyondDefinition(scalar) {
                foldPiece(&piece, into: &output)
                output.append(scalar)
            } else {
                piece.append(scalar)
            }
        }
        foldPiece(&piece, into: &output)
        return String(output)
    }

    /// The folded form of UTF-8 bytes as SQLite holds them (invalid sequences become U+FFFD).
    static func fold(utf8 bytes: UnsafeBufferPointer<UInt8>) -> String {
        if let ascii = asciiFolded(bytes) { return ascii }
        return fold(String(decoding: bytes, as: UTF8.self))
    }

    /// ASCII text lowercased, or `nil` when the bytes are not all ASCII.
    private static func asciiFolded(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var hasUpper = false
        for byte in bytes {
            if byte >= 0x80 { return nil }
            if byte >= 0x41 && byte <= 0x5A { hasUpper = true }
        }
        if !hasUpper { return String(decoding: bytes, as: UTF8.self) }
        return String(unsafeUninitializedCapacity: bytes.count) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[index] = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
            }
            return bytes.count
        }
    }

    /// Whether a character is outside the definition (assigned after ``unicodeVersion``, or
    /// unassigned here): kept as it is.
    static func isBeyondDefinition(_ scalar: Unicode.Scalar) -> Bool {
        guard let age = scalar.properties.age else { return true }
        return age.major > unicodeVersion.major || (age.major == unicodeVersion.major && age.minor > unicodeVersion.minor)
    }

    /// A mark the folding removes: nonspacing (Mn) and a Unicode diacritic.
    static func isRemovedMark(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .nonspacingMark && scalar.properties.isDiacritic
    }

    /// Steps 3 to 7 on one piece of text within the definition; empties `piece`.
    private static func foldPiece(_ piece: inout String.UnicodeScalarView, into output: inout String.UnicodeScalarView) {
        guard !piece.isEmpty else { return }
        // Case folding maps a character to three at most: a text without a long run of
        // marks has none after it either.
        let hasLongRuns = hasLongRunOfMarks(piece)
        var cased = String.UnicodeScalarView()
        for scalar in compatibilityDecomposed(piece, hasLongRuns: hasLongRuns) {
            appendCaseFolded(scalar, to: &cased)
        }
        var kept: [Unicode.Scalar] = []
        for scalar in compatibilityDecomposed(cased, hasLongRuns: hasLongRuns) where !isRemovedMark(scalar) {
            kept.append(scalar)
        }
        output.append(contentsOf: CanonicalComposition.compose(kept))
        piece = String.UnicodeScalarView()
    }

    /// The longest run of characters between two starters that Foundation's NFKD is given
    /// as one text: it puts marks in canonical order in time quadratic in the run's length
    /// (a minute for a megabyte of alternating accents), so longer runs are ordered here.
    static let longestNormalizedRun = 256

    /// NFKD of `text`, in time linear in its length (n log n within a run of marks).
    ///
    /// Text is cut before each character of combining class 0, across which canonical
    /// ordering never moves a character, so each part is normalized alone. Parts are given to Foundation together,
    /// up to a few thousand characters at a time; a part longer than
    /// ``longestNormalizedRun`` (a starter followed by hundreds of marks) is decomposed one
    /// character at a time and its marks put in canonical order by a stable sort on their
    /// combining classes, which is what canonical ordering is.
    static func compatibilityDecomposed(
        _ text: String.UnicodeScalarView, hasLongRuns: Bool? = nil
    ) -> String.UnicodeScalarView {
        // The common case: no long run of marks, the whole text to Foundation at once.
        if !(hasLongRuns ?? hasLongRunOfMarks(text)) {
            return String(text).decomposedStringWithCompatibilityMapping.unicodeScalars
        }
        var result = String.UnicodeScalarView()
        result.reserveCapacity(text.count)
        var batch = String.UnicodeScalarView()
        var part: [Unicode.Scalar] = []
        func flushBatch() {
            guard !batch.isEmpty else { return }
            result.append(contentsOf: String(batch).decomposedStringWithCompatibilityMapping.unicodeScalars)
            batch = String.UnicodeScalarView()
        }
        func endPart() {
            if part.count > longestNormalizedRun {
                flushBatch()
                result.append(contentsOf: orderedDecomposition(part))
            } else {
                batch.append(contentsOf: part)
                if batch.count >= 4_096 { flushBatch() }
            }
            part.removeAll(keepingCapacity: true)
        }
        for scalar in text {
            if isSafeStarter(scalar) { endPart() }
            part.append(scalar)
        }
        endPart()
        flushBatch()
        return result
    }

    /// Whether more than ``longestNormalizedRun`` characters of nonzero combining class
    /// follow one another (none below U+0300 has one).
    static func hasLongRunOfMarks(_ text: String.UnicodeScalarView) -> Bool {
        var run = 0
        for scalar in text {
            if scalar.value < 0x300 || scalar.properties.canonicalCombiningClass == .notReordered {
                run = 0
            } else {
                run += 1
                if run > longestNormalizedRun { return true }
            }
        }
        return false
    }

    /// A character before which NFKD text can be cut: combining class 0. Canonical
    /// ordering never moves a character across one — as Foundation applies it, also across
    /// a character of class 0 that decomposes to marks of other classes (U+0F73), which
    /// Unicode's algorithm would reorder with the marks before it.
    private static func isSafeStarter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII || scalar.properties.canonicalCombiningClass == .notReordered
    }

    /// NFKD of one long part: each character decomposed alone (a cache per distinct
    /// character), then every run of characters of nonzero combining class stably sorted by
    /// class.
    private static func orderedDecomposition(_ part: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var cache: [Unicode.Scalar: [Unicode.Scalar]] = [:]
        var decomposed: [Unicode.Scalar] = []
        decomposed.reserveCapacity(part.count)
        for scalar in part {
            if let known = cache[scalar] {
                decomposed.append(contentsOf: known)
            } else {
                let mapped = Array(String(scalar).decomposedStringWithCompatibilityMapping.unicodeScalars)
                cache[scalar] = mapped
                decomposed.append(contentsOf: mapped)
            }
        }
        let classes = decomposed.map { $0.properties.canonicalCombiningClass.rawValue }
        var start = 0
        while start < decomposed.count {
            guard classes[start] != 0 else {
                start += 1
                continue
            }
            var end = start
            while end < decomposed.count && classes[end] != 0 { end += 1 }
            let order = (start..<end).sorted { a, b in classes[a] != classes[b] ? classes[a] < classes[b] : a < b }
            let run = order.map { decomposed[$0] }
            decomposed.replaceSubrange(start..<end, with: run)
            start = end
        }
        return decomposed
    }

    /// Step 4 for one character: the lowercase of its uppercase, until nothing changes.
    private static func appendCaseFolded(_ scalar: Unicode.Scalar, to output: inout String.UnicodeScalarView) {
        if scalar.isASCII {
            output.append(scalar.value >= 0x41 && scalar.value <= 0x5A ? Unicode.Scalar(UInt8(scalar.value + 0x20)) : scalar)
            return
        }
        guard scalar.properties.changesWhenCaseMapped else {
            output.append(scalar)
            return
        }
        var current = [scalar]
        // ẞ → ß → ss takes two rounds; no character needs more than three.
        for _ in 0..<4 {
            var next: [Unicode.Scalar] = []
            for character in current {
                for upper in character.properties.uppercaseMapping.unicodeScalars {
                    next.append(contentsOf: upper.properties.lowercaseMapping.unicodeScalars)
                }
            }
            if next == current { break }
            current = next
        }
        output.append(contentsOf: current)
    }
}

extension String {
    /// The text as Folio compares it case- and diacritic-insensitively (Core Data's `[cd]`):
    /// `"Café"`, `"CAFE"` and `"cafe"` all fold to `"cafe"`, `"Straße"` to `"strasse"`.
    ///
    /// Use it on an attribute declared `folded` (see ``AttributeDescription``) in a
    /// `#Predicate`, a `SortDescriptor` or a ``SectionKey``: Folio then reads the folded
    /// key it keeps in the database, with an index, instead of folding every row.
    ///
    /// ```swift
    /// let text = searchField.folded
    /// let request = RecordRequest<Article>(
    ///     predicate: #Predicate { $0.title.folded.contains(text) },
    ///     sortBy: [SortDescriptor(\.title.folded)])
    /// ```
    ///
    /// In SQL, Folio folds the other side of a comparison itself; fold it in Swift too (as
    /// above) so that the predicate also gives the same answer when evaluated in memory.
    /// The definition, version `folio-fold-2`, is in the article <doc:SearchingAndSortingText>.
    public var folded: String { TextFolding.fold(self) }
}

extension Optional where Wrapped == String {
    /// The folded form of the text (`String.folded`), or `nil`: use it on an
    /// optional attribute declared `folded`, as in `($0.subtitle.folded ?? "").contains(text)`.
    public var folded: String? { self.map(TextFolding.fold) }
}
