import Foundation
import GRDB
import Testing
@testable import Folio

/// A record whose section keys can be indexed or not, optional or not, numbers or text.
struct SeekItem: PersistentRecord {
    var id: RecordID?
    var stamp = Date(timeIntervalSince1970: 0)
    var maybeStamp: Date? = nil
    var bucket = 0
    var label: String? = nil
    var flag = false
    /// Not indexed: its sections are read row by row.
    var loose = Date(timeIntervalSince1970: 0)

    static let entity = EntityDescription<SeekItem>(
        "seekItem",
        [
            AttributeDescription(\.stamp, indexed: true),
            AttributeDescription(\.maybeStamp, indexed: true),
            AttributeDescription(\.bucket, indexed: true),
            AttributeDescription(\.label, indexed: true),
            AttributeDescription(\.flag),
            AttributeDescription(\.loose),
        ],
        // A filter on the flag seeks along these (covering) indexes.
        indexes: [
            IndexDescription([.key(\.flag), .key(\.stamp)]), IndexDescription([.key(\.flag), .key(\.maybeStamp)]),
            IndexDescription([.key(\.flag), .key(\.bucket)]), IndexDescription([.key(\.flag), .key(\.label)]),
        ])

    init() {}
}

/// One scan of a sectioned request: what it found, and whether (how often) it sought.
struct SeekScan {
    var ids: [Int64]
    /// Each section's value (exactly as stored or computed) and count.
    var runs: [String]
    var complete: Bool
    var seeks: Int
}

/// Scans `request` sectioned by `key` as a controller does, with the section boundary seeks
/// allowed or not.
func seekScan<R: PersistentRecord>(
    _ store: Store, _ request: RecordRequest<R>, _ key: SectionKey<R>, seeks: Bool, until rule: FirstScreenRule? = nil
) throws -> SeekScan {
    let query = try request.compile(requireSort: true)
    let expression = key.expression(source: try key.source(under: query), table: query.table)
    let updater = ResultsUpdater(query: query, section: expression, diagnostics: store.diagnostics)
    store.diagnostics.seeksSectionBoundaries = seeks
    defer { store.diagnostics.seeksSectionBoundaries = true }
    let before = store.diagnostics.counters.sectionBoundarySeeks
    let (state, complete) = try store.readSync { db in try updater.scan(db, until: rule) }
    return SeekScan(
        ids: Array(state.ids), runs: state.runs.map { "\(SeekScan.describe($0.value))×\($0.count)" }, complete: complete,
        seeks: store.diagnostics.counters.sectionBoundarySeeks - before)
}

extension SeekScan {
    /// A value with its storage class, so that `1` and `1.0` differ.
    static func describe(_ value: SQLiteValue) -> String {
        switch value {
        case .real(let v): "real(\(v.bitPattern))"
        default: "\(value)"
        }
    }
}

/// The sections computed in Swift from every row's stored key, read in SQLite's order by
/// raw SQL: consecutive rows whose section values SQLite finds equal, named by the first.
func swiftSections(
    _ store: Store, column: String, descending: Bool, whereSQL: String = "", dayZone: TimeZone?
) throws -> (ids: [Int64], runs: [String]) {
    let direction = descending ? "DESC" : "ASC"
    let rows = try store.readSync { db in
        try Row.fetchAll(
            db, sql: "SELECT id, \(column) AS k FROM seekItem \(whereSQL) ORDER BY \(column) \(direction), id \(direction)")
    }
    var ids: [Int64] = []
    var runs: [(SQLiteValue, Int)] = []
    for row in rows {
        ids.append(row["id"])
        let raw = SQLiteValue(row["k"] as DatabaseValue)
        let value = dayZone.map { DayNumber.value(of: raw, in: DayZone.of($0)) } ?? raw
        if let last = runs.last, last.0 == value { runs[runs.count - 1].1 += 1 } else { runs.append((value, 1)) }
    }
    return (ids, runs.map { "\(SeekScan.describe($0.0))×\($0.1)" })
}

