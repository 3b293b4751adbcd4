import Foundation
import GRDB
import Testing
@testable import Folio

/// Everything a store holds, as text: its schema, Folio's metadata and every row of the
/// given tables. Two equal states mean nothing changed.
private struct StoreState: Equatable {
    var schema: [String]
    var metadata: [String]
    var rows: [String: [String]]

    init(_ store: Store, tables: [String] = ["article"]) throws {
        schema = try rawSchema(store)
        metadata = try store.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM folio_entities ORDER BY name").map(\.description)
        }
        rows = try Dictionary(uniqueKeysWithValues: tables.map { ($0, try rawRows(store, $0)) })
    }
}

/// A store of 20 articles and 3 samples, for the cases below.
private func seededStore() throws -> Store {
    let store = try Store.inMemory(records: [Article.self, Sample.self])
    try seed(store, count: 20)
    try store.write { tx in
        for (i, value) in [1.5, -2.0, 1e10].enumerated() {
            var s = Sample(name: "sample \(i)", value: value, taken: Date(timeIntervalSince1970: Double(i)))
            try tx.insert(&s)
        }
    }
    return store
}

/// Expects `body` to throw `expected` and the store to be exactly as it was.
private func expectRefused<T>(
    _ store: Store, _ expected: FolioError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) throws {
    let before = try StoreState(store, tables: ["article", "sample"])
    expectError(expected, sourceLocation: sourceLocation, body)
    #expect(try StoreState(store, tables: ["article", "sample"]) == before, "the store changed", sourceLocation: sourceLocation)
}

/// The files in a directory, with their contents.
private func directoryContents(_ url: URL) throws -> [String: Data] {
    var contents: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
        contents[name] = try Data(contentsOf: url.appendingPathComponent(name))
    }
    return contents
}

@Suite("Bad input catalogue")
struct BadInputTests {
    // MARK: Predicates

