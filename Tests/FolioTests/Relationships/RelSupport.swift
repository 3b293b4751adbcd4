import Foundation
import GRDB
import Testing
@testable import Folio

/// A node of a tree: a relationship of an entity to itself.
struct RelNode: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var rank = 0
    var parent = ToOne<RelNode>()

    static let entity = EntityDescription<RelNode>(
        "rel_node",
        [
            AttributeDescription(\.name),
            AttributeDescription(\.rank),
        ],
        relationships: [.toOne(\.parent)])
}

/// A target with numeric attributes, for sorts through a to-one by numbers of every storage class.
struct RelLabel: PersistentRecord, Equatable {
    var id: RecordID?
    var rank = 0
    var weight = 0.0
    var name: String? = nil

    static let entity = EntityDescription<RelLabel>(
        "rel_label",
        [
            AttributeDescription(\.rank),
            AttributeDescription(\.weight),
            AttributeDescription(\.name),
        ],
        relationships: [.toMany(\RelItem.label, deleteRule: .noAction)])
}

/// A child of a ``RelLabel``.
struct RelItem: PersistentRecord, Equatable {
    var id: RecordID?
    var title = ""
    var label = ToOne<RelLabel>()

    static let entity = EntityDescription<RelItem>(
        "rel_item",
        [AttributeDescription(\.title)],
        relationships: [.toOne(\.label)])
}

/// A folder of notes, with a stored property that is not an attribute (`scratch`) and a
/// computed one (`shout`), which requests cannot read through a to-one.
struct RelFolder: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var archived = false
    var scratch = 0
    var shout: String { name.uppercased() }

    static let entity = EntityDescription<RelFolder>(
        "rel_folder",
        [
            AttributeDescription(\.name),
            AttributeDescription(\.archived),
        ])
}

/// A searchable note in a folder.
struct RelNote: PersistentRecord, Equatable {
    var id: RecordID?
    var text = ""
    var position = 0
    var folder = ToOne<RelFolder>()
    /// Not declared: a to-many through it is an error.
    var undeclared = ToOne<RelFolder>()

    static let entity = EntityDescription<RelNote>(
        "rel_note",
        [
            AttributeDescription(\.text, searchable: true),
            AttributeDescription(\.position),
        ],
        relationships: [.toOne(\.folder)])
}

/// A controller of any record type and a strict table-view model that follows it (as
/// ``PhotoHarness``): each delivered change set is applied to the model, which must then
/// equal a fresh fetch.
@MainActor
final class RelLive<R: PersistentRecord> {
    let store: Store
    let controller: FetchedResultsController<R>
    var model: TableViewModel
    /// Each change set delivered, with the snapshot it led to (what a table view applies it
    /// against: by the time the harness settles, later change sets may have been applied).
    private let follower: UpdateFollower<R>

    init(_ store: Store, _ request: RecordRequest<R>, sectionBy: SectionKey<R>? = nil) async throws {
        self.store = store
        controller = FetchedResultsController(request, store: store, sectionBy: sectionBy)
        try Self.fetchNow(controller)
        model = TableViewModel(controller.snapshot)
        follower = UpdateFollower(controller)
        await controller.waitForChanges()
    }

    @discardableResult
    func step(_ write: (WriteTransaction) throws -> Void) async throws -> [ChangeSet] {
        try writeSync(store, write)
        return try await settle()
    }

    /// Whether a settle found the live results different from a fresh fetch.
    private(set) var failed = false

    /// Applies what the controller delivered and compares with a fresh fetch; `context`
    /// (a seed and step) is added to any failure.
    @discardableResult
    func settle(_ context: String = "", sourceLocation: SourceLocation = #_sourceLocation) async throws -> [ChangeSet] {
        await controller.waitForChanges()
        let updates = await follower.take()
        let changes = updates.map(\.changes)
        for update in updates {
            do {
                try model.apply(update.changes, dataSource: update.snapshot)
            } catch {
                failed = true
                Issue.record("\(context): the change set does not apply: \(error)", sourceLocation: sourceLocation)
                throw error
            }
        }
        let fresh = FetchedResultsController(controller.fetchRequest, store: store, sectionBy: controller.sectionKey)
        fresh.firstScreenRule = nil
        try Self.fetchNow(fresh)
        let expected = TableViewModel(fresh.snapshot)
        if model != TableViewModel(controller.snapshot) || model != expected
            || controller.sections.map({ [$0.isNil ? [1] : []] + [Array($0.name.utf8)] })
                != fresh.sections.map({ [$0.isNil ? [1] : []] + [Array($0.name.utf8)] })
        {
            failed = true
            Issue.record(
                "\(context): the live results differ from a fresh fetch\n  live:  \(model) \(controller.sections.map(\.name))\n  fresh: \(expected) \(fresh.sections.map(\.name))",
                sourceLocation: sourceLocation)
        }
        return changes
    }

    /// The synchronous performFetch, from async code.
    static func fetchNow(_ controller: FetchedResultsController<R>) throws { try controller.performFetch() }
}

/// Text ordered as SQLite's BINARY collation orders it: by UTF-8 bytes (NUL included).
func bytesPrecede(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

/// Whether two texts have the same UTF-8 bytes (Swift's `==` merges NFC and NFD).
func sameBytes(_ a: String?, _ b: String?) -> Bool { a.map { Array($0.utf8) } == b.map { Array($0.utf8) } }

/// Optional text ordered as SQLite orders it ascending: NULL first, then by bytes; 0 when equal.
func compareText(_ a: String?, _ b: String?) -> Int {
    switch (a, b) {
    case (nil, nil): return 0
    case (nil, _): return -1
    case (_, nil): return 1
    case (let x?, let y?):
        if sameBytes(x, y) { return 0 }
        return bytesPrecede(x, y) ? -1 : 1
    }
}

/// A value of a column as SQLite stores it, for an oracle written in Swift.
enum RelStored: Equatable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let v): "\(v)"
        case .real(let v): "\(v)r"
        case .text(let v): "'\(v)'"
        }
    }

    /// SQLite's order of values of different storage classes: NULL, numbers, text; numbers
    /// by exact value (an integer and a real compared without rounding either).
    static func compare(_ a: RelStored, _ b: RelStored) -> Int {
        func rank(_ v: RelStored) -> Int {
            switch v {
            case .null: 0
            case .integer, .real: 1
            case .text: 2
            }
        }
        if rank(a) != rank(b) { return rank(a) < rank(b) ? -1 : 1 }
        switch (a, b) {
        case (.null, .null): return 0
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.real(let x), .real(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.integer(let x), .real(let y)): return compareExactly(x, y)
        case (.real(let x), .integer(let y)): return -compareExactly(y, x)
        case (.text(let x), .text(let y)): return compareText(x, y)
        default: return 0
        }
    }

    /// An integer and a real compared exactly.
    static func compareExactly(_ i: Int64, _ r: Double) -> Int {
        if r >= 9_223_372_036_854_775_808.0 { return -1 }
        if r < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = r.rounded(.down)
        let truncated = Int64(whole)  // in range: -2^63 <= whole < 2^63
        if i != truncated { return i < truncated ? -1 : 1 }
        return whole < r ? -1 : 0
    }
}