/// Rows whose `stamp` and `maybeStamp` fall on and around day boundaries (at every offset
/// tested), with ties, negative times and extremes written by raw SQL.
func seedSeekItems(_ store: Store, count: Int = 400, extremes withExtremes: Bool = true) throws {
    var random = SeededRandom(seed: 0x5EE4)
    let offsets = [0, 3_600, -28_800, 50_400, -43_200, 19_800]
    try store.write { tx in
        for i in 0..<count {
            var item = SeekItem()
            let day = Double(Int.random(in: -40...40, using: &random))
            let offset = Double(offsets.randomElement(using: &random)!)
            let nudge = [0, 1, -1, 0.5, -0.5, 1e-9, -1e-9, 43_200].randomElement(using: &random)!
            // Ties: several rows share each stamp.
            let seconds = i % 7 == 0 ? day * 86_400 : day * 86_400 - offset + nudge
            item.stamp = Date(timeIntervalSince1970: seconds)
            item.maybeStamp = i % 5 == 0 ? nil : Date(timeIntervalSince1970: seconds + 3_600)
            item.bucket = Int.random(in: -5...5, using: &random)
            item.label = i % 6 == 0 ? nil : ["a", "b", "B", "é", "e\u{301}", ""].randomElement(using: &random)!
            item.flag = i % 3 != 0
            item.loose = item.stamp
            try tx.insert(&item)
        }
    }
    // Stored values no Date would write: integers (mixed with reals of the same day),
    // ±0, extremes, infinities, subnormals, text and a blob in the date columns.
    let extremes = [
        "86400", "-86400", "0", "-0.0", "0.0", "9223372036854775807", "-9223372036854775808", "1e300", "-1e300",
        "9e999", "-9e999", "-5e-324", "5e-324", "9007199254740993", "-9007199254740993", "86399", "-1",
        "86399.99999999999", "86400.00000000001", "'text'", "'Text'", "x'00ff'", "CAST(x'ff41' AS TEXT)",
    ]
    guard withExtremes else { return }
    try store.write { tx in
        for (index, value) in extremes.enumerated() {
            try tx.database.execute(
                sql: """
                    INSERT INTO seekItem (stamp, maybeStamp, bucket, label, flag, loose)
                    VALUES (\(value), \(value), \(index % 3 == 0 ? "1.0" : "2.5"), \(value), \(index % 2), \(value))
                    """)
        }
    }
}

@Suite struct SectionBoundarySeekTests {
    static let offsets = [0, 3_600, -28_800, 50_400, -43_200]

    /// Day sections of the first sort key: the seek path's ids and sections are the per-row
    /// path's and Swift's, for both directions, with and without a filter, at every offset.
    @Test(arguments: [false, true], [false, true])
    func daySectionsMatchTheRowByRowScan(descending: Bool, filtered: Bool) throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try seedSeekItems(store)
        for offset in Self.offsets {
            for column in ["stamp", "maybeStamp"] {
                let sort =
                    column == "stamp"
                    ? SortDescriptor(\SeekItem.stamp, order: descending ? .reverse : .forward)
                    : SortDescriptor(\SeekItem.maybeStamp, order: descending ? .reverse : .forward)
                let request = RecordRequest<SeekItem>(predicate: filtered ? #Predicate { $0.flag == true } : nil, sortBy: [sort])
                let zone = TimeZone(secondsFromGMT: offset)!
                let key: SectionKey<SeekItem> =
                    column == "stamp" ? .day(\.stamp, timeZone: zone) : .day(\.maybeStamp, timeZone: zone)
                let seek = try seekScan(store, request, key, seeks: true)
                let rowByRow = try seekScan(store, request, key, seeks: false)
                let swift = try swiftSections(
                    store, column: column, descending: descending, whereSQL: filtered ? "WHERE flag" : "",
                    dayZone: zone)
                #expect(seek.ids == rowByRow.ids, "\(column) offset \(offset)")
                #expect(seek.runs == rowByRow.runs, "\(column) offset \(offset)")
                #expect(seek.ids == swift.ids)
                #expect(seek.runs == swift.runs)
                // One seek per section, and one for the first row (and one for NULLs after
                // the values, descending; none after the NULLs): the fast path ran.
                #expect(seek.seeks >= seek.runs.count && seek.seeks <= seek.runs.count + 2)
                #expect(rowByRow.seeks == 0)
                #expect(seek.runs.count > 60)
            }
        }
    }

