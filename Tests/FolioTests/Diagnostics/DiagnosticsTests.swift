import Foundation
import GRDB
import Testing
@testable import Folio

@Suite("Diagnostics")
struct DiagnosticsTests {
    @Test func countersFollowScansBatchesRecordsAndStatements() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 95)
        store.diagnostics.resetCounters()
        #expect(store.diagnostics.counters == Diagnostics.Counters())
        let recorder = SQLRecorder(store)

        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 10
        let results = try store.fetch(request)
        #expect(store.diagnostics.counters.identifierScans == 1)
        #expect(store.diagnostics.counters.batchesLoaded == 0)
        _ = results[0]; _ = results[9]; _ = results[10]; _ = results[94]
        #expect(store.diagnostics.counters.batchesLoaded == 3)
        #expect(store.diagnostics.counters.recordsMaterialized == 25)  // 10 + 10 + the last 5

        _ = try store.fetch(RecordRequest<Article>(predicate: #Predicate { $0.score < 7 }))
        #expect(store.diagnostics.counters.recordsMaterialized == 32)
        #expect(store.diagnostics.counters.identifierScans == 1)
        _ = try store.fetchOne(Article.self, id: RecordID(1))
        #expect(store.diagnostics.counters.recordsMaterialized == 33)
        // Every statement SQLite ran, GRDB's own included, is counted and logged once.
        #expect(store.diagnostics.counters.statements == recorder.statements.count)
        #expect(store.diagnostics.counters.statements > 0)

        store.diagnostics.resetCounters()
        #expect(store.diagnostics.counters == Diagnostics.Counters())
        #expect(store.diagnostics.counters.description == "statements 0, identifier scans 0, batches 0, records 0")
        // Another store counts for itself.
        let other = try Store.inMemory(records: [Article.self])
        try seed(other, count: 3)
        #expect(store.diagnostics.counters == Diagnostics.Counters())
    }

    @Test func theSQLLogShowsPlaceholdersOrValuesAndCanBeSwitchedOff() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 10)
        let plain = LinesBox(), expanded = LinesBox()
        let request = RecordRequest<Article>(predicate: #Predicate { $0.title == "O'Brien" || $0.score > 5 }, limit: 2)
        store.diagnostics.logSQL { plain.append($0) }
        _ = try store.count(request)
        store.diagnostics.logSQL(expanded: true) { expanded.append($0) }
        _ = try store.count(request)
        store.diagnostics.logSQL(nil)
        _ = try store.count(request)
        #expect(
            plain.all.contains(
                #"SELECT COUNT(*) FROM (SELECT "id" FROM "article" WHERE (("title" = ?) OR ("score" > ?)) LIMIT ? OFFSET ?)"#),
            "\(plain.all)")
        #expect(
            expanded.all.contains(
                #"SELECT COUNT(*) FROM (SELECT "id" FROM "article" WHERE (("title" = 'O''Brien') OR ("score" > 5)) LIMIT 2 OFFSET 0)"#
            ), "\(expanded.all)")
        #expect(plain.all.filter { $0.hasPrefix("SELECT") }.count == 1)
        #expect(expanded.all.filter { $0.hasPrefix("SELECT") }.count == 1)
    }

    /// Runs in a child process (see the next test) with `FOLIO_SQL_DEBUG` set.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FOLIO_SQL_DEBUG_CHILD"] == "1"))
    func sqlDebugChild() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 3)
        _ = try store.fetch(RecordRequest<Article>(predicate: #Predicate { $0.score > 1 }))
    }

    @Test func theEnvironmentVariableSwitchesTheLogOnWithoutCode() throws {
        let directory = try ScratchDirectory()
        func childStandardError(level: String?) throws -> [String] {
            var environment = ProcessInfo.processInfo.environment
            environment["FOLIO_SQL_DEBUG_CHILD"] = "1"
            environment["FOLIO_SQL_DEBUG"] = level
            let errors = directory.path("child-\(level ?? "unset").err")
            let process = try ChildProcess(
                CommandLine.arguments[0], ["--testing-library", "swift-testing", "--filter", "sqlDebugChild"],
                environment: environment, errors: errors)
            #expect(process.wait() == .exited(0))
            let data = (try? Data(contentsOf: URL(fileURLWithPath: errors))) ?? Data()
            return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).filter {
                $0.hasPrefix("FOLIO SQL: ")
            }
        }
        let query = #"SELECT "id", "title", "url", "published", "score", "category", "isRead" FROM "article" WHERE ("score" > "#
        let one = try childStandardError(level: "1")
        #expect(one.contains("FOLIO SQL: " + query + #"?) ORDER BY "id""#), "\(one)")
        #expect(one.contains { $0.hasPrefix(#"FOLIO SQL: INSERT INTO "article""#) })
        let two = try childStandardError(level: "2")
        #expect(two.contains("FOLIO SQL: " + query + #"1) ORDER BY "id""#), "\(two)")
        #expect(two.contains { $0.hasPrefix(#"FOLIO SQL: INSERT INTO "article""#) && $0.contains("'Article 2'") })
        #expect(try childStandardError(level: nil).isEmpty)
        #expect(try childStandardError(level: "0").isEmpty)
    }
}
