import Foundation
import GRDB
import Testing
@testable import Folio

/// The hand-over between a state read at one snapshot and the change log followed from then
/// on (issue 40, A and B), by brute force: a list shown from its first screen and completed
/// in the background, and a controller fetched without tracking that starts tracking later,
/// while a writer commits every few milliseconds (``StreamingWriter``: another connection, the
/// store, the `sqlite3` shell, a python3 process). After the writes stop, the change sets
/// applied in order, and the controller's snapshot, must be what a fresh fetch gives.
///
/// The quick tier runs each writer once, on one list shape, with a few thousand rows; the
/// long tier (`FOLIO_LONG=1`) every writer on every shape, three rounds, with lists of the
/// size the issue reported. The interleavings themselves are pinned one by one in
/// ``HandOverCatchUpTests``.
@MainActor
@Suite(.tags(Testing.Tag.longTier)) struct HandOverRaceTests {
    static func request(_ shape: Int) -> (RecordRequest<Article>, SectionKey<Article>?) {
        switch shape {
        case 0:
            (
                RecordRequest<Article>(
                    predicate: #Predicate { $0.score > 700 }, sortBy: [SortDescriptor(\.score, order: .reverse)],
                    batchSize: 50), nil
            )
        case 1:
            (
                RecordRequest<Article>(sortBy: [SortDescriptor(\.published), SortDescriptor(\.score)], batchSize: 50),
                .day(\.published, timeZone: .gmt)
            )
        default:
            (
                RecordRequest<Article>(
                    predicate: #Predicate { $0.score < 200 }, sortBy: [SortDescriptor(\.title)], batchSize: 50),
                .firstLetter(\.title)
            )
        }
    }

    /// The shapes a writer meets: one in the quick tier (each writer another), all three in
    /// the long one.
    static func shapes(_ kind: StreamingWriter.Kind) -> [Int] {
        TestTier.pick(quick: [StreamingWriter.Kind.allCases.firstIndex(of: kind)! % 3], long: [0, 1, 2])
    }

    static let rounds = TestTier.pick(quick: 1, long: 3)

    /// Waits, without asking the store to look (no `synchronize()`), until the controller
    /// shows what a fresh fetch gives — the store must follow every commit on its own — and
    /// returns the fresh state. Gives up after `timeout` (the caller's expectations then fail):
    /// a correct list settles within a heartbeat of the last commit.
    static func settle(
        _ controller: FetchedResultsController<Article>, timeout: Duration = .seconds(5)
    ) async throws -> TableViewModel {
        let deadline = ContinuousClock.now + timeout
        while true {
            try await controller.waitUntilComplete()
            await controller.waitForChanges()
            let fresh = try freshModel(of: controller)
            if TableViewModel(controller.snapshot) == fresh || ContinuousClock.now >= deadline { return fresh }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Lets the writer go on for `milliseconds`, and then until it committed at least six
    /// more times (a loaded machine starts a `sqlite3` or python3 writer late), so that
    /// every round really raced commits (10 s at most).
    static func letRun(_ writer: StreamingWriter, for milliseconds: Int) async throws {
        let before = writer.commits
        try await Task.sleep(for: .milliseconds(milliseconds))
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while writer.countsEachCommit, writer.commits < before + 6, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Lets `writer` run, stops it, applies what `recorder` heard to `model`, and checks the
    /// controller's snapshot and `model` against a fresh fetch once the list has settled.
    static func runThenCheck(
        _ writer: StreamingWriter, _ controller: FetchedResultsController<Article>, _ recorder: LiveRecorder,
        _ model: inout TableViewModel, label: String
    ) async throws {
        try await letRun(writer, for: TestTier.pick(quick: 30, long: 60))
        writer.stop()
        let fresh = try await settle(controller)
        try applyAll(recorder, to: &model)
        #expect(writer.commits > 5, "\(label)")
        #expect(recorder.errors.isEmpty, "\(label)")
        #expect(TableViewModel(controller.snapshot) == fresh, "\(label): the snapshot is the database's")
        #expect(model == fresh, "\(label): the change sets lead to the database's state")
    }

    @Test(arguments: StreamingWriter.Kind.allCases)
    func aListCompletedInTheBackgroundFollowsAStreamOfCommits(kind: StreamingWriter.Kind) async throws {
        for shape in Self.shapes(kind) {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            let store = try Store(path: path, records: [Article.self])
            try fillArticles(store, count: TestTier.pick(quick: 6_000, long: 50_000))
            let (request, key) = Self.request(shape)
            for round in 0..<Self.rounds {
                let controller = FetchedResultsController(request, store: store, sectionBy: key)
                controller.completesInBackground = true
                controller.firstScreenRule = .immediately(rows: 60)
                let recorder = LiveRecorder()
                controller.delegate = recorder
                let writer = try StreamingWriter(
                    kind: kind, path: path, store: store, seed: UInt64(round * 10 + shape))
                try await Task.sleep(for: .milliseconds(5))
                try fetchNow(controller)
                var model = TableViewModel(controller.snapshot)
                try await controller.waitUntilComplete()
                try await Self.runThenCheck(
                    writer, controller, recorder, &model, label: "\(kind), shape \(shape), round \(round)")
            }
        }
    }

    @Test(arguments: StreamingWriter.Kind.allCases)
    func trackingStartedMidStreamFollowsEveryCommit(kind: StreamingWriter.Kind) async throws {
        for shape in Self.shapes(kind) {
            let directory = try ScratchDirectory()
            let path = directory.path("store.sqlite")
            let store = try Store(path: path, records: [Article.self])
            try fillArticles(store, count: TestTier.pick(quick: 4_000, long: 20_000))
            let (request, key) = Self.request(shape)
            for round in 0..<Self.rounds {
                let controller = FetchedResultsController(request, store: store, sectionBy: key)
                controller.firstScreenRule = nil
                let writer = try StreamingWriter(
                    kind: kind, path: path, store: store, seed: UInt64(100 + round * 10 + shape))
                try fetchNow(controller)
                var model = TableViewModel(controller.snapshot)
                try await Task.sleep(for: .milliseconds(Int.random(in: 5...TestTier.pick(quick: 20, long: 80))))
                let recorder = LiveRecorder()
                controller.delegate = recorder
                try await Self.runThenCheck(
                    writer, controller, recorder, &model, label: "\(kind), shape \(shape), round \(round)")
            }
        }
    }
}
