import Foundation
import GRDB
import Testing
@testable import Folio

/// SplitMix64: a tiny seeded generator, so a failing workload replays from its seed.
struct SplitMix64: RandomNumberGenerator {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &self)] }
}

/// Reads an integer from the environment (replay and soak knobs).
func environmentInt(_ name: String) -> Int? {
    ProcessInfo.processInfo.environment[name].flatMap { Int($0) }
}

var isSoak: Bool { ProcessInfo.processInfo.environment["FOLIO_SOAK"] == "1" }

/// A failed check inside a workload: the message carries the seed and transaction.
struct WorkloadFailure: Error, CustomStringConvertible {
    var description: String
}

/// Records the rowids of `table` each committed transaction touched, as SQLite reports
/// them — an upper bound of what a change set may call updated or moved.
// @unchecked Sendable: `pending` is touched only on the writer's serial queue, where GRDB
// calls every observer method; `committed` is guarded by `lock`.
final class TouchedRows: TransactionObserver, @unchecked Sendable {
    let table: String
    private var pending = Set<Int64>()
    private let lock = NSLock()
    private var committed: [Set<Int64>] = []

    init(table: String) { self.table = table }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == table }
    func databaseDidChange(with event: DatabaseEvent) { pending.insert(event.rowID) }
    func databaseDidCommit(_ db: Database) {
        let rows = pending
        pending = []
        guard !rows.isEmpty else { return }  // GRDB also reports transactions that changed nothing here
        lock.lock(); committed.append(rows); lock.unlock()
    }
    func databaseDidRollback(_ db: Database) { pending = [] }

    /// The commits that touched the table since the last call.
    func take() -> [Set<Int64>] {
        lock.lock(); defer { lock.unlock() }
        let result = committed
        committed = []
        return result
    }
}

/// One row of `article` as stored.
struct ArticleRow: Equatable, Sendable {
    var id: Int64
    var title: String
    var url: String
    var published: Double
    var score: Int
    var category: String?
    var isRead: Bool

    /// From `SELECT id, title, url, published, score, category, isRead`.
    init(_ row: Row) {
        id = row[0]; title = row[1]; url = row[2]; published = row[3]
        score = row[4]; category = row[5]; isRead = row[6]
    }

    var article: Article {
        var a = Article(
            title: title, url: url, published: Date(timeIntervalSince1970: published), score: score, category: category)
        a.id = RecordID(id)
        a.isRead = isRead
        return a
    }

    static func read(_ store: Store, ids: Set<Int64>) throws -> [Int64: ArticleRow] {
        guard !ids.isEmpty else { return [:] }
        let json = "[" + ids.map(String.init).joined(separator: ",") + "]"
        return try store.read { db in
            var rows: [Int64: ArticleRow] = [:]
            let sql =
                "SELECT id, title, url, published, score, category, isRead FROM article WHERE id IN (SELECT value FROM json_each(?))"
            for row in try Row.fetchAll(db, sql: sql, arguments: [json]) {
                let r = ArticleRow(row)
                rows[r.id] = r
            }
            return rows
        }
    }

    static func readAll(_ store: Store) throws -> [Int64: ArticleRow] {
        try store.read { db in
            var rows: [Int64: ArticleRow] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, title, url, published, score, category, isRead FROM article") {
                let r = ArticleRow(row)
                rows[r.id] = r
            }
            return rows
        }
    }
}

/// Collects what a controller tells its delegate, commit by commit.
@MainActor
final class EventRecorder: FetchedResultsControllerDelegate {
    enum Event: Equatable, CustomStringConvertible {
        case will
        case section(FetchedResultsChangeType, index: Int, name: String)
        case object(FetchedResultsChangeType, id: RecordID, at: IndexPath?, newIndexPath: IndexPath?)
        case did
        case changeSet
        case snapshot

        var description: String {
            switch self {
            case .will: "will"
            case .section(let type, let index, let name): "section \(type) \(index) \(name)"
            case .object(let type, let id, let at, let new):
                "object \(type) \(id) \(at.map { "\($0)" } ?? "-") \(new.map { "\($0)" } ?? "-")"
            case .did: "did"
            case .changeSet: "changeSet"
            case .snapshot: "snapshot"
            }
        }
    }

    var changeSets: [ChangeSet] = []
    var snapshots: [Snapshot] = []
    var events: [Event] = []

    func controllerWillChangeContent(_ controller: FetchedResultsController<Article>) { events.append(.will) }
    func controller(
        _ controller: FetchedResultsController<Article>, didChange section: SectionInfo, atSectionIndex sectionIndex: Int,
        for type: FetchedResultsChangeType
    ) {
        events.append(.section(type, index: sectionIndex, name: section.name))
    }
    func controller(
        _ controller: FetchedResultsController<Article>, didChangeObject id: RecordID, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        events.append(.object(type, id: id, at: indexPath, newIndexPath: newIndexPath))
    }
    func controllerDidChangeContent(_ controller: FetchedResultsController<Article>) { events.append(.did) }
    func controller(_ controller: FetchedResultsController<Article>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
        events.append(.changeSet)
    }
    func controller(_ controller: FetchedResultsController<Article>, didChangeContentWith snapshot: Snapshot) {
        snapshots.append(snapshot)
        events.append(.snapshot)
    }

