import Foundation
import GRDB
import Testing
@testable import Folio

/// The hand-over between a state read at one snapshot and the change log followed from
/// then on (issue 40, A and B), one interleaving at a time: a commit put exactly between
/// the state's read and its installation (`handOverHook`), by every kind of writer, and
/// another connection's commit that the store has not followed yet when the tracker catches
/// up. A commit must be applied once: not twice, not to a state that already has it, not
/// never. After the store follows everything, the controller's snapshot and the change sets
/// applied to a table-view model must be what a fresh fetch gives.
@MainActor
@Suite(.tags(Testing.Tag.longTier)) struct HandOverCatchUpTests {
    /// Where the window's commits land.
    enum Case: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// A fetch that tracks: both commits after its read, before it is installed.
        case trackedFetch
        /// A list shown from its first screen: both commits after the completion's read,
        /// before it is installed.
        case completion
        /// The noted commit between the first screen and the completion's snapshot: in the
        /// completed state *and* noted by the tracker (not to be applied again); the unseen
        /// one after the completion's read.
        case completionHoldsNoted
        /// Tracking starts on a controller fetched without it: both commits after the
        /// change log's end is read, before the results are installed.
        case lateTracking
        /// The noted commit between the fetch and the start of tracking, followed by the
        /// store before the tracker subscribed (it must not be missed); the unseen one after
        /// the log's end is read.
        case lateTrackingAfterFetch
        /// The noted commit after subscribing but before the log's end is read: noted, and
        /// after the state's position (to be applied once).
        case lateTrackingWhileSubscribing

        var testDescription: String { rawValue }

        var lateTracking: Bool {
            switch self {
            case .lateTracking, .lateTrackingAfterFetch, .lateTrackingWhileSubscribing: true
            default: false
            }
        }
        var firstScreen: Bool { self == .completion || self == .completionHoldsNoted }

        /// Where the noted commit lands (`nil`: before tracking starts).
        var notedAt: HandOverPoint? {
            switch self {
            case .trackedFetch, .completionHoldsNoted: .stateRead
            case .completion: .completionRead
            case .lateTracking: .trackingLogEndRead
            case .lateTrackingAfterFetch: nil
            case .lateTrackingWhileSubscribing: .trackingSubscribed
            }
        }

        var unseenAt: HandOverPoint {
            switch self {
            case .trackedFetch: .stateRead
            case .completion, .completionHoldsNoted: .completionRead
            case .lateTracking, .lateTrackingAfterFetch, .lateTrackingWhileSubscribing: .trackingLogEndRead
            }
        }
    }

    /// What the hook does at each point, once.
    final class Script: @unchecked Sendable {
        // @unchecked Sendable: the hook runs on the main actor, as does the test.
        var steps: [(HandOverPoint, () throws -> Void)] = []
        var errors: [any Error] = []
        var done: [HandOverPoint] = []

        var hook: @Sendable (HandOverPoint) -> Void {
            { [self] point in
                for (at, step) in steps where at == point {
                    do { try step() } catch { errors.append(error) }
                }
                steps.removeAll { $0.0 == point }
                done.append(point)
            }
        }
    }

    /// Each case meets every writer and every shape across the arguments (the long tier:
    /// every shape with every writer).
    static func shapes(_ handOver: Case, _ kind: HandOverWriter.Kind) -> [HandOverShape] {
        if TestTier.isLong { return HandOverShape.all }
        let index = Case.allCases.firstIndex(of: handOver)! + HandOverWriter.Kind.allCases.firstIndex(of: kind)!
        return [HandOverShape.all[(index * 3) % HandOverShape.all.count]]
    }

    @Test(arguments: Case.allCases, HandOverWriter.Kind.allCases)
    func aCommitInTheWindowIsAppliedExactlyOnce(handOver: Case, kind: HandOverWriter.Kind) async throws {
        for shape in Self.shapes(handOver, kind) {
            try await run(handOver, kind, shape)
        }
    }

    func run(_ handOver: Case, _ kind: HandOverWriter.Kind, _ shape: HandOverShape) async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("store.sqlite")
        let store = try Store(path: path, records: [Article.self])
        try handOverArticles(store)
        // The store follows another connection's commits only when told to (or at its writes).
        store.stopWatching()
        let writer = try HandOverWriter(kind, path: path, store: store)
        let unseen = try DatabaseQueue(path: path)

        let script = Script()
        if let at = handOver.notedAt { script.steps.append((at, { try writer.commitFollowed(notedCommit) })) }
        script.steps.append(
            (handOver.unseenAt, { try unseen.write { db in for sql in unseenCommit { try db.execute(sql: sql) } } }))

        let controller = FetchedResultsController(shape.request, store: store, sectionBy: shape.sectionKey)
        controller.handOverHook = script.hook
        controller.firstScreenRule = handOver.firstScreen ? .immediately(rows: 5) : nil
        controller.completesInBackground = handOver.firstScreen
        let recorder = LiveRecorder()
        if !handOver.lateTracking { controller.delegate = recorder }
        try fetchNow(controller)
        #expect(controller.isComplete == !handOver.firstScreen, "\(shape)")
        var model = TableViewModel(controller.snapshot)
        if handOver.lateTracking {
            if handOver.notedAt == nil { try writer.commitFollowed(notedCommit) }
            controller.delegate = recorder
        }
        try await controller.waitUntilComplete()
        await controller.waitForChanges()
        #expect(script.steps.isEmpty, "\(shape): every commit was made (left: \(script.steps.map { $0.0 }))")
        #expect(script.errors.isEmpty, "\(shape): \(script.errors)")
        // Everything committed, followed.
        try store.synchronize()
        await controller.waitForChanges()

        let fresh = try freshModel(of: controller)
        try applyAll(recorder, to: &model)
        #expect(recorder.errors.isEmpty, "\(shape): \(recorder.errors)")
        #expect(TableViewModel(controller.snapshot) == fresh, "\(shape): the snapshot is the database's")
        #expect(model == fresh, "\(shape): the change sets lead to the database's state")
        // Followed from the state's position in the log: change sets, never a reload.
        let reloads = recorder.changeSets.filter(\.isReload).count
        #expect(reloads == 0, "\(shape): \(recorder.changeSets)")
    }
}
