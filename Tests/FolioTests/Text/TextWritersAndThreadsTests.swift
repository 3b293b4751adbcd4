import Foundation
import GRDB
import Testing
@testable import Folio

/// Searches agree with an oracle: live searches with every kind of writer, searches from several
/// threads while a raw writer makes keys stale, and a hostile corpus searched word by word.
@Suite("Searches with every writer, on several threads, in every script")
struct TextWritersAndThreadsTests {
    static let pieces = [
        "Café", "cafe", "CAFÉ", "thé", "tea", "Straße", "strasse", "🙂", "x-ray", "NEAR(", "\"q\"", "ﬁn", "fin", "İz", "iz",
        "a\u{0}b",
    ]
    static func text(_ rng: inout SplitMix64) -> String {
        (0..<Int.random(in: 0...3, using: &rng)).map { _ in rng.pick(pieces) }.joined(separator: rng.chance(0.2) ? "" : " ")
    }
    static func sqlString(_ s: String) -> String { "CAST(x'" + s.utf8.map { String(format: "%02x", $0) }.joined() + "' AS TEXT)" }

    /// A live controller with a search (prefixes or not, with a folded predicate, with
    /// folded first-letter sections) follows Folio writes, raw SQL that edits and moves
    /// rows, a second store, and the shell's REPLACE, id changes and deletes: after each
    /// commit its model equals a fresh fetch, and the keys and index follow the text.
    @Test(arguments: [0, 1, 2])
    @MainActor func liveSearchWithEveryWriter(_ variant: Int) async throws {
        let file = try StaleKeyTests.FileStore()
        let store = file.store
        var rng = SplitMix64(seed: UInt64(100 + variant))
        try insertPeople(
            store,
            (0..<300).map {
                Person(Self.text(&rng), city: rng.chance(0.3) ? Self.text(&rng) : nil, note: Self.text(&rng), age: $0)
            })
        let other = try Store(path: file.path, records: [Person.self])
        var request = RecordRequest<Person>(
            search: TextSearch(variant == 1 ? "caf" : "cafe", matchingPrefixes: variant == 1),
            sortBy: [SortDescriptor(\.name.folded), SortDescriptor(\.age)])
        if variant == 2 { let s = "c"; request.predicate = #Predicate { $0.name.folded.starts(with: s) || $0.age > 200 } }
        let harness = try await PersonHarness(store, request, sectionBy: variant == 0 ? .firstLetter(\.name) : nil)
        for round in 0..<40 {
            let ids = try store.fetchIdentifiers(RecordRequest<Person>()).map(\.rawValue)
            guard !ids.isEmpty else { break }
            let id = rng.pick(ids)
            let t1 = Self.text(&rng), t2 = Self.text(&rng), t3 = Self.text(&rng), move = rng.chance(0.5)
            let id2 = rng.pick(ids), id3 = rng.pick(ids), id4 = rng.pick(ids)
            switch round % 5 {
            case 0:
                try writeSync(store) { tx in
                    var p = Person(t1, note: t2, age: 1000 + round)
                    try tx.insert(&p)
                    if var q = try tx.fetchAll(RecordRequest<Person>(predicate: #Predicate { $0.age == round })).first {
                        q.note = t3
                        try tx.update(q)
                    }
                }
            case 1:
                try writeSync(store) { tx in
                    try tx.database.execute(
                        sql: "UPDATE person SET note = \(Self.sqlString(t1)), name = \(Self.sqlString(t2)) WHERE id = \(id)")
                    if move {
                        try tx.database.execute(
                            sql: "UPDATE person SET rowid = (SELECT max(id) + 1 FROM person) WHERE id = \(id)")
                    }
                }
            case 2:
                try writeSync(other) { tx in
                    var p = Person(t1, note: t2, age: 2000 + round)
                    try tx.insert(&p)
                    _ = try tx.delete(Person.self, id: RecordID(id2))
                }
                try store.synchronize()
            case 3:
                try sqlite3Shell(
                    file.path,
                    """
                    INSERT OR REPLACE INTO person (id, name, note, code, age) VALUES (\(id), \(Self.sqlString(t1)), \(Self.sqlString(t2)), '', 3000);
                    UPDATE person SET id = (SELECT max(id) + 5 FROM person) WHERE id = \(id2);
                    DELETE FROM person WHERE id = \(id3);
                    UPDATE person SET note = note || ' Café' WHERE id = \(id4);
                    """)
                try store.synchronize()
            default:
                try sqlite3Shell(
                    file.path,
                    "UPDATE person SET note = 'tea' WHERE id IN (SELECT id FROM person ORDER BY random() LIMIT 3); INSERT INTO person (name, note, code, age) VALUES ('Çava', 'CAFÉ crème', '', 4000);"
                )
                try store.synchronize()
            }
            try await harness.settle()
        }
        try expectSearchAndKeysFollowTheText(store)
    }

    /// Four threads search and count while a raw connection (not Folio: its rows are noted
    /// stale) swaps the texts of two rows per transaction: every read sees exactly the 50
    /// matching rows, after at most a fix-up.
    @Test func concurrentSearchesWhileRawWritersToggle() async throws {
        let file = try StaleKeyTests.FileStore()
        let store = file.store
        try insertPeople(
            store,
            (0..<200).map {
                Person(($0 < 50 ? "Álpha" : "Beta") + " \($0)", note: $0 < 50 ? "Álpha \($0)" : "beta \($0)", age: $0)
            })
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let raw = try DatabaseQueue(path: file.path, configuration: configuration)
        let writer = Task.detached {
            var rng = SplitMix64(seed: 7)
            for _ in 0..<150 {
                let a = Int.random(in: 1...200, using: &rng), b = Int.random(in: 1...200, using: &rng)
                try await raw.write { db in
                    let na = try String.fetchOne(db, sql: "SELECT note FROM person WHERE id = ?", arguments: [a])!
                    let nb = try String.fetchOne(db, sql: "SELECT note FROM person WHERE id = ?", arguments: [b])!
                    try db.execute(sql: "UPDATE person SET note = ?, name = ? WHERE id = ?", arguments: [nb, nb.uppercased(), a])
                    try db.execute(sql: "UPDATE person SET note = ?, name = ? WHERE id = ?", arguments: [na, na.uppercased(), b])
                }
            }
        }
        let alpha = "ALPHA"
        try await withThrowingTaskGroup(of: [String].self) { group in
            for reader in 0..<4 {
                group.addTask {
                    var problems: [String] = []
                    for i in 0..<60 {
                        let search = RecordRequest<Person>(
                            search: TextSearch(i % 2 == 0 ? "alpha" : "ALP", matchingPrefixes: i % 2 == 1))
                        let n = try store.count(search)
                        if n != 50 { problems.append("reader \(reader) count \(n)") }
                        let ids = try await store.fetch(search).count
                        if ids != 50 { problems.append("reader \(reader) fetch \(ids)") }
                        let p = try store.count(
                            RecordRequest<Person>(predicate: #Predicate { $0.name.folded.starts(with: alpha) }))
                        if p != 50 { problems.append("reader \(reader) prefix \(p)") }
                    }
                    return problems
                }
            }
            for try await problems in group { #expect(problems.isEmpty, "\(problems.prefix(5))") }
        }
        try await writer.value
        try expectSearchAndKeysFollowTheText(store)
    }

    static let corpus = [
        "Diyarbakır İSTANBUL istanbul", "Straße STRASSE ẞtraße", "\u{212A}elvin kelvin", "ﬁsh ﬂour", "Ｆｕｌｌ ｗｉｄｔｈ",
        "Café e\u{301}te\u{301}", "עִבְרִית עברית", "مَرْحَبًا", "日本語 かな ガ", "한국어", "👨‍👩‍👧 family", "🇫🇷 France",
        "a\u{0}b c", "x²y H₂O", "①② Ⅻ", "ǅemal Ǆ", "ᾳ Ἀθῆναι", "नमस्ते हिन्दी", "ไทย ภาษา", "\u{200B}zero\u{200B}width", "tab\there",
        "ΣΊΣΥΦΟΣ σίσυφος", "Œuvre œuvre", "Ærø", "ĳssel IJssel",
    ]
    static func words(_ text: String) -> Set<String> {
        var result: Set<String> = []
        var current = String.UnicodeScalarView()
        for scalar in text.folded.unicodeScalars {
            if SearchText.isIndexedWordCharacter(scalar) {
                current.append(scalar)
            } else {
                if !current.isEmpty { result.insert(String(current)) }
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { result.insert(String(current)) }
        return result
    }
    /// Every word of every text of a corpus of scripts and compatibility forms, searched as
    /// written, in capitals, NFD and NFC, finds exactly the texts that have it.
    @Test func hostileCorpusAgainstOracle() throws {
        let store = try Store.inMemory(records: [Person.self])
        let people = try insertPeople(store, Self.corpus.enumerated().map { Person("p\($0.offset)", note: $0.element) })
        var failures: [String] = []
        var checked = 0
        for person in people {
            for word in Self.words(person.note) {
                for variant in [
                    word, word.uppercased(), word.decomposedStringWithCanonicalMapping,
                    word.precomposedStringWithCanonicalMapping,
                ] {
                    let expected = Set(
                        people.filter {
                            Self.words($0.note).contains(
                                variant.folded.unicodeScalars.allSatisfy(SearchText.isIndexedWordCharacter)
                                    ? variant.folded : "\u{1}")
                        }.map(\.id!))
                    guard variant.folded.unicodeScalars.allSatisfy(SearchText.isIndexedWordCharacter) else { continue }
                    let found = Set(try store.fetch(RecordRequest<Person>(search: TextSearch(variant))).map { $0!.id! })
                    checked += 1
                    if found != expected {
                        failures.append("\(variant.debugDescription) in \(person.note.debugDescription): \(found) vs \(expected)")
                    }
                }
            }
        }
        #expect(checked > 150)
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }
}
