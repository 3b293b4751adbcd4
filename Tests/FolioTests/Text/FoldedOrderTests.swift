import Foundation
import GRDB
import Testing
@testable import Folio

/// folio-fold-2's promise: folded keys are NFC, so the order SQLite gives them (their bytes,
/// `BINARY`) is the order of Swift's `<` and `==` on `String.folded` — what
/// `predicate.evaluate(_:)` uses — for Korean as for every other text of Unicode 15.0.
/// (With folio-fold-1, Hangul keys were jamo: these tests fail on them.)
@Suite("Folded order: SQL and memory agree")
struct FoldedOrderTests {
    /// Random text, 8 rounds of 150 strings: each stored key is `String.folded`, in NFC; the
    /// order of any two keys by bytes is Swift's; a folded sort is Swift's sort; and `<`,
    /// `<=`, `>`, `>=` and `==` with a folded value select the same rows in SQL as in memory.
    @Test func sqlOrderAndPredicatesAgreeWithSwiftOnRandomText() throws {
        var generator = HangulText(rng: SplitMix64(seed: 0x4A_4D0))
        var pairs = 0, predicates = 0
        for _ in 0..<8 {
            let store = try Store.inMemory(records: [Person.self])
            let people = try insertPeople(store, (0..<150).map { _ in Person(generator.next()) })
            let keys = try foldedNameKeys(store)
            for person in people {
                #expect(keys[person.id!.rawValue] == Array(person.name.folded.utf8), "key of \(codePoints(person.name))")
                let folded = person.name.folded
                #expect(Array(folded.precomposedStringWithCanonicalMapping.utf8) == Array(folded.utf8))
            }
            // Every pair: bytes and Swift agree (`<`, `==`, `>`).
            let folded = people.map(\.name.folded)
            for i in folded.indices {
                for j in folded.indices where i < j {
                    let a = folded[i], b = folded[j]
                    guard byteOrder(a, b) == swiftOrder(a, b) else {
                        Issue.record("\(codePoints(a)) vs \(codePoints(b)): bytes \(byteOrder(a, b)), Swift \(swiftOrder(a, b))")
                        return
                    }
                    pairs += 1
                }
            }
            // The folded sort (key, then text bytes, then id) is Swift's sort of the same.
            let sql = try store.fetchIdentifiers(RecordRequest<Person>(sortBy: [SortDescriptor(\.name.folded)])).map(\.rawValue)
            let swift = people.sorted { x, y in
                let a = x.name.folded, b = y.name.folded
                if a != b { return a < b }
                if !x.name.hasSameBytes(as: y.name) { return byteOrder(x.name, y.name) < 0 }
                return x.id!.rawValue < y.id!.rawValue
            }.map { $0.id!.rawValue }
            #expect(sql == swift)
            // Comparisons with folded values: a stored text's, and new text.
            for _ in 0..<6 {
                let pivot = (generator.rng.chance(0.5) ? generator.rng.pick(people).name : generator.next()).folded
                let requests: [(String, Predicate<Person>)] = [
                    ("<", #Predicate<Person> { $0.name.folded < pivot }), ("<=", #Predicate<Person> { $0.name.folded <= pivot }),
                    (">", #Predicate<Person> { $0.name.folded > pivot }), (">=", #Predicate<Person> { $0.name.folded >= pivot }),
                    ("==", #Predicate<Person> { $0.name.folded == pivot }),
                ]
                for (name, predicate) in requests {
                    let inSQL = Set(try store.fetchIdentifiers(RecordRequest(predicate: predicate)).map(\.rawValue))
                    let inMemory = Set(try people.filter { try predicate.evaluate($0) }.map { $0.id!.rawValue })
                    #expect(inSQL == inMemory, "\(name) \(codePoints(pivot))")
                    predicates += 1
                }
            }
        }
        #expect(pairs == 8 * 150 * 149 / 2 && predicates == 8 * 6 * 5)
    }

    /// The cases by hand: Hangul against the characters v1 ordered it wrongly against, jamo
    /// that do not compose, NFD input, the Arabic and Indic compositions, marks a removed
    /// mark of class 0 separated, case pairs beyond ASCII, NUL.
    @Test func handPickedPairsOrderAsSwiftDoes() {
        let texts = [
            "한", "\u{1112}\u{1161}\u{11AB}", "中", "가", "\u{1100}", "\u{1161}", "\u{11A8}", "\u{1100}\u{1100}\u{1161}",
            "\u{AC00}\u{11A8}", "\u{AC01}\u{11A8}", "\u{1113}\u{1161}", "ㄱ", "ㅏ", "ᄀ", "\u{3200}", "\u{FFA1}", "\u{D7A3}",
            "\u{D7A4}", "أ", "\u{627}\u{654}", "\u{627}ي", "آ", "\u{BCA}", "\u{BC6}\u{BBE}", "\u{BC6}\u{BBF}", "\u{CCB}",
            "a\u{655}\u{E47}\u{654}", "a\u{654}\u{E47}\u{655}", "a\u{654}", "ß", "SS", "\u{1E9E}", "\u{212A}", "k", "ı", "İ",
            "I", "i", "ς", "Σ", "\u{0}", "a\u{0}", "a", "", "\u{7F}", "\u{80}", "\u{10FFFD}",
        ]
        for a in texts {
            for b in texts {
                let x = a.folded, y = b.folded
                #expect(byteOrder(x, y) == swiftOrder(x, y), "\(codePoints(a)) vs \(codePoints(b))")
            }
        }
        #expect("한".folded == "\u{1112}\u{1161}\u{11AB}".folded && "한".folded.unicodeScalars.count == 1)
        #expect(byteOrder("한".folded, "中".folded) > 0, "한 (U+D55C) after 中 (U+4E2D), as in Swift")
        #expect("a\u{655}\u{E47}\u{654}".folded.unicodeScalars.elementsEqual("a\u{654}\u{E47}\u{655}".folded.unicodeScalars))
    }

    /// The `sqlite3` shell writes Korean in NFD (as macOS file names and some programs do)
    /// beside its NFC form: Folio folds both to one key, finds both by `==`, by prefix, by
    /// search and in memory, and sorts them together.
    @Test func nfdKoreanWrittenByTheShellFoldsAsItsNFCForm() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("korean.sqlite")
        let store = try Store(path: path, records: [Person.self])
        try insertPeople(store, [Person("한국어", note: "한국어 사전"), Person("中文", note: "中文"), Person("일본어", note: "일본어")])
        let nfd = "한국어".decomposedStringWithCanonicalMapping
        #expect(nfd.unicodeScalars.count == 8)
        let hex = nfd.utf8.map { String(format: "%02x", $0) }.joined()
        try sqlite3Shell(
            path,
            "INSERT INTO person (name, note, code, age) VALUES (CAST(x'\(hex)' AS TEXT), CAST(x'\(hex)' || ' 문법' AS TEXT), '', 7);"
        )
        try store.synchronize()
        let keys = try foldedNameKeys(store).values.map { $0 }
        #expect(keys.filter { $0 == Array("한국어".utf8) }.count == 2, "one key for NFC and NFD")
        let key = "한국어".folded
        let equal = #Predicate<Person> { $0.name.folded == key }
        let found = try store.fetch(RecordRequest(predicate: equal)).compactMap { $0 }
        #expect(found.count == 2 && Set(found.map { Array($0.name.utf8) }) == [Array("한국어".utf8), Array(nfd.utf8)])
        #expect(try found.allSatisfy { try equal.evaluate($0) })
        let prefix = "한국".folded
        #expect(try store.count(RecordRequest(predicate: #Predicate<Person> { $0.name.folded.starts(with: prefix) })) == 2)
        #expect(try store.count(RecordRequest<Person>(search: TextSearch("한국어"))) == 2)
        #expect(try store.count(RecordRequest<Person>(search: TextSearch(nfd))) == 2)
        #expect(try store.count(RecordRequest<Person>(search: TextSearch("문법"))) == 1)
        let sorted = try fetchedNames(store, RecordRequest(sortBy: [SortDescriptor(\.name.folded)]))
        #expect(sorted.map(\.folded) == ["中文", "일본어", "한국어", "한국어"].map(\.folded))
        // `<` in SQL and in memory, against the other scripts.
        let all = try store.fetch(RecordRequest<Person>()).compactMap { $0 }
        for pivot in ["中", "일", "한", "한국어", "\u{1112}"] {
            let value = pivot.folded
            let less = #Predicate<Person> { $0.name.folded < value }
            let inSQL = Set(try store.fetch(RecordRequest(predicate: less)).compactMap { $0?.id })
            #expect(inSQL == Set(try all.filter { try less.evaluate($0) }.map(\.id)), "< \(pivot)")
        }
    }

    /// Step 7 is linear: 400 kB of two alternating marks that folding keeps (Arabic
    /// hamza above and below) after an alef composes the first, keeps the rest in canonical
    /// order, in seconds.
    @Test func fourHundredKilobytesOfKeptMarksComposeInLinearTime() {
        var view = String.UnicodeScalarView()
        view.append("\u{627}")
        for index in 0..<200_000 { view.append(index % 2 == 0 ? "\u{654}" : "\u{655}") }
        let clock = ContinuousClock()
        var folded = ""
        let elapsed = clock.measure { folded = String(view).folded }
        let scalars = Array(folded.unicodeScalars)
        // Canonical order puts the 100,000 hamzas below (220) first; the first composes.
        #expect(scalars.first == "\u{625}" && scalars.count == 200_000)
        #expect(scalars[1..<100_000].allSatisfy { $0 == "\u{655}" } && scalars[100_000...].allSatisfy { $0 == "\u{654}" })
        #expect(elapsed < .seconds(60), "\(elapsed)")
    }
}

/// Every row's folded name key, as bytes, by id.
func foldedNameKeys(_ store: Store) throws -> [Int64: [UInt8]] {
    try store.read { db in
        var keys: [Int64: [UInt8]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, CAST(folio_name_folded AS BLOB) FROM person") {
            keys[row[0]] = Array((row[1] as Data?) ?? Data())
        }
        return keys
    }
}
