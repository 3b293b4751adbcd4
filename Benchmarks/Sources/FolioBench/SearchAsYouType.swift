import Foundation
import Folio
import GRDB
import GRDBSQLite

/// One way of filtering a list as the user types: the request of each keystroke's text,
/// and SQLite's own `LIMIT` query for the same rows (a baseline written by hand, checked
/// against Folio's rows).
struct TypedFilter {
    let id: String
    let label: String
    /// The words typed, one letter at a time: "i", "ip", "ipa", "ipad", then "c", "ca"…
    let words: [String]
    let section: SectionKey<TextArticle>
    let request: @Sendable (String) -> RecordRequest<TextArticle>
    /// SQLite's own first screen of `text`: the SQL and its arguments.
    let baseline: @Sendable (String, Int) -> (sql: String, arguments: StatementArguments)
    /// The target's clause and its threshold in milliseconds.
    let target: Target
    let milliseconds: Double

    /// "ipad" matches 1 title in 100 from its first letter on; "cafe" starts broad ("c": café,
    /// crème, coöperate, chip, camera…) and narrows.
    static let typed = ["ipad", "cafe"]

    static let columns = "\"id\", \"title\", \"published\", \"score\""

    /// `TextSearch` with prefixes, newest first, by day: FeedLoader's `/`.
    static let fullText = TypedFilter(
        id: "text", label: "full-text search (TextSearch, prefixes), newest first, by day", words: typed,
        section: .day(\.published),
        request: { text in
            var request = RecordRequest<TextArticle>(sortBy: [SortDescriptor(\.published, order: .reverse)], batchSize: 50)
            request.search = TextSearch(text, matchingPrefixes: true)
            return request
        },
        baseline: { text, limit in
            (
                "SELECT \(columns) FROM text_article WHERE id IN (SELECT rowid FROM folio_text_article_fts "
                    + "WHERE folio_text_article_fts MATCH ?) ORDER BY published DESC, id DESC LIMIT \(limit)",
                ["\"\(text)\" *"]
            )
        },
        target: Targets.searchAsYouTypeFullText,
        milliseconds: Targets.searchAsYouTypeFullTextMilliseconds)

    /// `$0.title.folded.starts(with:)`, sorted by the folded title, by first letter: an A–Z
    /// list's search field, read through the folded key's index.
    static let foldedPrefix = TypedFilter(
        id: "prefix", label: "folded prefix (\\.title.folded starts(with:)), A–Z, by first letter", words: typed,
        section: .firstLetter(\.title),
        request: { text in
            RecordRequest<TextArticle>(
                predicate: #Predicate { $0.title.folded.starts(with: text) }, sortBy: [SortDescriptor(\.title.folded)],
                batchSize: 50)
        },
        baseline: { text, limit in
            (
                "SELECT \(columns) FROM text_article WHERE folio_title_folded >= ?1 AND folio_title_folded < ?1 || char(1114111) "
                    + "ORDER BY folio_title_folded, title, id LIMIT \(limit)",
                [text]
            )
        },
        target: Targets.searchAsYouTypeFolded,
        milliseconds: Targets.searchAsYouTypeFoldedMilliseconds)

    var keystrokes: [String] { words.flatMap { word in (1...word.count).map { String(word.prefix($0)) } } }
}

