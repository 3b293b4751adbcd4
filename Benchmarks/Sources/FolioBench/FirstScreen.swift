import Foundation
import Folio

/// A filter of the first-screen measurement, as a predicate for Folio and as SQL for SQLite's
/// own query.
struct ScreenFilter {
    let id: String
    let label: String
    let predicate: Predicate<Article>?
    let sql: String?

    static let all = [
        ScreenFilter(id: "unfiltered", label: "unfiltered", predicate: nil, sql: nil),
        ScreenFilter(
            id: "unread", label: "filtered: unread (isRead == false, 2 rows in 3)",
            predicate: #Predicate<Article> { $0.isRead == false }, sql: "isRead = 0"),
        ScreenFilter(
            id: "score", label: "very selective filter: score == 7 (1 row in 1,000)",
            predicate: #Predicate<Article> { $0.score == 7 }, sql: "score = 7"),
    ]
}

extension Bench {
    /// Rows on the first screen.
    static let screenRows = 50

    /// The first screen through the public API, the way a list shows it: a new controller
    /// sectioned by day, `performFetch` (which returns with the first screen), `sections`,
    /// and `object(at:)` for the first rows, with the names of the sections they are in.
    /// Against SQLite's own `… LIMIT 50` query with the same filter, in the same run. Then
    /// the background completion, until every row and section is known, against Folio's own
    /// whole `performFetch` (`completesInBackground = false`): the identifier scan it replaces.
    func firstScreen() async throws {
        let screen = Self.screenRows
        log("first screen (\(screen) rows and their section names) against SQLite's own LIMIT \(screen) query")
        for filter in ScreenFilter.all {
            var folio = Samples(), sqlite = Samples(), fetchOnly = Samples(), complete = Samples(), whole = Samples()
            var batches = 0, sectionsShown = 0, firstScreens = 0
            for rep in 0...repetitions {
                let baselineWatch = Stopwatch()
                let expected = try baselines.first(where: filter.sql, limit: screen)
                let baselineLap = baselineWatch.lap()

                let wholeWatch = Stopwatch()
                let all = FetchedResultsController(
                    request(batchSize: screen, predicate: filter.predicate), store: store, sectionBy: .day(\.published))
                try performFetch(all)  // completesInBackground = false
                let wholeLap = wholeWatch.lap()
                let total = all.fetchedObjects?.count ?? 0
                let sectionCount = all.sections.count

                let before = counters()
                let watch = Stopwatch()
                let c = FetchedResultsController(
                    request(batchSize: screen, predicate: filter.predicate), store: store, sectionBy: .day(\.published))
                try fetchFirstScreen(c)
                let fetchLap = watch.lap()
                let (records, names) = Self.firstScreen(of: c, rows: screen)
                let lap = watch.lap()
                try await c.waitUntilComplete()
                let completeLap = watch.lap()

                guard records.map({ $0.id?.rawValue }) == expected.map(\.id),
                    names == Self.dayNames(of: expected)
                else {
                    throw BenchError.wrongResults(
                        "first screen (\(filter.id)): Folio shows \(records.count) rows in sections \(names), "
                            + "SQLite's LIMIT query \(expected.count) rows in sections \(Self.dayNames(of: expected))")
                }
                guard c.fetchedObjects?.count == total, c.sections.count == sectionCount else {
                    throw BenchError.wrongResults(
                        "completion (\(filter.id)): \(c.fetchedObjects?.count ?? 0) rows in \(c.sections.count) sections, "
                            + "the whole fetch \(total) in \(sectionCount)")
                }
                guard rep > 0 else { continue }  // warm-up
                folio.add(lap)
                sqlite.add(baselineLap)
                fetchOnly.add(fetchLap)
                complete.add(completeLap)
                whole.add(wholeLap)
                batches += counters().batchesLoaded - before.batchesLoaded
                firstScreens += counters().firstScreens - before.firstScreens
                sectionsShown = names.count
            }
            let matching = try store.count(request(batchSize: 0, predicate: filter.predicate))
            let sql = BaselineSQL.first(where: filter.sql, limit: screen)
            let plan = try baselines.queryPlan(sql)
            let baselineID = "sqlite.first.\(filter.id)"
            let shown = sql.replacingOccurrences(of: BaselineSQL.columns, with: "…")
            addBaseline(baselineID, "SQLite's own `\(shown)` (every column, C API)", sqlite)
            report.results.append(
                ResultRow(
                    id: "firstScreen.\(filter.id)",
                    what: "first screen, \(filter.label): new controller (by day) → \(screen) rows + their section names",
                    samples: folio, baseline: (baselineID, sqlite), target: Targets.firstScreen,
                    check: {
                        $0.median <= Targets.firstScreenMilliseconds || ($0.ratio ?? .infinity) <= Targets.firstScreenRatio
                    },
                    detail: "\(Report.count(matching)) of \(Report.count(rows)) rows match; "
                        + "performFetch alone \(Report.ms(fetchOnly.median)) (CPU \(Report.ms(fetchOnly.cpuMedian))), then sections "
                        + "and object(at:) for the first \(screen) rows in \(sectionsShown) section\(sectionsShown == 1 ? "" : "s"); \(batches) batches loaded over "
                        + "\(folio.count) screens; \(firstScreens) of \(folio.count) fetches returned with a first screen; SQLite's plan: \(plan)"
                ))
            let wholeID = "whole.\(filter.id)"
            addBaseline(
                wholeID, "Folio's whole performFetch (completesInBackground = false), \(filter.label), by day", whole)
            report.results.append(
                ResultRow(
                    id: "completion.\(filter.id)",
                    what: "first screen, then completed in the background, \(filter.label): until every row and section is known",
                    samples: complete, baseline: (wholeID, whole), target: Targets.completion,
                    check: { ($0.ratio ?? .infinity) <= Targets.completionRatio },
                    detail: "\(Report.count(matching)) rows in the end; the whole fetch it replaces \(Report.ms(whole.median)) "
                        + "(CPU \(Report.ms(whole.cpuMedian))); the completion reads on a snapshot connection of its own"))
        }
    }

    /// The synchronous `performFetch`, returning with the first screen (`completesInBackground`).
    func fetchFirstScreen<R: PersistentRecord>(_ controller: FetchedResultsController<R>) throws {
        controller.completesInBackground = true
        try controller.performFetch()
    }

    /// The day sections (`YYYY-MM-DD`, UTC) of rows, in order, each once.
    static func dayNames(of rows: [ArticleRow]) -> [String] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        var names: [String] = []
        for row in rows {
            let name = formatter.string(from: row.published)
            if names.last != name { names.append(name) }
        }
        return names
    }
}