    /// Attribute sections of the sorted attribute: integers mixed with reals, NULLs, text
    /// SQLite orders by bytes ("B" < "a", "e\u{301}" ≠ "é"), bytes that are not UTF-8.
    @Test(arguments: [false, true], [false, true])
    func attributeSectionsMatchTheRowByRowScan(descending: Bool, filtered: Bool) throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try seedSeekItems(store)
        let order: SortOrder = descending ? .reverse : .forward
        let predicate = filtered ? #Predicate<SeekItem> { $0.flag == true } : nil
        let cases: [(RecordRequest<SeekItem>, SectionKey<SeekItem>, String)] = [
            (
                RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.bucket, order: order)]), .attribute(\.bucket),
                "bucket"
            ),
            (RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.label, order: order)]), .attribute(\.label), "label"),
            (RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.stamp, order: order)]), .attribute(\.stamp), "stamp"),
        ]
        for (request, key, column) in cases {
            let seek = try seekScan(store, request, key, seeks: true)
            let rowByRow = try seekScan(store, request, key, seeks: false)
            let swift = try swiftSections(
                store, column: column, descending: descending, whereSQL: filtered ? "WHERE flag" : "", dayZone: nil)
            #expect(seek.ids == rowByRow.ids, "\(column)")
            #expect(seek.runs == rowByRow.runs, "\(column)")
            #expect(seek.ids == swift.ids)
            #expect(seek.runs == swift.runs)
            #expect(seek.seeks >= seek.runs.count + 1 && seek.seeks <= seek.runs.count + 2)
        }
    }

    /// Lists of 0, 1, 2 rows and a few thousand, one day or many.
    @Test(arguments: [0, 1, 2, 3, 5_000])
    func everySizeMatches(count: Int) throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try store.write { tx in
            for i in 0..<count {
                var item = SeekItem()
                item.stamp = Date(timeIntervalSince1970: Double(i) * 1_000)
                try tx.insert(&item)
            }
        }
        for descending in [false, true] {
            let request = RecordRequest<SeekItem>(sortBy: [SortDescriptor(\.stamp, order: descending ? .reverse : .forward)])
            let seek = try seekScan(store, request, .day(\.stamp, timeZone: .gmt), seeks: true)
            let rowByRow = try seekScan(store, request, .day(\.stamp, timeZone: .gmt), seeks: false)
            #expect(seek.ids == rowByRow.ids)
            #expect(seek.runs == rowByRow.runs)
            #expect(seek.ids.count == count)
            #expect(seek.seeks == (count == 0 ? 0 : seek.runs.count + (descending ? 2 : 1)))
        }
    }

    /// Keys the seeks cannot follow read every row's value: a column with no index (and
    /// first letters of one, in `firstLetterSectionsMatchTheRowByRowScan`), a `.computed` key, a filter the sort's index does not hold (each seek would
    /// look rows up in the table); the sections are the same.
    @Test(arguments: [false, true])
    func keysWithoutAnIndexedRangeReadEveryRow(extremes: Bool) throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try seedSeekItems(store, extremes: extremes)
        var cases: [(RecordRequest<SeekItem>, SectionKey<SeekItem>)] = [
            (RecordRequest(sortBy: [SortDescriptor(\.loose, order: .reverse)]), .day(\.loose, timeZone: .gmt)),
            (
                RecordRequest(predicate: #Predicate { $0.bucket == 2 }, sortBy: [SortDescriptor(\.stamp, order: .reverse)]),
                .day(\.stamp, timeZone: .gmt)
            ),
        ]
        if !extremes {
            // (A real in the integer column would be a NULL section among the others.)
            cases.append(
                (RecordRequest(sortBy: [SortDescriptor(\.bucket)]), .computed(\.bucket, name: "sign") { $0 < 0 ? "-" : "+" }))
        }
        for (request, key) in cases {
            let seek = try seekScan(store, request, key, seeks: true)
            let rowByRow = try seekScan(store, request, key, seeks: false)
            #expect(seek.seeks == 0, "\(key)")
            #expect(seek.ids == rowByRow.ids)
            #expect(seek.runs == rowByRow.runs)
        }
    }

    /// A first screen seeks only the sections it shows, plus the next one, and its runs are
    /// the row-by-row scan's first screen.
    @Test(arguments: [false, true])
    func aFirstScreenSeeksOnlyTheSectionsItShows(descending: Bool) throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try store.write { tx in
            for i in 0..<3_000 {
                var item = SeekItem()
                item.stamp = Date(timeIntervalSince1970: Double(i) * 3_600)
                try tx.insert(&item)
            }
        }
        let request = RecordRequest<SeekItem>(sortBy: [SortDescriptor(\.stamp, order: descending ? .reverse : .forward)])
        let rule = FirstScreenRule.immediately(rows: 60)
        let seek = try seekScan(store, request, .day(\.stamp, timeZone: .gmt), seeks: true, until: rule)
        let rowByRow = try seekScan(store, request, .day(\.stamp, timeZone: .gmt), seeks: false, until: rule)
        #expect(!seek.complete && !rowByRow.complete)
        #expect(seek.ids == rowByRow.ids)
        #expect(seek.ids.count == 61)
        #expect(seek.runs == rowByRow.runs)
        #expect(seek.runs.count == 3)
        #expect(seek.seeks == 4)
    }

    /// The SQL log shows the seeks: the request's own filter and order, one bound more, LIMIT 1.
    @Test func theSeeksAreInTheSQLLog() throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try seedSeekItems(store, count: 50)
        let recorder = SQLRecorder(store)
        let request = RecordRequest<SeekItem>(
            predicate: #Predicate { $0.flag == true }, sortBy: [SortDescriptor(\.stamp, order: .reverse)])
        let seek = try seekScan(store, request, .day(\.stamp, timeZone: .gmt), seeks: true)
        let seeks = recorder.statements.filter { $0.hasPrefix("SELECT \"id\", \"stamp\" FROM") && $0.hasSuffix("LIMIT 1") }
        #expect(seeks.count == seek.seeks)
        #expect(seeks.contains { $0.contains("WHERE \"stamp\" < ? AND") && $0.contains("ORDER BY \"stamp\" DESC, \"id\" DESC") })
        #expect(seeks.contains { $0.contains("\"stamp\" IS NULL") })
        // The scan itself reads the identifiers alone.
        #expect(recorder.statements.contains { $0.hasPrefix("SELECT \"id\" FROM \"seekItem\"") && !$0.contains("LIMIT") })
    }
}

