import Foundation
import GRDB
import Testing
@testable import Folio

/// What a search and the full-text index call a word: emoji and symbols newer than the
/// tokenizer's tables, repeated words, and every character of every plane.
@Suite("Search words: the index and a search agree")
struct SearchWordTests {
    static func notes(_ store: Store, _ text: String, prefixes: Bool = false) throws -> Set<String> {
        Set(try store.fetch(RecordRequest<Person>(search: TextSearch(text, matchingPrefixes: prefixes))).map { $0!.note })
    }

    /// Emoji and symbols assigned after Unicode 6.1 (SQLite's tokenizer tables) separate
    /// words in the index as in searches: "thanks🙂" has the word "thanks". Before, the
    /// index made one word "thanks🙂" of it, and searching "thanks" did not find it, while
    /// searching "🙂" matched every record.
    @Test func emojiAndSymbolsNewerThanUnicode61SeparateWords() throws {
        let store = try Store.inMemory(records: [Person.self])
        let notes = [
            "thanks🙂", "love it🥰", "lol🤣 ok", "melting🫠face", "100₿ paid", "old😀smile", "go🇫🇷team", "family👨‍👩‍👧trip",
            "like👍🏽this", "ꞔꞔ new letter", "plain thanks", "🙂",
        ]
        try insertPeople(store, notes.map { Person("x", note: $0) })
        #expect(try Self.notes(store, "thanks") == ["thanks🙂", "plain thanks"])
        #expect(try Self.notes(store, "it") == ["love it🥰"])
        #expect(try Self.notes(store, "LOL ok") == ["lol🤣 ok"])
        #expect(try Self.notes(store, "melting face") == ["melting🫠face"])
        #expect(try Self.notes(store, "\"melting face\"") == ["melting🫠face"])
        #expect(try Self.notes(store, "100") == ["100₿ paid"])
        #expect(try Self.notes(store, "smile old") == ["old😀smile"])
        #expect(try Self.notes(store, "team") == ["go🇫🇷team"])
        #expect(try Self.notes(store, "trip family") == ["family👨‍👩‍👧trip"])
        #expect(try Self.notes(store, "this") == ["like👍🏽this"])
        #expect(try Self.notes(store, "than", prefixes: true) == ["thanks🙂", "plain thanks"])
        // A letter newer than Unicode 6.1 is a letter; emoji alone are no word (every record).
        #expect(try Self.notes(store, "ꞔꞔ") == ["ꞔꞔ new letter"])
        #expect(try Self.notes(store, "plain ꞔꞔ").isEmpty)
        #expect(try Self.notes(store, "🙂").count == notes.count)
        #expect(try Self.notes(store, "thanks🙂") == ["thanks🙂", "plain thanks"])
        #expect(try Self.notes(store, "🥰🫠").count == notes.count)
    }

    /// A pasted text that repeats a word is one condition per distinct word: 300,000 copies
    /// of a word took 15 seconds to search (a phrase each for the index to match).
    @Test func aRepeatedWordIsOneCondition() throws {
        #expect(
            SearchText.terms(of: "Café cafe CAFÉ café* cafe* \"cafe\"", prefixes: false) == [
                .init(text: "cafe", prefix: false), .init(text: "cafe", prefix: true),
            ])
        let store = try Store.inMemory(records: [Person.self])
        try insertPeople(store, [Person("a", note: "w1 w2 alpha"), Person("b", note: "w1"), Person("c", note: "w2")])
        let text = String(repeating: "w1 W1 ", count: 150_000)
        // The terms above prove the repeats are one condition; no timing here (the machine is shared).
        #expect(SearchText.terms(of: text, prefixes: true) == [.init(text: "w1", prefix: true)])
        #expect(try fetchedNames(store, RecordRequest(search: TextSearch(text, matchingPrefixes: true))) == ["a", "b"])
    }

    /// Every character is a word character in a search exactly when the index's tokenizer
    /// makes a word of it (the rule that decides which search words are left out).
    @Test func theSearchAndTheIndexAgreeOnEveryCharacter() throws {
        let store = try Store.inMemory(records: [Person.self])
        // Planes 0, 1 and 14 whole; the ideographs of planes 2 and 3 and the unassigned and
        // private-use planes sampled.
        var values: [UInt32] = Array(1..<0xD800) + Array(0xE000...0x1FFFF) + Array(0xE0000...0xE0FFF)
        values += stride(from: 0x20000, to: 0x40000, by: 7).map { $0 } + stride(from: 0x40000, to: 0xE0000, by: 97).map { $0 }
        values += stride(from: 0xE1000, through: 0x10FFFF, by: 97).map { $0 }
        values = Array(Set(values + [0x4FFFE, 0x10FFFF, 0xFFFFF]))  // a few noncharacters the strides miss
        let disagreements = try store.write { tx -> [String] in
            let db = tx.database
            try db.execute(sql: "CREATE VIRTUAL TABLE temp.folio_test_vocab USING fts5vocab(main, folio_person_fts, instance)")
            let insert = try db.makeStatement(sql: "INSERT INTO folio_person_fts (rowid, folio_note_folded) VALUES (?, ?)")
            for value in values {
                try insert.execute(arguments: [Int64(value), String(Character(Unicode.Scalar(value)!))])
            }
            let tokenized = Set(try Int64.fetchAll(db, sql: "SELECT DISTINCT doc FROM temp.folio_test_vocab"))
            try db.execute(sql: "DROP TABLE temp.folio_test_vocab")
            try db.execute(sql: "DELETE FROM folio_person_fts")
            return values.compactMap { value in
                let scalar = Unicode.Scalar(value)!
                let word = SearchText.isIndexedWordCharacter(scalar)
                return word == tokenized.contains(Int64(value))
                    ? nil : String(format: "U+%04X search: %@", value, word ? "word" : "separator")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(20)) (\(disagreements.count))")
    }
}
