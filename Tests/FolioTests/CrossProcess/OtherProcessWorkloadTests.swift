import Foundation
import GRDB
import Testing
@testable import Folio

/// Randomized workloads that try to break the claim that other processes' commits reach open
/// controllers as correct change sets, woken by the file system, with no `synchronize()`:
/// every step is one commit by the `sqlite3` shell (now and then by a second `Store` on the
/// file instead) — inserts into old, new and `NULL` sections, moves across and within
/// sections, updates in place, updates that set a column to its own value or change it and
/// back, single and bulk deletes, `REPLACE` and upsert conflicts, a rowid changed, a
/// transaction rolled back, 300–3,000-row statements, text in NFC and NFD and in both cases,
/// empty text, integers at 2^53 + 1 and `Int64.max` — and after it every list must show what
/// a fresh fetch shows, its change sets applied to a strict table-view model must give the
/// same, its sections and loaded records must be the stored ones, a commit must arrive as
/// one change set and never a reload, and a commit that changed nothing a list shows must
/// send it nothing.
///
/// Default: 8 seeds of 25 steps. `FOLIO_SEED=n` runs one seed (replay), `FOLIO_FIRST_SEED=n
/// FOLIO_SEEDS=k` a range, `FOLIO_TRANSACTIONS=n` sets the steps per seed:
/// `FOLIO_SEED=5 swift test --filter OtherProcessWorkloadTests`.
@Suite("Other processes' randomized workloads", .tags(Testing.Tag.longTier))
@MainActor
struct OtherProcessWorkloadTests {
    nonisolated static var seeds: [UInt64] { workloadSeeds(defaultCount: 8, quick: 1) }

    nonisolated static var steps: Int { environmentInt("FOLIO_TRANSACTIONS") ?? 25 }

    /// Titles: NFC and NFD pairs, case pairs outside ASCII (Kelvin sign, final sigma, ß, İ),
    /// empty, a quote, astral and Hangul (precomposed and in jamo).
    static let titles = [
        "", "a", "A", "b", "Zebra", "zebra", "\u{E9}t\u{E9}", "e\u{301}te\u{301}", "\u{C9}mile", "\u{E9}mile",
        "E\u{301}mile", "\u{212A}elvin", "Kelvin", "kelvin", "\u{3A3}\u{3C3}\u{3C2}", "\u{3C3}\u{3C3}\u{3C2}", "stra\u{DF}e",
        "STRASSE", "\u{C5}ngstr\u{F6}m", "A\u{30A}ngstro\u{308}m", "\u{1F600}", "\u{D55C}", "\u{1112}\u{1161}\u{11AB}",
        "\u{130}stanbul", "istanbul", "O'Brien",
    ]

    /// Categories (the section key): the same kinds, `nil` and empty.
    static let categories: [String?] = [
        "a", "b", "c", nil, "", "\u{E9}", "e\u{301}", "\u{C9}", "\u{212A}", "K", "k", "\u{DF}", "SS", "\u{1F600}",
    ]

    /// Scores at the extremes: around 2^53 (where a `Double` stops telling integers apart),
    /// `Int64.max` and `Int64.min`, and around the filters' bounds.
    static let extremeScores: [Int64] = [
        9_007_199_254_740_992, 9_007_199_254_740_993, 9_007_199_254_740_994, -9_007_199_254_740_993, .max, .max - 1, .min,
        .min + 1, -1, 29, 30, 31,
    ]

    /// A text as an SQL literal: quoted when printable ASCII, else its exact bytes.
    static func literal(_ text: String?) -> String {
        guard let text else { return "NULL" }
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        return textLiteral(Array(text.utf8))
    }

    /// One commit: its statements, run by the shell inside `BEGIN … COMMIT` (or `ROLLBACK`),
    /// or by a second store inside one write.
    struct Commit {
        var statements: [String] = []
        var rollback = false
        var secondStore = false

        var sql: String {
            if statements.count == 1 && !rollback { return statements[0] + ";" }
            return "BEGIN; " + statements.map { $0 + "; " }.joined() + (rollback ? "ROLLBACK;" : "COMMIT;")
        }
    }

    /// What a step chooses from.
    struct Context {
        var ids: [Int64]
        var step: Int
        var made = 0

        mutating func url() -> String {
            made += 1
            return "'w-\(step)-\(made)'"
        }
    }