extension SectionBoundarySeekTests {
    /// With query plans in the SQL log, a sectioned scan says it found its sections by seeks,
    /// and the seek's plan: a range on the index.
    @Test func theQueryPlanLogSaysTheSectionsCameFromSeeks() throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try seedSeekItems(store, count: 50, extremes: false)
        let lines = Locked<[String]>([])
        store.diagnostics.logSQL(queryPlans: true) { line in lines.withLock { $0.append(line) } }
        let request = RecordRequest<SeekItem>(sortBy: [SortDescriptor(\.stamp, order: .reverse)])
        let seek = try seekScan(store, request, .day(\.stamp, timeZone: .gmt), seeks: true)
        let note = lines.withLock { $0 }.first { $0.hasPrefix("SECTION BOUNDARIES: ") }
        #expect(note?.hasPrefix("SECTION BOUNDARIES: \(seek.runs.count) sections by index seeks: SEARCH seekItem USING") == true)
        #expect(note?.contains("(stamp<?)") == true)
        lines.withLock { $0 = [] }
        _ = try seekScan(store, request, .day(\.stamp, timeZone: .gmt), seeks: false)
        #expect(!lines.withLock { $0 }.contains { $0.hasPrefix("SECTION BOUNDARIES: ") })
    }
}

/// The seeks through a controller: the first screen, the completion in the background
/// while another connection writes, and the live changes after it.
@MainActor
@Suite struct SectionBoundarySeekControllerTests {
    func names(_ controller: FetchedResultsController<SeekItem>) -> [String] {
        controller.sections.map { "\($0.name)×\($0.numberOfObjects)" }
    }

