import Foundation
import GRDB
import Testing
@testable import Folio

/// Records the change sets of a controller of any record type.
@MainActor
final class IncompleteRecorder<R: PersistentRecord>: FetchedResultsControllerDelegate {
    var changeSets: [ChangeSet] = []
    var snapshots: [Snapshot] = []
    var errors: [FolioError] = []

    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
    }
    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith snapshot: Snapshot) {
        snapshots.append(snapshot)
    }
    func controller(_ controller: FetchedResultsController<R>, didFailWith error: FolioError) {
        errors.append(error)
    }

    func apply(to model: inout TableViewModel) throws {
        for (change, snapshot) in zip(changeSets, snapshots) { try model.apply(change, dataSource: snapshot) }
    }
}

/// A fresh, whole fetch of what `controller` shows.
@MainActor
func freshModel<R: PersistentRecord>(of controller: FetchedResultsController<R>) throws -> TableViewModel {
    let fresh = FetchedResultsController(controller.fetchRequest, store: controller.store, sectionBy: controller.sectionKey)
    fresh.firstScreenRule = nil
    try fresh.performFetch()
    return TableViewModel(fresh.snapshot)
}

/// Waits (up to 30 s) until the store counted a cancelled background read past `count`.
func readStopped(_ store: Store, after count: Int) async -> Bool {
    for _ in 0..<3000 {
        if store.diagnostics.counters.completionsCancelled > count { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}

/// Claims of the incomplete state (a list shown from its first screen, completed in the
/// background) that the first-screen tests leave open: how fast a replaced read stops, the
/// section index meanwhile, another process's writes, searches.
@MainActor
@Suite struct IncompleteListTests {
    static let filtered = RecordRequest<Article>(
        predicate: #Predicate { $0.score >= 5_000 }, sortBy: [SortDescriptor(\.published), SortDescriptor(\.score)],
        batchSize: 50)

    @Test(arguments: ["performFetch", "setRequest"])
    func aNewFetchStopsThePreviousReadWithin4096Rows(replacedBy replacement: String) async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 30_000)
        let gate = FirstScreenGate(at: 4096)
        let (controller, recorder) = firstScreenController(store, gate: gate)
        try fetchNow(controller)
        #expect(await gate.reached())
        controller.completionHook = nil
        let before = store.diagnostics.counters
        if replacement == "performFetch" {
            try fetchNow(controller)
        } else {
            try controller.setRequest(Self.filtered)
        }
        #expect(store.diagnostics.counters.completionsCancelled == before.completionsCancelled, "held, not ended yet")
        gate.release()
        #expect(await readStopped(store, after: before.completionsCancelled))
        #expect(store.diagnostics.counters.completionsCancelled == before.completionsCancelled + 1)
        // Held after 4,096 rows, the read reported no further progress: it stopped before
        // 8,192.
        #expect(gate.calls == [-1, 0, 4096])
        try await controller.waitUntilComplete()
        await controller.waitForChanges()
        #expect(controller.isComplete)
        #expect(recorder.changeSets.filter(\.isCompletion).count == 1, "the replaced read's completion never arrives")
        #expect(recorder.changeSets.last == .completion)
        #expect(TableViewModel(controller.snapshot) == (try freshModel(controller)))
        #expect(store.diagnostics.counters.completionsCancelled == before.completionsCancelled + 1)
    }

    /// A read replaced as its query starts is interrupted by SQLite within 1,000 of its
    /// steps: before the first 4,096 rows are read on an index, and before the first row of
    /// a sort without an index (SQLite sorts every row before it returns one; no progress
    /// note can come meanwhile).
    @Test(arguments: [false, true])
    func aReadReplacedAsItsQueryStartsIsInterruptedBySQLite(sortWithoutIndex: Bool) async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 30_000)
        let gate = FirstScreenGate(at: 0)
        let controller: FetchedResultsController<Article>
        if sortWithoutIndex {
            controller = FetchedResultsController(
                RecordRequest<Article>(sortBy: [SortDescriptor(\.title)], batchSize: 50), store: store)
            controller.completesInBackground = true
            controller.firstScreenRule = .immediately(rows: 100)
            controller.completionHook = gate.hook
        } else {
            controller = firstScreenController(store, gate: gate).0
        }
        try fetchNow(controller)
        #expect(!controller.isComplete)
        #expect(await gate.reached())
        controller.completionHook = nil
        let before = store.diagnostics.counters
        try controller.setRequest(Self.filtered)
        gate.release()
        #expect(await readStopped(store, after: before.completionsCancelled))
        #expect(gate.calls == [-1, 0], "no progress note: SQLite stopped the query before 4,096 rows")
        try await controller.waitUntilComplete()
        #expect(controller.fetchedObjects?.count == 25_000)
    }

    @Test func aControllerThatGoesAwayStopsItsRead() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 30_000)
        let gate = FirstScreenGate(at: 4096)
        var controller: FetchedResultsController<Article>? = firstScreenController(store, gate: gate).0
        try fetchNow(controller!)
        #expect(await gate.reached())
        let before = store.diagnostics.counters.completionsCancelled
        controller = nil
        gate.release()
        #expect(await readStopped(store, after: before))
        #expect(gate.calls == [-1, 0, 4096])
    }

    /// While incomplete, the section index is the prefix's: the titles of the sections shown;
    /// a title of a section not read yet jumps to the last section shown (the end of what is
    /// known). At the completion the titles grow, the prefix's first, and every title jumps
    /// to its own first section.
    @Test func theSectionIndexIsThePrefixsUntilTheCompletion() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 30_000)  // 24 rows a day: 1,250 days, 1970-01-01 to 1973-06-03
        let gate = FirstScreenGate(at: 0)
        let (controller, recorder) = firstScreenController(store, gate: gate)
        try fetchNow(controller)
        #expect(await gate.reached())
        #expect(!controller.isComplete)
        #expect(controller.sections.count == 5)
        #expect(controller.sectionIndexTitles == ["1970-01"])
        #expect(controller.sections.map(\.indexTitle) == Array(repeating: "1970-01", count: 5))
        #expect(controller.section(forSectionIndexTitle: "1970-01", at: 0) == 0)
        #expect(controller.section(forSectionIndexTitle: "1972-03", at: 26) == 4)
        // A title before every title shown: the first section.
        #expect(controller.section(forSectionIndexTitle: "1969-12", at: 0) == 0)

        gate.release()
        try await controller.waitUntilComplete()
        let titles = controller.sectionIndexTitles
        #expect(titles.count == 42)
        #expect(titles.first == "1970-01")
        #expect(titles.last == "1973-06")
        #expect(Set(titles).count == titles.count)
        // 1972-03-01 is day 365 + 365 + 31 + 29.
        #expect(controller.section(forSectionIndexTitle: "1972-03", at: 26) == 790)
        #expect(controller.sections[790].name == "1972-03-01")
        #expect(controller.section(forSectionIndexTitle: "1970-01", at: 0) == 0)
        #expect(recorder.changeSets == [.completion])
    }

    @Test func customIndexTitlesWhileIncompleteAreThePrefixsToo() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 10_000)
        let gate = FirstScreenGate(at: 0)
        let (controller, _) = firstScreenController(store, rows: 200, gate: gate)
        controller.sectionIndexTitle = { name in String(name.suffix(2)) }  // the day of the month
        try fetchNow(controller)
        #expect(await gate.reached())
        #expect(controller.sectionIndexTitles == ["01", "02", "03", "04", "05", "06", "07", "08", "09"])
        #expect(controller.section(forSectionIndexTitle: "20", at: 19) == 8)
        gate.release()
        try await controller.waitUntilComplete()
        #expect(controller.sectionIndexTitles.count == 31)
        #expect(controller.section(forSectionIndexTitle: "20", at: 19) == 19)
    }

    /// The `sqlite3` shell commits inserts, deletes, moves and updates before, inside and
    /// beyond the first screen while the background read is held: after the completion and
    /// the catch-up, the list is a fresh fetch's, and every change set applies to what the
    /// app was shown.
    @Test(arguments: [0, 4096])
    func anotherProcessWritesWhileTheListIsIncomplete(heldAt point: Int) async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("store.sqlite")
        let store = try Store(path: path, records: [Article.self])
        try seed(store, count: 20_000)
        let gate = FirstScreenGate(at: point)
        let (controller, recorder) = firstScreenController(store, gate: gate)
        try fetchNow(controller)
        var model = TableViewModel(controller.snapshot)
        #expect(model.identifiers.count == 101)
        #expect(await gate.reached())
        try Shell.sqlite3(
            path,
            """
            INSERT INTO article (title, url, published, score, category, isRead) VALUES
              ('before', 'u-before', -7200, -2, 'a', 0),
              ('inside', 'u-inside', 36000.5, -3, 'b', 0),
              ('edge', 'u-edge', 363600.5, -4, 'c', 0),
              ('beyond', 'u-beyond', 54000000, -5, NULL, 0),
              ('last', 'u-last', 99999999, -6, 'c', 0);
            DELETE FROM article WHERE score IN (0, 60, 100, 101, 12000);
            UPDATE article SET published = 3600 * 19990 + 1 WHERE score IN (7, 13000);
            UPDATE article SET published = 1000 WHERE score IN (17000, 99);
            UPDATE article SET title = 'edited' WHERE score IN (30, 16000);
            """)
        try Shell.sqlite3(
            path, "DELETE FROM article WHERE score BETWEEN 40 AND 45; UPDATE article SET isRead = 1 WHERE score = 2;")
        #expect(recorder.changeSets.isEmpty, "nothing is delivered before the completion")
        gate.release()
        try await controller.waitUntilComplete()
        for _ in 0..<2_000 {
            if TableViewModel(controller.snapshot) == (try freshModel(controller)) { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        await controller.waitForChanges()
        #expect(recorder.changeSets.first == .completion)
        #expect(recorder.changeSets.filter(\.isCompletion).count == 1)
        #expect(recorder.errors.isEmpty)
        try applyAll(recorder, to: &model)
        #expect(model == TableViewModel(controller.snapshot))
        #expect(model == (try freshModel(controller)))
        #expect(controller.fetchedObjects?.count == 19_994)  // 5 inserted, 11 deleted
    }

    /// A full-text search with prefixes (each keystroke of a search field): the first screen
    /// is the first rows of the whole search, and the completion extends it.
    @Test func aTextSearchShowsItsFirstScreenAndCompletes() async throws {
        let store = try Store.temporary(records: [Person.self])
        try insertPeople(
            store,
            (0..<6_000).map { i in
                Person("p\(i)", note: i % 3 == 0 ? "loves the iPad \(i)" : "plain note \(i)", age: i)
            })
        var request = RecordRequest<Person>(sortBy: [SortDescriptor(\.age, order: .reverse)], batchSize: 20)
        request.search = TextSearch("ipa", matchingPrefixes: true)
        let gate = FirstScreenGate(at: 0)
        let controller = FetchedResultsController(request, store: store)
        controller.completesInBackground = true
        controller.firstScreenRule = .immediately(rows: 50)
        controller.completionHook = gate.hook
        let recorder = IncompleteRecorder<Person>()
        controller.delegate = recorder
        try fetchNow(controller)
        #expect(await gate.reached())
        #expect(!controller.isComplete)
        let whole = Array(try store.fetchIdentifiers(request))
        #expect(whole.count == 2_000)
        var model = TableViewModel(controller.snapshot)
        #expect(model.identifiers == Array(whole.prefix(51)))
        #expect(controller.object(at: IndexPath(item: 0, section: 0))?.age == 5_997)
        // Committed while incomplete: a matching row at the top, and a row that stops matching.
        try writeSync(store) { tx in
            var new = Person("new", note: "IPAD mini", age: 10_000)
            try tx.insert(&new)
            try tx.database.execute(sql: "UPDATE person SET note = 'none' WHERE age = 5994")
        }
        gate.release()
        try await controller.waitUntilComplete()
        await controller.waitForChanges()
        #expect(recorder.changeSets.first == .completion)
        #expect(recorder.changeSets.count == 2)
        try recorder.apply(to: &model)
        #expect(model == (try freshModel(of: controller)))
        #expect(controller.fetchedObjects?.count == 2_000)
        #expect(controller.object(at: IndexPath(item: 0, section: 0))?.name == "new")
    }

    /// A folded prefix (`starts(with:)` on `.folded`), A–Z by first letter: the first screen
    /// holds the first rows and their sections, and the completion extends it.
    @Test func aFoldedPrefixShowsItsFirstScreenAndCompletes() async throws {
        let store = try Store.temporary(records: [Person.self])
        let forms = ["Café", "CAFE", "cafe", "Cafétéria", "Crème", "Zoë"]
        try insertPeople(store, (0..<6_000).map { i in Person("\(forms[i % forms.count]) \(i)", age: i) })
        let request = RecordRequest<Person>(
            predicate: #Predicate { $0.name.folded.starts(with: "CAF") }, sortBy: [SortDescriptor(\.name.folded)],
            batchSize: 20)
        let gate = FirstScreenGate(at: 0)
        let controller = FetchedResultsController(request, store: store, sectionBy: .firstLetter(\.name))
        controller.completesInBackground = true
        controller.firstScreenRule = .immediately(rows: 50)
        controller.completionHook = gate.hook
        let recorder = IncompleteRecorder<Person>()
        controller.delegate = recorder
        try fetchNow(controller)
        #expect(await gate.reached())
        #expect(!controller.isComplete)
        let whole = try freshModel(of: controller)
        #expect(whole.identifiers.count == 4_000)
        var model = TableViewModel(controller.snapshot)
        #expect(model.identifiers == Array(whole.identifiers.prefix(51)))
        #expect(controller.sections.count == 1)
        #expect(controller.sectionIndexTitles == ["C"])
        gate.release()
        try await controller.waitUntilComplete()
        await controller.waitForChanges()
        #expect(recorder.changeSets == [.completion])
        try recorder.apply(to: &model)
        #expect(model == whole)
        #expect(controller.sections.map(\.numberOfObjects) == [4_000])
    }
}
