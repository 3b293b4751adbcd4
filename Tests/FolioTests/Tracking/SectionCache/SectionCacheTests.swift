import Foundation
import GRDB
import Testing
@testable import Folio

/// A second declaration of the same table with one more index: a new version hash.
struct ArticleV2: PersistentRecord {
    var id: RecordID?
    var title = ""
    var url = ""
    var published = Date(timeIntervalSince1970: 0)
    var score = 0
    var category: String? = nil
    var isRead = false

    static let entity = EntityDescription<ArticleV2>(
        "article",
        [
            AttributeDescription(\.title, indexed: true),
            AttributeDescription(\.url, unique: true),
            AttributeDescription(\.published, indexed: true),
            AttributeDescription(\.score, indexed: true),
            AttributeDescription(\.category),
            AttributeDescription(\.isRead),
        ])
}

@Suite("Persistent section cache")
@MainActor
struct SectionCacheTests {
    let directory: URL
    let path: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-cache-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("store.sqlite").path
    }

    func request(_ predicate: Predicate<Article>? = nil) -> RecordRequest<Article> {
        var r = RecordRequest<Article>(predicate: predicate, sortBy: [SortDescriptor(\.published, order: .reverse)])
        r.batchSize = 20
        return r
    }

    /// Opens the store, fetches with the cache, returns the outcome, the snapshot and the scans run.
    func fetch(_ store: Store, _ request: RecordRequest<Article>, name: String = "feed") async throws -> (
        SectionCache.Outcome, Snapshot, Int
    ) {
        let controller = FetchedResultsController(
            request, store: store, sectionBy: .day(\.published, timeZone: .gmt), cacheName: name)
        store.diagnostics.resetCounters()
        try await controller.performFetch()
        await controller.flushCache()
        let uncached = FetchedResultsController(request, store: store, sectionBy: .day(\.published, timeZone: .gmt))
        let scans = store.diagnostics.counters.identifierScans
        try await uncached.performFetch()
        #expect(controller.snapshot == uncached.snapshot, "a cached answer is never a wrong answer")
        #expect(controller.sections.map(\.name) == uncached.sections.map(\.name))
        return (controller.lastCacheOutcome, controller.snapshot, scans)
    }

    @Test func reusedWhenValidAndRebuiltWhenNot() async throws {
        let store = try Store(path: path, records: [Article.self])
        try seed(store, count: 500)
        let (first, _, scans1) = try await fetch(store, request())
        #expect(first == .rebuilt("no cache file"))
        #expect(scans1 == 1)
        // Same request, no write: reused, no identifier scan.
        let (second, _, scans2) = try await fetch(store, request())
        #expect(second == .reused)
        #expect(scans2 == 0)
        // Any write since → rebuilt.
        try writeSync(store) { tx in
            var a = Article(title: "new", published: Date(timeIntervalSince1970: 1e6)); try tx.insert(&a)
        }
        let (third, snapshot, _) = try await fetch(store, request())
        #expect(third == .rebuilt("the store changed since the cache was written"))
        #expect(snapshot.numberOfItems == 501)
        // A write from outside the store's connections (raw sqlite through another GRDB
        // connection) moves the change token too: the triggers see every writer.
        let (again, _, _) = try await fetch(store, request())
        #expect(again == .reused)
        let other = try DatabaseQueueFactory.open(path)
        try await other.write { db in try db.execute(sql: "DELETE FROM article WHERE score < 10") }
        let (fourth, snapshot4, _) = try await fetch(store, request())
        #expect(fourth == .rebuilt("the store changed since the cache was written"))
        #expect(snapshot4.numberOfItems == 490)  // 500 seeded + 1 new, 11 with score < 10
        // A different request under the same name → rebuilt, never the old answer.
        let (fifth, snapshot5, _) = try await fetch(store, request(#Predicate { $0.score < 100 }))
        #expect(fifth == .rebuilt("fetch request differs"))
        #expect(snapshot5.numberOfItems == 90)
    }

    @Test func rebuiltAfterASchemaVersionChange() async throws {
        do {
            let store = try Store(path: path, records: [Article.self])
            try seed(store, count: 50)
            _ = try await fetch(store, request())
        }
        // Same table, new version hash: the store refuses the old file's schema, so the
        // version check is exercised through the cache file directly.
        let store = try Store(path: path, records: [Article.self])
        let url = try SectionCache.url(forName: "feed", in: store)
        let token = try store.changeToken(for: Article.self)
        let query = try request().compile(requireSort: true)
        let fingerprint = SectionCache.Fingerprint(
            entity: "article", versionHash: ArticleV2.entity.versionHash, query: query.fingerprint, sectionKey: "day")
        #expect(ArticleV2.entity.versionHash != Article.entity.versionHash)
        guard case .failure(let reason) = SectionCache.read(url, expecting: fingerprint, token: token) else {
            Issue.record("a cache written for another version hash was accepted")
            return
        }
        #expect(reason == "entity version hash differs")
    }

    /// A cache is judged by its key block first: another request's cache is turned down
    /// without reading past that block (a tail cut off is not even seen), while the wanted
    /// request's cache is read whole and checked (the same cut is caught). Damage inside
    /// the key block fails its own checksum, and a cache of format 2 is never read.
    @Test func theKeyBlockIsJudgedBeforeTheRestIsRead() async throws {
        let store = try Store(path: path, records: [Article.self])
        try seed(store, count: 3000)
        _ = try await fetch(store, request())
        let url = try SectionCache.url(forName: "feed", in: store)
        let data = try Data(contentsOf: url)
        #expect(data.prefix(8) == Data("FOLIOSC3".utf8))
        let keyLength = Int(data[8..<12].withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) })
        let keyEnd = 12 + keyLength + 8
        #expect(keyLength < 2048, "the key block is small")
        #expect(data.count > keyEnd + 3000 * 8, "and the file is not")

        // Cut right after the key block: another request never reads the cut part.
        try data.prefix(keyEnd).write(to: url)
        let (other, otherSnapshot, _) = try await fetch(store, request(#Predicate { $0.score < 100 }))
        #expect(other == .rebuilt("fetch request differs"))
        #expect(otherSnapshot.numberOfItems > 0)
        // The same cut, for the request it was written for: caught.
        for cut in [keyEnd, keyEnd + 4, data.count - 8, data.count - 1] {
            try data.prefix(cut).write(to: url)
            let (outcome, snapshot, scans) = try await fetch(store, request())
            #expect(outcome == .rebuilt("checksum mismatch (truncated or corrupt)"), "cut at \(cut) of \(data.count)")
            #expect(scans == 1)
            #expect(snapshot.numberOfItems == 3000)
        }
        // A byte of the key changed, the key length absurd, the key cut: the key's checksum.
        var flipped = data
        flipped[12 + keyLength / 2] ^= 0x01
        var huge = data
        huge.replaceSubrange(8..<12, with: [0xFF, 0xFF, 0xFF, 0xFF])
        var wrongSum = data
        wrongSum[keyEnd - 1] ^= 0x80
        for (name, damaged) in [
            ("flipped", flipped), ("huge", huge), ("key sum", wrongSum), ("cut", data.prefix(12 + keyLength)),
        ] {
            try damaged.write(to: url)
            let (outcome, snapshot, _) = try await fetch(store, request())
            #expect(outcome == .rebuilt("checksum mismatch (truncated or corrupt)"), "\(name)")
            #expect(snapshot.numberOfItems == 3000)
        }
        // A cache of format 2 (same bytes otherwise) is never read.
        var older = data
        older[7] = UInt8(ascii: "2")
        try older.write(to: url)
        let (outcome, _, _) = try await fetch(store, request())
        #expect(outcome == .rebuilt("written by another version of Folio (cache format 2)"))
        // And the file written last is good.
        #expect(try await fetch(store, request()).0 == .reused)
    }

    /// A valid cache of at least `largeCacheBytes` is not read before the first screen: the
    /// first screen is scanned, and the background completion reads the cache instead of
    /// scanning the rest — when the cache is still valid in the completion's snapshot. A
    /// write between the two (the completion hook, before the snapshot) makes the cache
    /// stale: the completion scans, and says why. Either way the list equals a fresh fetch.
    @Test(arguments: [false, true])
    func aLargeCacheIsReadAfterTheFirstScreen(writeBetween: Bool) async throws {
        let store = try Store(path: path, records: [Article.self])
        try seed(store, count: 3000)
        #expect(try await fetch(store, request()).0 == .rebuilt("no cache file"))
        store.diagnostics.largeCacheBytes = 0
        let other = try DatabaseQueue(path: path)
        let controller = FetchedResultsController(
            request(), store: store, sectionBy: .day(\.published, timeZone: .gmt), cacheName: "feed")
        controller.completesInBackground = true
        controller.firstScreenRule = .immediately(rows: 50)
        if writeBetween {
            controller.completionHook = { rows in
                guard rows == -1 else { return }
                try? other.write { db in try db.execute(sql: "UPDATE article SET score = score + 1 WHERE id = 7") }
            }
        }
        store.diagnostics.resetCounters()
        try fetchNow(controller)
        #expect(controller.snapshot.numberOfItems == 51)
        #expect(!controller.isComplete)
        // With the write, the first screen was read again in the snapshot, past the cache.
        #expect(
            controller.lastCacheOutcome
                == (writeBetween ? .rebuilt("the store changed since the cache was written") : .reused))
        try await controller.waitUntilComplete()
        await controller.flushCache()
        let counters = store.diagnostics.counters
        let uncached = FetchedResultsController(request(), store: store, sectionBy: .day(\.published, timeZone: .gmt))
        try await uncached.performFetch()
        #expect(controller.snapshot == uncached.snapshot)
        #expect(controller.sections.map(\.name) == uncached.sections.map(\.name))
        if writeBetween {
            #expect(controller.lastCacheOutcome == .rebuilt("the store changed since the cache was written"))
            #expect(counters.identifierScans >= 2, "the first screen, again in the snapshot, and the rest scanned")
        } else {
            #expect(controller.lastCacheOutcome == .reused)
            #expect(counters.identifierScans == 1, "only the first screen was scanned: the rest came from the cache")
        }
        // Below the size, a valid cache is read before anything is shown, complete.
        store.diagnostics.largeCacheBytes = .max
        let small = FetchedResultsController(
            request(), store: store, sectionBy: .day(\.published, timeZone: .gmt), cacheName: "feed")
        small.completesInBackground = true
        small.firstScreenRule = .immediately(rows: 50)
        try fetchNow(small)
        #expect(small.isComplete)
        #expect(small.lastCacheOutcome == .reused)
        #expect(small.snapshot == uncached.snapshot)
    }

    @Test(arguments: ["truncated", "flipped", "garbage", "empty"])
    func corruptFilesAreRebuiltWithoutACrash(_ damage: String) async throws {
        let store = try Store(path: path, records: [Article.self])
        try seed(store, count: 300)
        _ = try await fetch(store, request())
        let url = try SectionCache.url(forName: "feed", in: store)
        var data = try Data(contentsOf: url)
        switch damage {
        case "truncated": data = data.prefix(data.count / 2)
        case "flipped": data[data.count / 2] ^= 0xFF
        case "garbage": data = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        default: data = Data()
        }
        try data.write(to: url)
        let (outcome, snapshot, scans) = try await fetch(store, request())
        guard case .rebuilt = outcome else {
            Issue.record("a \(damage) cache was used: \(outcome)")
            return
        }
        #expect(scans == 1)
        #expect(snapshot.numberOfItems == 300)
        // And the rewritten file is good again.
        let (next, _, _) = try await fetch(store, request())
        #expect(next == .reused)
    }

    @Test(arguments: ["", "../evil", "a/b", "..", "a\\b", "tab\there", "nul\0", String(repeating: "x", count: 201)])
    func badCacheNamesThrow(_ name: String) throws {
        let store = try Store.inMemory(records: [Article.self])
        let controller = FetchedResultsController(
            request(), store: store, sectionBy: .day(\.published, timeZone: .gmt), cacheName: name)
        #expect(throws: FolioError.self) { try controller.performFetch() }
        #expect(throws: FolioError.self) { try FetchedResultsController<Article>.deleteCache(withName: name, in: store) }
    }

    @Test func deleteCaches() async throws {
        let store = try Store(path: path, records: [Article.self])
        try seed(store, count: 10)
        _ = try await fetch(store, request(), name: "one")
        _ = try await fetch(store, request(), name: "two")
        try FetchedResultsController<Article>.deleteCache(withName: "one", in: store)
        #expect(try await fetch(store, request(), name: "one").0 == .rebuilt("no cache file"))
        #expect(try await fetch(store, request(), name: "two").0 == .reused)
        try FetchedResultsController<Article>.deleteCache(withName: nil, in: store)
        #expect(try await fetch(store, request(), name: "two").0 == .rebuilt("no cache file"))
    }

    @Test func persistentTrackingKeepsTheCacheCurrent() async throws {
        let store = try Store(path: path, records: [Article.self])
        try seed(store, count: 100)
        let controller = FetchedResultsController(
            request(), store: store, sectionBy: .day(\.published, timeZone: .gmt), cacheName: "live")
        let delegate = CountingDelegate()
        controller.delegate = delegate
        try await controller.performFetch()
        #expect(controller.trackingMode == .persistent)
        try writeSync(store) { tx in
            var a = Article(title: "x", published: Date(timeIntervalSince1970: 5e5)); try tx.insert(&a)
        }
        await controller.waitForChanges()
        await controller.flushCache()
        #expect(delegate.count == 1)
        let (outcome, snapshot, _) = try await fetch(store, request(), name: "live")
        #expect(outcome == .reused, "the tracked controller rewrote its cache after the change")
        #expect(snapshot.numberOfItems == 101)
    }
}

@MainActor
final class CountingDelegate: FetchedResultsControllerDelegate {
    var count = 0
    func controller(_ controller: FetchedResultsController<Article>, didChangeContentWith changes: ChangeSet) { count += 1 }
}