    /// A fresh fetch of what `controller` shows, with the seeks or without.
    func fresh(_ controller: FetchedResultsController<SeekItem>, seeks: Bool) throws -> ([String], TableViewModel) {
        controller.store.diagnostics.seeksSectionBoundaries = seeks
        defer { controller.store.diagnostics.seeksSectionBoundaries = true }
        let fresh = FetchedResultsController(controller.fetchRequest, store: controller.store, sectionBy: controller.sectionKey)
        fresh.firstScreenRule = nil
        try fresh.performFetch()
        return (names(fresh), TableViewModel(fresh.snapshot))
    }

    @Test(arguments: [false, true])
    func anotherConnectionWritesBetweenTheFirstScreenAndTheCompletion(descending: Bool) async throws {
        let store = try Store.temporary(records: [SeekItem.self])
        try seedSeekItems(store, count: 6_000)
        let gate = FirstScreenGate(at: 0)
        let request = RecordRequest<SeekItem>(sortBy: [SortDescriptor(\.stamp, order: descending ? .reverse : .forward)])
        let controller = FetchedResultsController(
            request, store: store, sectionBy: .day(\.stamp, timeZone: TimeZone(secondsFromGMT: -28_800)!))
        controller.completesInBackground = true
        controller.firstScreenRule = .immediately(rows: 40)
        controller.completionHook = gate.hook
        let recorder = IncompleteRecorder<SeekItem>()
        controller.delegate = recorder
        store.diagnostics.resetCounters()
        try fetchNow(controller)
        #expect(await gate.reached())
        #expect(!controller.isComplete)
        let firstSeeks = store.diagnostics.counters.sectionBoundarySeeks
        #expect(firstSeeks > 0 && firstSeeks < 10)
        // Another connection moves rows across days, adds a day, writes text in the date
        // column and deletes the first rows, while the completion waits.
        let other = try DatabaseQueueFactory.open(store.path!)
        try await other.write { db in
            try db.execute(sql: "UPDATE seekItem SET stamp = stamp + 86400 WHERE id % 10 = 1")
            try db.execute(sql: "INSERT INTO seekItem (stamp, bucket, flag, loose) VALUES (-1e7, 0, 1, 0), ('zz', 0, 1, 0)")
            try db.execute(sql: "DELETE FROM seekItem WHERE id IN (SELECT id FROM seekItem ORDER BY stamp LIMIT 5)")
        }
        gate.release()
        try await controller.waitUntilComplete()
        #expect(store.diagnostics.counters.sectionBoundarySeeks > firstSeeks + 60)
        let (seekNames, seekModel) = try fresh(controller, seeks: true)
        let (rowNames, rowModel) = try fresh(controller, seeks: false)
        // The other connection's commit arrives when the store notices it.
        for _ in 0..<1_000 where names(controller) != rowNames {
            await controller.waitForChanges()
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(names(controller) == rowNames)
        #expect(TableViewModel(controller.snapshot) == rowModel)
        #expect(seekNames == rowNames)
        #expect(seekModel == rowModel)
        // Live changes after the completion, then a rescan of a large change.
        try execute(store, "UPDATE seekItem SET stamp = stamp - 86400 WHERE id % 7 = 2")
        try execute(store, "UPDATE seekItem SET stamp = 'later' WHERE id = 3")
        await controller.waitForChanges()
        let (laterNames, laterModel) = try fresh(controller, seeks: false)
        #expect(names(controller) == laterNames)
        #expect(TableViewModel(controller.snapshot) == laterModel)
        #expect(recorder.errors.isEmpty)
        #expect(!recorder.changeSets.isEmpty)
    }
}

/// A record whose date is indexed only after its flag: `(flag, stamp)`, which SQLite reads
/// forwards or backwards (with the rowid) for either order of a list of one flag.
struct SeekFlagItem: PersistentRecord {
    var id: RecordID?
    var flag = false
    var stamp = Date(timeIntervalSince1970: 0)

    static let entity = EntityDescription<SeekFlagItem>(
        "seekFlagItem",
        [AttributeDescription(\.flag), AttributeDescription(\.stamp)],
        indexes: [IndexDescription([.key(\.flag), .key(\.stamp)])])