    @Test func unsupportedPredicateInAFetch() throws {
        let store = try seededStore()
        let request = RecordRequest<Sample>(predicate: #Predicate { $0.note?.starts(with: "a") == true })
        let expected = FolioError.unsupportedPredicate(
            expression: "OptionalFlatMap", reason: "Folio has no SQL translation for it")
        try expectRefused(store, expected) { try store.fetch(request) }
        try expectRefused(store, expected) { try store.count(request) }
        try expectRefused(store, expected) { try store.fetchIdentifiers(request) }
    }

    @Test func unsupportedPredicateInABatchDelete() throws {
        let store = try seededStore()
        try expectRefused(store, .unsupportedPredicate(expression: "Conditional", reason: "Folio has no SQL translation for it"))
        {
            try store.write { tx in try tx.deleteAll(Article.self, where: #Predicate { ($0.isRead ? $0.score : 0) > 3 }) }
        }
    }

    @Test func unsupportedPredicateInABatchUpdate() throws {
        let store = try seededStore()
        try expectRefused(store, .unsupportedPredicate(expression: "IntDivision", reason: "Folio has no SQL translation for it"))
        {
            try store.write { tx in
                try tx.updateAll(Article.self, where: #Predicate { $0.score / 2 == 3 }, set: [.set(\.title, to: "changed")])
            }
        }
    }

    @Test func unsupportedPredicateRollsBackTheWholeTransaction() throws {
        let store = try seededStore()
        try expectRefused(store, .unsupportedPredicate(expression: "IntRemainder", reason: "Folio has no SQL translation for it"))
        {
            try store.write { tx in
                var a = Article(title: "inserted first", url: "first")
                try tx.insert(&a)
                try tx.deleteAll(Article.self, where: #Predicate { $0.score == 1 })
                try tx.deleteAll(Article.self, where: #Predicate { $0.score % 2 == 1 })
            }
        }
    }

    // MARK: Key paths

    @Test func unknownKeyPathInASortDescriptor() throws {
        let store = try seededStore()
        var request = RecordRequest<Sample>(sortBy: [SortDescriptor(\.scratch)])
        request.batchSize = 5
        try expectRefused(store, .unknownKeyPath(entity: "sample", keyPath: #"\Sample.scratch"#)) { try store.fetch(request) }
    }

    @Test func unknownKeyPathInAPredicate() throws {
        let store = try seededStore()
        try expectRefused(store, .unknownKeyPath(entity: "sample", keyPath: #"\Sample.scratch"#)) {
            try store.write { tx in try tx.deleteAll(Sample.self, where: #Predicate { $0.scratch == 0 }) }
        }
    }

    @Test func unknownKeyPathInABatchUpdateAssignment() throws {
        let store = try seededStore()
        try expectRefused(store, .unknownKeyPath(entity: "sample", keyPath: #"\Sample.scratch"#)) {
            try store.write { tx in try tx.updateAll(Sample.self, set: [.set(\.flag, to: true), .set(\.scratch, to: 1)]) }
        }
    }

    @Test func unknownKeyPathAsTheUpsertKey() throws {
        let store = try seededStore()
        var s = Sample(name: "sample 0", value: 99)
        try expectRefused(store, .unknownKeyPath(entity: "sample", keyPath: #"\Sample.scratch"#)) {
            try store.write { tx in try tx.upsert(&s, onConflict: \.scratch) }
        }
        #expect(s.id == nil)
    }

    @Test func upsertByANonUniqueAttribute() throws {
        let store = try seededStore()
        var s = Sample(name: "sample 0", value: 99)
        try expectRefused(store, .invalidArgument("upsert needs a unique attribute; 'value' of 'sample' is not unique")) {
            try store.write { tx in try tx.upsert(&s, onConflict: \.value) }
        }
    }

    // MARK: Sort

    @Test func missingSortWhereOneIsRequired() throws {
        let store = try seededStore()
        let request = RecordRequest<Article>(predicate: #Predicate { $0.score > 3 })
        expectError(.missingSortDescriptor(entity: "article")) { try request.compile(requireSort: true) }
        // A plain fetch needs none: it orders by rowid.
        #expect(try store.fetchIdentifiers(request).map(\.rawValue) == (5...20).map(Int64.init))
    }

    // MARK: Files

    @Test func aFileThatIsNotADatabase() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("notes.sqlite")
        try Data("These are my notes, not a database.\n".utf8).write(to: URL(fileURLWithPath: path))
        let before = try directoryContents(directory.url)
        expectError(.notADatabase(path: path)) { try Store(path: path, records: [Article.self]) }
        #expect(try directoryContents(directory.url) == before)
    }

    @Test func aFileWithAnSQLiteHeaderAndGarbageAfterIt() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("corrupt.sqlite")
        try (Data("SQLite format 3\0".utf8) + Data(repeating: 0x41, count: 8_192)).write(to: URL(fileURLWithPath: path))
        let before = try directoryContents(directory.url)
        expectError(.notADatabase(path: path)) { try Store(path: path, records: [Article.self]) }
        #expect(try directoryContents(directory.url) == before)
    }

    @Test func aDatabaseWithADifferentSchema() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("other.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE article (id INTEGER PRIMARY KEY, title TEXT, body BLOB)")
                try db.execute(sql: "INSERT INTO article (title, body) VALUES ('someone else''s', x'00ff')")
            }
            try queue.close()
        }
        let before = try directoryContents(directory.url)
        let error = folioError { try Store(path: path, records: [Article.self]) }
        guard case .schemaMismatch(let entity, let differences)? = error else {
            Issue.record("expected schemaMismatch, got \(String(describing: error))")
            return
        }
        #expect(entity == "article")
        #expect(differences.contains("column 'title' is nullable, declared non-optional"))
        #expect(differences.contains("missing column 'url' (TEXT)"))
        #expect(differences.contains("unexpected column 'body'"))
        #expect(differences.contains("missing index on 'url'"))
        #expect(try directoryContents(directory.url) == before)
    }

    @Test func aReadOnlyDirectory() throws {
        let directory = try ScratchDirectory()
        let readOnly = directory.url.appendingPathComponent("read-only")
        try FileManager.default.createDirectory(at: readOnly, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: readOnly.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: readOnly.path) }
        // Root ignores permissions: there, a path under a regular file stands for a place
        // where no file can be created.
        let probe = readOnly.appendingPathComponent("probe").path
        let permissionsApply = !FileManager.default.createFile(atPath: probe, contents: Data())
        let parent: String
        if permissionsApply {
            parent = readOnly.path
        } else {
            try? FileManager.default.removeItem(atPath: probe)
            parent = directory.path("regular-file")
            try Data("x".utf8).write(to: URL(fileURLWithPath: parent))
        }
        let path = parent + "/store.sqlite"
        let error = folioError { try Store(path: path, records: [Article.self]) }
        guard case .sqlite(let code, let message, _, _)? = error else {
            Issue.record("expected an SQLite error, got \(String(describing: error))")
            return
        }
        #expect(code == 14)  // SQLITE_CANTOPEN
        #expect(
            message == "unable to open database file at \(path): "
                + (permissionsApply ? "the directory \(parent) is not writable" : "\(parent) is not a directory"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aMissingDirectory() throws {
        let directory = try ScratchDirectory()
        let missing = directory.path("no/such/directory")
        let path = missing + "/store.sqlite"
        let error = folioError { try Store(path: path, records: [Article.self]) }
        #expect(
            error
                == .sqlite(
                    code: 14, message: "unable to open database file at \(path): the directory \(missing) does not exist",
                    sql: nil, arguments: nil))
        #expect(!FileManager.default.fileExists(atPath: directory.path("no")))
    }

    @Test func aDirectoryWhereTheFileShouldBe() throws {
        let directory = try ScratchDirectory()
        let error = folioError { try Store(path: directory.url.path, records: [Article.self]) }
        #expect(
            error
                == .sqlite(
                    code: 14, message: "unable to open database file at \(directory.url.path): the path is a directory", sql: nil,
                    arguments: nil))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    // MARK: Values

    @Test func stringsWithQuotesNULsAndSQL() throws {
        let store = try seededStore()
        let before = try StoreState(store)
        let nasty = ["'); DELETE FROM article; --", "\"; DROP TABLE \"article\"; --", "a\0b\0", "\0", "it's \"quoted\""]
        let ids: [RecordID] = try store.write { tx in
            try nasty.map { text in
                var a = Article(title: text, url: text, category: text)
                try tx.insert(&a)
                return a.id!
            }
        }
        for (text, id) in zip(nasty, ids) {
            #expect(
                try store.fetchIdentifiers(RecordRequest<Article>(predicate: #Predicate { $0.title == text && $0.url == text }))
                    .map { $0 } == [id])
            #expect(try store.fetchOne(Article.self, id: id).map { [$0.title, $0.url, $0.category] } == [text, text, text])
        }
        // Nothing else moved: the first 20 rows and the schema are as they were.
        let after = try StoreState(store)
        #expect(after.schema == before.schema)
        #expect(Array(after.rows["article"]!.prefix(20)) == before.rows["article"]!)
        try store.write { tx in for id in ids { try tx.delete(Article.self, id: id) } }
        #expect(try StoreState(store).rows == before.rows)
    }

    @Test func aHugeString() throws {
        let store = try seededStore()
        let before = try StoreState(store)
        let huge = String(repeating: "ten megabytes of text, 'quoted' ", count: 327_680)  // 32 × 327 680 = 10 MiB
        var a = Article(title: huge, url: "huge")
        try store.write { tx in try tx.insert(&a) }
        #expect(try store.fetchOne(Article.self, id: a.id!)?.title == huge)
        #expect(try store.count(RecordRequest<Article>(predicate: #Predicate { $0.title == huge })) == 1)
        #expect(
            try store.read { db in try Int.fetchOne(db, sql: "SELECT length(CAST(title AS BLOB)) FROM article WHERE url = 'huge'")
            } == 10_485_760)
        try store.write { tx in try tx.delete(a) }
        #expect(try StoreState(store).rows == before.rows)
    }

    @Test func aHugeBlob() throws {
        let store = try seededStore()
        var blob = Data(repeating: 0, count: 10_485_760)
        blob[1] = 1
        blob[blob.count - 1] = 0xFE
        var s = Sample(name: "blob")
        s.payload = blob
        s.optionalData = blob
        try store.write { tx in try tx.insert(&s) }
        let back = try #require(try store.fetchOne(Sample.self, id: s.id!))
        #expect(back.payload == blob)
        #expect(back.optionalData == blob)
        #expect(try store.count(RecordRequest<Sample>(predicate: #Predicate { $0.payload == blob })) == 1)
    }

    @Test func nanInANonOptionalDouble() throws {
        let store = try seededStore()
        var s = Sample(name: "nan", value: .nan)
        try expectRefused(store, .invalidArgument("'value' of 'sample' is NaN, which SQLite cannot store")) {
            try store.write { tx in try tx.insert(&s) }
        }
        #expect(s.id == nil)
    }

    @Test func nanInAnOptionalDouble() throws {
        let store = try seededStore()
        var s = try #require(try store.fetchOne(Sample.self, id: RecordID(1)))
        s.optionalValue = .nan
        try expectRefused(store, .invalidArgument("'optionalValue' of 'sample' is NaN, which SQLite cannot store")) {
            try store.write { tx in try tx.update(s) }
        }
    }

    @Test func nanInABatchUpdate() throws {
        let store = try seededStore()
        try expectRefused(store, .invalidArgument("'value' of 'sample' is NaN, which SQLite cannot store")) {
            try store.write { tx in try tx.updateAll(Sample.self, set: [.set(\.value, to: .nan)]) }
        }
    }

    @Test func nanAsADate() throws {
        let store = try seededStore()
        var s = Sample(name: "nan date", taken: Date(timeIntervalSince1970: .nan))
        try expectRefused(store, .invalidArgument("'taken' of 'sample' is NaN, which SQLite cannot store")) {
            try store.write { tx in try tx.upsert(&s, onConflict: \.name) }
        }
    }

    @Test func nanInPredicatesAgreesWithSwift() throws {
        let store = try seededStore()
        let notANumber = Double.nan
        let samples = try store.fetch(RecordRequest<Sample>()).map { $0! }
        let predicates: [Predicate<Sample>] = [
            #Predicate { $0.value == notANumber }, #Predicate { $0.value != notANumber }, #Predicate { $0.value < notANumber },
            #Predicate { !($0.value >= notANumber) }, #Predicate { $0.optionalValue == notANumber },
        ]
        for predicate in predicates {
            let expected = try samples.filter { try predicate.evaluate($0) }.map(\.id)
            #expect(try store.fetch(RecordRequest(predicate: predicate)).map { $0?.id } == expected)
        }
    }

    @Test func infinitiesAndExtremesInADoubleSortKey() throws {
        let store = try Store.inMemory(records: [Sample.self])
        let values: [Double] = [
            1, .infinity, -.infinity, 0, -0.0, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            .leastNonzeroMagnitude, -1, .infinity, 1,
        ]
        let inserted: [Sample] = try store.write { tx in
            try values.enumerated().map { i, value in
                var s = Sample(name: "v\(i)", value: value)
                s.optionalValue = i.isMultiple(of: 2) ? -value : nil
                try tx.insert(&s)
                return s
            }
        }
        let ascending = inserted.sorted { ($0.value, $0.id!) < ($1.value, $1.id!) }.map(\.id)
        let descending = inserted.sorted { ($0.value, $0.id!) > ($1.value, $1.id!) }.map(\.id)
        for batchSize in [0, 3] {
            var forward = RecordRequest<Sample>(sortBy: [SortDescriptor(\.value)])
            forward.batchSize = batchSize
            var backward = RecordRequest<Sample>(sortBy: [SortDescriptor(\.value, order: .reverse)])
            backward.batchSize = batchSize
            let fetched = try store.fetch(forward)
            #expect(fetched.map { $0?.id } == ascending)
            #expect(try store.fetch(backward).map { $0?.id } == descending)
            for record in fetched {
                let original = inserted.first { $0.id == record?.id }!
                #expect(record?.value == original.value && record?.optionalValue == original.optionalValue)
            }
        }
        // Optional sort keys: nil first, as SQLite orders NULL.
        let byOptional = try store.fetch(RecordRequest<Sample>(sortBy: [SortDescriptor(\.optionalValue)])).map {
            $0!.optionalValue
        }
        #expect(byOptional.prefix(5).allSatisfy { $0 == nil })
        #expect(Array(byOptional.dropFirst(5)) == byOptional.dropFirst(5).sorted { $0! < $1! })
        let infinity = Double.infinity, negativeInfinity = -Double.infinity
        for predicate in [
            #Predicate<Sample> { $0.value == infinity }, #Predicate<Sample> { $0.value > 1e308 },
            #Predicate<Sample> { $0.value < negativeInfinity }, #Predicate<Sample> { $0.value <= negativeInfinity },
        ] {
            let expected = try inserted.filter { try predicate.evaluate($0) }.map(\.id)
            #expect(try store.fetch(RecordRequest(predicate: predicate)).map { $0?.id } == expected)
        }
    }

    @Test func datesFarOutOfRange() throws {
        let store = try Store.inMemory(records: [Sample.self])
        let dates = [
            Date.distantFuture, Date.distantPast, Date(timeIntervalSince1970: 1e300), Date(timeIntervalSince1970: -1e300),
            Date(timeIntervalSince1970: 0), Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSince1970: .infinity),
            Date(timeIntervalSince1970: -.infinity), Date(timeIntervalSince1970: 1e-300),
        ]
        let inserted: [Sample] = try store.write { tx in
            try dates.enumerated().map { i, date in
                var s = Sample(name: "d\(i)", taken: date)
                s.optionalDate = date
                try tx.insert(&s)
                return s
            }
        }
        var request = RecordRequest<Sample>(sortBy: [SortDescriptor(\.taken, order: .reverse)])
        request.batchSize = 4
        let fetched = try store.fetch(request).map { $0! }
        #expect(fetched.map(\.taken) == dates.sorted(by: >))
        #expect(fetched.map(\.optionalDate) == fetched.map(\.taken))
        for record in fetched {
            #expect(record.taken.timeIntervalSince1970 == inserted.first { $0.id == record.id }!.taken.timeIntervalSince1970)
        }
        let distantFuture = Date.distantFuture, farPast = Date(timeIntervalSince1970: -1e300)
        for predicate in [
            #Predicate<Sample> { $0.taken >= distantFuture }, #Predicate<Sample> { $0.taken < farPast },
            #Predicate<Sample> { $0.optionalDate == farPast },
        ] {
            let expected = try inserted.filter { try predicate.evaluate($0) }.map(\.id)
            #expect(try store.fetch(RecordRequest(predicate: predicate)).map { $0?.id } == expected)
            #expect(!expected.isEmpty)
        }
    }

    // MARK: Arguments

    @Test(arguments: ["limit", "offset", "batchSize", "maxBatchesInMemory"])
    func negativeWindowOrBatchArgument(_ field: String) async throws {
        let store = try seededStore()
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        let message: String
        switch field {
        case "limit": request.limit = -1; message = "limit must not be negative (-1)"
        case "offset": request.offset = -5; message = "offset must not be negative (-5)"
        case "batchSize": request.batchSize = -20; message = "batchSize must not be negative (-20)"
        default: request.maxBatchesInMemory = 0; message = "maxBatchesInMemory must be at least 1"
        }
        let recorder = SQLRecorder(store)
        try expectRefused(store, .invalidArgument(message)) { try store.fetch(request) }
        try expectRefused(store, .invalidArgument(message)) { try store.count(request) }
        try expectRefused(store, .invalidArgument(message)) { try store.fetchIdentifiers(request) }
        await #expect(throws: FolioError.invalidArgument(message)) { try await store.fetch(request) }
        #expect(!recorder.statements.contains { $0.contains(#"ORDER BY "score""#) || $0.contains("COUNT(*)") })
    }

    // MARK: Entities

    @Test func aRecordTypeTheStoreWasNotOpenedWith() throws {
        let store = try seededStore()
        let expected = FolioError.unknownEntity("Unregistered")
        var record = Unregistered()
        record.name = "stray"
        try expectRefused(store, expected) { try store.fetch(RecordRequest<Unregistered>()) }
        try expectRefused(store, expected) { try store.count(RecordRequest<Unregistered>()) }
        try expectRefused(store, expected) { try store.fetchIdentifiers(RecordRequest<Unregistered>()) }
        try expectRefused(store, expected) { try store.fetchOne(Unregistered.self, id: RecordID(1)) }
        try expectRefused(store, expected) { try store.changeToken(for: Unregistered.self) }
        try expectRefused(store, expected) { try store.write { tx in try tx.insert(&record) } }
        record.id = RecordID(1)
        try expectRefused(store, expected) { try store.write { tx in try tx.update(record) } }
        try expectRefused(store, expected) { try store.write { tx in try tx.delete(record) } }
        try expectRefused(store, expected) { try store.write { tx in try tx.delete(Unregistered.self, id: RecordID(1)) } }
        try expectRefused(store, expected) { try store.write { tx in try tx.upsert(&record, onConflict: \.name) } }
        try expectRefused(store, expected) {
            try store.write { tx in try tx.updateAll(Unregistered.self, set: [.set(\.name, to: "x")]) }
        }
        try expectRefused(store, expected) { try store.write { tx in try tx.deleteAll(Unregistered.self) } }
    }

    @Test func aRecordTypeWhoseTableTheStoreDeclaresDifferently() throws {
        let store = try seededStore()
        try expectRefused(store, .unknownEntity("ArticleRedeclared")) { try store.fetch(RecordRequest<ArticleRedeclared>()) }
        var record = ArticleRedeclared()
        try expectRefused(store, .unknownEntity("ArticleRedeclared")) { try store.write { tx in try tx.insert(&record) } }
    }

    @Test(arguments: [
        (TableNameWithSQL.self as any PersistentRecord.Type, #"x"; drop table article; --"#, "is not a valid identifier"),
        (ReservedSQLitePrefix.self, "sqlite_things", "reserved prefix"),
        (ReservedFolioPrefix.self, "Folio_Entities", "reserved prefix"),
        (DuplicateColumn.self, "duplicate", "the column 'SAME' is declared twice"),
        (ColumnNamedID.self, "idclash", "the column 'ID' is declared twice (or is 'id')"),
        (ColumnNameWithSQL.self, "quoted", "is not a valid identifier"),
        (EmptyTableName.self, "", "is not a valid identifier"),
        (OverlongTableName.self, String(repeating: "t", count: 65), "at most 64 bytes"),
        (NonASCIITableName.self, "tablé", "is not a valid identifier"),
    ])
    func anInvalidEntityDeclaration(_ type: any PersistentRecord.Type, _ entity: String, _ reason: String) throws {
        let directory = try ScratchDirectory()
        let path = directory.path("never-created.sqlite")
        for open in [{ try Store(path: path, records: [Article.self, type]) }, { try Store.inMemory(records: [type]) }] {
            let error = folioError { try open() }
            guard case .invalidSchema(let name, let why)? = error else {
                Issue.record("expected invalidSchema, got \(String(describing: error))")
                continue
            }
            #expect(name == entity)
            #expect(why.contains(reason), "\(why)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test func twoRecordTypesForOneTable() throws {
        expectError(.invalidSchema(entity: "article", reason: "two record types use the table name")) {
            try Store.inMemory(records: [Article.self, ArticleRedeclared.self])
        }
    }

    // MARK: Rows Folio did not write

    @Test func aRowWithAWrongTypeWrittenByRawSQL() throws {
        let store = try seededStore()
        try store.write { tx in
            try tx.database.execute(sql: "UPDATE article SET score = 'not a number' WHERE id = 7")
        }
        let expected = FolioError.decoding(column: "score", reason: #"expected an integer, found "not a number""#)
        expectError(expected) { try store.fetch(RecordRequest<Article>()) }
        expectError(expected) { try store.fetchOne(Article.self, id: RecordID(7)) }
        var request = RecordRequest<Article>()
        request.batchSize = 5
        let results = try store.fetch(request)
        #expect(results.count == 20)
        #expect(results[0]?.score == 0)
        #expect(results[6] == nil)
        #expect(results.lastError == expected)
        expectError(expected) { try results.record(at: 6) }
        // The row fails alone: the other rows of its batch are read (found by the randomized suite).
        #expect(try results.record(at: 5)?.score == 5)
        #expect(results[7]?.score == 7)
        #expect(results[10]?.score == 10)
        // Filtering and counting still work in SQL.
        #expect(try store.count(RecordRequest<Article>(predicate: #Predicate { $0.score >= 0 })) == 20)
    }

    @Test func aClosedStore() throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 3)
        try store.close()
        expectError(.storeClosed) { try store.fetch(RecordRequest<Article>()) }
        expectError(.storeClosed) { try store.count(RecordRequest<Article>()) }
        expectError(.storeClosed) { try store.write { tx in try tx.deleteAll(Article.self) } }
        expectError(.storeClosed) { try store.read { db in try Int.fetchOne(db, sql: "SELECT 1") } }
        let reopened = try Store(path: store.path!, records: [Article.self])
        #expect(try reopened.count(RecordRequest<Article>()) == 3)
    }

    @Test func insertingAnIdentifierThatIsTaken() throws {
        let store = try seededStore()
        var duplicate = Article(title: "duplicate id", url: "fresh")
        duplicate.id = RecordID(3)
        let before = try StoreState(store)
        let error = folioError { try store.write { tx in try tx.insert(&duplicate) } }
        guard case .sqlite(let code, let message, _, _)? = error else {
            Issue.record("expected an SQLite error, got \(String(describing: error))")
            return
        }
        #expect(code == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
        #expect(message.contains("article.id"))
        #expect(try StoreState(store) == before)
    }
}