extension Bench {
    /// Issue 24, part 3: a list filtered as the user types, on the text table (a second store).
    ///
    /// - Each keystroke's first screen: a live controller (tracking, `completesInBackground`)
    ///   whose request is replaced by the keystroke's (`setRequest`), until its first 50 rows
    ///   and their section names are read, against SQLite's own `LIMIT 50` query for the same
    ///   text in the same run. The list completes before the next keystroke.
    /// - Typing faster than that: keystroke k's request is replaced by k+1's while k's rest is
    ///   still read in the background; how long that read goes on after the replacement (until
    ///   `Diagnostics.Counters.completionsCancelled` counts it), against the time it takes
    ///   uncancelled.
    func searchAsYouType() async throws {
        log("search as you type: generating \(Report.count(rows)) searchable rows (a second store)")
        let start = now()
        let store = try options.dataPath.map(reusedTextStore) ?? makeTextStore()
        log(String(format: "generated in %.1f s", Double(now() - start) / 1e9))
        let sqlite = try Baselines(path: store.path!)
        try sqlite.checkpoint()
        for filter in [TypedFilter.fullText, .foldedPrefix] {
            try await keystrokes(filter, store: store, sqlite: sqlite)
            try await typingFaster(filter, store: store)
        }
        report.notes.append(
            "Search as you type: the text table of the text rows (\(Report.count(rows)) rows; \"ipad\" starts 1 title in 100; \"c\" begins "
                + "5 of the 48 word stems), typed one letter at a time into a live controller (setRequest, completesInBackground). "
                + "SQLite's own queries are written by hand and return the same rows as Folio's first screens (checked).")
    }

    /// The size the rows were measured at, in their ids and labels, where it is not the
    /// default 1,000,000: `.10M` and “, measured at 10,000,000 rows” (the size of the
    /// design's target for search as you type).
    private var sizeSuffix: String {
        rows == 1_000_000 ? "" : rows % 1_000_000 == 0 ? ".\(rows / 1_000_000)M" : ".\(rows)"
    }

    private var sizeLabel: String {
        rows == 1_000_000 ? "" : ", measured at \(Report.count(rows)) rows"
    }

    private func typedController(_ filter: TypedFilter, store: Store) async throws -> (
        FetchedResultsController<TextArticle>, DeliveryRecorder<TextArticle>
    ) {
        let recorder = DeliveryRecorder<TextArticle>()
        let controller = FetchedResultsController(
            RecordRequest<TextArticle>(sortBy: filter.request("").sortBy, batchSize: 50), store: store,
            sectionBy: filter.section)
        controller.delegate = recorder
        try fetchFirstScreen(controller)
        try await controller.waitUntilComplete()
        return (controller, recorder)
    }

    private func keystrokes(_ filter: TypedFilter, store: Store, sqlite: Baselines) async throws {
        log("search as you type (\(filter.id)): each keystroke's first screen against SQLite's own LIMIT \(Self.screenRows)")
        let keys = filter.keystrokes
        var folio = [String: Samples](), baseline = [String: Samples](), matches = [String: Int]()
        var incomplete = [String: Int](), walked = [String: Int](), tested = [String: Int]()
        for rep in 0...repetitions {
            let (c, _) = try await typedController(filter, store: store)
            for text in keys {
                let (sql, arguments) = filter.baseline(text, Self.screenRows)
                let baselineWatch = Stopwatch()
                let expected = try sqlite.firstIDs(sql, arguments)
                let baselineLap = baselineWatch.lap()

                let walksBefore = store.diagnostics.counters.searchWalks
                let testingBefore = store.diagnostics.counters.matchingWalks
                let watch = Stopwatch()
                try c.setRequest(filter.request(text))
                let (records, _) = Self.firstScreen(of: c, rows: Self.screenRows)
                let lap = watch.lap()
                if rep > 0, store.diagnostics.counters.searchWalks > walksBefore { walked[text, default: 0] += 1 }
                if rep > 0, store.diagnostics.counters.matchingWalks > testingBefore { tested[text, default: 0] += 1 }
                if rep > 0, !c.isComplete { incomplete[text, default: 0] += 1 }
                guard records.map({ $0.id?.rawValue }) == expected else {
                    throw BenchError.wrongResults(
                        "search as you type (\(filter.id), “\(text)”): Folio shows \(records.count) rows, "
                            + "SQLite's LIMIT query \(expected.count); the first differ: "
                            + "\(records.prefix(3).map { $0.id?.rawValue ?? -1 }) against \(expected.prefix(3))")
                }
                try await c.waitUntilComplete()
                if rep == 0 {
                    let count = try store.count(filter.request(text))
                    guard c.fetchedObjects?.count == count else {
                        throw BenchError.wrongResults(
                            "search as you type (\(filter.id), “\(text)”): completed with \(c.fetchedObjects?.count ?? -1) rows, "
                                + "store.count \(count)")
                    }
                    matches[text] = count
                    continue  // warm-up
                }
                folio[text, default: Samples()].add(lap)
                baseline[text, default: Samples()].add(baselineLap)
            }
        }
        let plan = try sqlite.queryPlan(filter.baseline(keys[0], Self.screenRows).sql, filter.baseline(keys[0], 1).arguments)
        for text in keys {
            let baselineID = "sqlite.typed.\(filter.id).\(text)\(sizeSuffix)"
            addBaseline(
                baselineID, "SQLite's own LIMIT \(Self.screenRows) query, \(filter.id), “\(text)”\(sizeLabel)", baseline[text]!)
            report.results.append(
                ResultRow(
                    id: "searchAsYouType.\(filter.id).\(text)\(sizeSuffix)",
                    what:
                        "search as you type, \(filter.label): keystroke “\(text)” → \(Self.screenRows) rows + section names\(sizeLabel)",
                    samples: folio[text]!, baseline: (baselineID, baseline[text]!), target: filter.target,
                    check: { $0.median <= filter.milliseconds || ($0.ratio ?? .infinity) <= Targets.firstScreenRatio },
                    detail: "\(Report.count(matches[text] ?? 0)) of \(Report.count(rows)) rows match; "
                        + "\(incomplete[text] ?? 0) of \(folio[text]!.count) keystrokes returned with a first screen"
                        + (filter.id == "text"
                            ? " (\(walked[text] ?? 0) read by walking the date index, Diagnostics.searchWalks: "
                                + "\(tested[text] ?? 0) testing each row against the search, "
                                + "\((walked[text] ?? 0) - (tested[text] ?? 0)) after reading every match); "
                            : "; ")
                        + (text == keys[0] ? "SQLite's plan: \(plan)" : "")))
        }
    }

