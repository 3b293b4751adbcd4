import Foundation
import GRDB
import Testing
@testable import Folio

/// A file whose keys folio-fold-1 made is rebuilt once, at open, with progress; and a file
/// of folio-fold-2 opened by a Folio that still says folio-fold-1 is rebuilt the same way:
/// any other version, not only an older one, means the keys are not this Folio's.
@Suite("Folding upgrade: keys of another folding version")
struct FoldingUpgradeTests {
    let directory: ScratchDirectory
    let path: String
    /// Korean typed composed and as jamo, and text whose keys the two versions share.
    static let names = [
        "한국어", "\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}", "中文", "가나다", "Émile", "STRASSE", "Straße", "ı",
        "a\u{0}b", "", "أحمد", "\u{BC6}\u{BBE}",
    ]
    static let rows = 2_500

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("people.sqlite")
    }

    /// A file as a Folio of folio-fold-1 left it: made by this Folio (2,500 rows and two at
    /// the extremes of rowids), then every key replaced by version 1's — the full-text index
    /// follows through its triggers — no row noted stale, and the version recorded as
    /// `folio-fold-1`.
    func makeVersion1File() throws {
        let store = try Store(path: path, records: [Person.self])
        try store.write { tx in
            for index in 0..<Self.rows {
                let name = Self.names[index % Self.names.count]
                var person = Person(name + " \(index)", city: index % 2 == 0 ? name : nil, note: "note \(name)")
                try tx.insert(&person)
            }
            for id in [Int64.min, Int64.max] {
                try tx.database.execute(
                    sql: "INSERT INTO person (id, name, note, code, age) VALUES (?, '한 extreme', '한 extreme', '', 0)",
                    arguments: [id])
            }
        }
        try store.close()
        try rewriteKeys(ReferenceFolding.foldVersion1, version: "folio-fold-1")
    }

    /// Replaces every key by `fold`'s, clears the stale rows the triggers noted, records `version`.
    func rewriteKeys(_ fold: (String) -> String, version: String) throws {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.write { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, CAST(name AS BLOB), CAST(city AS BLOB), CAST(note AS BLOB) FROM person")
            for row in rows {
                func key(_ index: Int) -> Data? {
                    (row[index] as Data?).map { Data(fold(String(decoding: $0, as: UTF8.self)).utf8) }
                }
                try db.execute(
                    sql:
                        "UPDATE person SET folio_name_folded = CAST(? AS TEXT), folio_city_folded = CAST(? AS TEXT), folio_note_folded = CAST(? AS TEXT) WHERE id = ?",
                    arguments: [key(1) ?? Data(), key(2), key(3) ?? Data(), row[0] as Int64])
            }
            try db.execute(sql: "DELETE FROM folio_stale_keys")
            try db.execute(
                sql: "UPDATE folio_metadata SET value = ? WHERE key = 'folding_version:person'", arguments: [version])
        }
    }

    /// Whether every key of the file is `fold`'s, and the full-text index holds exactly the keys.
    func keysAre(_ fold: (String) -> String) throws -> Bool {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            let rows = try Row.fetchAll(
                db,
                sql:
                    "SELECT CAST(name AS BLOB), CAST(folio_name_folded AS BLOB), CAST(note AS BLOB), CAST(folio_note_folded AS BLOB) FROM person"
            )
            let keysMatch = rows.allSatisfy { row in
                [(0, 1), (2, 3)].allSatisfy { text, key in
                    Array(fold(String(decoding: (row[text] as Data?) ?? Data(), as: UTF8.self)).utf8)
                        == Array((row[key] as Data?) ?? Data())
                }
            }
            let indexDiffers = try Int.fetchOne(
                db,
                sql:
                    "SELECT count(*) FROM person p LEFT JOIN folio_person_fts f ON f.rowid = p.id WHERE f.rowid IS NULL OR f.folio_note_folded IS NOT p.folio_note_folded OR f.folio_city_folded IS NOT p.folio_city_folded"
            )
            let indexRows = try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_person_fts")
            return keysMatch && indexDiffers == 0 && indexRows == Self.rows + 2
        }
    }

    func recordedVersion() throws -> String? {
        try fileValue(path, "SELECT value FROM folio_metadata WHERE key = 'folding_version:person'")
    }

    /// Opens the file, collecting the opening's progress.
    func open() throws -> (Store, [OpeningProgress]) {
        let steps = Locked<[OpeningProgress]>([])
        let store = try Store(path: path, records: [Person.self]) { step in steps.withLock { $0.append(step) } }
        return (store, steps.current)
    }

    /// Progress from 0 to the total, never back, ending finished at exactly the total.
    func expectWholeProgress(_ steps: [OpeningProgress], total: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(steps.first == OpeningProgress(completed: 0, total: total), sourceLocation: sourceLocation)
        #expect(steps.last == OpeningProgress(completed: total, total: total, isFinished: true), sourceLocation: sourceLocation)
        #expect(steps.allSatisfy { $0.total == total }, sourceLocation: sourceLocation)
        #expect(zip(steps, steps.dropFirst()).allSatisfy { $0.completed <= $1.completed }, sourceLocation: sourceLocation)
        #expect(steps.filter(\.isFinished).count == 1 && steps.last?.fractionCompleted == 1, sourceLocation: sourceLocation)
        // Keys and index, a thousand rows at a time: 3 batches of each at least.
        #expect(steps.count >= 8, "\(steps)", sourceLocation: sourceLocation)
    }

    @Test func aVersion1FileIsRebuiltOnceAtOpenWithProgress() throws {
        try makeVersion1File()
        #expect(try keysAre(ReferenceFolding.foldVersion1) && !(try keysAre(ReferenceFolding.fold)))
        #expect(try recordedVersion() == "folio-fold-1")

        let (store, steps) = try open()
        // Every row twice: its keys, then its words in the full-text index.
        expectWholeProgress(steps, total: 2 * (Self.rows + 2))
        try expectKeysCurrent(store)
        #expect(try keysAre(ReferenceFolding.fold))
        #expect(try recordedVersion() == TextFolding.version)
        try store.write { tx in
            try tx.database.execute(sql: "INSERT INTO folio_person_fts(folio_person_fts) VALUES('integrity-check')")
        }
        // Results and searches: sorts, comparisons and words as the new keys say.
        #expect(
            try store.fetchIdentifiers(RecordRequest<Person>(sortBy: [SortDescriptor(\.name.folded)])).map(\.rawValue)
                == (try expectedFoldedOrder(store)))
        // "한국어" is the note's word of every 12th row (composed); "한국", typed as jamo, of
        // the rows after them; "한" of the two at the extremes.
        let korean = (0..<Self.rows).filter { $0 % Self.names.count == 0 }.count
        #expect(try store.count(RecordRequest<Person>(search: TextSearch("한국어"))) == korean)
        #expect(
            try store.count(RecordRequest<Person>(search: TextSearch("한국")))
                == (0..<Self.rows).filter { $0 % Self.names.count == 1 }.count)
        #expect(try store.count(RecordRequest<Person>(search: TextSearch("\u{1112}\u{1161}\u{11AB}"))) == 2)
        let pivot = "中".folded
        let less = #Predicate<Person> { $0.name.folded < pivot }
        let all = try store.fetch(RecordRequest<Person>()).compactMap { $0 }
        #expect(
            Set(try store.fetchIdentifiers(RecordRequest(predicate: less)))
                == Set(try all.filter { try less.evaluate($0) }.compactMap(\.id)))
        try store.close()

        // Opened again: nothing to rewrite, no progress.
        let (again, stepsAgain) = try open()
        #expect(stepsAgain.isEmpty, "\(stepsAgain)")
        try expectKeysCurrent(again)
        #expect(try recordedVersion() == TextFolding.version)
    }

    /// A Folio that still says folio-fold-1 (its folded-key preparation, with version 1's
    /// definition) opening a file of folio-fold-2 computes every key again, as any version
    /// other than its own — and this Folio then does the same the other way.
    @Test func aNewerVersionIsRebuiltByAnOlderFolioAndBackAgain() throws {
        try makeVersion1File()
        try Store(path: path, records: [Person.self]).close()
        #expect(try keysAre(ReferenceFolding.fold) && (try recordedVersion()) == "folio-fold-2")

        let queue = try DatabaseQueue(path: path)
        var old: [OpeningProgress] = []
        try queue.inTransaction { db in
            let schema = Person.entity.schema
            let planned = try FoldedKeys.plannedRewrite(schema, db, folding: ReferenceFolding.version1)
            #expect(planned == ["keys:person": Self.rows + 2, "index:person": Self.rows + 2])
            let progress = RowProgress(planned: planned) { old.append(OpeningProgress(completed: $0, total: $1, isFinished: $2)) }
            try FoldedKeys.prepare(schema, in: db, folding: ReferenceFolding.version1, progress: progress)
            progress.finish()
            return .commit
        }
        try queue.close()
        expectWholeProgress(old, total: 2 * (Self.rows + 2))
        #expect(try keysAre(ReferenceFolding.foldVersion1))
        #expect(try recordedVersion() == "folio-fold-1")

        let (store, steps) = try open()
        expectWholeProgress(steps, total: 2 * (Self.rows + 2))
        try expectKeysCurrent(store)
        #expect(try keysAre(ReferenceFolding.fold))
        #expect(try recordedVersion() == "folio-fold-2")
    }

    /// A version this Folio has never heard of (a later one, say) is not trusted either.
    @Test func anUnknownVersionIsRebuilt() throws {
        try makeVersion1File()
        try Store(path: path, records: [Person.self]).close()
        try rewriteKeys({ _ in "stale" }, version: "folio-fold-99")
        let (store, steps) = try open()
        expectWholeProgress(steps, total: 2 * (Self.rows + 2))
        try expectKeysCurrent(store)
        #expect(try keysAre(ReferenceFolding.fold))
    }
}
