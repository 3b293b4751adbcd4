import Foundation
import GRDB
import Observation
import Testing
@testable import Folio

@Suite("FetchedResultsModel")
@MainActor
struct ResultsModelTests {
    // MARK: Identifiers load nothing

    /// SwiftUI's `List` reads the identifier of every row, visible or not. Over 100,000 rows
    /// in ~4,200 day sections, reading every section's identity and every row's identifier —
    /// through the sections and through `items` — loads no record; reading one record loads
    /// exactly one batch.
    @Test func readingEveryIdentifierOf100000RowsLoadsNoRecord() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 100_000)
        let model = FetchedResultsModel(
            articles(sortBy: [SortDescriptor(\.published)]), store: store, sectionBy: .day(\.published, timeZone: .gmt))
        try await model.performFetch()
        store.diagnostics.resetCounters()

        var seen = Set<RecordID>()
        var sectionIDs = Set<FetchedSection<Article>.ID>()
        var rows = 0
        for section in model.sections {
            sectionIDs.insert(section.id)
            for item in section.items {
                seen.insert(item.id)
                rows += 1
            }
        }
        for item in model.items { seen.insert(item.id) }
        let ids = model.items.map(\.id)
        #expect(rows == 100_000)
        #expect(seen.count == 100_000, "identifiers are unique")
        #expect(sectionIDs.count == model.sections.count, "section identities are unique")
        #expect(model.sections.count == 4_167)
        #expect(store.diagnostics.counters.batchesLoaded == 0)
        #expect(store.diagnostics.counters.recordsMaterialized == 0)
        #expect(ids == Array(try store.fetchIdentifiers(model.fetchRequest)))

        // One record: one batch of 50, from the middle of the list.
        let item = model.items[70_001]
        #expect(item.record?.score == 70_001)
        #expect(store.diagnostics.counters.batchesLoaded == 1)
        #expect(store.diagnostics.counters.recordsMaterialized == 50)
        // Its neighbours in the batch are already loaded.
        #expect(model.items[70_049].record?.score == 70_049)
        #expect(store.diagnostics.counters.batchesLoaded == 1)
    }

    /// The same through the iteration SwiftUI does on a section (`ForEach(section.items)`
    /// makes a collection of identifiers first), for results with no section key and for a
    /// request without a batch size (which loads everything at the first record read — but
    /// not at an identifier read).
    @Test(arguments: [0, 1, 4_096])
    func iteratingSectionsLoadsNoRecordWhateverTheBatchSize(batchSize: Int) throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 5_000)
        let model = FetchedResultsModel(articles(batchSize: batchSize), store: store)
        try model.performFetch()
        store.diagnostics.resetCounters()
        #expect(model.sections.count == 1)
        let section = try #require(model.sections.first)
        #expect(section.name == "" && !section.isNil && section.items.count == 5_000)
        let identifiers = section.items.map(\.id)
        #expect(Set(identifiers).count == 5_000)
        #expect(section.items.firstIndex(of: identifiers[4_999]) == 4_999)
        #expect(section.items.firstIndex(of: RecordID(-1)) == nil)
        _ = section.items.last?.id
        _ = section.items.reversed().map(\.id)
        _ = section.items[4_000..<4_100].map(\.id)
        #expect(store.diagnostics.counters.batchesLoaded == 0)
        #expect(store.diagnostics.counters.recordsMaterialized == 0)
        _ = section.items[4_999].record
        #expect(store.diagnostics.counters.batchesLoaded == 1)
        // No batch size: everything at once; 4,096: the second batch, 4,096..<5,000.
        let expected = [0: 5_000, 1: 1, 4_096: 904][batchSize]
        #expect(store.diagnostics.counters.recordsMaterialized == expected)
    }

    // MARK: One notification per commit that changes what the model shows

    @Test func oneNotificationPerCommitThatChangesTheResultsAndNoneOtherwise() async throws {
        let store = try Store.temporary(records: [Article.self, Note.self])
        try seed(store, count: 6_000)
        let model = FetchedResultsModel(articles(#Predicate { $0.score >= 1_000 }), store: store)
        try await model.performFetch()
        await model.waitForChanges()
        let everything = ObservationCounter { readEverythingButRecords(model) }
        let sectionsOnly = ObservationCounter { _ = model.sections }
        let stateOnly = ObservationCounter {
            _ = model.loadingState
            _ = model.lastError
        }
        func commit(_ expected: Int, _ what: Comment, _ write: (WriteTransaction) throws -> Void) async throws {
            try writeSync(store, write)
            await model.waitForChanges()
            #expect(everything.take() == expected, what)
            #expect(sectionsOnly.take() == expected, what)
            #expect(stateOnly.take() == 0, what)
            try expectFresh(model)
        }

        try await commit(1, "an inserted matching row") { tx in
            var a = Article(title: "new", score: 5_000)
            try tx.insert(&a)
        }
        try await commit(0, "an inserted row the predicate excludes") { tx in
            var a = Article(title: "excluded", score: 3)
            try tx.insert(&a)
        }
        try await commit(0, "updated and deleted rows the predicate excludes") { tx in
            try tx.database.execute(sql: "UPDATE article SET title = 'x' WHERE score < 500")
            try tx.database.execute(sql: "DELETE FROM article WHERE score BETWEEN 500 AND 600")
        }
        try await commit(0, "a commit to another entity") { tx in
            for i in 0..<100 {
                var note = Note(text: "note \(i)")
                try tx.insert(&note)
            }
        }
        try await commit(0, "a transaction that writes nothing") { _ in }
        let target = model.items[10]
        #expect(target.record?.title == "Article 1010")
        try await commit(1, "a matching row changed in place") { tx in
            try tx.database.execute(sql: "UPDATE article SET title = 'renamed' WHERE score = 1010")
        }
        #expect(model.items[10].id == target.id, "the row keeps its identifier")
        #expect(model.items[10].record?.title == "renamed", "and reads as stored")
        try await commit(1, "a row that moves") { tx in
            try tx.database.execute(sql: "UPDATE article SET score = 100000 WHERE score = 1011")
        }
        #expect(model.items.last?.record?.score == 100_000)
        try await commit(1, "5,000 rows in one transaction (past 4,096 rows in all)") { tx in
            for i in 0..<5_000 {
                var a = Article(title: "bulk \(i)", score: 2_000 + i)
                try tx.insert(&a)
            }
        }
        #expect(model.items.count > 10_000)
        try await commit(1, "a row that leaves the results by an update") { tx in
            try tx.database.execute(sql: "UPDATE article SET score = 1 WHERE score = 1012")
        }
        try await commit(1, "every row deleted") { tx in
            try tx.database.execute(sql: "DELETE FROM article")
        }
        #expect(model.items.isEmpty)
        #expect(model.sections.count == 1 && model.sections[0].items.isEmpty)
        try await commit(1, "the first row again") { tx in
            var a = Article(title: "first", score: 1_000)
            try tx.insert(&a)
        }
        #expect(model.items.count == 1)
    }

    /// Reading records — every batch of a list past 4,096 rows, through the sections and
    /// `items`, even inside the observed closure — never notifies.
    @Test func readingRecordsNeverNotifies() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 5_000)
        let model = FetchedResultsModel(
            articles(sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)], batchSize: 64), store: store,
            sectionBy: .attribute(\.category))
        try model.performFetch()
        store.diagnostics.resetCounters()
        let counter = ObservationCounter {
            readEverythingButRecords(model)
            _ = model.sections.first?.items.first?.record
        }
        var titles = 0
        for section in model.sections {
            for item in section.items where item.record != nil { titles += 1 }
        }
        for item in model.items.reversed() {
            if try item.loadRecord() != nil { titles += 1 }
        }
        #expect(titles == 10_000)
        #expect(store.diagnostics.counters.batchesLoaded > 5_000 / 64)
        #expect(counter.take() == 0)
    }

    // MARK: Filter and sort as one change

    @Test func filterAndSortChangesArriveAsOneNotificationAndEqualAFreshFetch() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 9_000)
        let model = FetchedResultsModel(articles(), store: store)
        try model.performFetch()
        let everything = ObservationCounter { readEverythingButRecords(model) }
        let stateOnly = ObservationCounter { _ = model.loadingState }
        store.diagnostics.resetCounters()

        model.predicate = #Predicate { $0.score >= 4_500 }
        #expect(everything.take() == 1)
        #expect(model.items.count == 4_500)
        try expectFresh(model)

        model.sortBy = [SortDescriptor(\.score, order: .reverse)]
        #expect(everything.take() == 1)
        #expect(model.items.first?.record?.score == 8_999)
        try expectFresh(model)

        model.fetchRequest.predicate = #Predicate { $0.score < 10 || $0.score > 8_990 }
        #expect(everything.take() == 1)
        #expect(model.items.count == 19)
        try expectFresh(model)

        var both = model.fetchRequest
        both.predicate = #Predicate { $0.category == "b" }
        both.sortBy = [SortDescriptor(\.title), SortDescriptor(\.score)]
        model.fetchRequest = both
        #expect(everything.take() == 1, "predicate and sort together: one change")
        #expect(model.items.count == 2_250)
        try expectFresh(model)

        try model.setRequest(articles(#Predicate { $0.score < 0 }))
        #expect(everything.take() == 1)
        #expect(model.items.isEmpty && model.sections.count == 1)
        try expectFresh(model)

        model.predicate = nil
        #expect(everything.take() == 1)
        #expect(model.items.count == 9_000)
        try expectFresh(model)
        #expect(stateOnly.take() == 0)
        #expect(store.diagnostics.counters.batchesLoaded == 1, "only the two records read above loaded (one batch each)")
    }

    /// A request the controller cannot apply leaves the results and request as they were:
    /// no notification for the results, one for the error; the next good change clears it.
    @Test func aRequestThatCannotBeAppliedChangesNothingButTheError() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 100)
        let model = FetchedResultsModel(
            articles(sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)]), store: store,
            sectionBy: .attribute(\.category))
        try model.performFetch()
        let before = ModelShape(model)
        let results = ObservationCounter {
            _ = model.sections
            _ = model.fetchRequest
        }
        let error = ObservationCounter { _ = model.lastError }

        model.sortBy = [SortDescriptor(\.score)]  // does not lead with the section key
        #expect(results.take() == 0)
        #expect(error.take() == 1)
        guard case .sectionKeyNotLeadingSort? = model.lastError else {
            Issue.record("expected sectionKeyNotLeadingSort, got \(String(describing: model.lastError))")
            return
        }
        #expect(model.sortBy.compactMap(\.keyPath) == [\Article.category, \Article.score] as [PartialKeyPath<Article>])
        #expect(ModelShape(model) == before)

        #expect(throws: FolioError.self) { try model.setRequest(articles(sortBy: [])) }
        #expect(model.lastError == .missingSortDescriptor(entity: "article"))
        #expect(results.take() == 0)
        #expect(error.take() == 1)

        model.predicate = #Predicate { $0.score < 50 }
        #expect(results.take() == 1)
        #expect(error.take() == 1, "cleared")
        #expect(model.lastError == nil)
        try expectFresh(model)
    }

    /// Before the first fetch, a request change is kept (and checked) for the fetch.
    @Test func aRequestSetBeforeTheFirstFetchIsUsedByIt() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 50)
        let model = FetchedResultsModel(articles(), store: store)
        model.predicate = #Predicate { $0.score >= 40 }
        #expect(model.loadingState == .idle && model.items.isEmpty && model.sections.isEmpty)
        #expect(store.diagnostics.counters.identifierScans == 0, "nothing is read before performFetch")
        try await model.performFetch()
        #expect(model.items.count == 10)
        try expectFresh(model)
    }

    // MARK: Loading state and errors

    @Test func loadingStateGoesIdleLoadingLoaded() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 5_000)
        let model = FetchedResultsModel(articles(), store: store)
        #expect(model.loadingState == .idle)
        // The counter reads the state when it arms and again at each notification, which
        // comes before the change: `seen` is the first value, then the value each change left.
        var seen: [FetchedResultsModel<Article>.LoadingState] = []
        let state = ObservationCounter { seen.append(model.loadingState) }
        let results = ObservationCounter { _ = model.sections }
        try await model.performFetch()
        #expect(seen + [model.loadingState] == [.idle, .idle, .loading, .loaded])
        #expect(state.take() == 2)
        #expect(results.take() == 1)

        // A second fetch: loading, with the results still readable, then loaded.
        seen = []
        try await model.performFetch()
        #expect(seen + [model.loadingState] == [.loaded, .loading, .loaded])
        #expect(state.take() == 2)
        #expect(model.items.count == 5_000)

        // The synchronous fetch goes to loaded directly.
        let other = FetchedResultsModel(articles(), store: store)
        let otherState = ObservationCounter { _ = other.loadingState }
        try performFetchSync(other)
        #expect(otherState.take() == 1 && other.loadingState == .loaded)
    }

    @Test func aFailedFirstFetchLeavesTheModelIdleWithTheError() async throws {
        let store = try Store.inMemory(records: [Article.self])
        let model = FetchedResultsModel(RecordRequest<Article>(), store: store)  // no sort
        await #expect(throws: FolioError.missingSortDescriptor(entity: "article")) { try await model.performFetch() }
        #expect(model.loadingState == .idle)
        #expect(model.lastError == .missingSortDescriptor(entity: "article"))
        #expect(model.sections.isEmpty)
        #expect(throws: FolioError.self) { try performFetchSync(model) }
        // Fixed before a fetch: the request is kept, the fetch succeeds and clears the error.
        model.sortBy = [SortDescriptor(\.score)]
        try await model.performFetch()
        #expect(model.loadingState == .loaded && model.lastError == nil)

        // A store missing the entity: the error names it.
        let notes = try Store.inMemory(records: [Note.self])
        let wrong = FetchedResultsModel(articles(), store: notes)
        #expect(throws: FolioError.self) { try performFetchSync(wrong) }
        guard case .unknownEntity? = wrong.lastError else {
            Issue.record("expected unknownEntity, got \(String(describing: wrong.lastError))")
            return
        }
    }

    /// A commit the controller cannot follow (another connection writes a row that makes a
    /// `.computed` key's sections non-contiguous) surfaces in `lastError` — one notification
    /// for its observers, none for the results' — and a later commit recovers.
    @Test func aCommitThatCannotBeFollowedSurfacesInLastErrorAndALaterCommitRecovers() async throws {
        let (store, key) = try tensWithABreakingSectionKey()
        let model = FetchedResultsModel(articles(), store: store, sectionBy: key)
        try await model.performFetch()
        let results = ObservationCounter { _ = model.sections }
        let error = ObservationCounter { _ = model.lastError }

        let other = try DatabaseQueueFactory.open(store.path!)
        try await other.write { db in
            try db.execute(sql: "INSERT INTO article (title, url, published, score, isRead) VALUES ('bad', 'bad', 0, 55, 0)")
        }
        try store.synchronize()
        await model.waitForChanges()
        guard case .sectionsNotContiguous? = model.lastError else {
            Issue.record("expected sectionsNotContiguous, got \(String(describing: model.lastError))")
            return
        }
        #expect(results.take() == 0)
        #expect(error.take() == 1)
        #expect(model.items.count == 10, "the results stay as they were")
        #expect(model.loadingState == .loaded)

        try await other.write { db in try db.execute(sql: "DELETE FROM article WHERE url = 'bad'") }
        try writeSync(store) { tx in
            var a = Article(title: "recovery", score: 36)
            try tx.insert(&a)
        }
        await model.waitForChanges()
        #expect(model.lastError == nil)
        // Two commits, one change set each: the other connection's (followed before the
        // store's write began: the reload that recovers), then the insert.
        #expect(results.take() == 2)
        #expect(error.take() == 1)
        #expect(model.items.count == 11)
        try expectFresh(model)
    }

    /// A request change while a background fetch is in flight: a good one supersedes the
    /// fetch; a failing one does not leave the model stuck in `.loading`; a failing section
    /// key change lets the fetch finish.
    @Test func aRequestChangeDuringABackgroundFetchLeavesAConsistentState() async throws {
        // A file store: its pool has several readers, so the main actor's fetch runs while
        // the background fetch is held at its first statement by the gate.
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 5_000)
        let gate = StatementGate(store)

        // The first fetch in flight, then a filter.
        let model = FetchedResultsModel(articles(), store: store)
        gate.arm()
        let first = Task { @MainActor in try await model.performFetch() }
        try await gate.waitUntilHolding()
        #expect(model.loadingState == .loading)
        model.predicate = #Predicate { $0.score < 100 }
        #expect(model.loadingState == .loaded && model.items.count == 100)
        gate.release()
        try await first.value
        #expect(model.loadingState == .loaded && model.items.count == 100, "the superseded fetch changed nothing")
        try expectFresh(model)

        // A refetch in flight, then a request that cannot apply.
        gate.arm()
        let second = Task { @MainActor in try await model.performFetch() }
        try await gate.waitUntilHolding()
        #expect(model.loadingState == .loading)
        model.sortBy = []
        #expect(model.lastError == .missingSortDescriptor(entity: "article"))
        #expect(model.loadingState == .loaded, "not stuck in .loading")
        gate.release()
        try await second.value
        #expect(model.loadingState == .loaded && model.items.count == 100)
        #expect(model.lastError == .missingSortDescriptor(entity: "article"), "the superseded fetch clears nothing")

        // A refetch in flight, then a section key that cannot apply: the fetch goes on.
        try writeSync(store) { tx in
            var a = Article(title: "new", score: -1)
            try tx.insert(&a)
        }
        await model.waitForChanges()
        gate.arm()
        let third = Task { @MainActor in try await model.performFetch() }
        try await gate.waitUntilHolding()
        #expect(model.loadingState == .loading)
        #expect(throws: FolioError.self) {
            try model.setRequest(articles(sortBy: [SortDescriptor(\.score)]), sectionBy: .attribute(\.category))
        }
        gate.release()
        try await third.value
        #expect(model.loadingState == .loaded && model.lastError == nil)
        #expect(model.items.count == 101)
        try expectFresh(model)
    }

    /// Cancelling the task of a background fetch is not an error.
    @Test func cancellingAFetchIsNotAnError() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 20_000)
        let model = FetchedResultsModel(articles(), store: store)
        let task = Task { @MainActor in try await model.performFetch() }
        task.cancel()
        _ = await task.result
        #expect(model.lastError == nil)
        #expect(model.loadingState == (model.items.isEmpty ? .idle : .loaded))
        try await model.performFetch()
        #expect(model.items.count == 20_000)
    }

    // MARK: Sections

    /// Every kind of section key, and none: the model's sections equal a fresh controller's,
    /// their identities are unique and survive commits to other sections, and a commit that
    /// adds or empties a section is one notification.
    @Test(arguments: SectionKeyCase.allCases)
    func everySectionKeyKind(_ key: SectionKeyCase) async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 4_500)
        let model = FetchedResultsModel(articles(sortBy: key.sort), store: store, sectionBy: key.key)
        try await model.performFetch()
        try expectFresh(model)
        #expect(Set(model.sections.map(\.id)).count == model.sections.count)
        let counter = ObservationCounter { readEverythingButRecords(model) }
        let idsBefore = model.sections.map(\.id)

        // A row into the first section.
        let first = try #require(model.sections.first?.items.first?.record)
        try writeSync(store) { tx in
            var copy = first
            copy.id = nil
            copy.url = "https://example.com/copy"
            try tx.insert(&copy)
        }
        await model.waitForChanges()
        #expect(counter.take() == 1)
        #expect(model.sections.map(\.id) == idsBefore, "no section came or went")
        try expectFresh(model)

        // A row in a section of its own, then gone again.
        try writeSync(store) { tx in
            var a = Article(
                title: "~zz", url: "https://example.com/last", published: Date(timeIntervalSince1970: 1e10),
                score: 1_000_000, category: "zz")
            try tx.insert(&a)
        }
        await model.waitForChanges()
        #expect(counter.take() == 1)
        try expectFresh(model)
        try writeSync(store) { tx in try tx.database.execute(sql: "DELETE FROM article WHERE url = 'https://example.com/last'") }
        await model.waitForChanges()
        #expect(counter.take() == 1)
        #expect(model.sections.map(\.id) == idsBefore)
        try expectFresh(model)

        // Empty results: no section, or the one section of unsectioned results.
        model.predicate = #Predicate { $0.score < 0 }
        #expect(counter.take() == 1)
        #expect(model.sections.count == (key.key == nil ? 1 : 0))
        #expect(model.items.isEmpty)
        try expectFresh(model)
    }

    /// Sections whose names read the same but whose values SQLite keeps apart — NULL and
    /// the empty text, precomposed and decomposed "é", "K" and the Kelvin sign (equal as
    /// Swift strings), two invalid UTF-8 texts (both shown as U+FFFD) — have distinct
    /// identities, which commits elsewhere do not change.
    @Test func sectionsWhoseNamesReadTheSameHaveDistinctIdentities() async throws {
        let store = try Store.inMemory(records: [Article.self])
        let values = [
            "NULL", "''", textLiteral([0xC3, 0xA9]), textLiteral([0x65, 0xCC, 0x81]), "'K'",
            textLiteral([0xE2, 0x84, 0xAA]), textLiteral([0xFF]), textLiteral([0xFE]), "'a'", textLiteral([0x61, 0x00, 0x62]),
        ]
        for (i, value) in values.enumerated() {
            try execute(
                store,
                "INSERT INTO article (title, url, published, score, category, isRead) VALUES ('t', 'u\(i)', 0, \(i), \(value), 0)"
            )
        }
        let model = FetchedResultsModel(
            articles(sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)]), store: store,
            sectionBy: .attribute(\.category))
        try await model.performFetch()
        #expect(model.sections.count == 10)
        #expect(Set(model.sections.map(\.id)).count == 10)
        #expect(Set(model.sections.map(\.name)).count == 6, "\(model.sections.map(\.name))")
        #expect(model.sections.filter(\.isNil).count == 1)
        #expect(model.sections.first?.id.description == "NULL")
        let ids = model.sections.map(\.id)
        try execute(
            store, "INSERT INTO article (title, url, published, score, category, isRead) VALUES ('t', 'u99', 0, 99, 'a', 0)")
        await model.waitForChanges()
        #expect(model.sections.map(\.id) == ids)
        #expect(model.sections.map(\.items.count).reduce(0, +) == 11)
        try expectFresh(model)
    }

    // MARK: Released and recreated controllers

    /// A new section key replaces the controller: the old one is released, what it still
    /// had to deliver never reaches the model, and the new one is followed — one
    /// notification per commit, as before.
    @Test func theModelOutlivesAReplacedController() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 5_000)
        let model = FetchedResultsModel(
            articles(sortBy: [SortDescriptor(\.published)]), store: store, sectionBy: .day(\.published, timeZone: .gmt))
        try await model.performFetch()
        var old: FetchedResultsController<Article>? = model.controller
        let counter = ObservationCounter { readEverythingButRecords(model) }
        let error = ObservationCounter { _ = model.lastError }

        // A commit the old controller has not delivered yet, then the switch.
        try writeSync(store) { tx in
            var a = Article(title: "pending", score: -1, category: "a")
            try tx.insert(&a)
        }
        try model.setRequest(
            articles(sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)]), sectionBy: .attribute(\.category))
        #expect(counter.take() == 1)
        #expect(model.controller !== old)
        // The old controller (kept alive here) delivers the pending commit — to no one.
        await old?.waitForChanges()
        await model.waitForChanges()
        #expect(old?.snapshot.numberOfItems == 5_001, "the old controller did follow the commit")
        #expect(counter.take() == 0, "the old controller's delivery never reaches the model")
        weak let released = old
        old = nil
        #expect(released == nil, "the model kept no reference to its old controller")
        #expect(model.sections.map(\.name) == ["", "a", "b", "c"])
        try expectFresh(model)

        for i in 0..<3 {
            try writeSync(store) { tx in
                var a = Article(title: "after \(i)", score: 10_000 + i, category: "b")
                try tx.insert(&a)
            }
            await model.waitForChanges()
            #expect(counter.take() == 1)
            try expectFresh(model)
        }

        // A section key that cannot apply keeps the controller.
        let kept = model.controller
        #expect(throws: FolioError.self) {
            try model.setRequest(articles(sortBy: [SortDescriptor(\.score)]), sectionBy: .attribute(\.category))
        }
        #expect(model.controller === kept)
        #expect(counter.take() == 1 && error.take() == 1, "only the error changed")
        #expect(model.sectionKey?.description == SectionKey<Article>.attribute(\.category).description)

        // Back to no sections: the results change and the error clears — one change, so
        // this strict counter (reading both) counts one.
        try model.setRequest(articles(), sectionBy: nil)
        #expect(error.take() == 1 && model.lastError == nil)
        #expect(counter.take() == 1)
        #expect(model.sections.count == 1 && model.items.count == 5_004)
        try expectFresh(model)
    }

    /// Releasing the model releases its controller, which stops following the store;
    /// commits after that reach nothing and break nothing.
    @Test func releasingTheModelReleasesItsController() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 100)
        weak var released: FetchedResultsModel<Article>?
        weak var controller: FetchedResultsController<Article>?
        var items: FetchedItems<Article>?
        do {
            let model = FetchedResultsModel(articles(), store: store)
            try await model.performFetch()
            released = model
            controller = model.controller
            items = model.items
            try writeSync(store) { tx in
                var a = Article(title: "in flight", score: 1)
                try tx.insert(&a)
            }
        }
        // A delivery of the in-flight commit may still hold them until it has run on the main
        // actor; then nothing may (a leak fails here after a minute).
        let deadline = ContinuousClock.now + .seconds(60)
        while released != nil || controller != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(released == nil)
        #expect(controller == nil)
        try writeSync(store) { tx in try tx.database.execute(sql: "DELETE FROM article WHERE score < 10") }
        // Items kept from a released model still read: rows deleted since read as nil.
        let kept = try #require(items)
        #expect(kept.count == 100)
        #expect(kept[0].record == nil)
        #expect(kept[50].record?.score == 50)

        // A new model over the same store starts from the store as it is.
        let again = FetchedResultsModel(articles(), store: store)
        try await again.performFetch()
        #expect(again.items.count == 90)
        try expectFresh(again)
    }

    /// Items read before a commit keep their identifiers and read the stored record; the
    /// same row's item after the commit is equal by identifier.
    @Test func itemsKeepTheirIdentifiersAcrossCommits() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 200)
        let model = FetchedResultsModel(articles(), store: store)
        try await model.performFetch()
        let before = model.items.map(\.id)
        let item = model.items[100]
        let unread = model.items[199]
        #expect(item.record?.title == "Article 100")
        try writeSync(store) { tx in
            try tx.database.execute(sql: "UPDATE article SET title = 'changed' WHERE score = 100")
            var a = Article(title: "front", score: -5)
            try tx.insert(&a)
        }
        await model.waitForChanges()
        #expect(Array(model.items.map(\.id).dropFirst()) == before)
        #expect(model.items[101].id == item.id)
        #expect(model.items[101].record?.title == "changed", "the model's items after the commit read the stored record")
        // An item belongs to the results it was delivered with, as `FetchedRecords` does:
        // its record reads as its batch was loaded, or as stored if the batch was not loaded.
        #expect(item.record?.title == "Article 100")
        try writeSync(store) { tx in try tx.database.execute(sql: "UPDATE article SET title = 'later' WHERE score = 199") }
        #expect(unread.record?.title == "later")
    }
}

