import Foundation
import GRDB
import Testing
@testable import Folio

/// One named regression test per item of issue 12 ("Live results that are never wrong"),
/// each of which failed (trapped, threw, or found a wrong result) on f4075a8.
@Suite("Issue 12 regressions")
@MainActor
struct Issue12RegressionTests {
    // MARK: 1. A live list growing past 4,096 rows trapped

    /// A list of 4,090 rows, sorted ascending; one transaction appends 10 → `Index out of
    /// range` in `IdentifierList.subscript`: a single chunk over capacity kept the "uniform"
    /// flag, so index arithmetic pointed past the last chunk. Also 200 rows inserted in the
    /// middle of 4,000, and growth across the next boundaries.
    @Test(
        arguments: [(4_090, 10, "end"), (4_000, 200, "middle"), (8_180, 30, "end"), (4_096, 1, "start")] as [(Int, Int, String)])
    func item1_aLiveListGrowingPastAChunkDoesNotTrap(rows: Int, added: Int, place: String) async throws {
        let store = try Store.inMemory(records: [Article.self])
        try execute(
            store,
            """
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows - 1))
            INSERT INTO article (title, url, published, score, category, isRead)
            SELECT 'T' || i, 'u' || i, i, i * 10, NULL, 0 FROM n
            """)
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.score)], batchSize: 50))
        let base = place == "end" ? rows * 10 : (place == "start" ? -10 * added : rows * 5)
        let changes = try await live.step { tx in
            for i in 0..<added {
                var a = Article(title: "new \(i)", score: base + i * (place == "middle" ? 1 : 10) + 1)
                try tx.insert(&a)
            }
        }
        #expect(changes.count == 1)
        #expect(changes.first?.insertedItems.count == added)
        #expect(live.controller.snapshot.numberOfItems == rows + added)
        // Every row can be read where it is, across every chunk boundary.
        let last = IndexPath(item: rows + added - 1, section: 0)
        #expect(live.controller.object(at: last) != nil)
        #expect(live.controller.identifier(at: IndexPath(item: 4_096, section: 0)) == live.controller.snapshot.identifiers[4_096])
        // And shrinking back below it.
        try await live.step { tx in try tx.deleteAll(Article.self, where: #Predicate { $0.title.starts(with: "new") }) }
        #expect(live.controller.snapshot.numberOfItems == rows)
    }

    /// The list itself at every chunk boundary, growing and shrinking: appends, inserts at the
    /// front and in the middle, and removals, checked element by element around the boundaries.
    @Test(arguments: [0, 1, 2, 3])
    nonisolated func item1_theIdentifierListAtEveryChunkBoundary(startChunks: Int) {
        let capacity = IdentifierList.chunkCapacity
        for start in [startChunks * capacity - 1, startChunks * capacity, startChunks * capacity + 1] where start >= 0 {
            var list = IdentifierList(0..<Int64(start))
            var array = Array(0..<Int64(start))
            var next = Int64(start)
            func check(_ what: String) {
                #expect(list.count == array.count, "\(what)")
                var probes = [0, list.count - 1]
                for k in 1...4 { probes += [k * capacity - 1, k * capacity, k * capacity + 1, 2 * k * capacity] }
                for i in probes where i >= 0 && i < array.count {
                    #expect(list[i] == array[i], "\(what): element \(i)")
                }
                if array.count >= 2 {
                    let a = array.count / 3, b = Swift.min(array.count, a + capacity + 3)
                    #expect(list.slice(a..<b) == Array(array[a..<b]), "\(what): slice")
                }
            }
            // Grow past two boundaries at the end (a chunk fills, overflows, splits).
            for step in 0..<(2 * capacity + 3) {
                list.insert(next, at: list.count)
                array.append(next)
                next += 1
                if step % 97 == 0 || (step + 1) % capacity <= 2 { check("start \(start), append \(step)") }
            }
            #expect(list.elementsEqual(array))
            // Grow at the front and in the middle.
            for step in 0..<(capacity + 2) {
                let index = step % 2 == 0 ? 0 : array.count / 2
                list.insert(next, at: index)
                array.insert(next, at: index)
                next += 1
                if step % 101 == 0 || step >= capacity { check("start \(start), insert \(step)") }
            }
            #expect(list.elementsEqual(array))
            // Shrink from the end, the front and the middle, back through every boundary.
            var step = 0
            while !array.isEmpty {
                let index = step % 3 == 0 ? array.count - 1 : (step % 3 == 1 ? 0 : array.count / 2)
                #expect(list.remove(at: index) == array.remove(at: index))
                if step % 211 == 0 || array.count % capacity <= 1 { check("start \(start), remove \(step)") }
                step += 1
            }
            #expect(list.isEmpty)
        }
    }

    // MARK: 2. Comparisons through Double trapped the tracker

    /// Integers near `Int64.max` and above 2⁵³ beside reals written by raw SQL (an INTEGER
    /// column keeps a real it cannot convert exactly): `RowOrder.compareNumbers` compared
    /// through `Double`, so `Int64.max` tied with the real 2⁶³ and 2⁵³ + 1 with 2⁵³; the
    /// binary search then placed rows where SQLite does not, and the tracker trapped.
    @Test func item2_integersNearInt64MaxBesideRealsAreOrderedExactly() async throws {
        let store = try Store.inMemory(records: [Article.self])
        let values: [String] = [
            "9223372036854775807.0", "9007199254740992.0", "-9223372036854775808.0", "1.5", "-0.0", "1e300",
        ]
        // Reals first (smaller rowids), then the integers that used to tie with them.
        for value in values {
            try execute(
                store, "INSERT INTO article (title, url, published, score, isRead) VALUES ('r', ?, 0, \(value), 0)", [value])
        }
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.score)]))
        let integers: [Int64] = [.max, .max - 1, 9_007_199_254_740_993, .min, .min + 1, 0, 1, 2]
        for (i, value) in integers.enumerated() {
            try await live.step { tx in
                try tx.database.execute(
                    sql: "INSERT INTO article (title, url, published, score, isRead) VALUES ('i', ?, 0, ?, 0)",
                    arguments: ["i\(i)", value])
            }
        }
        // Moving updates between them, and a real that becomes an integer and back.
        let ids = live.controller.snapshot.identifiers.map(\.rawValue)
        for (i, id) in ids.enumerated() where i % 3 == 0 {
            try await live.step { tx in
                try tx.database.execute(
                    sql: "UPDATE article SET score = ? WHERE id = ?",
                    arguments: [i % 2 == 0 ? Int64.max - Int64(i) : Int64.min + Int64(i), id])
            }
        }
        try await live.step { tx in
            try tx.database.execute(sql: "UPDATE article SET score = 9223372036854775807.0 WHERE score = 1")
            try tx.database.execute(sql: "UPDATE article SET score = 9223372036854775807 WHERE score = 2")
        }
        #expect(live.controller.snapshot.numberOfItems == values.count + integers.count)
    }

    /// Text written by raw SQL that is not valid UTF-8 used to be read through a Swift
    /// `String`, which replaced it with U+FFFD: `x'ff'` then tied with a real "\u{FFFD}",
    /// and a row inserted live landed on the wrong side of it.
    @Test func item2_invalidUTF8SortKeysAreOrderedByTheirBytes() async throws {
        let store = try Store.inMemory(records: [Article.self])
        for (i, bytes) in ([[0xFF], [0xC3], [0x7A], [0xEF, 0xBF, 0xBE], [0xF0, 0x9F]] as [[UInt8]]).enumerated() {
            try execute(
                store, "INSERT INTO article (title, url, published, score, isRead) VALUES (\(textLiteral(bytes)), ?, 0, 0, 0)",
                ["u\(i)"])
        }
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.title)]))
        for (i, title) in ["\u{FFFD}", "\u{FFFD}\u{FFFD}", "z", "é", ""].enumerated() {
            try await live.step { tx in
                var a = Article(title: title, url: "v\(i)")
                try tx.insert(&a)
            }
        }
        try await live.step { tx in
            try tx.database.execute(sql: "UPDATE article SET title = \(textLiteral([0xFF, 0x00])) WHERE url = 'v2'")
        }
        #expect(live.controller.snapshot.numberOfItems == 10)
    }

    // MARK: 3. A stale record after a change set that reported it

    /// `limit 1, offset 3`, a `.computed` section key and a cache name: the record at the
    /// window was loaded, left the window (an insert before it), was updated while outside
    /// (a commit whose change set for the window was empty, so nothing was delivered), and
    /// came back (the insert deleted). The loaded copy was handed from results to results
    /// across the commit that changed it, and `object(at:)` returned its old title.
    @Test func item3_aRecordReadAfterItsChangeSetIsTheStoredOne() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 10)
        var request = sorted([SortDescriptor(\.score)], limit: 1, offset: 3, batchSize: 1)
        request.maxBatchesInMemory = 1
        let live = try await LiveHarness(
            store, request, sectionBy: .computed(\.score, name: "tens") { "\($0 / 10 * 10)" }, cacheName: "stale")
        let x = try #require(live.controller.object(at: IndexPath(item: 0, section: 0)))
        #expect(x.score == 3)
        var early = Article(title: "early", score: -1)
        try await live.step { tx in try tx.insert(&early) }
        #expect(live.controller.object(at: IndexPath(item: 0, section: 0))?.score == 2, "x left the window")
        var changed = x
        changed.title = "changed while outside the window"
        let silent = try await live.step { tx in try tx.update(changed) }
        #expect(silent.isEmpty, "nothing shown changed")
        try await live.step { tx in try tx.delete(early) }
        #expect(live.controller.identifier(at: IndexPath(item: 0, section: 0)) == x.id)
        #expect(live.controller.object(at: IndexPath(item: 0, section: 0))?.title == "changed while outside the window")
        #expect(live.controller.fetchedObjects?.first??.title == "changed while outside the window")
    }

    // MARK: 4. A transaction in flight when the first controller subscribed was lost

    /// A write transaction changes a row while no controller listens (the change hub stops
    /// recording its rows); a controller subscribes and reads; the transaction commits while
    /// it reads. The hub reported "unknown changes" to a tracker that had no state yet, which
    /// ignored it: the row never appeared, not even after later commits.
    @Test(arguments: [false, true])
    func item4_aTransactionInFlightWhenTheFirstControllerSubscribesIsNotLost(async: Bool) async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 5)
        let began = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
        let committed = DispatchSemaphore(value: 0)
        Thread {
            try? store.write { tx in
                var a = Article(title: "in flight", score: 100)
                try tx.insert(&a)
                began.signal()
                proceed.wait()
            }
            committed.signal()
        }.start()
        began.wait()
        // The transaction commits while the controller scans its identifiers.
        let armed = Locked(true)
        store.diagnostics.logSQL { line in
            guard line.contains("ORDER BY"),
                armed.withLock({
                    let was = $0
                    $0 = false
                    return was
                })
            else { return }
            proceed.signal()
            committed.wait()
        }
        let controller = FetchedResultsController(sorted([SortDescriptor(\.score)]), store: store)
        let recorder = LiveRecorder()
        controller.delegate = recorder
        if async { try await controller.performFetch() } else { try Self.fetch(controller) }
        #expect(!armed.current, "the transaction committed during the read")
        #expect(controller.snapshot.numberOfItems == 5, "the read began before the commit")
        var model = TableViewModel(controller.snapshot)
        await controller.waitForChanges()
        for change in recorder.changeSets { try model.apply(change, dataSource: controller.snapshot) }
        #expect(controller.snapshot.numberOfItems == 6, "the row of the transaction in flight is shown")
        #expect(model == (try freshModel(controller)))
        // And it keeps following.
        try writeSync(store) { tx in
            var b = Article(title: "later", score: 50)
            try tx.insert(&b)
        }
        await controller.waitForChanges()
        for change in recorder.changeSets.dropFirst(recorder.changeSets.count - 1) {
            try model.apply(change, dataSource: controller.snapshot)
        }
        #expect(model == (try freshModel(controller)))
        #expect(controller.snapshot.numberOfItems == 7)
    }

    static func fetch(_ controller: FetchedResultsController<Article>) throws { try controller.performFetch() }

    // MARK: 5. A window near Int.max trapped

    /// `limit` near `Int.max` with an offset: `lower + limit` overflowed in
    /// `ResultsState.window(offset:limit:)`. `Store.fetch` handled the same request.
    @Test(arguments: [(Int.max, 3), (Int.max - 1, 1), (Int.max / 2 + 1, Int.max / 2 + 1), (5, Int.max)] as [(Int, Int)])
    func item5_aWindowNearIntMaxDoesNotOverflow(limit: Int, offset: Int) async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 10)
        let request = sorted([SortDescriptor(\.score)], limit: limit, offset: offset)
        let live = try await LiveHarness(store, request)
        #expect(Array(live.controller.snapshot.identifiers) == Array(try store.fetchIdentifiers(request)))
        try await live.step { tx in
            var a = Article(title: "new", score: -1)
            try tx.insert(&a)
        }
        #expect(Array(live.controller.snapshot.identifiers) == Array(try store.fetchIdentifiers(request)))
        let state = ResultsState(ids: IdentifierList(Int64(1)...10), runs: [], sectioned: false)
        #expect(
            state.window(offset: offset, limit: limit).ids.count == Swift.max(0, Swift.min(limit, 10 - Swift.min(offset, 10))))
    }

    /// The same class for the other sizes a request carries: a batch size and a number of
    /// batches kept near `Int.max` on a live controller (records handed from results to
    /// results are bounded by their product).
    @Test func item5_hugeBatchSizesDoNotOverflow() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 10)
        var request = sorted([SortDescriptor(\.score)], batchSize: Int.max)
        request.maxBatchesInMemory = Int.max
        let live = try await LiveHarness(store, request)
        #expect(live.controller.object(at: IndexPath(item: 9, section: 0))?.score == 9)
        try await live.step { tx in
            var a = Article(title: "new", score: 4)
            try tx.insert(&a)
        }
        #expect(live.controller.object(at: IndexPath(item: 10, section: 0))?.score == 9)
    }

    // MARK: 6. Sections Swift thinks equal but SQLite does not

    /// Section values with a NUL (`"a\0b"` was cut to `"a"`: performFetch threw "Sections
    /// are not contiguous"), precomposed and decomposed é (Swift's `String ==` merged them),
    /// "K" and the Kelvin sign (likewise, for `.firstLetter`) — every section key kind, in
    /// performFetch, live changes, names and the persistent cache.
    @Test(arguments: ["attribute", "firstLetter", "computed"])
    func item6_sectionIdentityIsTheBytesOfTheValue(kind: String) async throws {
        let store = try Store.temporary(records: [Article.self])
        let values = ["a", "a\0b", "a\0c", "\u{E9}", "e\u{301}", "K", "\u{212A}", "", "\u{212A}\u{212A}", "\0z"]
        try writeSync(store) { tx in
            for (i, value) in values.enumerated() {
                var a = Article(title: value + (kind == "firstLetter" ? "tail" : ""), url: "u\(i)", category: value)
                try tx.insert(&a)
            }
        }
        let (key, request): (SectionKey<Article>, RecordRequest<Article>) =
            switch kind {
            case "attribute": (.attribute(\.category), sorted([SortDescriptor(\.category)]))
            case "firstLetter": (.firstLetter(\.title), sorted([SortDescriptor(\.title)]))
            default: (.computed(\.title, name: "whole") { $0 }, sorted([SortDescriptor(\.title)]))
            }
        let live = try await LiveHarness(store, request, sectionBy: key, cacheName: "bytes-\(kind)")
        let names = live.controller.sections.map(\.name)
        let expected: Int =
            switch kind {
            // a (for a, a\0b, a\0c), é (NFC), e (the NFD form's first letter), K, the Kelvin
            // sign, t (for "" + "tail") and NUL.
            case "firstLetter": 7
            default: values.count
            }
        #expect(names.count == expected, "sections: \(names.map { Array($0.utf8) })")
        #expect(Set(names.map { Array($0.utf8) }).count == names.count, "names keep their bytes")
        // Live: one more row in every section, and a row moved between the look-alikes.
        let inserted = try await live.step { tx in
            for (i, value) in values.enumerated() {
                var a = Article(title: value + (kind == "firstLetter" ? "tail" : ""), url: "w\(i)", category: value)
                try tx.insert(&a)
            }
        }
        #expect(inserted.first?.insertedSections == [], "no section was split or merged")
        #expect(inserted.first?.insertedItems.count == values.count)
        try await live.step { tx in
            try tx.database.execute(
                sql: "UPDATE article SET category = ?, title = ? WHERE url = 'w3'",
                arguments: ["e\u{301}", "e\u{301}" + (kind == "firstLetter" ? "tail" : "")])
        }
        // The cache keeps the bytes: a second controller reuses it and shows the same sections.
        await live.controller.flushCache()
        let again = FetchedResultsController(request, store: store, sectionBy: key, cacheName: "bytes-\(kind)")
        try Self.fetch(again)
        #expect(again.lastCacheOutcome == .reused)
        #expect(again.snapshot == live.controller.snapshot)
        #expect(again.sections.map { Array($0.name.utf8) } == live.controller.sections.map { Array($0.name.utf8) })
    }

    // MARK: 7. Spurious moves

    /// The smallest case: two rows in two day sections; one transaction updates one row into
    /// the other's day, emptying its section. Folio sent `delete section 1, insert 0.0,
    /// move 0.0→0.1 (updated)`: the row that stayed was reported as a move. It is untouched:
    /// nothing at all is reported for it.
    @Test func item7_anUntouchedRowIsNeverAMove() async throws {
        let store = try Store.inMemory(records: [Article.self])
        var a = Article(title: "a", published: Date(timeIntervalSince1970: 86_400 + 36_000))
        var b = Article(title: "b", published: Date(timeIntervalSince1970: 2 * 86_400 + 36_000))
        try writeSync(store) { tx in
            try tx.insert(&a)
            try tx.insert(&b)
        }
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.published)]), sectionBy: .day(\.published))
        b.published = Date(timeIntervalSince1970: 86_400 + 3_600)
        let changes = try await live.step { tx in try tx.update(b) }
        let change = try #require(changes.first)
        #expect(change.deletedSections == [1])
        #expect(change.insertedItems == [IndexPath(item: 0, section: 0)])
        #expect(change.insertedIdentifiers == [b.id!])
        #expect(change.movedItems.isEmpty, "\(change)")
        #expect(change.updatedItems.isEmpty, "\(change)")
    }

    // MARK: 8. A failed reload stopped the controller silently

    /// The rows another connection wrote make the sections non-contiguous (a `.computed` key
    /// that puts 55 in section "0"): the reload threw, and the controller kept its old rows
    /// and never followed the store again, with no error anywhere. Now the error reaches
    /// `lastError`, the delegate and the `updates` stream (which goes on), and the controller
    /// recovers at a later commit.
    @Test func item8_aFailedReloadIsReportedAndTheControllerRecovers() async throws {
        let (store, key) = try tensWithABreakingSectionKey()
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.score)]), sectionBy: key)
        let updates = live.controller.updates
        let collector = Task { @MainActor in
            var received: [ControllerUpdate] = []
            for await update in updates {
                received.append(update)
                if received.count == 4 { break }
            }
            return received
        }
        // Another process writes the row that breaks the sections.
        let other = try DatabaseQueueFactory.open(store.path!)
        try await other.write { db in
            try db.execute(sql: "INSERT INTO article (title, url, published, score, isRead) VALUES ('bad', 'bad', 0, 55, 0)")
        }
        try store.synchronize()
        await live.controller.waitForChanges()
        guard case .sectionsNotContiguous? = live.controller.lastError else {
            Issue.record("expected sectionsNotContiguous, got \(String(describing: live.controller.lastError))")
            return
        }
        #expect(live.recorder.errors.count == 1)
        #expect(live.controller.snapshot.numberOfItems == 10, "the results stay as they were")
        // Its own commits fail too while the bad row is there — reported each time.
        try writeSync(store) { tx in
            var a = Article(title: "own", score: 35)
            try tx.insert(&a)
        }
        await live.controller.waitForChanges()
        #expect(live.recorder.errors.count == 2)
        // The bad row goes; the next commit recovers with a reload.
        try await other.write { db in try db.execute(sql: "DELETE FROM article WHERE url = 'bad'") }
        let reload = try await live.step { tx in
            var a = Article(title: "recovery", score: 36)
            try tx.insert(&a)
        }
        #expect(reload == [.reload])
        #expect(live.controller.lastError == nil)
        // And it follows commits one by one again.
        let insert = try await live.step { tx in
            var a = Article(title: "after", score: 77)
            try tx.insert(&a)
        }
        #expect(insert.first?.insertedItems.count == 1)
        let events = await collector.value
        #expect(events.map { $0.error != nil } == [true, true, false, false])
        #expect(events[0].changes.isEmpty && events[0].snapshot.numberOfItems == 10)
        #expect(events[2].changes.isReload && events[3].snapshot == live.controller.snapshot)
    }

    // MARK: 9. object(at:) inside store.write returned nil

    /// Inside the store's own `write` closure the store cannot start a read, and
    /// `object(at:)` swallowed the `reentrantAccess` error: every row whose batch was not
    /// loaded read as `nil` ("deleted"). Now the batch is read through the closure's own
    /// connection — seeing the transaction's uncommitted changes — and not kept.
    @Test func item9_objectAtInsideWriteReturnsTheRecord() async throws {
        let store = try Store.temporary(records: [Article.self])
        try seed(store, count: 30)
        let controller = FetchedResultsController(sorted([SortDescriptor(\.score)]), store: store)
        try Self.fetch(controller)
        let loaded = controller.object(at: IndexPath(item: 3, section: 0))
        let (inLoaded, inUnloaded) = try writeSync(store) { _ in
            (controller.object(at: IndexPath(item: 3, section: 0)), controller.object(at: IndexPath(item: 25, section: 0)))
        }
        #expect(inLoaded != nil && inLoaded == loaded)
        let stored = try store.fetchOne(Article.self, id: controller.identifier(at: IndexPath(item: 25, section: 0)))
        #expect(inUnloaded != nil && inUnloaded == stored, "an unloaded batch is read, not nil")
        // Inside a read closure too.
        let inRead = try readNow(store) { _ in controller.object(at: IndexPath(item: 15, section: 0)) }
        #expect(inRead?.score == 15)
        // What a write sees is its own, and is not kept past a rollback.
        struct Rollback: Error {}
        let id = controller.identifier(at: IndexPath(item: 25, section: 0))
        var uncommitted: Article? = nil
        #expect(throws: Rollback.self) {
            try writeSync(store) { tx in
                try tx.database.execute(sql: "UPDATE article SET title = 'uncommitted' WHERE id = ?", arguments: [id.rawValue])
                uncommitted = controller.object(at: IndexPath(item: 25, section: 0))
                throw Rollback()
            }
        }
        #expect(uncommitted?.title == "uncommitted")
        #expect(controller.object(at: IndexPath(item: 25, section: 0))?.title == "Article 25")
    }

    /// The same for the results collection itself (the sibling the controller goes through).
    @Test func item9_fetchedRecordsInsideWriteReturnsTheRecord() throws {
        let store = try Store.inMemory(records: [Article.self])
        try seed(store, count: 30)
        var request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        request.batchSize = 10
        let results = try store.fetch(request)
        let inside = try store.write { _ in (results[15], results[29]) }
        #expect(inside.0?.score == 15 && inside.1?.score == 29)
        #expect(results.lastError == nil)
        #expect(results.loadedBatchCount == 0, "batches read inside the write are not kept")
    }

    // MARK: 10. Unary minus

    /// `#Predicate { $0.score < -1 }` threw `unsupportedPredicate` (UnaryMinus). The SQL of
    /// each form is checked in `PredicateTranslationTests`; here a live controller uses one.
    @Test func item10_negativeLiteralsAndUnaryMinusTranslate() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try writeSync(store) { tx in
            for score in [-5, -2, -1, 0, 3] {
                var a = Article(title: "s\(score)", score: score)
                try tx.insert(&a)
            }
        }
        var request = sorted([SortDescriptor(\.score)])
        request.predicate = #Predicate { $0.score < -1 || -$0.score == -3 }
        let live = try await LiveHarness(store, request)
        #expect(live.controller.snapshot.numberOfItems == 3)
        let changes = try await live.step { tx in
            var a = Article(title: "s-9", score: -9)
            try tx.insert(&a)
        }
        #expect(changes.first?.insertedItems == [IndexPath(item: 0, section: 0)])
        #expect(try store.count(RecordRequest<Article>(predicate: #Predicate { -($0.score + 1) >= 1 })) == 3)
    }
}