    /// Keystroke k ("c") replaced by k+1 ("ca") as soon as k's first screen is shown, while
    /// k's rest is read: how long k's read goes on.
    private func typingFaster(_ filter: TypedFilter, store: Store) async throws {
        log("search as you type (\(filter.id)): the previous keystroke's background read stops")
        let (first, next) = ("c", "ca")
        var latency = Samples(), uncancelled = Samples(), newScreen = Samples(), replaced = 0, endedFirst = 0
        let (c, _) = try await typedController(filter, store: store)
        for rep in 0...repetitions {
            // Uncancelled: the whole completion of keystroke k.
            let full = Stopwatch()
            try c.setRequest(filter.request(first))
            try await c.waitUntilComplete()
            let fullLap = full.lap()
            try c.setRequest(filter.request(""))
            try await c.waitUntilComplete()

            let before = store.diagnostics.counters.completionsCancelled
            try c.setRequest(filter.request(first))
            // Complete already (it fit its first screen): nothing to replace.
            guard !c.isComplete else {
                endedFirst += 1
                continue
            }
            // A thread of its own notes when the replaced read has stopped, while the main
            // actor reads the new keystroke's first screen.
            let watcher = StopWatcher(store.diagnostics, after: before)
            let watch = Stopwatch()
            watcher.start()
            try c.setRequest(filter.request(next))
            let setLap = watch.lap()
            let stoppedAt = await watcher.stoppedAt()
            let stopped = stoppedAt != nil
            let lap = Lap(wall: (stoppedAt ?? now()) - watch.wall, cpu: 0)
            try await c.waitUntilComplete()
            // Not counted: the read ended in the instant between the check and the replacement.
            guard stopped else {
                endedFirst += 1
                continue
            }
            guard rep > 0 else { continue }
            replaced += 1
            latency.add(lap)
            uncancelled.add(fullLap)
            newScreen.add(setLap)
        }
        guard replaced > 0 else {
            // A fast machine or a small table: every read ended before the next keystroke
            // came, so there was nothing to cancel. Said, not failed.
            let note =
                "Typing faster, \(filter.id): not measured in this run — each of the \(endedFirst) reads of “\(first)” ended "
                + "before “\(next)” could replace it (nothing left to cancel)."
            log(note)
            report.notes.append(note)
            return
        }
        let baselineID = "typed.\(filter.id).completion\(sizeSuffix)"
        addBaseline(
            baselineID, "the whole background completion of “\(first)” (\(filter.id)), uncancelled\(sizeLabel)", uncancelled)
        report.results.append(
            ResultRow(
                id: "searchAsYouType.\(filter.id).cancel\(sizeSuffix)",
                what: "typing faster, \(filter.id): “\(first)” replaced by “\(next)” as soon as its first screen shows → "
                    + "“\(first)”'s background read stops\(sizeLabel)",
                samples: latency, baseline: (baselineID, uncancelled), target: Targets.typingCancel,
                check: { $0.median <= Targets.typingCancelMilliseconds },
                detail: "from the setRequest that replaces it until the read has stopped "
                    + "(Diagnostics.completionsCancelled, watched from a thread of its own; CPU time not measured), "
                    + "while the main actor reads the new keystroke's first screen (setRequest \(Report.ms(newScreen.median))); "
                    + "\(endedFirst) of \(replaced + endedFirst) reads had ended before they could be replaced"))
    }