/// The section keys a model can have, for parameterized tests.
enum SectionKeyCase: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case none, attribute, day, firstLetter, computed

    var testDescription: String { rawValue }

    var key: SectionKey<Article>? {
        switch self {
        case .none: nil
        case .attribute: .attribute(\.category)
        case .day: .day(\.published, timeZone: .gmt)
        case .firstLetter: .firstLetter(\.title)
        case .computed: .computed(\.score, name: "thousands") { "\($0 / 1_000)" }
        }
    }

    var sort: [SortDescriptor<Article>] {
        switch self {
        case .none: [SortDescriptor(\.score)]
        case .attribute: [SortDescriptor(\.category), SortDescriptor(\.score)]
        case .day: [SortDescriptor(\.published), SortDescriptor(\.score)]
        case .firstLetter: [SortDescriptor(\.title), SortDescriptor(\.score)]
        case .computed: [SortDescriptor(\.score)]
        }
    }
}

/// Holds the first `SELECT` on `article` a store runs after ``arm()`` until ``release()``:
/// a background fetch stays in flight for as long as a test needs, whatever the scheduler does.
final class StatementGate: @unchecked Sendable {
    // @unchecked Sendable: `armed` and `holding` are only touched with `lock` held.
    private let lock = NSLock()
    private var armed = false
    private var holding = false
    private let released = DispatchSemaphore(value: 0)

    init(_ store: Store) {
        store.diagnostics.logSQL { [weak self] line in self?.pass(line) }
    }

    func arm() {
        lock.withLock {
            armed = true; holding = false
        }
    }

    func release() { released.signal() }

    /// Waits (up to ten minutes: a hang detector, not a timing check) until a statement is
    /// held. The fetch that reaches the gate starts on the main actor, which other suites'
    /// long `@MainActor` tests can hold for more than a minute when the whole suite runs.
    func waitUntilHolding() async throws {
        let deadline = ContinuousClock.now + .seconds(600)
        while !lock.withLock({ holding }) {
            try #require(ContinuousClock.now < deadline, "no statement reached the gate")
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    private func pass(_ line: String) {
        let hold = lock.withLock { () -> Bool in
            guard armed, line.uppercased().hasPrefix("SELECT"), line.contains("article") else { return false }
            armed = false
            holding = true
            return true
        }
        if hold { released.wait() }
    }
}