    init() {}
}

extension SectionBoundarySeekTests {
    /// A filtered list seeks along the compound index that starts with its filter; the
    /// unfiltered list has no index in its order, so it reads every row's value.
    @Test(arguments: [false, true])
    func aCompoundIndexAfterTheFilterIsSought(descending: Bool) throws {
        let store = try Store.temporary(records: [SeekFlagItem.self])
        try store.write { tx in
            for i in 0..<2_000 {
                var item = SeekFlagItem()
                item.flag = i % 3 != 0
                item.stamp = Date(timeIntervalSince1970: Double((i * 7_919) % 2_000) * 4_000 - 3_000_000)
                try tx.insert(&item)
            }
        }
        let lines = Locked<[String]>([])
        store.diagnostics.logSQL(queryPlans: true) { line in lines.withLock { $0.append(line) } }
        let order: SortOrder = descending ? .reverse : .forward
        let zone = TimeZone(secondsFromGMT: -18_000)!
        let filtered = RecordRequest<SeekFlagItem>(
            predicate: #Predicate { $0.flag == true }, sortBy: [SortDescriptor(\.stamp, order: order)])
        let key = SectionKey<SeekFlagItem>.day(\.stamp, timeZone: zone)
        func scan(_ request: RecordRequest<SeekFlagItem>, seeks: Bool) throws -> SeekScan {
            try seekScan(store, request, key, seeks: seeks)
        }
        let seek = try scan(filtered, seeks: true)
        let rowByRow = try scan(filtered, seeks: false)
        #expect(seek.ids == rowByRow.ids && seek.ids.count == 1_333)
        #expect(seek.runs == rowByRow.runs && seek.runs.count > 80)
        #expect(seek.seeks > seek.runs.count && rowByRow.seeks == 0)
        let note = lines.withLock { $0 }.first { $0.hasPrefix("SECTION BOUNDARIES: ") }
        #expect(note?.contains("(flag=? AND stamp\(descending ? "<" : ">")?)") == true, "\(note ?? "")")
        let unfiltered = RecordRequest<SeekFlagItem>(sortBy: [SortDescriptor(\.stamp, order: order)])
        let all = try scan(unfiltered, seeks: true)
        #expect(all.seeks == 0)
        let allRowByRow = try scan(unfiltered, seeks: false)
        #expect(all.ids.count == 2_000 && all.runs == allRowByRow.runs)
    }
}

/// A record for first-letter sections: an indexed optional text, and a folded title
/// (sorted and sectioned by its folded key).
struct SeekLetterItem: PersistentRecord {
    var id: RecordID?
    var name: String? = nil
    var title = ""
    var flag = false

    static let entity = EntityDescription<SeekLetterItem>(
        "seekLetterItem",
        [AttributeDescription(\.name, indexed: true), AttributeDescription(\.title, folded: true), AttributeDescription(\.flag)],
        indexes: [IndexDescription([.key(\.flag), .key(\.name)])])

    init() {}
}

extension SectionBoundarySeekTests {
    /// Texts whose first letters are hard to bound: every lead-byte class, a lead with its
    /// continuation missing (a letter shorter than its lead says), `FF` runs (no successor),
    /// NUL, the empty text, canonically equivalent and case pairs, emoji.
    static let letterTexts = [
        "a", "ab", "b", "B", "Ba", "z", "~", "\u{7F}", "", "\0", "\0x", "é", "éa", "e\u{301}", "E\u{301}", "É", "ß", "SS",
        "Ǆ", "ǅ", "ǆ", "👍", "👍🏽", "中文", "中", "ｚ", "\u{10FFFF}x", "İ", "i", "ı",
    ]
    /// The same as stored by another program: bytes that are not UTF-8, blobs, numbers.
    static let letterSQL = [
        "CAST(x'C3' AS TEXT)", "CAST(x'C3A9' AS TEXT)", "CAST(x'C3A9C3' AS TEXT)", "CAST(x'E4B8' AS TEXT)",
        "CAST(x'FF' AS TEXT)", "CAST(x'FFFF' AS TEXT)", "CAST(x'FF41' AS TEXT)", "CAST(x'F4' AS TEXT)",
        "CAST(x'F48FBFBF' AS TEXT)", "CAST(x'F5' AS TEXT)", "CAST(x'80' AS TEXT)", "CAST(x'C1BF' AS TEXT)",
        "CAST(x'7FFF' AS TEXT)", "CAST(x'DFFF' AS TEXT)", "CAST(x'EFBFBF' AS TEXT)", "CAST(x'EFFFFF' AS TEXT)",
        "x''", "x'00'", "x'0041'", "x'41'", "x'FF'", "x'FF00'", "x'FFFF'", "x'7F'",
        "1", "1.0", "-0.0", "0", "9223372036854775807", "-9223372036854775808", "9007199254740993", "1e300", "-9e999",
        "NULL", "'a'", "'A'",
    ]