    /// The first `rows` records of a fetched controller and the names of the sections they
    /// are in, read as a list's data source reads them (the first-screen rows use it too).
    static func firstScreen<R: PersistentRecord>(of c: FetchedResultsController<R>, rows: Int) -> ([R], [String]) {
        var records: [R] = []
        var names: [String] = []
        for (index, section) in c.sections.enumerated() where records.count < rows {
            names.append(section.name)
            for item in 0..<Swift.min(section.numberOfObjects, rows - records.count) {
                guard let record = c.object(at: IndexPath(item: item, section: index)) else { return (records, names) }
                records.append(record)
            }
        }
        return (records, names)
    }
}

extension Baselines {
    /// The identifiers of SQLite's own query (every listed column read with the C API).
    func firstIDs(_ sql: String, _ arguments: StatementArguments) throws -> [Int64] {
        try queue.read { db in
            let statement = try db.cachedStatement(sql: sql)
            try statement.setArguments(arguments)
            let s = statement.sqliteStatement
            defer { sqlite3_reset(s) }
            var ids: [Int64] = []
            var bytes = 0
            while true {
                let code = sqlite3_step(s)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
                ids.append(sqlite3_column_int64(s, 0))
                if let title = sqlite3_column_text(s, 1) {
                    bytes += String(cString: title).utf8.count
                }
                bytes += Int(sqlite3_column_double(s, 2)) & 1 + Int(sqlite3_column_int64(s, 3)) & 1
            }
            withExtendedLifetime(bytes) {}
            return ids
        }
    }

    /// SQLite's plan for `sql` with `arguments`, one step a line, joined with "; ".
    func queryPlan(_ sql: String, _ arguments: StatementArguments) throws -> String {
        try queue.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String? ?? "" }
                .joined(separator: "; ")
        }
    }
}

/// Watches, on a thread of its own, for a background read counted as cancelled
/// (`completionsCancelled` past a count), and notes when.
final class StopWatcher: @unchecked Sendable {
    // @unchecked Sendable: `stopped` and `done` are read and written under `lock` only.
    private let diagnostics: Diagnostics
    private let count: Int
    private let lock = NSLock()
    private var stopped: UInt64?
    private var done = false

    init(_ diagnostics: Diagnostics, after count: Int) {
        self.diagnostics = diagnostics
        self.count = count
    }

    /// Polls every 100 µs for at most 5 s.
    func start() {
        let thread = Thread { [self] in
            let start = now()
            var at: UInt64?
            while now() - start < 5_000_000_000 {
                if diagnostics.counters.completionsCancelled > count {
                    at = now()
                    break
                }
                usleep(100)
            }
            lock.withLock {
                stopped = at
                done = true
            }
        }
        thread.start()
    }

    /// When the read stopped, once the watch is over; `nil` if it did not within 5 s.
    func stoppedAt() async -> UInt64? {
        while true {
            let (isDone, at) = lock.withLock { (done, stopped) }
            if isDone { return at }
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
    }
}
