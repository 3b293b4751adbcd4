import Foundation
import Testing
@testable import Folio

/// The stated limits of folded text, each demonstrated exactly (these tests fail if the
/// behaviour changes, so that the documentation is changed with it), and NUL in search words.
@Suite("Folded text: stated limits and NUL in search words")
struct FoldedComparisonLimitTests {
    /// folio-fold-2 composes Hangul again: `"한"` folds to U+D55C, after `"中"` (U+4E2D) by its
    /// bytes as by Swift's `<`, so a `<` of folded text gives the same rows in a fetch and in
    /// `predicate.evaluate(_:)`. (folio-fold-1's key was three jamo, whose bytes came before
    /// 中's: SQL found 한 and 가 below 中, memory did not.)
    @Test func foldedLessThanOfHangulAgreesBetweenSQLAndPredicateEvaluate() throws {
        let store = try Store.inMemory(records: [Person.self])
        let people = [Person("한"), Person("가"), Person("中"), Person("a"), Person("\u{1112}\u{1161}\u{11AB}")]
        try insertPeople(store, people)
        for (pivot, expected) in [
            ("中", ["a"]), ("하", ["a", "가", "中"]), ("한", ["a", "가", "中"]), ("힣", ["a", "가", "中", "한", "한"]),
        ] {
            let value = pivot.folded
            let predicate = #Predicate<Person> { $0.name.folded < value }
            let fetched = try fetchedNames(store, RecordRequest(predicate: predicate)).map(
                \.precomposedStringWithCanonicalMapping)
            #expect(fetched.sorted() == expected.sorted(), "< \(pivot)")
            let evaluated = try people.filter { try predicate.evaluate($0) }.map(\.name.precomposedStringWithCanonicalMapping)
            #expect(evaluated.sorted() == expected.sorted(), "< \(pivot) in memory")
        }
        #expect(Array(TextFolding.fold("한").unicodeScalars) == ["\u{D55C}"])
        #expect(Array(TextFolding.fold("\u{1112}\u{1161}\u{11AB}").unicodeScalars) == ["\u{D55C}"])
        // A prefix is a prefix of syllables, in SQL as in memory: 하 does not begin 한.
        let prefix = "하".folded
        let starts = #Predicate<Person> { $0.name.folded.starts(with: prefix) }
        #expect(try fetchedNames(store, RecordRequest(predicate: starts)).isEmpty)
        #expect(try !starts.evaluate(Person("한")))
    }

    /// What still differs: characters assigned after Unicode 15.0 are kept as they are, so
    /// that keys do not depend on the platform — but Swift's own `String` comparison
    /// normalizes them by the platform's tables. Kirat Rai (Unicode 16) has a vowel sign
    /// made of two others (U+16D67 twice is U+16D68): on a platform whose Swift knows it,
    /// the key of the pair sorts before U+16D67 U+16D68 by its bytes, after it in Swift.
    @Test func charactersNewerThanTheDefinitionMayCompareOtherwiseInMemory() throws {
        let pair = "\u{16D67}\u{16D67}", other = "\u{16D67}\u{16D68}"
        #expect(pair.folded.unicodeScalars.elementsEqual(pair.unicodeScalars), "kept as they are")
        let store = try Store.inMemory(records: [Person.self])
        let people = [Person(pair), Person(other)]
        try insertPeople(store, people)
        let value = other.folded
        let predicate = #Predicate<Person> { $0.name.folded < value }
        #expect(try fetchedNames(store, RecordRequest(predicate: predicate)) == [pair], "by bytes")
        let evaluated = try people.filter { try predicate.evaluate($0) }.map(\.name)
        if pair == "\u{16D68}" {
            // This platform's Swift composes them: 16D68 is after 16D67 16D68.
            #expect(evaluated.isEmpty)
        } else {
            #expect(evaluated == [pair])
        }
    }

    /// What still differs: `starts(with:)` (and `contains`) compare bytes in SQL and
    /// characters — grapheme clusters — in memory, so a value that ends inside a character of
    /// the text matches in SQL only: `"क"` begins `"कि"` by its bytes, while Swift's
    /// characters are `"कि"`, whole.
    @Test func aPrefixEndingInsideACharacterMatchesInSQLOnly() throws {
        let store = try Store.inMemory(records: [Person.self])
        let people = [Person("कि"), Person("क"), Person("👍🏽")]
        try insertPeople(store, people)
        for (prefix, inSQL, inMemory) in [("क", ["क", "कि"], ["क"]), ("👍", ["👍🏽"], [])] {
            let value = prefix.folded
            let starts = #Predicate<Person> { $0.name.folded.starts(with: value) }
            #expect(try fetchedNames(store, RecordRequest(predicate: starts)).sorted() == inSQL.sorted(), "\(prefix)")
            #expect(try people.filter { try starts.evaluate($0) }.map(\.name) == inMemory, "\(prefix) in memory")
        }
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
