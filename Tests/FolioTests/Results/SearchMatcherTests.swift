import Foundation
import GRDB
import GRDBSQLite
import Testing

@testable import Folio

/// An item of the matcher tests: two searchable texts (a column filter has something to
/// filter) and an indexed date.
struct MatcherItem: PersistentRecord {
    var id: RecordID?
    var title: String? = nil
    var source: String? = nil
    var published = Date(timeIntervalSince1970: 0)

    static let entity = EntityDescription<MatcherItem>(
        "matcher_item",
        [
            AttributeDescription(\.title, searchable: true),
            AttributeDescription(\.source, searchable: true),
            AttributeDescription(\.published, indexed: true),
        ])

    init() {}
    init(title: String?, source: String?, hour: Int) {
        self.title = title
        self.source = source
        self.published = Date(timeIntervalSince1970: Double(hour) * 3600)
    }
}

/// `SearchMatcher` decides a row as FTS5 does: for every query here, the rows it keeps are
/// exactly the rows `MATCH` returns — over texts chosen to split words differently in
/// Swift and in SQLite's Unicode 6.1 tables (emoji, new scripts, unassigned code points,
/// NUL, ZWJ, ligatures, dotted and dotless i, final sigma, full-width forms, NFC and NFD),
/// for prefixes of every length, whole words, phrases, and a column filter.
@MainActor
@Suite struct SearchMatcherTests {
    static let fragments = [
        "Café", "cafe\u{301}", "CAFÉ", "Ça", "straße", "STRASSE", "ẞ", "ﬁsh", "İstanbul", "ıi", "Σίσυφος", "ΣΊΣΥΦΟΣ",
        "日本語テキスト", "한국어", "🙂", "thanks🙂you", "a\u{0}b", "x-y", "C-3PO", "iPad", "ipad", "naïve", "\u{E000}pua",
        "\u{0378}z", "٣٤٥", "Ⅻ", "①②", "a\u{200D}b", "ǅemal", "k\u{212A}", "Ａｂｃ", "don't", "l'été", "3.14", "Ω\u{0345}",
        "🏳️‍🌈flag", "𞤀𞤁", "ꬰꬱ", "\u{1E900}x", "vision", "visionos", "visible", "vis", "v", "Vi", "ca", "c", "caf",
    ]
    static let separators = [" ", "-", "", "\t", ".", "🙂", "\u{0}", "\u{2028}", "_", "·"]

    /// Deterministic texts: 1–4 fragments joined by separators; some `NULL`, some empty.
    static func texts(_ count: Int) -> [String?] {
        var generator = SeededRandom(seed: 61)
        return (0..<count).map { i in
            if i % 37 == 5 { return nil }
            if i % 41 == 3 { return "" }
            let parts = (0..<Int.random(in: 1...4, using: &generator)).map { _ in
                fragments.randomElement(using: &generator)!
            }
            var text = parts[0]
            for part in parts.dropFirst() { text += separators.randomElement(using: &generator)! + part }
            return text
        }
    }

    /// Searches: every fragment as a prefix and as a word, their first letters, phrases,
    /// several words, text FTS5 would read as syntax.
    static let searches: [(String, Bool)] = {
        var searches: [(String, Bool)] = []
        for fragment in fragments {
            searches.append((fragment, true))
            searches.append((fragment, false))
            searches.append((String(fragment.prefix(1)), true))
            searches.append((String(fragment.prefix(2)), true))
        }
        let more: [(String, Bool)] = [
            ("\"cafe noir\"", false), ("\"x y\"", false), ("\"x y\"*", false), ("c 3", true), ("ipad vision", true),
            ("thanks you", false), ("a b", true), ("AND", true), ("OR c", true), ("NEAR(", true), ("\"c-3", false),
            ("iPad-Pro", true), ("\"straße strasse\"", true), ("ﬁ", true), ("fi", true), ("ss", true),
        ]
        return searches + more
    }()

