import Foundation
import GRDB
import Testing
@testable import Folio

/// Records everything a controller tells its delegate: change sets, errors, and the
/// snapshot after each change.
@MainActor
final class DeliveryRecorder<R: PersistentRecord>: FetchedResultsControllerDelegate {
    var changeSets: [ChangeSet] = []
    var errors: [FolioError] = []
    var snapshots: [Snapshot] = []
    /// The controller's data source as each change set was delivered (what a table view
    /// applies that batch against: several commits may arrive before a test looks).
    var dataSources: [Snapshot] = []

    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
        dataSources.append(controller.snapshot)
    }
    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith snapshot: Snapshot) {
        snapshots.append(snapshot)
    }
    func controller(_ controller: FetchedResultsController<R>, didFailWith error: FolioError) {
        errors.append(error)
    }
}

/// The recorder of most suites' lists of `Article`s.
typealias LiveRecorder = DeliveryRecorder<Article>

/// The settle harness of the live tests whose delegate records each delivery: a tracked
/// controller and a strict table-view model that follows it, each change set applied against
/// the data source of its own delivery.
@MainActor
class LiveList<R: PersistentRecord> {
    let store: Store
    let controller: FetchedResultsController<R>
    let recorder = DeliveryRecorder<R>()
    var model: TableViewModel
    private var applied = 0
    /// Whether every settle also expects that the controller reported no error.
    let expectsNoErrors: Bool

    init(
        _ store: Store, _ request: RecordRequest<R>, sectionBy: SectionKey<R>? = nil, cacheName: String? = nil,
        expectsNoErrors: Bool = false
    ) async throws {
        self.store = store
        self.expectsNoErrors = expectsNoErrors
        controller = FetchedResultsController(request, store: store, sectionBy: sectionBy, cacheName: cacheName)
        controller.delegate = recorder
        try await controller.performFetch()
        await controller.waitForChanges()
        model = TableViewModel(controller.snapshot)
        applied = recorder.changeSets.count
    }

    /// Writes, waits, applies every change set delivered to the model, and checks the model
    /// against the controller and against a fresh fetch. Returns the change sets.
    @discardableResult
    func step(
        _ write: (WriteTransaction) throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [ChangeSet] {
        try writeSync(store, write)
        return try await settle(sourceLocation: sourceLocation)
    }

    /// Waits for deliveries and checks as ``step(_:sourceLocation:)`` does.
    @discardableResult
    func settle(sourceLocation: SourceLocation = #_sourceLocation) async throws -> [ChangeSet] {
        await controller.waitForChanges()
        let delivered = Array(recorder.changeSets[applied...])
        let sources = Array(recorder.dataSources[applied...])
        applied = recorder.changeSets.count
        for (change, source) in zip(delivered, sources) { try model.apply(change, dataSource: source) }
        #expect(model == TableViewModel(controller.snapshot), sourceLocation: sourceLocation)
        #expect(
            model == (try freshModel(of: controller)), "the live results differ from a fresh fetch",
            sourceLocation: sourceLocation)
        if expectsNoErrors { #expect(recorder.errors.isEmpty, "\(recorder.errors)", sourceLocation: sourceLocation) }
        return delivered
    }
}

/// The harness of most suites' lists of `Article`s.
typealias LiveHarness = LiveList<Article>

/// Runs raw SQL in one write transaction.
func execute(_ store: Store, _ sql: String, _ arguments: StatementArguments = StatementArguments()) throws {
    try store.write { tx in try tx.database.execute(sql: sql, arguments: arguments) }
}

/// The request most tests here use: sorted by `sortBy` (the rowid breaks ties).
func sorted(
    _ sortBy: [SortDescriptor<Article>], limit: Int? = nil, offset: Int? = nil, batchSize: Int = 10
) -> RecordRequest<Article> {
    var request = RecordRequest<Article>(sortBy: sortBy, limit: limit, offset: offset)
    request.batchSize = batchSize
    return request
}

/// Text bytes written as they are, whatever they are (invalid UTF-8 included).
func textLiteral(_ bytes: [UInt8]) -> String {
    "CAST(x'" + bytes.map { String(format: "%02x", $0) }.joined() + "' AS TEXT)"
}

/// A small seeded generator (SplitMix64), so a failing seed replays exactly.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The synchronous `read`, callable from async tests (where the async overload wins).
func readNow<T>(_ store: Store, _ body: (Database) throws -> T) throws -> T {
    try store.read(body)
}

/// The helpers of the suites that follow a list of `Article`s through commits.
@MainActor
protocol LiveListSuite {}

extension LiveListSuite {
    func tracked(_ store: Store, _ request: RecordRequest<Article>, sectionBy: SectionKey<Article>? = nil)
        throws -> (FetchedResultsController<Article>, EventRecorder, TableViewModel)
    {
        let controller = FetchedResultsController(request, store: store, sectionBy: sectionBy)
        let recorder = EventRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        return (controller, recorder, TableViewModel(controller.snapshot))
    }

    static func request(_ sortBy: [SortDescriptor<Article>] = [SortDescriptor(\.score)]) -> RecordRequest<Article> {
        RecordRequest<Article>(sortBy: sortBy)
    }

    /// The synchronous performFetch, from async code.
    static func fetch(_ controller: FetchedResultsController<Article>) throws { try controller.performFetch() }
}