    static func score(_ rng: inout SeededRandom) -> Int64 {
        rng.chance(0.15) ? rng.pick(extremeScores) : Int64.random(in: 0..<60, using: &rng)
    }

    static func someIDs(_ context: Context, _ rng: inout SeededRandom) -> String {
        let count = Int.random(in: 1...3, using: &rng)
        return (0..<count).map { _ in "\(rng.pick(context.ids))" }.joined(separator: ", ")
    }

    /// One random statement, small.
    static func statement(_ context: inout Context, _ rng: inout SeededRandom) -> String {
        let roll = context.ids.isEmpty ? 0 : Int.random(in: 0..<100, using: &rng)
        func insertRow() -> String {
            "(\(literal(rng.pick(titles))), \(context.url()), 0, \(score(&rng)), \(literal(rng.pick(categories))), \(Int.random(in: 0...1, using: &rng)))"
        }
        let columns = "article (title, url, published, score, category, isRead)"
        switch roll {
        case 0..<14:
            let rows = (0..<Int.random(in: 1...3, using: &rng)).map { _ in insertRow() }
            return "INSERT INTO \(columns) VALUES " + rows.joined(separator: ", ")
        case 14..<24:
            return "UPDATE article SET category = \(literal(rng.pick(categories))) WHERE id IN (\(someIDs(context, &rng)))"
        case 24..<33:
            return "UPDATE article SET score = \(score(&rng)) WHERE id IN (\(someIDs(context, &rng)))"
        case 33..<41:
            if rng.chance(0.3) {
                // NFC becomes NFD and back, on every row; the other rows are set to their values.
                let pairs = [("\u{E9}t\u{E9}", "e\u{301}te\u{301}"), ("\u{E9}mile", "e\u{301}mile"), ("\u{C5}", "A\u{30A}")]
                let (nfc, nfd) = rng.pick(pairs)
                return
                    "UPDATE article SET title = CASE title WHEN \(literal(nfc)) THEN \(literal(nfd)) WHEN \(literal(nfd)) THEN \(literal(nfc)) ELSE title END"
            }
            return "UPDATE article SET title = \(literal(rng.pick(titles))) WHERE id IN (\(someIDs(context, &rng)))"
        case 41..<45:
            return "UPDATE article SET url = url || '+' WHERE id IN (\(someIDs(context, &rng)))"
        case 45..<53:
            return rng.pick([
                "UPDATE article SET title = title WHERE id IN (\(someIDs(context, &rng)))",
                "UPDATE article SET score = score, category = category",
                "UPDATE article SET category = category WHERE category IS NULL OR category = ''",
                "UPDATE article SET isRead = isRead, url = url WHERE id % 2 = 0",
                "UPDATE article SET score = score + 0 WHERE id IN (\(someIDs(context, &rng)))",
            ])
        case 53..<57:
            // One half of a change and its undo (which a transaction may pair, as `commit` does).
            let id = rng.pick(context.ids)
            return rng.pick([
                "UPDATE article SET isRead = 1 - isRead WHERE id = \(id)",
                "UPDATE article SET title = title || 'x' WHERE id = \(id)",
                "UPDATE article SET title = substr(title, 1, length(title) - 1) WHERE id = \(id) AND title LIKE '%x'",
            ])
        case 57..<63:
            return "DELETE FROM article WHERE id = \(rng.pick(context.ids))"
        case 63..<67:
            return rng.pick([
                "DELETE FROM article WHERE id % \(Int.random(in: 3...7, using: &rng)) = \(Int.random(in: 0...2, using: &rng))",
                "DELETE FROM article WHERE category IS \(literal(rng.pick(categories)))",
                "DELETE FROM article WHERE score > \(Int.random(in: 20...60, using: &rng))",
            ])
        case 67..<73:
            return "UPDATE article SET score = \(rng.pick(extremeScores)) WHERE id IN (\(someIDs(context, &rng)))"
        case 73..<79:
            let id = rng.pick(context.ids), other = rng.pick(context.ids)
            return rng.pick([
                // REPLACE deletes the row holding the url (no delete trigger without recursive_triggers).
                "INSERT OR REPLACE INTO \(columns) SELECT \(literal(rng.pick(titles))), url, 0, \(score(&rng)), \(literal(rng.pick(categories))), 0 FROM article WHERE id = \(id)",
                "INSERT INTO \(columns) VALUES (\(literal(rng.pick(titles))), coalesce((SELECT url FROM article WHERE id = \(id)), \(context.url())), 0, \(score(&rng)), \(literal(rng.pick(categories))), 0) ON CONFLICT(url) DO UPDATE SET score = excluded.score, category = excluded.category",
                "UPDATE OR REPLACE article SET url = coalesce((SELECT url FROM article WHERE id = \(other)), url) WHERE id = \(id)",
                "INSERT OR IGNORE INTO \(columns) SELECT 'ignored', url, 0, 1, 'a', 0 FROM article WHERE id = \(id)",
                "INSERT INTO \(columns) SELECT 'nothing', url, 0, 1, 'a', 0 FROM article WHERE id = \(id) ON CONFLICT(url) DO NOTHING",
            ])
        case 79..<82:
            return
                "UPDATE article SET id = (SELECT max(id) FROM article) + \(Int.random(in: 1...5, using: &rng)) WHERE id = \(rng.pick(context.ids))"
        case 82..<86:
            return rng.pick([
                "UPDATE article SET score = score + 1 WHERE score BETWEEN -1000000 AND 1000000",
                "UPDATE article SET category = CASE category WHEN 'a' THEN 'b' WHEN 'b' THEN 'a' ELSE category END",
                "UPDATE article SET category = \(literal(rng.pick(categories))) WHERE category IS \(literal(rng.pick(categories)))",
            ])
        default:
            return "UPDATE article SET isRead = 1 - isRead WHERE id IN (\(someIDs(context, &rng)))"
        }
    }

