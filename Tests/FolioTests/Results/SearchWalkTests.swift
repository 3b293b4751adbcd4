import Foundation
import GRDB
import Testing
@testable import Folio

/// An item of the search-walk tests: a searchable title that may be `NULL`, a date with an
/// index (the list's order, newest first, by day), and a kind without one (a predicate the
/// walk tests row by row).
struct FtsWalkItem: PersistentRecord {
    var id: RecordID?
    var title: String? = nil
    var published = Date(timeIntervalSince1970: 0)
    var kind = 0

    static let entity = EntityDescription<FtsWalkItem>(
        "fts_walk_item",
        [
            AttributeDescription(\.title, searchable: true),
            AttributeDescription(\.published, indexed: true),
            AttributeDescription(\.kind),
        ])

    init() {}
    init(_ title: String?, hour: Int, kind: Int = 0) {
        self.title = title
        self.published = Date(timeIntervalSince1970: Double(hour) * 3600)
        self.kind = kind
    }
}

/// The search walk (`SearchWalk`): a first screen of a full-text search read by walking the
/// list's sort index and keeping the matches. Its rows, order and sections must be the usual
/// plan's — against a brute-force computation in Swift and the usual plan, for prefixes of
/// every length, selective and not, across the walk's thresholds (a screen's rows, its
/// budget), and with the `sqlite3` shell writing while the list completes — and the
/// counters prove which plan ran.
@MainActor
@Suite struct SearchWalkTests {
    /// Titles: case pairs, NFC and NFD, NUL inside a word, `NULL`, empty, punctuation.
    static let titles: [String?] = [
        "Café crème", "cafe\u{301} noir", "CAFÉ", "cafétéria ouverte", "Ça va", "ça ira", "crème brûlée",
        "Coöperate now", "chip camera", "x\u{0}café", "iPad mini", nil, "", "zoë", "naïve façade", "c", "C-3PO",
        "plain words", "Straße", "STRASSE", "news", "🙂cafe",
    ]

    /// Deterministic items: titles from the list, dates with ties (several items an hour),
    /// kinds 0–2.
    static func items(_ count: Int, seed: Int = 7) -> [FtsWalkItem] {
        (0..<count).map { i in
            let n = (i &* 7919 &+ seed) % 100_003
            return FtsWalkItem(titles[n % titles.count], hour: (n / 7) % 997, kind: i % 3)
        }
    }

