import Foundation
import GRDB
import Testing
@testable import Folio

/// Totals over every workload of the run, printed by the suites.
final class WorkloadTotals: @unchecked Sendable {
    // @unchecked Sendable: every field is read and written under `lock`.
    private let lock = NSLock()
    private var values: [String: Int] = [:]
    static let shared = WorkloadTotals()

    func add(_ key: String, _ n: Int = 1) { lock.lock(); values[key, default: 0] += n; lock.unlock() }
    var snapshot: [String: Int] { lock.lock(); defer { lock.unlock() }; return values }
}

/// One randomized workload: a store, a few live controllers drawn from the seed, and a
/// stream of random transactions. After every commit each controller's change set is
/// applied to a strict table-view model that must then equal a fresh fetch, a fetch of
/// the identifiers in SQL, and the same results computed in Swift.
@MainActor
final class Workload {
    @MainActor
    final class Tracked {
        var spec: ControllerSpec
        let controller: FetchedResultsController<Article>
        let recorder = EventRecorder()
        var model = TableViewModel(sections: [])
        var streamed: [ChangeSet] = []
        var streamTask: Task<Void, Never>?

        init(spec: ControllerSpec, store: Store) {
            self.spec = spec
            controller = FetchedResultsController(spec.request, store: store, sectionBy: spec.sectionKey)
        }
    }

    let seed: UInt64
    let transactions: Int
    var rng: SplitMix64
    let store: Store
    let touched = TouchedRows(table: "article")
    var tracked: [Tracked] = []
    var rows: [Int64: ArticleRow] = [:]
    var transaction = 0
    var log: [String] = []
    var urlCounter = 0
    var bulkInserts = 0
    var stats: [String: Int] = [:]

    init(seed: UInt64, transactions: Int) throws {
        self.seed = seed
        self.transactions = transactions
        rng = SplitMix64(seed: seed &* 0x2545_F491_4F6C_DD1D &+ 1)
        store = seed % 2 == 0 ? try Store.temporary(records: [Article.self]) : try Store.inMemory(records: [Article.self])
        store.writer.add(transactionObserver: touched, extent: .observerLifetime)
    }

    func fail(_ text: String, _ controller: Tracked? = nil) -> WorkloadFailure {
        var message = "seed \(seed), transaction \(transaction): \(text)"
        if let controller { message += "\n  controller: \(controller.spec)" }
        message += "\n  last operations:\n    " + log.suffix(6).joined(separator: "\n    ")
        message += "\n  replay: FOLIO_SEED=\(seed) swift test --filter RandomizedWorkloadTests"
        return WorkloadFailure(description: message)
    }

    func ensure(_ condition: Bool, _ text: @autoclosure () -> String, _ controller: Tracked? = nil) throws {
        if !condition { throw fail(text(), controller) }
    }

    // MARK: Running

    func run() async throws {
        // Seed the table, then start the controllers.
        try write("seed 200 rows") { tx in for _ in 0..<200 { try self.insertRandom(tx) } }
        _ = touched.take()
        rows = try ArticleRow.readAll(store)
        let count = Int.random(in: 3...4, using: &rng)
        for index in 0..<count {
            // Every workload has one sectioned and one windowed controller at least.
            var spec = ControllerSpec.random(&rng, sections: index == 0 ? rng.pick([.category, .day, .firstLetter]) : nil)
            if index == 1 && spec.limit == nil && spec.offset == nil {
                (spec.limit, spec.offset) = rng.pick(ControllerSpec.windows)
            }
            let t = Tracked(spec: spec, store: store)
            if rng.chance(0.5) {
                t.controller.delegate = t.recorder
                try await t.controller.performFetch()
            } else {
                try await t.controller.performFetch()
                t.controller.delegate = t.recorder  // starts tracking by catching up
            }
            if index == 0 {
                let stream = t.controller.changes
                t.streamTask = Task { @MainActor [t] in
                    for await change in stream { t.streamed.append(change) }
                }
            }
            t.model = TableViewModel(t.controller.snapshot)
            t.recorder.changeSets = []
            t.recorder.events = []
            tracked.append(t)
            try checkLive(t, against: try freshFetch(t).controller)
        }
        defer { for t in tracked { t.streamTask?.cancel() } }

        do {
            while transaction < transactions {
                transaction += 1
                try await step()
            }
        } catch let failure as WorkloadFailure {
            throw failure
        } catch {
            throw fail("\(error)")
        }

        // The change-set stream saw exactly what the delegate saw.
        let first = tracked[0]
        for _ in 0..<200 where first.streamed.count < first.recorder.changeSets.count {
            try await Task.sleep(for: .milliseconds(5))
        }
        try ensure(
            first.streamed == first.recorder.changeSets,
            "the changes stream delivered \(first.streamed.count) change sets, the delegate \(first.recorder.changeSets.count)",
            first)
        stats["controllers"] = tracked.count
    }

