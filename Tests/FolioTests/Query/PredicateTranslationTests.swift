import Foundation
import GRDB
import Testing
@testable import Folio

/// One supported predicate form: the `WHERE` text Folio must write, its bound values, and
/// (through `Predicate.evaluate`) the records Swift itself would keep.
struct PredicateCase: Sendable, CustomTestStringConvertible {
    let name: String
    let predicate: Predicate<Article>
    let whereSQL: String
    let arguments: [DatabaseValue]
    var testDescription: String { name }
}

@Suite("Predicate translation")
struct PredicateTranslationTests {
    static let titles = [
        "Article", "100% pure", "under_score", "O'Brien", "Ärger", "emoji 🎉 party", "", "B", "b",
        "Art", "art nouveau", "'; DROP TABLE article; --", "Zebra", "a\"quote", "Article 12",
    ]
    static let cutoff = Date(timeIntervalSince1970: 20 * 3600)

    /// 45 articles: every title above three times, scores from -5 to 17 with ties,
    /// categories a, b, c and nil, every third one read, one whose url equals its title.
    static func fixture(_ store: Store) throws -> [Article] {
        try store.write { tx in
            var all: [Article] = []
            for i in 0..<45 {
                var a = Article(
                    title: titles[i % titles.count], url: i == 7 ? titles[i % titles.count] : "https://example.com/\(i)",
                    published: Date(timeIntervalSince1970: Double(i) * 3600), score: (i * 7) % 23 - 5,
                    category: ["a", "b", "c", nil][i % 4])
                a.isRead = i % 3 == 0
                try tx.insert(&a)
                all.append(a)
            }
            return all
        }
    }