    /// 300–3,000 rows in one statement.
    static func bulk(_ context: inout Context, rows: Int, _ rng: inout SeededRandom) -> String {
        let count = Int.random(in: 300...3_000, using: &rng)
        if rows > 1_500 || (rows > 300 && rng.chance(0.4)) {
            return rng.pick([
                "DELETE FROM article WHERE url LIKE 'bulk-%' AND id % \(Int.random(in: 1...3, using: &rng)) = 0",
                "UPDATE article SET title = title || '.' WHERE url LIKE 'bulk-%'",
                "UPDATE article SET score = score + 7 WHERE url LIKE 'bulk-%' AND score BETWEEN -1000000 AND 1000000",
            ])
        }
        return """
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < \(count)) \
            INSERT INTO article (title, url, published, score, category, isRead) \
            SELECT 'bulk ' || (x % 97), 'bulk-\(context.step)-' || x, 0, x % 50, \
            CASE x % 5 WHEN 0 THEN NULL WHEN 1 THEN 'a' WHEN 2 THEN 'bulk' WHEN 3 THEN \(literal("\u{E9}")) ELSE 'c' END, x % 2 FROM n
            """
    }

    static func commit(_ context: inout Context, rows: Int, _ rng: inout SeededRandom) -> Commit {
        var commit = Commit()
        let roll = Int.random(in: 0..<100, using: &rng)
        switch roll {
        case 0..<6:
            commit.statements = [bulk(&context, rows: rows, &rng)]
        case 6..<16:
            commit.statements = (0..<Int.random(in: 1...3, using: &rng)).map { _ in statement(&context, &rng) }
            if rng.chance(0.3) { commit.statements.append(bulk(&context, rows: rows, &rng)) }
            commit.rollback = true
        case 16..<22 where !context.ids.isEmpty:
            // Changed and changed back, in one transaction.
            let id = rng.pick(context.ids)
            commit.statements = rng.pick([
                [
                    "UPDATE article SET isRead = 1 - isRead WHERE id = \(id)",
                    "UPDATE article SET isRead = 1 - isRead WHERE id = \(id)",
                ],
                [
                    "UPDATE article SET title = title || 'x', score = -score - 1 WHERE id = \(id) AND score BETWEEN -1000000 AND 1000000",
                    "UPDATE article SET title = substr(title, 1, length(title) - 1), score = -score - 1 WHERE id = \(id) AND score BETWEEN -1000000 AND 1000000",
                ],
                [
                    "UPDATE article SET category = 'zz-temporary' WHERE category = 'a'",
                    "UPDATE article SET category = 'a' WHERE category = 'zz-temporary'",
                ],
            ])
        case 22..<45:
            commit.statements = (0..<Int.random(in: 2...4, using: &rng)).map { _ in statement(&context, &rng) }
        default:
            commit.statements = [statement(&context, &rng)]
        }
        commit.secondStore = rng.chance(0.08)
        return commit
    }