    /// The callbacks a change set must produce, given the model before it and the
    /// section names before and after.
    static func expectedEvents(
        for change: ChangeSet, old: TableViewModel, oldNames: [String], newNames: [String],
        new: TableViewModel
    ) -> [Event] {
        var events: [Event] = [.will]
        if !change.isReload {
            for s in change.deletedSections { events.append(.section(.delete, index: s, name: oldNames[s])) }
            for s in change.insertedSections { events.append(.section(.insert, index: s, name: newNames[s])) }
            for p in change.deletedItems {
                events.append(.object(.delete, id: old.sections[p.section][p.item], at: p, newIndexPath: nil))
            }
            for (p, id) in zip(change.insertedItems, change.insertedIdentifiers) {
                events.append(.object(.insert, id: id, at: nil, newIndexPath: p))
            }
            for m in change.movedItems {
                events.append(.object(.move, id: old.sections[m.from.section][m.from.item], at: m.from, newIndexPath: m.to))
            }
            for p in change.updatedItems {
                events.append(.object(.update, id: old.sections[p.section][p.item], at: p, newIndexPath: nil))
            }
        }
        events += [.did, .changeSet, .snapshot]
        return events
    }
}

/// The results of a request computed in Swift from the table's rows: an oracle that
/// shares no code with Folio's SQL (predicate evaluated by Foundation, sort and sections
/// computed here).
enum SwiftOracle {
    struct Section: Equatable, CustomStringConvertible {
        var name: String
        var isNil: Bool
        var ids: [RecordID]
        var description: String { "\(name.isEmpty && isNil ? "nil" : name):\(ids.map(\.rawValue))" }
    }

    static func results(_ rows: [Int64: ArticleRow], request: RecordRequest<Article>, sections: ControllerSpec.Sections) throws
        -> [Section]
    {
        var matching: [ArticleRow] = []
        for row in rows.values {
            if let predicate = request.predicate, try !predicate.evaluate(row.article) { continue }
            matching.append(row)
        }
        let descriptors = request.sortBy
        matching.sort { a, b in
            for descriptor in descriptors {
                let c = compare(descriptor.keyPath!, a, b)
                if c != 0 { return descriptor.order == .forward ? c < 0 : c > 0 }
            }
            let lastDescending = descriptors.last?.order == .reverse
            return lastDescending ? a.id > b.id : a.id < b.id
        }
        let lower = min(request.offset ?? 0, matching.count)
        let upper = request.limit.map { min(matching.count, lower + $0) } ?? matching.count
        let window = matching[lower..<upper]
        guard sections != .none else { return [Section(name: "", isNil: false, ids: window.map { RecordID($0.id) })] }
        var result: [Section] = []
        for row in window {
            let (name, isNil) = sectionName(row, sections)
            if let last = result.last, last.name == name, last.isNil == isNil {
                result[result.count - 1].ids.append(RecordID(row.id))
            } else {
                result.append(Section(name: name, isNil: isNil, ids: [RecordID(row.id)]))
            }
        }
        return result
    }

    static func sectionName(_ row: ArticleRow, _ sections: ControllerSpec.Sections) -> (String, Bool) {
        switch sections {
        case .none: return ("", false)
        case .category: return (row.category ?? "", row.category == nil)
        case .day:
            let days = Int((row.published / 86_400).rounded(.down))
            let date = Date(timeIntervalSince1970: Double(days) * 86_400)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(secondsFromGMT: 0)!
            let c = calendar.dateComponents([.year, .month, .day], from: date)
            return (String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!), false)
        case .firstLetter:
            return (row.title.unicodeScalars.first.map { String($0) } ?? "", false)
        }
    }

    /// SQLite's order (BINARY collation: strings by UTF-8 bytes; NULL first).
    static func compare(_ keyPath: AnyKeyPath, _ a: ArticleRow, _ b: ArticleRow) -> Int {
        func cmp<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x > y ? 1 : 0) }
        func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
        func text(_ x: String, _ y: String) -> Int {
            x.utf8.elementsEqual(y.utf8) ? 0 : (bytes(x).lexicographicallyPrecedes(bytes(y)) ? -1 : 1)
        }
        if keyPath == \Article.score as AnyKeyPath { return cmp(a.score, b.score) }
        if keyPath == \Article.published as AnyKeyPath { return cmp(a.published, b.published) }
        if keyPath == \Article.title as AnyKeyPath { return text(a.title, b.title) }
        if keyPath == \Article.category as AnyKeyPath {
            switch (a.category, b.category) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): return text(x, y)
            }
        }
        fatalError("no oracle order for \(keyPath)")
    }
}

