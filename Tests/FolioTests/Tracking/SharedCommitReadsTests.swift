import Foundation
import GRDB
import Testing

@testable import Folio

/// A commit's reads are shared by the lists that would read alike: the changed rows of lists
/// with the same filter, sort and section key, and the sort keys a binary search probes
/// along the same sort, are read once per commit (``CommitTokens``), and every list still
/// ends as a fresh fetch. The claims are refuted where they could break: lists alike next to
/// lists that differ only by a bound value, a `.computed` section key whose closures differ
/// over the same column, a section whose first row leaves for a row of an equal value stored
/// otherwise, and writers racing controllers that stop or change their request mid-stream.
@Suite("Reads shared by a commit's lists")
@MainActor
struct SharedCommitReadsTests {
    /// The requests of the comparison: (name, request, section key).
    static func kinds() -> [(String, RecordRequest<Article>, SectionKey<Article>?)] {
        let newest = [SortDescriptor(\Article.published, order: .reverse)]
        return [
            (
                "unread by day", RecordRequest(predicate: #Predicate<Article> { $0.isRead == false }, sortBy: newest),
                .day(\.published, timeZone: .gmt)
            ),
            ("all", RecordRequest(sortBy: newest), nil),
            ("score>=1000", RecordRequest(predicate: #Predicate<Article> { $0.score >= 1_000 }, sortBy: newest), nil),
            // The same SQL as the next one, another bound value: never shared.
            ("score<9000", RecordRequest(predicate: #Predicate<Article> { $0.score < 9_000 }, sortBy: newest), nil),
            ("score<9001", RecordRequest(predicate: #Predicate<Article> { $0.score < 9_001 }, sortBy: newest), nil),
        ]
    }

    /// The section names a fresh fetch of `request` shows.
    static func freshNames(_ store: Store, _ request: RecordRequest<Article>, _ section: SectionKey<Article>) throws
        -> [String]
    {
        let fresh = FetchedResultsController(request, store: store, sectionBy: section)
        try fresh.performFetch()
        return fresh.sections.map(\.name)
    }

    /// What the trackers of one store ran for one moving update: its changed-rows reads and
    /// its probes, and the reads shared.
    struct Reads: Equatable {
        var changedRows: Int
        var probes: Int
        var shared: Int
    }

    /// A store with `copies` lists of each kind, one moving update of an unread row that
    /// every list holds; every list ends as a fresh fetch.
    static func movingUpdate(copies: Int) async throws -> Reads {
        let store = try Store.temporary(records: [Article.self])
        try ManyControllersTests.seedMany(store, count: 2_000)
        var tables: [ManyTable] = []
        for copy in 0..<copies {
            for (name, request, section) in kinds() {
                tables.append(try ManyTable(store, "\(name) #\(copy)", request, sectionBy: section))
            }
        }
        let id = try readNow(store) { db in
            try Int64.fetchOne(
                db,
                sql: "SELECT id FROM article WHERE isRead = 0 AND score >= 1000 AND score < 9000 ORDER BY id LIMIT 1 OFFSET 500")!
        }
        let sql = SQLRecorder(store)
        store.diagnostics.resetCounters()
        try writeSync(store) { tx in
            try tx.database.execute(
                sql: "UPDATE article SET published = published + 86400 * 40 WHERE id = ?", arguments: [id])
        }
        try await ManyControllersTests.settle(tables, "\(copies) copies")
        for table in tables { #expect(table.changeSets == 1, "\(table.name)") }
        let statements = sql.statements
        return Reads(
            changedRows: statements.filter { $0.contains("\"id\" IN (SELECT value FROM json_each(?))") }.count,
            probes: statements.filter { $0.hasSuffix("WHERE \"id\" = ?") }.count,
            shared: store.diagnostics.counters.sharedCommitReads)
    }

    @Test func listsAlikeCostACommitNoMoreSQLThanOneOfEach() async throws {
        let one = try await Self.movingUpdate(copies: 1)
        let six = try await Self.movingUpdate(copies: 6)
        // One read of the changed rows per distinct request (the two bound values are two).
        #expect(one.changedRows == 5)
        #expect(six.changedRows == 5)
        // The probes of six lists of each kind are those of one list of each kind.
        #expect(one.probes > 0)
        #expect(six.probes == one.probes, "six lists of each kind probe as one does: \(six) vs \(one)")
        // Lists of one sort share probes of the same rows even with other filters.
        #expect(six.shared >= 5 * 5 + one.shared, "\(six) vs \(one)")
    }

    /// Two lists sorted by score with `.computed` section keys over the score whose closures
    /// differ: the statement (and so the shared read) is the same, each list names its
    /// sections with its own closure.
    @Test func computedSectionKeysOverOneColumnEachUseTheirOwnClosure() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 300)
        let request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score), SortDescriptor(\.title)])
        let tensKey = SectionKey<Article>.computed(\.score, name: "tens") { "\($0 / 10)" }
        let hundredsKey = SectionKey<Article>.computed(\.score, name: "hundreds") { "h\($0 / 100)" }
        let tens = try await LiveHarness(store, request, sectionBy: tensKey)
        let hundreds = try await LiveHarness(store, request, sectionBy: hundredsKey)
        let ids = tens.controller.snapshot.identifiers.map(\.rawValue)
        store.diagnostics.resetCounters()
        for (step, id) in ids.enumerated() where step % 37 == 0 {
            try writeSync(store) { tx in
                try tx.database.execute(
                    sql: "UPDATE article SET score = ? WHERE id = ?", arguments: [(step * 7_919) % 1_000, id])
            }
            try await tens.settle()
            try await hundreds.settle()
            #expect(tens.controller.sections.map(\.name) == (try Self.freshNames(store, request, tensKey)))
            #expect(hundreds.controller.sections.map(\.name) == (try Self.freshNames(store, request, hundredsKey)))
            #expect(hundreds.controller.sections.allSatisfy { $0.name.hasPrefix("h") })
        }
        #expect(store.diagnostics.counters.sharedCommitReads > 0)
    }

    /// A section whose first row is removed is named by the row that becomes first, read
    /// again: the real −2⁶³ (which an INTEGER column keeps) and the integer −2⁶³ are one
    /// section, named by whichever row comes first; a row placed first names it too.
    @Test func aSectionIsRenamedByTheRowThatBecomesFirst() async throws {
        let store = try Store.temporary(records: [Article.self])
        let request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score), SortDescriptor(\.published)])
        let live = try await LiveHarness(store, request, sectionBy: .attribute(\.score))
        let other = try await LiveHarness(store, request, sectionBy: .attribute(\.score))
        func insert(_ score: String, published: Int, _ tx: WriteTransaction) throws {
            try tx.database.execute(
                sql: "INSERT INTO article (title, url, published, score, isRead) VALUES ('t', ?, ?, \(score), 0)",
                arguments: ["u\(published)", published])
        }
        try await live.step { tx in
            try insert("-9223372036854775808.0", published: 1, tx)
            try insert("-9223372036854775808", published: 2, tx)
            try insert("-9223372036854775808.0", published: 3, tx)
            try insert("5", published: 4, tx)
        }
        try await other.settle()
        let names = { (harness: LiveHarness) in harness.controller.sections.map(\.name) }
        let first = names(live)[0]
        // The first row (a real) leaves: the integer names the section now.
        try await live.step { tx in try tx.database.execute(sql: "DELETE FROM article WHERE published = 1") }
        try await other.settle()
        #expect(names(live)[0] != first, "renamed by the integer: \(names(live))")
        #expect(names(live) == (try Self.freshNames(store, request, .attribute(\.score))))
        // A real placed before it names it again; the integer moving away changes nothing more.
        try await live.step { tx in try insert("-9223372036854775808.0", published: 0, tx) }
        #expect(names(live)[0] == first)
        try await live.step { tx in try tx.database.execute(sql: "UPDATE article SET score = 7 WHERE published = 2") }
        try await live.step { tx in try tx.database.execute(sql: "DELETE FROM article WHERE published IN (0, 3)") }
        #expect(names(live) == (try Self.freshNames(store, request, .attribute(\.score))))
        try await other.settle()
        #expect(names(other) == names(live))
    }