    /// Every row's stored values by rowid, text as bytes (so NFC and NFD differ).
    static func rows(_ db: Database) throws -> [Int64: String] {
        let sql = """
            SELECT id, hex(title) || '|' || hex(url) || '|' || quote(score) || '|' || CASE WHEN category IS NULL THEN 'NULL' ELSE hex(category) END \
            || '|' || quote(isRead) || '|' || quote(published) FROM article
            """
        var rows: [Int64: String] = [:]
        for row in try Row.fetchAll(db, sql: sql) { rows[row[0] as Int64] = row[1] as String }
        return rows
    }

    /// A record's values as ``rows(_:)`` gives them, but for `published`.
    static func values(_ article: Article) -> String {
        func hex(_ text: String) -> String { text.utf8.map { String(format: "%02X", $0) }.joined() }
        return [
            hex(article.title), hex(article.url), "\(article.score)", article.category.map(hex) ?? "NULL",
            article.isRead ? "1" : "0",
        ]
        .joined(separator: "|")
    }

    /// The sections of a fresh fetch of the controller's request: names as bytes.
    static func freshSections(_ controller: FetchedResultsController<Article>) throws -> [String] {
        let fresh = FetchedResultsController(controller.fetchRequest, store: controller.store, sectionBy: controller.sectionKey)
        fresh.firstScreenRule = nil
        try fresh.performFetch()
        return sectionNames(fresh)
    }

    static func sectionNames(_ controller: FetchedResultsController<Article>) -> [String] {
        controller.sections.map { "\(Array($0.name.utf8))\($0.isNil ? " nil" : "") ×\($0.numberOfObjects)" }
    }

    /// The controller's records that differ from the stored rows (every one in short lists,
    /// about 150 spread over long ones).
    static func staleRecords(_ controller: FetchedResultsController<Article>, _ rows: [Int64: String]) -> [String] {
        let ids = controller.snapshot.identifiers
        let stride = max(1, ids.count / 150)
        var stale: [String] = []
        var offset = 0
        for (section, info) in controller.sections.enumerated() {
            for item in Swift.stride(from: 0, to: info.numberOfObjects, by: stride) {
                let id = ids[ids.startIndex + offset + item]
                guard let record = controller.object(at: IndexPath(item: item, section: section)) else {
                    stale.append("\(id): no record, stored \(rows[id.rawValue] ?? "none")")
                    continue
                }
                let stored = rows[id.rawValue].map { $0.split(separator: "|", omittingEmptySubsequences: false).dropLast() }
                let shown = values(record)
                if record.id != id || stored.map({ $0.joined(separator: "|") }) != shown {
                    stale.append(
                        "\(id): shows \(record.id.map { "\($0)" } ?? "nil") \(shown), stored \(rows[id.rawValue] ?? "none")")
                }
            }
            offset += info.numberOfObjects
        }
        return stale
    }

    static func populate(_ store: Store, _ rng: inout SeededRandom) throws {
        var random = rng
        try store.write { tx in
            for i in 0..<Int.random(in: 20...80, using: &random) {
                var article = Article(
                    title: random.pick(titles), url: "seed-\(i)", score: Int(score(&random)), category: random.pick(categories))
                article.isRead = random.chance(0.3)
                try tx.insert(&article)
            }
        }
        rng = random
    }

    struct RolledBack: Error {}

