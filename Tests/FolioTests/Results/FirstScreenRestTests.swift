import Foundation
import GRDB
import Testing
@testable import Folio

/// The rest of a list shown from its first screen is read from the first screen's last
/// section on, when the sections come from seeks of the sort index: the sections before it
/// are taken as they are, and SQLite does not read their rows again. Whatever the first
/// screen's size, key, direction, filter, NULLs or stored values, the result is exactly the
/// whole list read row by row.
@Suite struct FirstScreenRestTests {
    /// What reading a first screen of `firstRows` rows (and one more) and then the rest gave,
    /// against the row-by-row scan of the whole list.
    struct Outcome {
        var rest: SeekScan
        var whole: SeekScan
        /// Rows the rest took from the first screen (``Diagnostics/Counters/firstScreenRowsReused``).
        var reused: Int
        /// Rows in the first screen's sections but its last (what the rest may take).
        var keptRows: Int
        var firstComplete: Bool
        /// Whether the request's sections are found by seeks at all.
        var sought: Bool
    }

    static func restScan<R: PersistentRecord>(
        _ store: Store, _ request: RecordRequest<R>, _ key: SectionKey<R>, firstRows: Int
    ) throws -> Outcome {
        let query = try request.compile(requireSort: true)
        let expression = key.expression(source: try key.source(under: query), table: query.table)
        let updater = ResultsUpdater(query: query, section: expression, diagnostics: store.diagnostics)
        let before = store.diagnostics.counters.firstScreenRowsReused
        let (first, complete, full) = try store.readSync { db in
            let (first, complete) = try updater.scan(db, until: .immediately(rows: firstRows))
            return (first, complete, try updater.scan(db, after: first))
        }
        let reused = store.diagnostics.counters.firstScreenRowsReused - before
        let rest = SeekScan(
            ids: Array(full.ids), runs: full.runs.map { "\(SeekScan.describe($0.value))×\($0.count)" }, complete: true,
            seeks: 0)
        return Outcome(
            rest: rest, whole: try seekScan(store, request, key, seeks: false), reused: reused,
            keptRows: first.runs.dropLast().reduce(0) { $0 + $1.count }, firstComplete: complete,
            sought: try seekScan(store, request, key, seeks: true).seeks > 0)
    }

    /// The synchronous `write` (in an async test the async one would be chosen).
    static func writeNow(_ store: Store, _ body: (WriteTransaction) throws -> Void) throws {
        try store.write(body)
    }

    static let firstRows = [0, 1, 5, 40, 150, 300, 415, 600]