    func write(_ label: String, _ body: (WriteTransaction) throws -> Void) throws {
        log.append("#\(transaction) \(label)")
        try writeSync(store, body)
    }

    // MARK: One step

    func step() async throws {
        let before = tracked.map { $0.recorder.changeSets.count }
        let eventsBefore = tracked.map { $0.recorder.events.count }
        let oldModels = tracked.map(\.model)
        let oldNames = tracked.map { $0.controller.sections.map(\.name) }
        let scansBefore = store.diagnostics.counters.identifierScans
        forceDeep = false

        if rng.chance(0.03) {
            forceDeep = true
            try changeRequest()
            return
        }
        try randomTransaction()
        for t in tracked { await t.controller.waitForChanges() }
        let scans = store.diagnostics.counters.identifierScans - scansBefore
        let commits = touched.take()
        try ensure(commits.count <= 1, "\(commits.count) commits in one step")
        // What the update hook reports, plus what it cannot: the old rowid of an UPDATE
        // that changed it (Folio reports it through a trigger, see ChangeHub).
        let touchedRows = (commits.first ?? []).union(rowIDsChangedByTheStep)
        rowIDsChangedByTheStep = []
        let current = try ArticleRow.read(store, ids: touchedRows)
        var valueChanged = Set<Int64>()
        for id in touchedRows where current[id] != rows[id] {
            valueChanged.insert(id)
            rows[id] = current[id]
        }
        if touchedRows.count > 100 && rows.count < 1_000 { forceDeep = true }
        if deep {
            // Nothing changed that SQLite did not report.
            let all = try ArticleRow.readAll(store)
            let unreported = Set(all.keys).union(rows.keys).filter { all[$0] != rows[$0] }
            try ensure(unreported.isEmpty, "rows changed without being reported: \(unreported.sorted())")
        }

        // Small transactions are followed incrementally (no rescan); large ones rescan.
        if ResultsTracker.isIncremental(changed: touchedRows.count, total: 0) {
            try ensure(scans == 0, "\(scans) identifier scans for a transaction of \(touchedRows.count) rows")
            stats["incremental transactions", default: 0] += 1
        } else {
            try ensure(scans == tracked.count, "\(scans) identifier scans after a bulk transaction, \(tracked.count) controllers")
            stats["full-rescan transactions", default: 0] += 1
        }

        for (i, t) in tracked.enumerated() {
            let delivered = Array(t.recorder.changeSets[before[i]...])
            let (freshController, fresh) = try freshFetch(t)
            let old = oldModels[i]
            let oldIDs = Set(old.identifiers.map(\.rawValue)), newIDs = Set(fresh.identifiers.map(\.rawValue))
            let shownTouched = touchedRows.intersection(oldIDs).intersection(newIDs)
            let expectChange = old != fresh || !shownTouched.isEmpty
            guard expectChange else {
                try ensure(delivered.isEmpty, "a change set for a commit that changed nothing shown: \(delivered)", t)
                try checkLive(t, against: freshController)
                continue
            }
            try ensure(delivered.count == 1, "\(delivered.count) change sets for one commit", t)
            let change = delivered[0]
            try ensure(!change.isReload, "a reload where a change set was expected", t)
            let applied: TableViewModel.Applied
            do {
                applied = try t.model.apply(change, dataSource: t.controller.snapshot)
            } catch {
                throw fail("\(error)\n  change: \(change)\n  before: \(old)\n  after:  \(fresh)", t)
            }
            try ensure(
                t.model == fresh,
                "the model after the change set differs from a fresh fetch\n  change: \(change)\n  before: \(old)\n  model:  \(t.model)\n  fresh:  \(fresh)",
                t)
            try checkLive(t, against: freshController)

            // Updates and moves: only rows the commit touched; every changed row that stays is reconfigured.
            let reconfigured = Set(applied.reconfigured.map(\.rawValue))
            let moved = Set(applied.moved.keys.map(\.rawValue))
            try ensure(
                reconfigured.isSubset(of: touchedRows),
                "untouched rows updated: \(reconfigured.subtracting(touchedRows).sorted())\n  change: \(change)", t)
            try ensure(
                moved.isSubset(of: touchedRows),
                "spurious moves of untouched rows: \(moved.subtracting(touchedRows).sorted())\n  change: \(change)", t)
            let replaced = Set(applied.deleted.map(\.rawValue)).intersection(applied.inserted.map(\.rawValue))
            let stayed = valueChanged.intersection(oldIDs).intersection(newIDs).subtracting(replaced)
            try ensure(
                stayed.isSubset(of: reconfigured),
                "changed rows not reported: \(stayed.subtracting(reconfigured).sorted())\n  change: \(change)", t)
            // A row deleted and inserted again must have changed section (never a disguised move).
            for id in replaced {
                let from = old.sections.firstIndex { $0.contains(RecordID(id)) }!
                let to = fresh.sections.firstIndex { $0.contains(RecordID(id)) }!
                try ensure(
                    change.deletedSections.contains(from) || change.insertedSections.contains(to),
                    "row \(id) deleted and inserted within surviving sections \(from) → \(to)\n  change: \(change)", t)
            }
            // The delegate heard the same change, callback by callback.
            let events = Array(t.recorder.events[eventsBefore[i]...])
            let expected = EventRecorder.expectedEvents(
                for: change, old: old, oldNames: oldNames[i], newNames: t.controller.sections.map(\.name), new: fresh)
            try ensure(events == expected, "delegate callbacks differ:\n    got      \(events)\n    expected \(expected)", t)
            try ensure(t.recorder.snapshots.last == t.controller.snapshot, "the delegate's snapshot is not the controller's", t)

            stats["change sets applied", default: 0] += 1
            stats["rows inserted", default: 0] += applied.inserted.count
            stats["rows deleted", default: 0] += applied.deleted.count
            stats["rows moved", default: 0] += applied.moved.count
            stats["rows updated", default: 0] += applied.updated.count
            stats["sections inserted or deleted", default: 0] += change.insertedSections.count + change.deletedSections.count
        }
        stats["transactions", default: 0] += 1
    }