    @Test(arguments: [false, true])
    func theMatcherKeepsExactlyTheRowsTheIndexReturns(titleOnly: Bool) throws {
        let store = try Store.temporary(records: [MatcherItem.self])
        let titles = Self.texts(700), sources = Self.texts(700).reversed()
        try store.write { tx in
            for (i, (title, source)) in zip(titles, sources).enumerated() {
                var item = MatcherItem(title: title, source: source, hour: i)
                try tx.insert(&item)
            }
        }
        var decidedRows = 0, undecided = 0, matched = 0
        for (text, prefixes) in Self.searches {
            let search = TextSearch<MatcherItem>(text, in: titleOnly ? [\MatcherItem.title] : [], matchingPrefixes: prefixes)
            let clause = try search.compile()
            guard let query = clause.query else { continue }
            try store.read { db in
                let index = Set(
                    try Int64.fetchAll(
                        db, sql: "SELECT rowid FROM folio_matcher_item_fts WHERE folio_matcher_item_fts MATCH ?",
                        arguments: [query]))
                guard let matcher = try SearchMatcher(db, clause) else {
                    undecided += 1
                    return
                }
                let content = try db.makeStatement(sql: matcher.contentSQL)
                var kept: Set<Int64> = []
                for id in Int64(1)...Int64(titles.count) {
                    let sqlite = content.sqliteStatement
                    sqlite3_reset(sqlite)
                    sqlite3_bind_int64(sqlite, 1, id)
                    guard sqlite3_step(sqlite) == SQLITE_ROW else { continue }
                    guard let decided = matcher.matches(sqlite) else {
                        Issue.record("“\(text)”: row \(id) undecided")
                        continue
                    }
                    decidedRows += 1
                    if decided { kept.insert(id) }
                }
                sqlite3_reset(content.sqliteStatement)
                #expect(
                    kept == index,
                    "“\(text)” (\(prefixes ? "prefixes" : "words")): \(kept.symmetricDifference(index).sorted().prefix(5))")
                matched += index.count
            }
        }
        #expect(undecided == 0)
        #expect(
            decidedRows == Self.searches.count * titles.count - undecided * titles.count - Self.skipped(titleOnly) * titles.count)
        #expect(matched > 1_000, "the searches match something")
    }

    /// Searches with no word left (no query at all).
    static func skipped(_ titleOnly: Bool) -> Int {
        searches.filter { (try? TextSearch<MatcherItem>($0.0, matchingPrefixes: $0.1).compile().query) == nil }.count
    }

    /// A word longer than FTS5 keeps whole is not modelled: the matcher says so, and the
    /// walk is given up for the one reading the matches, which finds the same screen.
    @Test func aWordTooLongIsLeftToTheIndex() async throws {
        let store = try Store.temporary(records: [MatcherItem.self])
        let long = String(repeating: "v", count: 40_000)
        try await store.write { tx in
            for i in 0..<300 {
                var item = MatcherItem(title: i == 3 ? long : "vision \(i)", source: nil, hour: 1_000 - i)
                try tx.insert(&item)
            }
        }
        var request = RecordRequest<MatcherItem>(sortBy: [SortDescriptor(\.published, order: .reverse)], batchSize: 20)
        request.search = TextSearch("vi", matchingPrefixes: true)
        let controller = FetchedResultsController(request, store: store)
        controller.completesInBackground = true
        controller.firstScreenRule = .immediately(rows: 50)
        let before = store.diagnostics.counters
        try fetchNow(controller)
        let counters = store.diagnostics.counters
        #expect(counters.matchingWalks == before.matchingWalks)
        #expect(counters.searchWalksAbandoned == before.searchWalksAbandoned + 1)
        let all = try store.fetchIdentifiers(request)
        #expect(all.count == 299, "the long word is not a “vi” word")
        let shown = Array(controller.snapshot.identifiers)
        #expect(shown.count == 51)
        #expect(shown == Array(all.prefix(shown.count)))
        try await controller.waitUntilComplete()
        #expect(Array(controller.snapshot.identifiers) == Array(all))
    }
}