    /// Checks one request at every first-screen size; returns how many of them reused rows.
    @discardableResult
    static func check<R: PersistentRecord>(
        _ store: Store, _ request: RecordRequest<R>, _ key: SectionKey<R>, _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Int {
        var reusing = 0
        for rows in firstRows {
            let outcome = try restScan(store, request, key, firstRows: rows)
            #expect(outcome.rest.ids == outcome.whole.ids, "\(label), first screen \(rows)", sourceLocation: sourceLocation)
            #expect(outcome.rest.runs == outcome.whole.runs, "\(label), first screen \(rows)", sourceLocation: sourceLocation)
            // Every section before the first screen's last is taken, when there is one and
            // the sections are sought; otherwise nothing is.
            let expected = outcome.sought ? outcome.keptRows : 0
            #expect(outcome.reused == expected, "\(label), first screen \(rows)", sourceLocation: sourceLocation)
            if outcome.reused > 0 { reusing += 1 }
        }
        return reusing
    }

    /// Day sections, attribute sections of numbers, of text and of dates: NULLs (first
    /// ascending, last descending), integers beside reals, ±0, infinities, text and blobs in
    /// the date columns, both directions, with and without a filter the index holds.
    @Test(arguments: [false, true], [false, true])
    func theRestAfterTheLastSectionIsTheWholeList(descending: Bool, filtered: Bool) throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try seedSeekItems(store)
        let order: SortOrder = descending ? .reverse : .forward
        let predicate = filtered ? #Predicate<SeekItem> { $0.flag == true } : nil
        var reusing = 0
        for offset in [0, -28_800, 50_400] {
            let zone = TimeZone(secondsFromGMT: offset)!
            reusing += try Self.check(
                store, RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.stamp, order: order)]),
                .day(\.stamp, timeZone: zone), "day of stamp at \(offset)")
            reusing += try Self.check(
                store, RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.maybeStamp, order: order)]),
                .day(\.maybeStamp, timeZone: zone), "day of maybeStamp at \(offset)")
        }
        reusing += try Self.check(
            store, RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.bucket, order: order)]),
            .attribute(\.bucket), "bucket")
        reusing += try Self.check(
            store, RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.label, order: order)]),
            .attribute(\.label), "label")
        reusing += try Self.check(
            store, RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.stamp, order: order)]),
            .attribute(\.stamp), "stamp")
        // Most first screens span sections the rest takes.
        #expect(reusing >= 20)
    }

    /// First letters of text and of folded text, with NULLs, bytes that are not UTF-8,
    /// blobs and a letter that is a whole text.
    @Test(arguments: [false, true])
    func firstLettersToo(descending: Bool) throws {
        let store = try Store.temporary(records: [SeekLetterItem.self])
        var random = SeededRandom(seed: 0xF125)
        try store.write { tx in
            for i in 0..<600 {
                var item = SeekLetterItem()
                let text = SectionBoundarySeekTests.letterTexts.randomElement(using: &random)!
                item.name = i % 11 == 0 ? nil : text + (i % 2 == 0 ? "" : String(i))
                item.title = SectionBoundarySeekTests.letterTexts.randomElement(using: &random)! + String(i % 5)
                try tx.insert(&item)
            }
            for value in SectionBoundarySeekTests.letterSQL {
                try tx.database.execute(sql: "INSERT INTO seekLetterItem (name, title, flag) VALUES (\(value), 't', 0)")
            }
        }
        let order: SortOrder = descending ? .reverse : .forward
        let reusing =
            try Self.check(
                store, RecordRequest<SeekLetterItem>(sortBy: [SortDescriptor(\.name, order: order)]), .firstLetter(\.name), "name"
            )
            + Self.check(
                store, RecordRequest<SeekLetterItem>(sortBy: [SortDescriptor(\.title.folded, order: order)]),
                .firstLetter(\.title),
                "folded title")
            // No index on the raw title: read from the start, as before.
            + Self.check(
                store, RecordRequest<SeekLetterItem>(sortBy: [SortDescriptor(\.title, order: order)]), .firstLetter(\.title),
                "raw title")
        #expect(reusing >= 6)
    }

    /// A list without sections: the first screen's rows before the group of its last row's
    /// key are taken, exactly as many as SQLite orders before that key, when the group's end
    /// of the first screen is at most ``IdentifierScan/groupReads`` rows; the rest is the
    /// whole list, at every first-screen size, key and direction, NULLs and extremes included.
    @Test(arguments: [false, true], [false, true])
    func aListWithoutSectionsTakesTheRowsBeforeItsLastKey(descending: Bool, filtered: Bool) throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try seedSeekItems(store)
        let order: SortOrder = descending ? .reverse : .forward
        let predicate = filtered ? #Predicate<SeekItem> { $0.flag == true } : nil
        let requests: [(RecordRequest<SeekItem>, String)] = [
            (RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.stamp, order: order)]), "stamp"),
            (RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.maybeStamp, order: order)]), "maybeStamp"),
            (RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.bucket, order: order)]), "bucket"),
            (RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.label, order: order)]), "label"),
            // Not indexed: read from the start.
            (RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.loose, order: order)]), "loose"),
        ]
        var reusing = 0
        for (request, column) in requests {
            let query = try request.compile(requireSort: true)
            let updater = ResultsUpdater(query: query, section: nil, diagnostics: store.diagnostics)
            let whole = try store.readSync { db in try updater.scan(db) }
            for rows in Self.firstRows {
                let counted = store.diagnostics.counters.firstScreenRowsReused
                let (first, full) = try store.readSync { db in
                    let (first, _) = try updater.scan(db, until: .immediately(rows: rows))
                    return (first, try updater.scan(db, after: first))
                }
                let reused = store.diagnostics.counters.firstScreenRowsReused - counted
                #expect(Array(full.ids) == Array(whole.ids), "\(column), first screen \(rows)")
                #expect(full == whole)
                // What SQLite orders before the first screen's last key, by SQL.
                let last = first.ids[first.ids.count - 1]
                let earlier =
                    descending
                    ? "(k.\(column) > l.\(column) OR (l.\(column) IS NULL AND k.\(column) IS NOT NULL))"
                    : "(k.\(column) < l.\(column) OR (k.\(column) IS NULL AND l.\(column) IS NOT NULL))"
                let before = try readNow(store) { db in
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT count(*) FROM json_each(?) j JOIN seekItem k ON k.id = j.value, seekItem l
                            WHERE l.id = ? AND \(earlier)
                            """, arguments: [IdentifierList.jsonArray(first.ids), last])!
                }
                let sought = column != "loose"
                let expected =
                    sought && before > 0 && first.ids.count - before <= IdentifierScan.groupReads + 1 ? before : 0
                #expect(reused == expected, "\(column), first screen \(rows)")
                if reused > 0 { reusing += 1 }
            }
        }
        #expect(reusing >= 15)
    }

    /// One section, or keys the seeks cannot follow (no index, a filter outside the index,
    /// a `.computed` key): the rest is read from the start, and is the whole list.
    @Test func withoutASectionToKeepTheRestIsReadFromTheStart() throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try seedSeekItems(store, extremes: false)
        try store.write { tx in try tx.database.execute(sql: "UPDATE seekItem SET bucket = 3") }
        let cases: [(RecordRequest<SeekItem>, SectionKey<SeekItem>, String)] = [
            (RecordRequest(sortBy: [SortDescriptor(\.bucket)]), .attribute(\.bucket), "one section"),
            (RecordRequest(sortBy: [SortDescriptor(\.loose, order: .reverse)]), .day(\.loose, timeZone: .gmt), "no index"),
            (
                RecordRequest(predicate: #Predicate { $0.bucket == 3 }, sortBy: [SortDescriptor(\.stamp)]),
                .day(\.stamp, timeZone: .gmt),
                "a filter outside the index"
            ),
            (
                RecordRequest(sortBy: [SortDescriptor(\.stamp)]),
                .computed(\.stamp, name: "half") { $0.timeIntervalSince1970 < 0 ? "before" : "after" }, "computed"
            ),
        ]
        for (request, key, label) in cases {
            for rows in Self.firstRows {
                let outcome = try Self.restScan(store, request, key, firstRows: rows)
                #expect(outcome.rest.ids == outcome.whole.ids, "\(label), \(rows)")
                #expect(outcome.rest.runs == outcome.whole.runs, "\(label), \(rows)")
                #expect(outcome.reused == 0, "\(label), \(rows)")
            }
        }
    }

    /// Through a controller: a list of 6,000 rows by day shows its first screen, completes
    /// with the first screen's sections taken as they are, equal to a fresh fetch, and the
    /// SQL log shows the rest's query starting past the last kept day.
    @MainActor @Test(arguments: [false, true])
    func aControllerCompletesAfterItsFirstScreensSections(descending: Bool) async throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try Self.writeNow(store) { tx in
            for i in 0..<6_000 {
                var item = SeekItem()
                item.stamp = Date(timeIntervalSince1970: Double(i) * 3_600)
                item.maybeStamp = i % 4 == 0 ? nil : item.stamp
                try tx.insert(&item)
            }
        }
        let lines = Locked<[String]>([])
        store.diagnostics.logSQL { line in lines.withLock { $0.append(line) } }
        let request = RecordRequest<SeekItem>(sortBy: [SortDescriptor(\.maybeStamp, order: descending ? .reverse : .forward)])
        let controller = FetchedResultsController(request, store: store, sectionBy: .day(\.maybeStamp, timeZone: .gmt))
        controller.completesInBackground = true
        controller.firstScreenRule = .immediately(rows: 100)
        store.diagnostics.resetCounters()
        try fetchNow(controller)
        #expect(!controller.isComplete)
        try await controller.waitUntilComplete()
        let fresh = FetchedResultsController(request, store: store, sectionBy: .day(\.maybeStamp, timeZone: .gmt))
        fresh.firstScreenRule = nil
        try fetchNow(fresh)
        #expect(TableViewModel(controller.snapshot) == TableViewModel(fresh.snapshot))
        // 101 rows of the first screen: descending, five whole days of 18 dated rows and part
        // of a sixth; ascending, the NULLs come first, 1,500 of them, in one section, and
        // nothing is kept.
        let reused = store.diagnostics.counters.firstScreenRowsReused
        #expect(reused == (descending ? 90 : 0))
        let rest = lines.withLock { $0 }.filter { $0.contains("\"maybeStamp\" <") && !$0.contains("LIMIT 1") }
        #expect(rest.count == (descending ? 1 : 0), "\(rest)")
    }
}