    /// Writers race while lists of every kind follow; some lists go away, others change their
    /// request mid-stream (their trackers stop while a commit is being followed). Every list
    /// left ends as a fresh fetch, and nothing reaches a list that stopped.
    @Test func racingWritersAndListsThatStopOrChangeMidStream() async throws {
        let store = try Store.temporary(records: [Article.self])
        try ManyControllersTests.seedMany(store, count: 2_000)
        let requests = ManyControllersTests.manyRequests()
        var tables: [ManyTable] = []
        for round in 0..<2 {
            for (name, request, section) in requests where tables.count < 24 {
                tables.append(try ManyTable(store, "\(name) #\(round)", request, sectionBy: section))
            }
        }
        let writers = Task.detached {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<3 {
                    group.addTask {
                        for i in 0..<25 {
                            let n = writer * 1_000 + i
                            try await store.write { tx in
                                try tx.database.execute(
                                    sql: "UPDATE article SET published = published + ?, isRead = 1 - isRead WHERE id = ?",
                                    arguments: [(n % 7 - 3) * 86_400 * 9, 1 + (n * 37) % 2_000])
                                try tx.database.execute(
                                    sql: "DELETE FROM article WHERE id = ?", arguments: [1 + (n * 53) % 2_000])
                                var a = Article(
                                    title: "w\(n)", url: "race/\(n)", published: Date(timeIntervalSince1970: Double(n) * 5_000),
                                    score: (n * 131) % 20_000, category: ["a", "b", nil][n % 3])
                                try tx.insert(&a)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        var stopped: [(name: String, controller: Many3WeakController)] = []
        for step in 0..<12 {
            // Not a wait: the writers commit while the lists change.
            try await Task.sleep(for: .milliseconds(2))
            switch step % 3 {
            case 0:
                // A list goes away: its tracker stops, perhaps while a commit is followed.
                let gone = tables.remove(at: (step * 5) % tables.count)
                stopped.append((gone.name, Many3WeakController(gone.controller)))
            case 1:
                // A list changes its request: a new tracker, a new statement to share or not.
                let table = tables[(step * 7) % tables.count]
                var request = table.controller.fetchRequest
                request.predicate = #Predicate<Article> { $0.score < 15_000 }
                _ = try table.controller.setRequest(request)
                table.model = TableViewModel(table.controller.snapshot)
            default:
                break
            }
        }
        try await writers.value
        try await ManyControllersTests.settle(tables, "after the race")
        for (name, weak) in stopped { #expect(weak.controller == nil, "\(name): nothing keeps a list that went away") }
        #expect(store.diagnostics.counters.sharedCommitReads > 0)
    }
}

/// A controller not kept alive.
@MainActor
final class Many3WeakController {
    weak var controller: FetchedResultsController<Article>?
    init(_ controller: FetchedResultsController<Article>) { self.controller = controller }
}