    static let cases: [PredicateCase] = {
        let withNil: [String?] = ["a", nil]
        let onlyNil: [String?] = [nil]
        let empty: [Int] = []
        let cutoff = Self.cutoff
        let noCategory: String? = nil
        let five = RecordID(5)
        return [
            PredicateCase(
                name: "greater than", predicate: #Predicate { $0.score > 10 },
                whereSQL: #"("score" > ?)"#, arguments: [10.databaseValue]),
            PredicateCase(
                name: "range with &&", predicate: #Predicate { $0.score >= 2 && $0.score <= 6 },
                whereSQL: #"(("score" >= ?) AND ("score" <= ?))"#, arguments: [2.databaseValue, 6.databaseValue]),
            PredicateCase(
                name: "|| and ==", predicate: #Predicate { $0.score < 0 || $0.score == 7 },
                whereSQL: #"(("score" < ?) OR ("score" = ?))"#, arguments: [0.databaseValue, 7.databaseValue]),
            PredicateCase(
                name: "! of ==", predicate: #Predicate { !($0.score == 3) },
                whereSQL: #"(NOT coalesce(("score" = ?), 0))"#, arguments: [3.databaseValue]),
            PredicateCase(
                name: "== nil on an optional", predicate: #Predicate { $0.category == nil },
                whereSQL: #"("category" IS NULL)"#, arguments: []),
            PredicateCase(
                name: "!= nil on an optional", predicate: #Predicate { $0.category != nil },
                whereSQL: #"("category" IS NOT NULL)"#, arguments: []),
            PredicateCase(
                name: "== a nil variable", predicate: #Predicate { $0.category == noCategory },
                whereSQL: #"("category" IS NULL)"#, arguments: []),
            PredicateCase(
                name: "== value on an optional", predicate: #Predicate { $0.category == "a" },
                whereSQL: #"("category" = ?)"#, arguments: ["a".databaseValue]),
            PredicateCase(
                name: "!= value on an optional keeps nil", predicate: #Predicate { $0.category != "a" },
                whereSQL: #"("category" IS NOT ?)"#, arguments: ["a".databaseValue]),
            PredicateCase(
                name: "! of == on an optional keeps nil", predicate: #Predicate { !($0.category == "a") },
                whereSQL: #"(NOT coalesce(("category" = ?), 0))"#, arguments: ["a".databaseValue]),
            PredicateCase(
                name: "String contains", predicate: #Predicate { $0.title.contains("rt") },
                whereSQL: #"(instr("title", ?) > 0)"#, arguments: ["rt".databaseValue]),
            PredicateCase(
                name: "contains is case-sensitive", predicate: #Predicate { $0.title.contains("art") },
                whereSQL: #"(instr("title", ?) > 0)"#, arguments: ["art".databaseValue]),
            PredicateCase(
                name: "contains % is not a wildcard", predicate: #Predicate { $0.title.contains("%") },
                whereSQL: #"(instr("title", ?) > 0)"#, arguments: ["%".databaseValue]),
            PredicateCase(
                name: "contains _ is not a wildcard", predicate: #Predicate { $0.title.contains("r_s") },
                whereSQL: #"(instr("title", ?) > 0)"#, arguments: ["r_s".databaseValue]),
            PredicateCase(
                name: "contains emoji", predicate: #Predicate { $0.title.contains("🎉") },
                whereSQL: #"(instr("title", ?) > 0)"#, arguments: ["🎉".databaseValue]),
            PredicateCase(
                name: "contains the empty string", predicate: #Predicate { $0.title.contains("") },
                whereSQL: #"(instr("title", ?) > 0)"#, arguments: ["".databaseValue]),
            PredicateCase(
                name: "starts(with:)", predicate: #Predicate { $0.title.starts(with: "Art") },
                whereSQL: #"(instr("title", ?) = 1)"#, arguments: ["Art".databaseValue]),
            PredicateCase(
                name: "starts(with:) a quote", predicate: #Predicate { $0.title.starts(with: "'") },
                whereSQL: #"(instr("title", ?) = 1)"#, arguments: ["'".databaseValue]),
            PredicateCase(
                name: "membership in a literal array", predicate: #Predicate { [1, 3, 5].contains($0.score) },
                whereSQL: #"("score" IN (?, ?, ?))"#, arguments: [1, 3, 5].map { $0.databaseValue }),
            PredicateCase(
                name: "membership in an array with nil", predicate: #Predicate { withNil.contains($0.category) },
                whereSQL: #"(("category" IN (?)) OR ("category" IS NULL))"#, arguments: ["a".databaseValue]),
            PredicateCase(
                name: "membership in [nil]", predicate: #Predicate { onlyNil.contains($0.category) },
                whereSQL: #"("category" IS NULL)"#, arguments: []),
            PredicateCase(
                name: "! membership keeps nil", predicate: #Predicate { !["a", "b"].contains($0.category ?? "") },
                whereSQL: #"(NOT coalesce((coalesce("category", ?) IN (?, ?)), 0))"#,
                arguments: ["".databaseValue, "a".databaseValue, "b".databaseValue]),
            PredicateCase(
                name: "membership in an empty array", predicate: #Predicate { empty.contains($0.score) },
                whereSQL: "(0)", arguments: []),
            PredicateCase(
                name: "Bool attribute as the condition", predicate: #Predicate { $0.isRead },
                whereSQL: #""isRead""#, arguments: []),
            PredicateCase(
                name: "! Bool attribute", predicate: #Predicate { !$0.isRead },
                whereSQL: #"(NOT coalesce("isRead", 0))"#, arguments: []),
            PredicateCase(
                name: "Bool attribute && comparison", predicate: #Predicate { $0.isRead && $0.score > 5 },
                whereSQL: #"("isRead" AND ("score" > ?))"#, arguments: [5.databaseValue]),
            PredicateCase(
                name: "Bool == true", predicate: #Predicate { $0.isRead == true },
                whereSQL: #"("isRead" = ?)"#, arguments: [1.databaseValue]),
            PredicateCase(
                name: "?? then ==", predicate: #Predicate { ($0.category ?? "none") == "none" },
                whereSQL: #"(coalesce("category", ?) = ?)"#, arguments: ["none".databaseValue, "none".databaseValue]),
            PredicateCase(
                name: "* and +", predicate: #Predicate { $0.score * 2 + 1 > 21 },
                whereSQL: #"((("score" * ?) + ?) > ?)"#, arguments: [2, 1, 21].map { $0.databaseValue }),
            PredicateCase(
                name: "-", predicate: #Predicate { $0.score - 3 < 0 },
                whereSQL: #"(("score" - ?) < ?)"#, arguments: [3, 0].map { $0.databaseValue }),
            // Unary minus and negative literals translate (they once threw unsupportedPredicate).
            PredicateCase(
                name: "negative literal", predicate: #Predicate { $0.score < -1 },
                whereSQL: #"("score" < ?)"#, arguments: [(-1).databaseValue]),
            PredicateCase(
                name: "unary minus on an attribute", predicate: #Predicate { -$0.score > 3 },
                whereSQL: #"((- "score") > ?)"#, arguments: [3.databaseValue]),
            PredicateCase(
                name: "unary minus twice", predicate: #Predicate { -(-$0.score) > 3 },
                whereSQL: #"((- (- "score")) > ?)"#, arguments: [3.databaseValue]),
            PredicateCase(
                name: "unary minus on arithmetic", predicate: #Predicate { -($0.score - 10) >= 4 },
                whereSQL: #"((- ("score" - ?)) >= ?)"#, arguments: [10, 4].map { $0.databaseValue }),
            PredicateCase(
                name: "negative literal in arithmetic", predicate: #Predicate { $0.score + -3 == 2 },
                whereSQL: #"(("score" + ?) = ?)"#, arguments: [-3, 2].map { $0.databaseValue }),
            PredicateCase(
                name: "Date comparison", predicate: #Predicate { $0.published >= cutoff },
                whereSQL: #"("published" >= ?)"#, arguments: [(20.0 * 3600).databaseValue]),
            PredicateCase(
                name: "column == column", predicate: #Predicate { $0.title == $0.url },
                whereSQL: #"("title" IS "url")"#, arguments: []),
            PredicateCase(
                name: "String < (byte order)", predicate: #Predicate { $0.title < "B" },
                whereSQL: #"("title" < ?)"#, arguments: ["B".databaseValue]),
            PredicateCase(
                name: "== a string with a quote", predicate: #Predicate { $0.title == "O'Brien" },
                whereSQL: #"("title" = ?)"#, arguments: ["O'Brien".databaseValue]),
            PredicateCase(
                name: "== an SQL injection attempt", predicate: #Predicate { $0.title == "'; DROP TABLE article; --" },
                whereSQL: #"("title" = ?)"#, arguments: ["'; DROP TABLE article; --".databaseValue]),
            PredicateCase(
                name: "== the id", predicate: #Predicate { $0.id == five },
                whereSQL: #"("id" = ?)"#, arguments: [5.databaseValue]),
        ]
    }()

    @Test(arguments: cases)
    func supportedFormTranslatesAndMatchesSwift(_ c: PredicateCase) throws {
        let store = try Store.inMemory(records: [Article.self])
        let all = try Self.fixture(store)
        let expected = try all.filter { try c.predicate.evaluate($0) }.map(\.id)

        let fragment = try PredicateTranslator(entity: Article.entity).translate(c.predicate)
        #expect(fragment.sql == c.whereSQL)
        #expect(fragment.arguments == c.arguments)

        let recorder = SQLRecorder(store)
        store.diagnostics.resetCounters()
        let request = RecordRequest<Article>(predicate: c.predicate)
        let fetched = try store.fetch(request).map { $0?.id }
        #expect(fetched == expected, "SQL and Swift disagree on \(c.name)")
        #expect(try store.count(request) == expected.count)
        #expect(Array(try store.fetchIdentifiers(request)) == expected.compactMap { $0 })
        #expect(
            selects(recorder, from: "article") == [
                #"SELECT "id", "title", "url", "published", "score", "category", "isRead" FROM "article" WHERE "# + c.whereSQL
                    + #" ORDER BY "id""#,
                #"SELECT COUNT(*) FROM "article" WHERE "# + c.whereSQL,
                #"SELECT "id" FROM "article" WHERE "# + c.whereSQL + #" ORDER BY "id""#,
            ])
        // Every case keeps some records and drops others, unless it is about keeping none or all.
        if !["membership in an empty array", "contains the empty string"].contains(c.name) {
            #expect(!expected.isEmpty && expected.count < all.count, "the fixture does not exercise \(c.name)")
        }
    }

    @Test func translatedPredicatesUseTheIndex() throws {
        let store = try Store.inMemory(records: [Article.self])
        _ = try Self.fixture(store)
        let fragment = try PredicateTranslator(entity: Article.entity).translate(#Predicate<Article> { $0.score == 3 })
        let plan = try store.read { db in
            try Row.fetchAll(
                db, sql: #"EXPLAIN QUERY PLAN SELECT "id" FROM "article" WHERE "# + fragment.sql,
                arguments: fragment.statementArguments
            ).map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("article_score_index") }, "\(plan)")
    }
}

/// One predicate form Folio cannot translate, and the part the error must name.
struct UnsupportedCase: Sendable, CustomTestStringConvertible {
    let name: String
    let predicate: Predicate<Sample>
    let expression: String
    var testDescription: String { name }
}

@Suite("Unsupported predicates and unknown key paths")
struct UnsupportedPredicateTests {
    static let cases: [UnsupportedCase] = {
        let byte: UInt8 = 1
        let prefix = Data([1])
        return [
            UnsupportedCase(
                name: "optional chaining", predicate: #Predicate { $0.note?.contains("a") == true },
                expression: "OptionalFlatMap"),
            UnsupportedCase(
                name: "if let", predicate: #Predicate { if let note = $0.note { note == "a" } else { false } },
                expression: "OptionalFlatMap"),
            UnsupportedCase(
                name: "ternary", predicate: #Predicate { ($0.flag ? 1 : 0) == 1 },
                expression: "Conditional"),
            UnsupportedCase(
                name: "integer division", predicate: #Predicate { $0.count64 / 2 == 1 },
                expression: "IntDivision"),
            UnsupportedCase(
                name: "remainder", predicate: #Predicate { $0.count64 % 2 == 1 },
                expression: "IntRemainder"),
            UnsupportedCase(
                name: "range contains", predicate: #Predicate { (1...5).contains($0.count64) },
                expression: "RangeExpressionContains"),
            UnsupportedCase(
                name: "contains(where:)", predicate: #Predicate { s in ["a", "b"].contains { $0 == s.name } },
                expression: "SequenceContainsWhere"),
            UnsupportedCase(
                name: "Data starts(with:)", predicate: #Predicate { $0.payload.starts(with: prefix) },
                expression: "SequenceStartsWith on Data"),
            UnsupportedCase(
                name: "membership in a non-literal sequence", predicate: #Predicate { $0.payload.contains(byte) },
                expression: "SequenceContains"),
        ]
    }()

    @Test(arguments: cases)
    func unsupportedFormThrowsNamingThePart(_ c: UnsupportedCase) throws {
        let store = try Store.inMemory(records: [Sample.self])
        let request = RecordRequest<Sample>(predicate: c.predicate)
        for error in [
            folioError { try store.fetch(request) }, folioError { try store.count(request) },
            folioError { try store.fetchIdentifiers(request) },
            folioError { try store.write { tx in try tx.deleteAll(Sample.self, where: c.predicate) } },
        ] {
            guard case .unsupportedPredicate(let expression, let reason)? = error else {
                Issue.record("expected unsupportedPredicate, got \(String(describing: error))")
                continue
            }
            #expect(expression == c.expression)
            #expect(!reason.isEmpty)
            #expect(error!.description.contains(c.expression))
        }
    }

    @Test(arguments: [
        ("String.count", #Predicate<Sample> { $0.name.count > 3 }),
        ("String.isEmpty", #Predicate<Sample> { $0.name.isEmpty }),
    ])
    func unsupportedStringMemberThrowsNamingIt(_ name: String, _ predicate: Predicate<Sample>) throws {
        let store = try Store.inMemory(records: [Sample.self])
        let error = folioError { try store.fetch(RecordRequest(predicate: predicate)) }
        guard case .unsupportedPredicate(let expression, _)? = error else {
            Issue.record("expected unsupportedPredicate, got \(String(describing: error))")
            return
        }
        #expect(expression.hasPrefix(#"KeyPath \String."#), "\(name): \(expression)")
    }

    @Test func unknownKeyPathInPredicateThrows() throws {
        let store = try Store.inMemory(records: [Sample.self])
        let request = RecordRequest<Sample>(predicate: #Predicate { $0.scratch > 0 })
        let expected = FolioError.unknownKeyPath(entity: "sample", keyPath: #"\Sample.scratch"#)
        expectError(expected) { try store.fetch(request) }
        expectError(expected) { try store.count(request) }
        expectError(expected) { try store.fetchIdentifiers(request) }
        expectError(expected) {
            try store.write { tx in try tx.updateAll(Sample.self, where: request.predicate, set: [.set(\.flag, to: true)]) }
        }
    }

    @Test func unknownKeyPathInSortThrows() throws {
        let store = try Store.inMemory(records: [Sample.self])
        var request = RecordRequest<Sample>(sortBy: [SortDescriptor(\.name), SortDescriptor(\.scratch)])
        let expected = FolioError.unknownKeyPath(entity: "sample", keyPath: #"\Sample.scratch"#)
        expectError(expected) { try store.fetch(request) }
        expectError(expected) { try store.count(request) }
        expectError(expected) { try store.fetchIdentifiers(request) }
        request.batchSize = 10
        expectError(expected) { try store.fetch(request) }
        // A key path through an attribute to one of its properties is not an attribute either.
        let nested = RecordRequest<Sample>(sortBy: [SortDescriptor(\Sample.name.count)])
        guard case .unknownKeyPath(let entity, _)? = folioError({ try store.fetch(nested) }) else {
            Issue.record("expected unknownKeyPath")
            return
        }
        #expect(entity == "sample")
    }

    @Test func unknownKeyPathInWritesThrows() throws {
        let store = try Store.inMemory(records: [Sample.self])
        try store.write { tx in
            var s = Sample(name: "x"); try tx.insert(&s)
        }
        expectError(.unknownKeyPath(entity: "sample", keyPath: #"\Sample.scratch"#)) {
            try store.write { tx in try tx.updateAll(Sample.self, set: [.set(\.scratch, to: 3)]) }
        }
        expectError(.unknownKeyPath(entity: "sample", keyPath: #"\Sample.scratch"#)) {
            try store.write { tx in
                var s = Sample(name: "y"); try tx.upsert(&s, onConflict: \.scratch)
            }
        }
        #expect(try store.count(RecordRequest<Sample>()) == 1)
    }
}
