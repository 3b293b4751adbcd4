import Foundation
import Testing
@testable import Folio

/// The stated limits of folded text, each demonstrated exactly (these tests fail if the
/// behaviour changes, so that the documentation is changed with it), and NUL in search words.
@Suite("Folded text: stated limits and NUL in search words")
struct FoldedComparisonLimitTests {
    /// Folded keys are not recomposed: `"한"` folds to its three jamo (U+1112 U+1161 U+11AB).
    /// SQL orders the key by its bytes, so it sorts before `"中"` (U+4E2D); Swift's `<` on
    /// `String` compares canonically equivalent (composed) text, `"한"` (U+D55C) after `"中"`.
    /// A `<`, `<=`, `>` or `>=` of folded text with Hangul (or another script whose folded
    /// form recomposes) can therefore differ between a fetch and `predicate.evaluate(_:)`;
    /// `==`, `starts(with:)` and sorting agree. The README and SearchingAndSortingText.md
    /// state it.
    @Test func foldedLessThanOfHangulDiffersBetweenSQLAndPredicateEvaluate() throws {
        let store = try Store.inMemory(records: [Person.self])
        try insertPeople(store, [Person("한"), Person("가"), Person("中"), Person("a")])
        let predicate = #Predicate<Person> { $0.name.folded < "中" }
        let fetched = Set(try fetchedNames(store, RecordRequest(predicate: predicate)))
        // SQL: by the folded key's bytes, the jamo (E1 84 …) before 中 (E4 B8 AD).
        #expect(fetched == ["한", "가", "a"])
        // In memory: Swift composes the jamo, and 한 (U+D55C) and 가 (U+AC00) come after 中.
        let evaluated = Set(
            try [Person("한"), Person("가"), Person("中"), Person("a")].filter { try predicate.evaluate($0) }.map(\.name))
        #expect(evaluated == ["a"])
        // The keys are the jamo; equality agrees on both sides.
        #expect(Array(TextFolding.fold("한").unicodeScalars) == ["\u{1112}", "\u{1161}", "\u{11AB}"])
        let equal = #Predicate<Person> { $0.name.folded == "한" }
        #expect(try fetchedNames(store, RecordRequest(predicate: equal)) == ["한"])
        #expect(try equal.evaluate(Person("한")))
    }

    /// A NUL inside a search word separates words as `-` does — the index's tokenizer makes
    /// no word of it — so `"a\0b"` is the phrase "a b": before, the NUL was read as a space
    /// and `"a\0b"` found "b … a" too.
    @Test func aNULInsideASearchWordMakesAPhraseLikeAHyphen() throws {
        #expect(SearchText.terms(of: "alpha\0beta", prefixes: false) == [.init(text: "alpha beta", prefix: false)])
        #expect(SearchText.terms(of: "alpha-beta", prefixes: false) == [.init(text: "alpha-beta", prefix: false)])
        #expect(SearchText.terms(of: "\0 \0\0", prefixes: false).isEmpty)
        #expect(SearchText.terms(of: "al\0*", prefixes: false) == [.init(text: "al ", prefix: true)])
        let store = try Store.inMemory(records: [Person.self])
        try insertPeople(
            store,
            [
                Person("1", note: "alpha beta"), Person("2", note: "beta alpha"), Person("3", note: "alpha-beta x"),
                Person("4", note: "alpha\0beta"), Person("5", note: "alphabeta"), Person("6", note: "alpha gamma beta"),
            ])
        func names(_ text: String) throws -> Set<String> {
            Set(try fetchedNames(store, RecordRequest(search: TextSearch(text))))
        }
        #expect(try names("alpha\0beta") == ["1", "3", "4"])
        #expect(try names("alpha\0beta") == (try names("alpha-beta")))
        #expect(try names("\"alpha\0beta\"") == ["1", "3", "4"])
        #expect(try names("beta\0") == ["1", "2", "3", "4", "6"])
        #expect(try names("\0").count == 6, "a text with no word matches every record")
    }
}