    /// Deep checks (the Swift oracle, reading records, the whole table) run every 25th step and after
    /// large or unusual ones; the model is checked against a fresh fetch after every one.
    var deep: Bool { transaction % 25 == 0 || forceDeep }
    var forceDeep = false
    /// Old rowids of rows whose rowid the step changed (SQLite's update hook omits them).
    var rowIDsChangedByTheStep = Set<Int64>()

    /// A fresh controller's results, checked against a plain identifier fetch and, in deep
    /// steps, against the results computed in Swift.
    func freshFetch(_ t: Tracked) throws -> (controller: FetchedResultsController<Article>, model: TableViewModel) {
        let fresh = FetchedResultsController(t.controller.fetchRequest, store: store, sectionBy: t.controller.sectionKey)
        try fresh.performFetch()
        let model = TableViewModel(fresh.snapshot)
        try TableViewModel.check(dataSource: fresh.snapshot)
        let flat = try store.fetchIdentifiers(t.controller.fetchRequest)
        try ensure(
            Array(flat) == model.identifiers,
            "a fresh controller and fetchIdentifiers disagree\n  controller: \(model)\n  identifiers: \(flat.map(\.rawValue))", t)
        if deep {
            let oracle = try SwiftOracle.results(rows, request: t.controller.fetchRequest, sections: t.spec.sections)
            let freshSections = zip(fresh.sections, model.sections).map {
                SwiftOracle.Section(name: $0.name, isNil: $0.isNil, ids: $1)
            }
            let expected =
                oracle.isEmpty && t.spec.sections == .none ? [SwiftOracle.Section(name: "", isNil: false, ids: [])] : oracle
            try ensure(
                freshSections == expected,
                "a fresh fetch differs from the results computed in Swift\n  fetch:  \(freshSections)\n  oracle: \(expected)", t)
            stats["oracle checks", default: 0] += 1
        }
        return (fresh, model)
    }