    @Test(arguments: seeds)
    func workload(seed: UInt64) async throws {
        var rng = SeededRandom(seed: seed &* 0x9E37_79B9 &+ 0x0C0F_FEE0)
        let directory = try ScratchDirectory()
        let store = try Store(path: directory.path("store.sqlite"), records: [Article.self])
        let path = store.path!
        try Self.populate(store, &rng)
        #if os(Linux)
        // inotify, unless this process found every inotify instance taken (see OtherProcessChangeTests).
        #expect(
            store.externalChangeDetection == .inotify || store.externalChangeDetection == .polling(interval: .milliseconds(100)))
        #endif
        let second = try Store(path: path, records: [Article.self])
        let byCategory = [SortDescriptor<Article>(\.category), SortDescriptor(\.score)]
        let byTitle = [SortDescriptor<Article>(\.title, order: .reverse), SortDescriptor(\.score)]
        let third: (String, RecordRequest<Article>, SectionKey<Article>?) =
            switch seed % 3 {
            case 0:
                (
                    "filtered by score",
                    RecordRequest(
                        predicate: #Predicate<Article> { $0.score < 30 || $0.score > 9_007_199_254_740_992 },
                        sortBy: [SortDescriptor(\.score, order: .reverse), SortDescriptor(\.title)], batchSize: 5), nil
                )
            case 1:
                (
                    "unread, sectioned by category descending",
                    RecordRequest(
                        predicate: #Predicate<Article> { $0.isRead == false },
                        sortBy: [SortDescriptor(\.category, order: .reverse), SortDescriptor(\.title)], batchSize: 6),
                    .attribute(\.category)
                )
            default:
                (
                    "not b, limit 15 offset 3",
                    RecordRequest(
                        predicate: #Predicate<Article> { $0.category != "b" },
                        sortBy: [SortDescriptor(\.score), SortDescriptor(\.url)],
                        limit: 15, offset: 3), nil
                )
            }
        let lists: [(String, XprocTable)] = [
            (
                "sectioned by category",
                try await XprocTable(store, RecordRequest(sortBy: byCategory, batchSize: 20), sectionBy: .attribute(\.category))
            ),
            ("by title", try await XprocTable(store, RecordRequest(sortBy: byTitle, batchSize: 7), sectionBy: nil)),
            (third.0, try await XprocTable(store, third.1, sectionBy: third.2)),
        ]
        store.diagnostics.resetCounters()
        let replay = "replay: FOLIO_SEED=\(seed) swift test --filter OtherProcessWorkloadTests"
        var log: [String] = []
        func fail(_ step: Int, _ problems: [String]) {
            Issue.record(
                Comment(
                    rawValue: "seed \(seed) failed at step \(step) (\(replay)):\n" + problems.joined(separator: "\n")
                        + "\nthe steps:\n" + log.joined(separator: "\n")))
        }
        for step in 0..<Self.steps {
            let late = lists.filter { !$0.1.changeSets.isEmpty }
            if !late.isEmpty {
                fail(step, late.map { "list \($0.0): change sets after step \(step - 1) was settled: \($0.1.changeSets)" })
                return
            }
            let before = try readNow(store) { db in try Self.rows(db) }
            let models = try lists.map { try freshModel($0.1.controller) }
            let logged = try readNow(store) { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM folio_changes") }
            var context = Context(ids: before.keys.sorted(), step: step)
            let commit = Self.commit(&context, rows: before.count, &rng)
            let via = commit.secondStore ? "a second Store" : "sqlite3"
            log.append("step \(step), by \(via): \(commit.sql)")
            let rowsRead = store.diagnostics.counters.changeLogRowsRead
            do {
                if commit.secondStore {
                    do {
                        try writeSync(second) { tx in
                            for statement in commit.statements { try tx.database.execute(sql: statement) }
                            if commit.rollback { throw RolledBack() }
                        }
                    } catch is RolledBack {}
                } else {
                    try Shell.sqlite3(path, commit.sql)
                }
            } catch {
                fail(step, ["the commit failed (a test mistake): \(error)"])
                return
            }
            let after = try readNow(store) { db in try Self.rows(db) }
            // The rows the commit's statements changed, each compared on its own, as the
            // change log tells them.
            let touched = try readNow(store) { db in
                try Row.fetchAll(
                    db, sql: "SELECT row, old_row FROM folio_changes WHERE seq > ? AND entity = 'article'",
                    arguments: [logged ?? 0]
                )
                .reduce(into: Set<RecordID>()) { set, row in
                    for id in [row[0], row[1]] as [Int64?] { if let id { set.insert(RecordID(id)) } }
                }
            }
            // A list must hear of the commit when its rows, their order or sections, or any
            // stored value of a row it shows changed; and, documented, when two statements of
            // the transaction changed a row it shows and changed it back (an update).
            var netChange: [Bool] = [], expected: [Bool] = []
            for (index, (_, table)) in lists.enumerated() {
                let fresh = try freshModel(table.controller)
                netChange.append(
                    fresh != models[index] || fresh.identifiers.contains { before[$0.rawValue] != after[$0.rawValue] })
                expected.append(
                    netChange[index]
                        || (commit.statements.count > 1 && !commit.rollback
                            && fresh.identifiers.contains { touched.contains($0) })
                )
            }
            if !expected.contains(true) {
                // Until the store has read the commit's log rows, if it logged any; then the
                // time a change set would take to arrive.
                let now = try readNow(store) { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM folio_changes") }
                if now != logged {
                    for _ in 0..<2_000 where store.diagnostics.counters.changeLogRowsRead == rowsRead {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    if store.diagnostics.counters.changeLogRowsRead == rowsRead {
                        fail(step, ["the store never read the commit's log rows (woken by nothing?)"])
                        return
                    }
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            // The lists that must hear first; then the others, which must have heard nothing.
            var delivered: [Int: [ChangeSet]] = [:]
            for index in lists.indices.sorted(by: { expected[$0] && !expected[$1] }) {
                if !expected[index] && expected.contains(true) && delivered.count == expected.filter({ $0 }).count {
                    try await Task.sleep(for: .milliseconds(30))
                }
                let (name, table) = lists[index]
                let what = "seed \(seed), step \(step), list \(name), by \(via): \(commit.sql) (\(replay))"
                delivered[index] = try await table.settle(what, count: expected[index] ? 1 : 0)
            }
            var problems: [String] = []
            for (index, (name, table)) in lists.enumerated() {
                let changes = delivered[index] ?? []
                let fresh = try freshModel(table.controller)
                let label = "list \(name)"
                if TableViewModel(table.controller.snapshot) != fresh {
                    problems.append("\(label): shows \(TableViewModel(table.controller.snapshot)), a fresh fetch \(fresh)")
                }
                if table.model != fresh {
                    problems.append("\(label): the change sets applied give \(table.model), a fresh fetch \(fresh)")
                }
                if !table.failures.isEmpty { problems.append("\(label): a change set the model refused: \(table.failures)") }
                if !table.errors.isEmpty { problems.append("\(label): errors \(table.errors)") }
                if changes.contains(where: \.isReload) { problems.append("\(label): a reload: \(changes)") }
                if expected[index] && changes.count != 1 {
                    problems.append("\(label): one change set expected, \(changes.count) came: \(changes)")
                }
                if !expected[index] && !changes.isEmpty {
                    problems.append("\(label): nothing it shows changed, yet change sets came: \(changes)")
                }
                if expected[index] && !netChange[index]
                    && changes.contains(where: {
                        !$0.insertedSections.isEmpty || !$0.deletedSections.isEmpty || !$0.insertedItems.isEmpty
                            || !$0.deletedItems.isEmpty || !$0.movedItems.isEmpty
                    })
                {
                    problems.append("\(label): rows changed and changed back, yet more than updates came: \(changes)")
                }
                // Every row shown before and after whose stored values changed is reconfigured
                // (updated, moved and updated, or taken anew from the data source); in a
                // one-statement commit, no other row is.
                var replayed = models[index]
                if changes.count == 1, !changes[0].isReload,
                    let applied = try? replayed.apply(changes[0], dataSource: table.controller.snapshot)
                {
                    let shownBefore = Set(models[index].identifiers)
                    let renewed = applied.reconfigured.union(applied.inserted)
                    let stale = fresh.identifiers.filter {
                        shownBefore.contains($0) && before[$0.rawValue] != after[$0.rawValue] && !renewed.contains($0)
                    }
                    if !stale.isEmpty { problems.append("\(label): rows changed but not updated: \(stale) in \(changes)") }
                    let spurious = applied.reconfigured.filter { before[$0.rawValue] == after[$0.rawValue] }
                    if !spurious.isEmpty && (commit.statements.count == 1 || !spurious.isSubset(of: touched)) {
                        problems.append("\(label): rows updated though no stored value changed: \(spurious) in \(changes)")
                    }
                }
                let sections = Self.sectionNames(table.controller), freshSections = try Self.freshSections(table.controller)
                if sections != freshSections {
                    problems.append("\(label): sections \(sections), a fresh fetch's \(freshSections)")
                }
                let stale = Self.staleRecords(table.controller, after)
                if !stale.isEmpty { problems.append("\(label): records not the stored ones: \(stale.prefix(5))") }
            }
            if !problems.isEmpty {
                fail(step, problems)
                return
            }
        }
        #expect(store.diagnostics.counters.changeLogReloads == 0, "seed \(seed): \(store.diagnostics.lastReloadReason ?? "")")
        #expect(store.diagnostics.counters.changeLogRowsRead > 0, "seed \(seed): the log was followed")
    }
}

extension SeededRandom {
    fileprivate mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
    fileprivate mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &self)] }
}