    /// The words the index makes of a text: its folding's runs of word characters.
    static func words(_ text: String) -> [String] {
        var words: [String] = [], current = String.UnicodeScalarView()
        for scalar in text.folded.unicodeScalars {
            if SearchText.isIndexedWordCharacter(scalar) {
                current.append(scalar)
            } else if !current.isEmpty {
                words.append(String(current))
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { words.append(String(current)) }
        return words
    }

    /// Brute force: every word of `search` begins (by bytes) a word of the title.
    static func matches(_ title: String?, _ search: String) -> Bool {
        guard let title else { return false }
        let titleWords = words(title)
        return words(search).allSatisfy { term in titleWords.contains { Array($0.utf8).starts(with: Array(term.utf8)) } }
    }

    /// Brute force: the matching items, newest first (ties: the larger id first), by day.
    static func expected(_ all: [FtsWalkItem], _ search: String, kind: Int?) -> [[RecordID]] {
        let rows = all.filter { matches($0.title, search) && (kind == nil || $0.kind == kind) }.sorted {
            $0.published != $1.published ? $0.published > $1.published : $0.id!.rawValue > $1.id!.rawValue
        }
        var sections: [[RecordID]] = [], day: Int?
        for row in rows {
            let rowDay = Int((row.published.timeIntervalSince1970 / 86_400).rounded(.down))
            if rowDay != day { sections.append([]) }
            sections[sections.count - 1].append(row.id!)
            day = rowDay
        }
        return sections
    }

    static func request(_ search: String, kind: Int? = nil) -> RecordRequest<FtsWalkItem> {
        var request = RecordRequest<FtsWalkItem>(sortBy: [SortDescriptor(\.published, order: .reverse)], batchSize: 20)
        if let kind { request.predicate = #Predicate { $0.kind == kind } }
        request.search = TextSearch(search, matchingPrefixes: true)
        return request
    }

    static func controller(_ store: Store, _ request: RecordRequest<FtsWalkItem>, rows: Int = 50) -> (
        FetchedResultsController<FtsWalkItem>, IncompleteRecorder<FtsWalkItem>
    ) {
        let controller = FetchedResultsController(request, store: store, sectionBy: .day(\.published, timeZone: .gmt))
        controller.completesInBackground = true
        controller.firstScreenRule = .immediately(rows: rows)
        let recorder = IncompleteRecorder<FtsWalkItem>()
        controller.delegate = recorder
        return (controller, recorder)
    }

    /// Every item in the table, read synchronously.
    nonisolated static func everyItem(_ store: Store) throws -> [FtsWalkItem] {
        try store.fetch(RecordRequest<FtsWalkItem>()).compactMap { $0 }
    }

    static func insert(_ store: Store, _ items: [FtsWalkItem]) throws -> [FtsWalkItem] {
        try store.write { tx in
            try items.map { item in
                var item = item
                try tx.insert(&item)
                return item
            }
        }
    }

    /// `shown` is a first screen of `whole`: its first rows, in its sections, the last one
    /// possibly cut short.
    static func isFirstScreen(_ shown: [[RecordID]], of whole: [[RecordID]]) -> Bool {
        guard shown.count <= whole.count else { return false }
        for (index, section) in shown.enumerated() {
            let full = whole[index]
            guard index == shown.count - 1 ? Array(full.prefix(section.count)) == section : full == section else {
                return false
            }
        }
        return true
    }

    /// Prefixes of 1 to n letters, as typed (lower case, capitals, NFD, accents), selective
    /// and not, with and without a predicate, on lists of several sizes: the first screen
    /// and the completed list are the brute force's and the usual plan's, and the walk ran
    /// whenever more rows than a screen match (and was never given up: every search here
    /// matches at least 1 row in 25).
    @Test(arguments: [120, 1_500, 6_000], [false, true])
    func walkedFirstScreensAreTheUsualPlansAndTheBruteForces(size: Int, testingRows: Bool) async throws {
        let store = try Store.temporary(records: [FtsWalkItem.self])
        store.diagnostics.walksTestingRows = testingRows
        let all = try Self.insert(store, Self.items(size))
        let searches = [
            "c", "ca", "caf", "cafe", "CAFÉ", "cafe\u{301}", "Ç", "ça", "cr", "crème", "str", "strasse", "i", "ipad",
            "n", "na", "naive", "cafe c", "x", "zo",
        ]
        for kind in [nil, 1] {
            for search in searches {
                let request = Self.request(search, kind: kind)
                let expected = Self.expected(all, search, kind: kind)
                let matchCount = expected.joined().count
                let before = store.diagnostics.counters
                let (controller, _) = Self.controller(store, request)
                try fetchNow(controller)
                let counters = store.diagnostics.counters
                let shown = TableViewModel(controller.snapshot).sections
                let label = "“\(search)”, kind \(kind.map(String.init) ?? "any"), \(matchCount) matches of \(size)"
                #expect(Self.isFirstScreen(shown, of: expected), "\(label)")
                if !testingRows {
                    #expect(counters.searchWalksAbandoned == before.searchWalksAbandoned, "\(label)")
                    // The walk runs when the search (the predicate aside) matches more rows than a screen.
                    let searchMatches = Self.expected(all, search, kind: nil).joined().count
                    #expect(
                        counters.searchWalks == before.searchWalks + (searchMatches > 50 ? 1 : 0),
                        "\(label): the walk runs when more rows than a screen match")
                    #expect(counters.matchingWalks == before.matchingWalks)
                } else {
                    // A walk testing rows ran, or was given up for the one reading the matches.
                    #expect(
                        counters.matchingWalks == before.matchingWalks + 1
                            || counters.searchWalksAbandoned == before.searchWalksAbandoned + 1, "\(label)")
                    // Where half the list's rows match, it is never given up.
                    let listSize = kind == nil ? size : all.filter { $0.kind == kind }.count
                    if matchCount * 2 >= listSize {
                        #expect(counters.matchingWalks == before.matchingWalks + 1, "\(label)")
                    }
                }
                if matchCount > 50 {
                    #expect(shown.joined().count == 51, "\(label)")
                    #expect(!controller.isComplete, "\(label)")
                }
                try await controller.waitUntilComplete()
                #expect(TableViewModel(controller.snapshot).sections == expected, "\(label)")
                #expect(try freshModel(of: controller).sections == expected, "\(label): the usual plan")
            }
        }
    }

    /// The automatic rule (at least 50 rows, 20,000 steps and 4 ms): a walk that reaches
    /// the end of the list first is the whole list, complete at once.
    @Test func aWalkThatReachesTheEndIsTheWholeList() async throws {
        let store = try Store.temporary(records: [FtsWalkItem.self])
        let all = try Self.insert(store, Self.items(2_000))
        let before = store.diagnostics.counters
        let controller = FetchedResultsController(Self.request("c"), store: store, sectionBy: .day(\.published, timeZone: .gmt))
        controller.completesInBackground = true
        try fetchNow(controller)
        #expect(controller.isComplete)
        #expect(store.diagnostics.counters.searchWalks == before.searchWalks + 1)
        #expect(store.diagnostics.counters.firstScreens == before.firstScreens)
        #expect(TableViewModel(controller.snapshot).sections == Self.expected(all, "c", kind: nil))
    }

    /// A screen's rows (50) or fewer matches: the usual plan sorts them at once, no walk;
    /// one more, and the walk runs.
    @Test(arguments: [49, 50, 51, 52])
    func fewerMatchesThanAScreenAreNotWalked(matches: Int) async throws {
        let store = try Store.temporary(records: [FtsWalkItem.self])
        store.diagnostics.walksTestingRows = false
        let items = (0..<3_000).map { i in
            FtsWalkItem(i % 50 == 7 && i / 50 < matches ? "Zebra \(i)" : "plain \(i)", hour: i % 500)
        }
        let all = try Self.insert(store, items)
        let before = store.diagnostics.counters
        let (controller, _) = Self.controller(store, Self.request("ze"))
        try fetchNow(controller)
        #expect(store.diagnostics.counters.searchWalks == before.searchWalks + (matches > 50 ? 1 : 0))
        try await controller.waitUntilComplete()
        #expect(TableViewModel(controller.snapshot).sections == Self.expected(all, "ze", kind: nil))
        #expect(controller.fetchedObjects?.count == matches)
    }

    /// A walk testing rows needs no count of the matches: a short list, or one whose top
    /// rows match, is walked to its screen or to its end with every match — the whole list,
    /// complete at once.
    @Test(arguments: [(30, 0), (30, 1), (30, 30), (60, 49), (60, 50), (60, 51), (60, 52)])
    func aWalkTestingRowsFindsFewMatchesToTheEnd(rows: Int, matches: Int) async throws {
        let store = try Store.temporary(records: [FtsWalkItem.self])
        let items = (0..<rows).map { i in FtsWalkItem(i < matches ? "Zebra \(i)" : "plain \(i)", hour: 100 - i) }
        let all = try Self.insert(store, items)
        #expect(SearchWalk.matchingBudget(largestRowid: Int64(rows)) / 8 > 30)
        let before = store.diagnostics.counters
        let (controller, _) = Self.controller(store, Self.request("ze"))
        try fetchNow(controller)
        let counters = store.diagnostics.counters
        #expect(counters.matchingWalks == before.matchingWalks + 1)
        #expect(counters.searchWalksAbandoned == before.searchWalksAbandoned)
        #expect(controller.isComplete == (matches <= 50))
        #expect(Self.isFirstScreen(TableViewModel(controller.snapshot).sections, of: Self.expected(all, "ze", kind: nil)))
        try await controller.waitUntilComplete()
        #expect(TableViewModel(controller.snapshot).sections == Self.expected(all, "ze", kind: nil))
        #expect(controller.fetchedObjects?.count == matches)
    }

    /// The budget of a walk testing rows grows as the square root of the table (reading
    /// every match grows with it), within 256 and 4,096 rows, whatever the largest rowid.
    @Test func theBudgetOfAWalkTestingRows() {
        #expect(SearchWalk.matchingBudget(largestRowid: 0) == 256)
        #expect(SearchWalk.matchingBudget(largestRowid: -5) == 256)
        #expect(SearchWalk.matchingBudget(largestRowid: 45_511) == 256)
        #expect(SearchWalk.matchingBudget(largestRowid: 1_000_000) == 1_200)
        #expect(SearchWalk.matchingBudget(largestRowid: 10_000_000) == 3_794)
        #expect(SearchWalk.matchingBudget(largestRowid: Int64.max) == 4_096)
        // Given up only past an eighth of the budget, at a rate projecting past it.
        #expect(!SearchWalk.givesUp(kept: 0, stepped: 31, screen: 51, budget: 256))
        #expect(SearchWalk.givesUp(kept: 0, stepped: 32, screen: 51, budget: 256))
        #expect(!SearchWalk.givesUp(kept: 7, stepped: 32, screen: 51, budget: 256))
        #expect(SearchWalk.givesUp(kept: 6, stepped: 32, screen: 51, budget: 256))
        #expect(!SearchWalk.givesUp(kept: 51, stepped: 4_000, screen: 51, budget: 256))
    }

    /// A walk testing rows gives up as soon as the rate of its matches says the screen
    /// would take more than its budget. The list's first 50 rows match, then the 51st match
    /// comes at the row where the walk would give up (found) or one row later (given up:
    /// the walk reading the matches first finds the same screen).
    @Test(arguments: [0, 1])
    func aWalkTestingRowsPastItsBudgetIsGivenUp(pastBudget: Int) async throws {
        let size = 3_000
        let budget = SearchWalk.matchingBudget(largestRowid: Int64(size))
        let givingUp = try #require((51...size).first { SearchWalk.givesUp(kept: 50, stepped: $0, screen: 51, budget: budget) })
        let fiftyFirst = givingUp + pastBudget  // the row (counted from 1) of the 51st match
        let store = try Store.temporary(records: [FtsWalkItem.self])
        let items = (1...size).map { row in
            FtsWalkItem(row <= 50 || row == fiftyFirst || row > size - 49 ? "Quartz \(row)" : "plain \(row)", hour: size - row)
        }
        let all = try Self.insert(store, items)
        let before = store.diagnostics.counters
        let (controller, _) = Self.controller(store, Self.request("qu"))
        try fetchNow(controller)
        let counters = store.diagnostics.counters
        #expect(counters.searchWalks == before.searchWalks + 1)
        #expect(counters.matchingWalks == before.matchingWalks + 1 - pastBudget)
        #expect(counters.searchWalksAbandoned == before.searchWalksAbandoned + pastBudget)
        let expected = Self.expected(all, "qu", kind: nil)
        #expect(Self.isFirstScreen(TableViewModel(controller.snapshot).sections, of: expected))
        #expect(TableViewModel(controller.snapshot).sections.joined().count == 51)
        try await controller.waitUntilComplete()
        #expect(TableViewModel(controller.snapshot).sections == expected)
    }

    /// The budget: with `m` matches, the walk steps at most `8m + 4,096` rows for its first
    /// screen. The 100 matches are the oldest rows, after `others` newer ones: the 51st
    /// match is the row `others + 51`, within the budget for one count of `others` and
    /// past it for one more — then the walk is given up and the usual plan reads the same
    /// first screen.
    @Test(arguments: [0, 1])
    func aWalkPastItsBudgetIsGivenUp(pastBudget: Int) async throws {
        let matches = 100
        let budget = matches * SearchWalk.budgetFactor + SearchWalk.budgetSlack
        let others = budget - 50 + pastBudget
        let store = try Store.temporary(records: [FtsWalkItem.self])
        store.diagnostics.walksTestingRows = false
        let items =
            (0..<matches).map { FtsWalkItem("Quartz \($0)", hour: $0 % 40) }
            + (0..<others).map { FtsWalkItem("plain \($0)", hour: 100 + $0 / 3) }
        let all = try Self.insert(store, items)
        let before = store.diagnostics.counters
        let (controller, _) = Self.controller(store, Self.request("qu"))
        try fetchNow(controller)
        let counters = store.diagnostics.counters
        #expect(counters.searchWalks == before.searchWalks + 1 - pastBudget)
        #expect(counters.searchWalksAbandoned == before.searchWalksAbandoned + pastBudget)
        let expected = Self.expected(all, "qu", kind: nil)
        #expect(Self.isFirstScreen(TableViewModel(controller.snapshot).sections, of: expected))
        #expect(TableViewModel(controller.snapshot).sections.joined().count == 51)
        try await controller.waitUntilComplete()
        #expect(TableViewModel(controller.snapshot).sections == expected)
    }

    /// No index orders the list (a sort by kind): walking would sort every row before the
    /// first, so the usual plan runs.
    @Test func aListNoIndexOrdersIsNotWalked() async throws {
        let store = try Store.temporary(records: [FtsWalkItem.self])
        _ = try Self.insert(store, Self.items(1_000))
        var request = RecordRequest<FtsWalkItem>(sortBy: [SortDescriptor(\.kind)], batchSize: 20)
        request.search = TextSearch("c", matchingPrefixes: true)
        let controller = FetchedResultsController(request, store: store)
        controller.completesInBackground = true
        controller.firstScreenRule = .immediately(rows: 50)
        let before = store.diagnostics.counters
        try fetchNow(controller)
        #expect(store.diagnostics.counters.searchWalks == before.searchWalks)
        #expect(store.diagnostics.counters.firstScreens == before.firstScreens + 1)
        try await controller.waitUntilComplete()
        #expect((controller.fetchedObjects?.map { $0?.id } ?? []) == Array(try store.fetchIdentifiers(request)))
    }

    /// The SQL log names the walk and what it read.
    @Test(arguments: [false, true])
    func theSQLLogShowsTheWalk(testingRows: Bool) async throws {
        let store = try Store.temporary(records: [FtsWalkItem.self])
        store.diagnostics.walksTestingRows = testingRows
        _ = try Self.insert(store, Self.items(1_000))
        let lines = Locked<[String]>([])
        store.diagnostics.logSQL { line in lines.withLock { $0.append(line) } }
        let (controller, _) = Self.controller(store, Self.request("ca"))
        let gate = FirstScreenGate(at: 0)  // the completion (the usual plan) waits
        controller.completionHook = gate.hook
        try fetchNow(controller)
        #expect(await gate.reached())
        store.diagnostics.logSQL(nil)
        gate.release()
        let log = lines.withLock { $0 }
        let readsMatches = log.contains { $0.hasPrefix("SELECT rowid FROM \"folio_fts_walk_item_fts\" WHERE") }
        #expect(readsMatches == !testingRows)
        #expect(log.contains { $0.hasPrefix(testingRows ? "SEARCH WALK: 51 rows matched in " : "SEARCH WALK: 51 of ") })
        // A walk testing rows reads each row's indexed text by its rowid.
        #expect(
            log.contains { $0 == "SELECT \"folio_title_folded\" FROM \"folio_fts_walk_item_fts\" WHERE rowid = ?" }
                == testingRows)
        #expect(!log.contains { $0.contains("MATCH") && $0.hasPrefix("SELECT \"id\"") }, "the usual plan did not run")
        try await controller.waitUntilComplete()
    }