    /// The live controller shows what its model shows, with the right sections and records.
    func checkLive(_ t: Tracked, against fresh: FetchedResultsController<Article>) throws {
        let snapshot = t.controller.snapshot
        try TableViewModel.check(dataSource: snapshot)
        try ensure(
            t.model == TableViewModel(snapshot),
            "the model differs from the controller's snapshot\n  model: \(t.model)\n  snapshot: \(TableViewModel(snapshot))", t)
        try ensure(fresh.snapshot == snapshot, "the controller's snapshot differs from a fresh fetch", t)
        try ensure(
            fresh.sections == t.controller.sections,
            "sections differ from a fresh fetch\n  live:  \(t.controller.sections)\n  fresh: \(fresh.sections)", t)
        try ensure(fresh.sectionIndexTitles == t.controller.sectionIndexTitles, "index titles differ", t)
        // A record read through the controller is the one its identifier names.
        if deep && snapshot.numberOfItems > 0 {
            let section = Int.random(in: 0..<snapshot.numberOfSections, using: &rng)
            let count = t.controller.sections[section].numberOfObjects
            if count > 0 {
                let path = IndexPath(item: Int.random(in: 0..<count, using: &rng), section: section)
                let id = t.controller.identifier(at: path)
                let record = t.controller.object(at: path)
                try ensure(
                    record?.id == id, "object(at: \(path)) is \(String(describing: record?.id)), the identifier there is \(id)", t
                )
                try ensure(record.map { ArticleRow.from($0) } == rows[id.rawValue], "object(at: \(path)) has stale values", t)
                try ensure(t.controller.indexPath(for: id) == path, "indexPath(for: \(id)) is not \(path)", t)
            }
        }
    }

    // MARK: Changing the request

    func changeRequest() throws {
        let t = rng.pick(tracked)
        var spec = ControllerSpec.random(&rng, sections: t.spec.sections)
        if rng.chance(0.5) { spec.predicate = t.spec.predicate }
        log.append("#\(transaction) setRequest \(spec)")
        let old = t.model
        let before = t.recorder.changeSets.count
        let change = try t.controller.setRequest(spec.request)
        t.spec = spec
        try ensure(
            t.recorder.changeSets.count == before + 1 && t.recorder.changeSets.last == change,
            "setRequest did not deliver its change set to the delegate", t)
        try ensure(!change.isReload, "setRequest answered with a reload", t)
        try ensure(
            change.updatedItems.isEmpty && change.movedItems.allSatisfy { !$0.isUpdated },
            "setRequest reported updates, but no record changed: \(change)", t)
        let (freshController, fresh) = try freshFetch(t)
        do {
            try t.model.apply(change, dataSource: t.controller.snapshot)
        } catch {
            throw fail("\(error)\n  change: \(change)\n  before: \(old)\n  after:  \(fresh)", t)
        }
        try ensure(
            t.model == fresh,
            "after setRequest the model differs from a fresh fetch\n  change: \(change)\n  before: \(old)\n  model:  \(t.model)\n  fresh:  \(fresh)",
            t)
        try checkLive(t, against: freshController)
        stats["setRequest changes applied", default: 0] += 1
    }

    // MARK: Random data

    static let letters = ["A", "a", "B", "b", "C", "Z", "É", "é", "", "m"]
    static let words = ["", "lpha", "pple", "eta", "x"]
    static let categories: [String?] = ["a", "b", "c", "d", nil]

    func randomArticle() -> Article {
        urlCounter += 1
        var a = Article(
            title: rng.pick(Self.letters) + rng.pick(Self.words), url: "u\(seed)-\(urlCounter)",
            published: randomDate(), score: Int.random(in: 0..<15, using: &rng), category: rng.pick(Self.categories))
        a.isRead = rng.chance(0.3)
        return a
    }

    func randomDate() -> Date {
        let day = Double(Int.random(in: 0..<6, using: &rng))
        let hour = Double(rng.pick([0, 6, 12, 23]))
        return Date(timeIntervalSince1970: day * 86_400 + hour * 3_600 + rng.pick([0, 0, 0.5, 59.25]))
    }

    func insertRandom(_ tx: WriteTransaction) throws {
        var a = randomArticle()
        try tx.insert(&a)
    }

    func randomRow() -> ArticleRow? {
        guard !rows.isEmpty else { return nil }
        let keys = rows.keys.sorted()
        return rows[rng.pick(keys)]
    }