    /// First-letter sections of the sorted text seek each letter's first row, and give the
    /// row-by-row scan's sections exactly: for the indexed text (filtered along a compound
    /// index or not) and for a folded title sorted by its folded key.
    @Test(arguments: [false, true], [false, true])
    func firstLetterSectionsMatchTheRowByRowScan(descending: Bool, filtered: Bool) throws {
        let store = try Store.temporary(records: [SeekLetterItem.self])
        var random = SeededRandom(seed: 0x1E77E4)
        try store.write { tx in
            for i in 0..<600 {
                var item = SeekLetterItem()
                let text = Self.letterTexts.randomElement(using: &random)!
                item.name = i % 11 == 0 ? nil : text + (i % 2 == 0 ? "" : String(i))
                item.title = Self.letterTexts.randomElement(using: &random)! + String(i % 5)
                item.flag = i % 3 != 0
                try tx.insert(&item)
            }
            for (index, value) in Self.letterSQL.enumerated() {
                try tx.database.execute(
                    sql: "INSERT INTO seekLetterItem (name, title, flag) VALUES (\(value), 't', \(index % 2))")
            }
        }
        let order: SortOrder = descending ? .reverse : .forward
        let predicate = filtered ? #Predicate<SeekLetterItem> { $0.flag == true } : nil
        let cases: [(RecordRequest<SeekLetterItem>, SectionKey<SeekLetterItem>)] = [
            (RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.name, order: order)]), .firstLetter(\.name)),
            (RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.title.folded, order: order)]), .firstLetter(\.title)),
            // The raw title has no index: every row's letter is read.
            (RecordRequest(predicate: predicate, sortBy: [SortDescriptor(\.title, order: order)]), .firstLetter(\.title)),
        ]
        for (index, (request, key)) in cases.enumerated() {
            let seek = try seekScan(store, request, key, seeks: true)
            let rowByRow = try seekScan(store, request, key, seeks: false)
            #expect(seek.ids == rowByRow.ids, "case \(index)")
            #expect(seek.runs == rowByRow.runs, "case \(index)")
            #expect(rowByRow.seeks == 0)
            // The folded title is sought only unfiltered (its index does not hold the flag).
            let sought = index == 0 || (index == 1 && !filtered)
            if sought {
                #expect(seek.seeks >= seek.runs.count && seek.seeks <= seek.runs.count + 2, "case \(index)")
                #expect(seek.runs.count > 15)
            } else {
                #expect(seek.seeks == 0)
            }
        }
    }

    /// The successor of a letter: the least byte string past every string that starts with
    /// it.
    @Test func aLetterSuccessorIsTheLeastStringPastTheLetter() {
        #expect(FirstLetter.successor(of: [0x61]) == [0x62])
        #expect(FirstLetter.successor(of: [0xC3, 0xA9]) == [0xC3, 0xAA])
        #expect(FirstLetter.successor(of: [0xC3, 0xFF]) == [0xC4])
        #expect(FirstLetter.successor(of: [0xEF, 0xFF, 0xFF]) == [0xF0])
        #expect(FirstLetter.successor(of: [0xFF]) == nil)
        #expect(FirstLetter.successor(of: [0xFF, 0xFF]) == nil)
        #expect(FirstLetter.successor(of: []) == nil)
        #expect(FirstLetter.successor(of: [0x00]) == [0x01])
    }
}