    /// The `sqlite3` shell inserts, deletes and updates matching and non-matching rows —
    /// before the top, inside the first screen and beyond it — between the walked first
    /// screen and the completion (before its snapshot: the first screen is walked again in
    /// it; after: the tracker catches up). The completed list is the brute force's over the
    /// rows then in the table, and every change set applies to what the app was shown.
    @Test(arguments: [-1, 0], [false, true])
    func theShellWritesBetweenTheWalkedFirstScreenAndTheCompletion(heldAt point: Int, testingRows: Bool) async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("store.sqlite")
        let store = try Store(path: path, records: [FtsWalkItem.self])
        store.diagnostics.walksTestingRows = testingRows
        let all = try Self.insert(store, Self.items(4_000))
        let request = Self.request("ca")
        let first = Self.expected(all, "ca", kind: nil).joined().map(\.rawValue)
        let hour = 3600
        let writes = """
            INSERT INTO fts_walk_item (title, folio_title_folded, published, kind) VALUES
              ('Cable top', 'cable top', \(999 * hour), 0),
              ('plain top', 'plain top', \(999 * hour), 0),
              ('cat inside', 'cat inside', \(990 * hour + 1), 1),
              ('dog inside', 'dog inside', \(990 * hour + 1), 1),
              ('calm bottom', 'calm bottom', -5, 2),
              (NULL, NULL, \(995 * hour), 0);
            DELETE FROM fts_walk_item WHERE id IN (\(first[3]), \(first[10]), \(first[40]));
            UPDATE fts_walk_item SET title = 'plain now', folio_title_folded = 'plain now' WHERE id = \(first[20]);
            UPDATE fts_walk_item SET title = 'carrot now', folio_title_folded = 'carrot now'
              WHERE id = (SELECT id FROM fts_walk_item WHERE folio_title_folded = 'plain words' ORDER BY id LIMIT 1);
            UPDATE fts_walk_item SET published = \(998 * hour) WHERE id = \(first[30]);
            """
        let gate = FirstScreenGate(at: point)
        let (controller, recorder) = Self.controller(store, request)
        let shellFailure = Locked<String?>(nil)
        if point == -1 {
            // Between the first screen's read and the snapshot the rest is read in.
            controller.completionHook = { rows in
                guard rows == -1 else { return }
                do { try Shell.sqlite3(path, writes) } catch { shellFailure.withLock { $0 = "\(error)" } }
            }
        } else {
            controller.completionHook = gate.hook
        }
        let walks = store.diagnostics.counters.searchWalks
        try fetchNow(controller)
        var model = TableViewModel(controller.snapshot)
        if point == -1 {
            // The first screen was walked again in the snapshot, with the shell's rows.
            #expect(store.diagnostics.counters.searchWalks == walks + 2)
            #expect(Self.isFirstScreen(model.sections, of: Self.expected(try Self.everyItem(store), "ca", kind: nil)))
            #expect(model.sections.joined().count == 51)
        } else {
            #expect(store.diagnostics.counters.searchWalks == walks + 1)
            #expect(Self.isFirstScreen(model.sections, of: Self.expected(all, "ca", kind: nil)))
            #expect(await gate.reached())
            try Shell.sqlite3(path, writes)
        }
        #expect(shellFailure.withLock { $0 } == nil)
        gate.release()
        try await controller.waitUntilComplete()
        for _ in 0..<2_000 {
            if TableViewModel(controller.snapshot) == (try freshModel(of: controller)) { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        await controller.waitForChanges()
        #expect(recorder.errors.isEmpty)
        #expect(recorder.changeSets.filter(\.isCompletion).count == 1)
        try recorder.apply(to: &model)
        let now = try Self.everyItem(store)
        let expected = Self.expected(now, "ca", kind: nil)
        #expect(model.sections == expected)
        #expect(TableViewModel(controller.snapshot).sections == expected)
        #expect(try freshModel(of: controller).sections == expected)
        #expect(now.count == 4_003)
        #expect(controller.fetchedObjects?.count == expected.joined().count)
    }
}
