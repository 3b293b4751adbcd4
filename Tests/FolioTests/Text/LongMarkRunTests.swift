import Foundation
import GRDB
import Testing
@testable import Folio

/// Text made of long runs of combining marks ("Zalgo" text, pasted into a field).
@Suite("Long runs of combining marks")
struct LongMarkRunTests {
    /// Marks of every combining class, diacritics or not, of Unicode 15.0 at most.
    static let marks: [Unicode.Scalar] = (0x300...0x1E8FF).compactMap { value -> Unicode.Scalar? in
        guard let scalar = Unicode.Scalar(value), !ReferenceFolding.isNewerThanDefinition(scalar) else { return nil }
        let category = scalar.properties.generalCategory
        guard category == .nonspacingMark || category == .spacingMark || category == .enclosingMark else { return nil }
        return scalar
    }

    static func run(_ length: Int, _ rng: inout SplitMix64) -> String {
        var view = String.UnicodeScalarView()
        view.append(rng.pick(["a", "É", "한", "\u{0F73}", "ǅ", "ﬁ"] as [Unicode.Scalar]))
        for _ in 0..<length {
            view.append(rng.pick(marks))
            if rng.chance(0.01) { view.append(rng.pick(["\u{0F73}", "\u{0344}", "\u{1E0A}", "ᾳ"] as [Unicode.Scalar])) }
        }
        return String(view)
    }

    /// A run longer than the ones Foundation is given whole is decomposed and ordered as
    /// Foundation does, and folds as the reference implementation does.
    @Test func longRunsDecomposeAsFoundationDoes() {
        var rng = SplitMix64(seed: 5)
        for length in [0, 1, 255, 256, 257, 300, 1_000, 3_000] {
            for _ in 0..<3 {
                let text = Self.run(length, &rng) + "x" + Self.run(length / 2, &rng)
                let expected = Array(text.decomposedStringWithCompatibilityMapping.unicodeScalars)
                #expect(Array(TextFolding.compatibilityDecomposed(text.unicodeScalars)) == expected, "length \(length)")
                #expect(
                    Array(text.folded.unicodeScalars) == Array(ReferenceFolding.fold(text).unicodeScalars), "length \(length)")
            }
        }
    }

    /// A megabyte of alternating accents folded in seconds: Foundation's canonical ordering
    /// alone took minutes (quadratic in the run's length), in every write of such a text, in
    /// every predicate value and search word made of it.
    @Test func aMegabyteOfAlternatingAccentsFoldsInLinearTime() throws {
        var view = String.UnicodeScalarView()
        view.append("a")
        for index in 0..<400_000 { view.append(index % 2 == 0 ? "\u{301}" : "\u{316}") }
        view.append(contentsOf: " Zalgo".unicodeScalars)
        let text = String(view)
        let clock = ContinuousClock()
        var folded = ""
        let elapsed = clock.measure { folded = text.folded }
        #expect(folded == "a zalgo")
        // About 1 s alone in a debug build; the quadratic ordering took minutes. The bound is
        // wide because the suite runs beside the others on two shared cores.
        #expect(elapsed < .seconds(60), "\(elapsed)")
        let store = try Store.inMemory(records: [Person.self])
        try insertPeople(store, [Person(text, note: text), Person("b", note: "other")])
        let key = "A ZALGO"
        #expect(try fetchedNames(store, RecordRequest(predicate: #Predicate { $0.name.folded == key })) == [text])
        #expect(try fetchedNames(store, RecordRequest(search: TextSearch("zalgo"))) == [text])
        #expect(try fetchedNames(store, RecordRequest(search: TextSearch(text))) == [text])
    }
}