    func randomRows(_ n: Int) -> [ArticleRow] {
        var picked: [Int64: ArticleRow] = [:]
        for _ in 0..<n { if let r = randomRow() { picked[r.id] = r } }
        return picked.keys.sorted().map { picked[$0]! }
    }

    /// A random edit of some attributes: sort keys, section keys, predicate inputs, or none of them.
    func mutate(_ row: ArticleRow) -> Article {
        var a = row.article
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: a.score = Int.random(in: 0..<15, using: &rng)
        case 1: a.category = rng.pick(Self.categories)
        case 2: a.published = randomDate()
        case 3: a.title = rng.pick(Self.letters) + rng.pick(Self.words)
        case 4: a.isRead.toggle()
        case 5: a.url = "u\(seed)-edited-\(urlCounter)"; urlCounter += 1  // in place for every controller
        default:
            a.score = Int.random(in: 0..<15, using: &rng)
            a.category = rng.pick(Self.categories)
            a.title = rng.pick(Self.letters) + rng.pick(Self.words)
            a.isRead = rng.chance(0.5)
        }
        return a
    }

    func randomTransaction() throws {
        let size = rows.count
        let bulkPresent = rows.values.contains { $0.url.hasPrefix("bulk-") }
        if bulkPresent && rng.chance(0.5) {
            if rng.chance(0.35) {
                try write("bulk update") { tx in
                    try tx.database.execute(
                        sql: "UPDATE article SET score = (score + 1) % 15, isRead = NOT isRead WHERE url LIKE 'bulk-%'")
                }
            } else {
                try write("bulk delete") { tx in
                    try tx.deleteAll(Article.self, where: #Predicate { $0.url.starts(with: "bulk-") })
                }
            }
            return
        }
        let roll = Double.random(in: 0..<1, using: &rng)
        let insertBias = size < 100 ? 0.25 : (size > 300 ? -0.2 : 0)
        switch roll {
        case ..<(0.25 + insertBias):
            let n = Int.random(in: 1...3, using: &rng)
            try write("insert \(n)") { tx in for _ in 0..<n { try self.insertRandom(tx) } }
        case ..<0.50:
            let picked = randomRows(Int.random(in: 1...3, using: &rng))
            let edited = picked.map(mutate)
            try write("update \(picked.map(\.id))") { tx in for a in edited { try tx.update(a) } }
        case ..<0.62:
            let picked = randomRows(Int.random(in: 1...3, using: &rng))
            try write("delete \(picked.map(\.id))") { tx in for r in picked { try tx.delete(Article.self, id: RecordID(r.id)) } }
        case ..<0.72:
            // A mix in one transaction.
            let updated = randomRows(Int.random(in: 0...4, using: &rng)).map(mutate)
            let deleted = randomRows(Int.random(in: 0...3, using: &rng)).filter { d in
                !updated.contains { $0.id?.rawValue == d.id }
            }
            let inserted = Int.random(in: 0...4, using: &rng)
            try write("mixed: update \(updated.map { $0.id!.rawValue }), delete \(deleted.map(\.id)), insert \(inserted)") { tx in
                for a in updated { try tx.update(a) }
                for r in deleted { try tx.delete(Article.self, id: RecordID(r.id)) }
                for _ in 0..<inserted { try self.insertRandom(tx) }
            }
        case ..<0.76:
            let k = Int.random(in: 2...6, using: &rng), r = Int.random(in: 0..<k, using: &rng),
                d = Int.random(in: 1...5, using: &rng)
            try write("raw SQL: score + \(d) where id % \(k) = \(r)") { tx in
                try tx.database.execute(
                    sql: "UPDATE article SET score = (score + ?) % 15 WHERE id % ? = ?", arguments: [d, k, r])
            }
        case ..<0.79:
            let threshold = Int.random(in: 0..<15, using: &rng)
            let category = rng.pick(Self.categories)
            try write("updateAll score > \(threshold): category = \(category ?? "nil"), read") { tx in
                try tx.updateAll(
                    Article.self, where: #Predicate { $0.score > threshold },
                    set: [.set(\.category, to: category), .set(\.isRead, to: true)])
            }
        case ..<0.81:
            let threshold = Int.random(in: 0..<15, using: &rng)
            try write("deleteAll score == \(threshold) && read") { tx in
                try tx.deleteAll(Article.self, where: #Predicate { $0.score == threshold && $0.isRead })
            }
        case ..<0.84:
            // Ties: several rows with the same sort keys.
            let template = randomArticle()
            let n = Int.random(in: 2...5, using: &rng)
            try write("insert \(n) ties") { tx in
                for i in 0..<n {
                    var a = template
                    a.url = template.url + "-tie\(i)"
                    try tx.insert(&a)
                }
            }
        case ..<0.87:
            if let r = randomRow() {
                let existing = rng.chance(0.6)
                var a = existing ? mutate(r) : randomArticle()
                a.id = nil
                if existing { a.url = r.url }
                try write("upsert \(existing ? "existing \(r.id)" : "new")") { tx in try tx.upsert(&a, onConflict: \.url) }
            }
        case ..<0.89:
            // The rowid itself changes: the old identity leaves, a new one arrives.
            if let r = randomRow() {
                let newID = (rows.keys.max() ?? 0) + Int64.random(in: 1...50, using: &rng)
                rowIDsChangedByTheStep.insert(r.id)
                try write("raw SQL: id \(r.id) → \(newID)") { tx in
                    try tx.database.execute(sql: "UPDATE article SET id = ? WHERE id = ?", arguments: [newID, r.id])
                }
            }
        case ..<0.91:
            // Delete a row and insert another with the same rowid in one transaction.
            if let r = randomRow() {
                var a = randomArticle()
                a.id = RecordID(r.id)
                try write("delete and reinsert \(r.id)") { tx in
                    try tx.delete(Article.self, id: RecordID(r.id))
                    try tx.insert(&a)
                }
            }
        case ..<0.93:
            log.append("#\(transaction) rolled back")
            struct Rollback: Error {}
            let before = rows.count
            do {
                try writeSync(store) { tx in
                    try self.insertRandom(tx)
                    try tx.deleteAll(Article.self, where: #Predicate { $0.score < 7 })
                    throw Rollback()
                }
                throw fail("the rolled-back write did not throw")
            } catch is Rollback {
                try ensure(try ArticleRow.readAll(store).count == before, "a rolled-back write changed the table")
            }
        case ..<0.96:
            let n = Int.random(in: 10...50, using: &rng)
            try write("insert \(n)") { tx in for _ in 0..<n { try self.insertRandom(tx) } }
        case ..<0.965:
            let n = Int.random(in: 30...150, using: &rng)
            try write("replace everything with \(n) rows") { tx in
                try tx.deleteAll(Article.self)
                for _ in 0..<n { try self.insertRandom(tx) }
            }
        case ..<0.975 where !bulkPresent && bulkInserts < 2:
            bulkInserts += 1
            let s = Int.random(in: 0..<1000, using: &rng)
            try write("bulk insert 2,100 rows (salt \(s))") { tx in
                try tx.database.execute(
                    sql: """
                        WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2099)
                        INSERT INTO article (title, url, published, score, category, isRead)
                        SELECT substr('AaBbCZé', 1 + (i * 3 + ?1) % 7, 1) || 'bulk', 'bulk-' || ?1 || '-' || i,
                               ((i * 13 + ?1) % 6) * 86400 + ((i * 5) % 4) * 21600, (i * 7 + ?1) % 15,
                               CASE (i + ?1) % 5 WHEN 0 THEN 'a' WHEN 1 THEN 'b' WHEN 2 THEN 'c' WHEN 3 THEN 'd' END, (i + ?1) % 2
                        FROM n
                        """, arguments: [s])
            }
        default:
            // In place for every controller: no sort key, section key or predicate input changes.
            let picked = randomRows(Int.random(in: 1...6, using: &rng))
            try write("touch urls \(picked.map(\.id))") { tx in
                for r in picked {
                    try tx.database.execute(sql: "UPDATE article SET url = url || '+' WHERE id = ?", arguments: [r.id])
                }
            }
        }
    }
}

extension ArticleRow {
    static func from(_ a: Article) -> ArticleRow {
        ArticleRow(
            id: a.id!.rawValue, title: a.title, url: a.url, published: a.published.timeIntervalSince1970,
            score: a.score, category: a.category, isRead: a.isRead)
    }

    init(id: Int64, title: String, url: String, published: Double, score: Int, category: String?, isRead: Bool) {
        self.id = id; self.title = title; self.url = url; self.published = published
        self.score = score; self.category = category; self.isRead = isRead
    }
}
