import Foundation
import Folio

extension Bench {
    /// Issue 24, part 1: a filtered list (`isRead == false`, 2 rows in 3, newest first), a full
    /// `performFetch`, with and without an index `(isRead, published)`, each against the
    /// unfiltered `performFetch` measured in the same phase of the same run.
    ///
    /// The benchmark's entity declares no compound index, so that every other row measures
    /// the table as it was; this measurement makes the index in SQL for its own phase (the
    /// index a declared `IndexDescription([\.isRead, \.published])` makes, under another
    /// name) and drops it after.
    func compoundIndex() throws {
        log("filtered list (unread, newest first): performFetch without and with an index (isRead, published)")
        let unread = #Predicate<Article> { $0.isRead == false }
        let expected = try store.count(request(batchSize: 0, predicate: unread))

        func measure(_ predicate: Predicate<Article>?) throws -> Lap {
            let c = FetchedResultsController(request(batchSize: 50, predicate: predicate), store: store)
            c.completesInBackground = false
            let watch = Stopwatch()
            try performFetch(c)
            let lap = watch.lap()
            let count = c.fetchedObjects?.count ?? -1
            guard count == (predicate == nil ? rows : expected) else {
                throw BenchError.wrongResults("filtered list: performFetch found \(count) rows")
            }
            return lap
        }

        func phase() throws -> (unfiltered: Samples, filtered: Samples) {
            var unfiltered = Samples(), filtered = Samples()
            for rep in 0...repetitions {
                let a = try measure(nil)
                let b = try measure(unread)
                guard rep > 0 else { continue }  // warm-up
                unfiltered.add(a)
                filtered.add(b)
            }
            return (unfiltered, filtered)
        }

        let filteredRequest = request(batchSize: 50, predicate: unread)
        let planWithout = try store.explain(filteredRequest)
        let without = try phase()
        try store.write { tx in try tx.database.execute(sql: Self.createUnreadIndex) }
        defer { try? store.write { tx in try tx.database.execute(sql: Self.dropUnreadIndex) } }
        let planWith = try store.explain(filteredRequest)
        guard planWith.indexes == [Self.unreadIndex], !planWith.readsEveryRow else {
            throw BenchError.wrongResults("filtered list: the plan does not read the index: \(planWith)")
        }
        let with = try phase()

        addBaseline(
            "performFetch.unfiltered.noCompound", "performFetch, unfiltered (the same run, no compound index)", without.unfiltered
        )
        addBaseline(
            "performFetch.unfiltered.compound", "performFetch, unfiltered (the same run, with the compound index)",
            with.unfiltered)
        func steps(_ plan: QueryPlan) -> String { plan.steps.map(\.detail).joined(separator: "; ") }
        report.results.append(
            ResultRow(
                id: "filteredList.compoundIndex",
                what: "filtered list (isRead == false, by published desc), full performFetch, index (isRead, published)",
                samples: with.filtered, baseline: ("performFetch.unfiltered.compound", with.unfiltered),
                target: Targets.filteredList, check: { ($0.ratio ?? .infinity) <= Targets.filteredListRatio },
                detail: "\(Report.count(expected)) of \(Report.count(rows)) rows match; plan: \(steps(planWith))"))
        report.results.append(
            ResultRow(
                id: "filteredList.noIndex",
                what: "the same filtered list without the compound index (for contrast)",
                samples: without.filtered, baseline: ("performFetch.unfiltered.noCompound", without.unfiltered),
                detail: "plan: \(steps(planWithout))"))
    }

    static let unreadIndex = "bench_article_isRead_published"
    static let createUnreadIndex = "CREATE INDEX \(unreadIndex) ON article(isRead ASC, published ASC)"
    static let dropUnreadIndex = "DROP INDEX IF EXISTS \(unreadIndex)"
}