/// A controller configuration the randomized suites draw from.
struct ControllerSpec: CustomStringConvertible {
    enum Sections: String, CaseIterable { case none, category, day, firstLetter }

    var sections: Sections
    var sort: Int
    var predicate: Int
    var limit: Int?
    var offset: Int?
    var batchSize: Int

    static let sorts: [Sections: [(String, [SortDescriptor<Article>])]] = [
        .none: [
            ("score,title", [SortDescriptor(\.score), SortDescriptor(\.title)]),
            ("published desc", [SortDescriptor(\.published, order: .reverse)]),
            ("title desc", [SortDescriptor(\.title, order: .reverse)]),
            ("score desc", [SortDescriptor(\.score, order: .reverse)]),
            ("category,score desc", [SortDescriptor(\.category), SortDescriptor(\.score, order: .reverse)]),
            ("title,published", [SortDescriptor(\.title), SortDescriptor(\.published)]),
        ],
        .category: [
            ("category,score", [SortDescriptor(\.category), SortDescriptor(\.score)]),
            (
                "category desc,published desc",
                [SortDescriptor(\.category, order: .reverse), SortDescriptor(\.published, order: .reverse)]
            ),
            ("category", [SortDescriptor(\.category)]),
        ],
        .day: [
            ("published desc", [SortDescriptor(\.published, order: .reverse)]),
            ("published,title", [SortDescriptor(\.published), SortDescriptor(\.title)]),
        ],
        .firstLetter: [
            ("title", [SortDescriptor(\.title)]),
            ("title desc,score", [SortDescriptor(\.title, order: .reverse), SortDescriptor(\.score)]),
        ],
    ]

    static let predicates: [(String, Predicate<Article>?)] = {
        var list: [(String, Predicate<Article>?)] = [("all", nil)]
        let scoreAtLeast5: Predicate<Article> = #Predicate { $0.score >= 5 }
        list.append(("score >= 5", scoreAtLeast5))
        let unread: Predicate<Article> = #Predicate { $0.isRead == false }
        list.append(("unread", unread))
        let lowWithCategory: Predicate<Article> = #Predicate { $0.score < 12 && $0.category != nil }
        list.append(("score < 12 && category != nil", lowWithCategory))
        let a: String? = "a", c: String? = "c", none: String? = nil
        let someCategories: Predicate<Article> = #Predicate { $0.category == a || $0.category == c || $0.category == none }
        list.append(("category a|c|nil", someCategories))
        let startsWithB: Predicate<Article> = #Predicate { $0.title.starts(with: "B") || $0.score > 10 }
        list.append(("title starts B || score > 10", startsWithB))
        let unreadNot3: Predicate<Article> = #Predicate { !$0.isRead && $0.score != 3 }
        list.append(("!read && score != 3", unreadNot3))
        return list
    }()

    static let windows: [(limit: Int?, offset: Int?)] = [
        (limit: 10, offset: nil), (limit: 25, offset: 5), (limit: nil, offset: 7),
        (limit: 1, offset: 0), (limit: 40, offset: 30), (limit: 3, offset: 200),
    ]

    static func random(_ rng: inout SplitMix64, sections: Sections? = nil) -> ControllerSpec {
        let sections = sections ?? rng.pick(Sections.allCases)
        let window: (limit: Int?, offset: Int?) = rng.chance(0.3) ? rng.pick(windows) : (limit: nil, offset: nil)
        return ControllerSpec(
            sections: sections, sort: Int.random(in: 0..<sorts[sections]!.count, using: &rng),
            predicate: Int.random(in: 0..<predicates.count, using: &rng),
            limit: window.limit, offset: window.offset, batchSize: rng.pick([0, 1, 10, 50]))
    }

    var request: RecordRequest<Article> {
        var r = RecordRequest<Article>(
            predicate: Self.predicates[predicate].1, sortBy: Self.sorts[sections]![sort].1, limit: limit, offset: offset)
        r.batchSize = batchSize
        return r
    }

    var sectionKey: SectionKey<Article>? {
        switch sections {
        case .none: nil
        case .category: .attribute(\.category)
        case .day: .day(\.published)
        case .firstLetter: .firstLetter(\.title)
        }
    }

    var description: String {
        var text = "sections=\(sections) sort=[\(Self.sorts[sections]![sort].0)] where=[\(Self.predicates[predicate].0)]"
        if limit != nil || offset != nil {
            text += " limit=\(limit.map(String.init) ?? "-") offset=\(offset.map(String.init) ?? "-")"
        }
        return text + " batch=\(batchSize)"
    }
}
