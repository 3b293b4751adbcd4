import Foundation
import GRDB
import Testing

@testable import Folio

/// An enum with `Int` raw values, the extremes of `Int` among them, declared out of order:
/// Folio's `<`, the store's sorts and its sections all go by raw value.
enum TypeWorkLevel: Int, Codable, Comparable, CaseIterable, AttributeValue {
    case seven = 7
    case top = 9_223_372_036_854_775_807
    case zero = 0
    case bottom = -9_223_372_036_854_775_808
    case minusOne = -1
}

/// An enum with `String` raw values that differ only by case ("a" and "A"), the empty text
/// (a section named "" that is not the `nil` section), a trailing space and non-ASCII text.
enum TypeWorkMood: String, Codable, Comparable, CaseIterable, AttributeValue {
    case lowerA = "a"
    case upperA = "A"
    case lowerB = "b"
    case upperB = "B"
    case empty = ""
    case spaced = "a "
    case omega = "Ω"
}

/// A `Codable` struct: stored as JSON text, which predicates compare for equality only.
struct TypeWorkSpec: Codable, Equatable, Sendable {
    var tag = ""
    var sizes: [Int] = []
    var weight: Double? = nil
}

/// Foundation declares no order of URLs, and `SortDescriptor` takes only `Comparable`
/// values: an app that sorts by a URL attribute must declare one, and the only one that
/// agrees with the store is the order of the absolute strings' bytes.
// swift-format-ignore: AvoidRetroactiveConformances
extension URL: @retroactive Comparable {
    public static func < (lhs: URL, rhs: URL) -> Bool {
        lhs.absoluteString.utf8.lexicographicallyPrecedes(rhs.absoluteString.utf8)
    }
}

/// A record of every new attribute type, declared with the record macro.
@PersistentRecord("type_work_item")
struct TypeWorkItem: Equatable {
    var id: RecordID?
    var name = ""
    @Stored(.indexed) var level: TypeWorkLevel = .zero
    @Stored(.indexed) var mood: TypeWorkMood = .upperA
    var link: URL = URL(string: "https://example.com/")!
    @Stored(.indexed) var ratio: Float = 0
    var count: Int32 = 0
    var small: Int16 = 0
    var optionalMood: TypeWorkMood? = nil
    var optionalRatio: Float? = nil
    var optionalLink: URL? = nil
    var spec: TypeWorkSpec = TypeWorkSpec()
    var optionalSpec: TypeWorkSpec? = nil
}

/// A value as SQLite orders it: `NULL`, then numbers, then text by its bytes.
enum TypeWorkKey: Comparable {
    case null
    case integer(Int64)
    case real(Double)
    case text([UInt8])

    static func text(_ string: String) -> TypeWorkKey { .text(Array(string.utf8)) }

    private var rank: Int {
        switch self {
        case .null: 0
        case .integer, .real: 1
        case .text: 2
        }
    }

    static func < (lhs: TypeWorkKey, rhs: TypeWorkKey) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): a < b
        case (.real(let a), .real(let b)): a < b
        case (.integer(let a), .real(let b)): Double(a) < b
        case (.real(let a), .integer(let b)): a < Double(b)
        case (.text(let a), .text(let b)): a.lexicographicallyPrecedes(b)
        default: lhs.rank < rhs.rank
        }
    }

    static func == (lhs: TypeWorkKey, rhs: TypeWorkKey) -> Bool { !(lhs < rhs) && !(rhs < lhs) }
}

/// A section as the controller shows it.
struct TypeWorkSection: Equatable, CustomStringConvertible {
    var name: String
    var isNil = false
    var description: String { isNil ? "nil" : name.debugDescription }
}

/// A live list and what it must show, computed in Swift from the values written: the
/// request's filter, its order (the rowid breaking ties in the direction of the last key),
/// its window and its sections.
@MainActor
struct TypeWorkList {
    var name: String
    var live: RelLive<TypeWorkItem>
    var filter: (TypeWorkItem) -> Bool
    var keys: [(TypeWorkItem) -> TypeWorkKey]
    var reverse: [Bool]
    var section: ((TypeWorkItem) -> TypeWorkSection)? = nil
    var window: (offset: Int, limit: Int)? = nil

    func expected(_ rows: [TypeWorkItem]) -> (ids: [[RecordID]], sections: [TypeWorkSection]) {
        var kept = rows.filter(filter).sorted { a, b in
            for (key, reversed) in zip(keys, reverse) {
                let x = key(a), y = key(b)
                if x != y { return reversed ? y < x : x < y }
            }
            return reverse.last! ? a.id!.rawValue > b.id!.rawValue : a.id!.rawValue < b.id!.rawValue
        }
        if let window { kept = Array(kept.dropFirst(window.offset).prefix(window.limit)) }
        guard let section else { return ([kept.map { $0.id! }], []) }
        var ids: [[RecordID]] = [], sections: [TypeWorkSection] = []
        for row in kept {
            let name = section(row)
            if sections.last != name {
                sections.append(name)
                ids.append([])
            }
            ids[ids.count - 1].append(row.id!)
        }
        return (ids, sections)
    }
}

/// How a transaction reaches the file.
enum TypeWorkRoute: String, CaseIterable {
    /// `insert`, `update`, `delete` and `updateAll` of a write transaction.
    case records
    /// Raw SQL in a write transaction of the store.
    case storeSQL = "store SQL"
    /// Raw SQL on a connection the store does not own.
    case otherConnection = "another connection"
    /// Raw SQL by the `sqlite3` shell, another process.
    case shell
}

/// A seeded randomized workload of the new attribute types — `Int` and `String` raw-value
/// enums, `URL`, `Float`, `Int32`, `Int16`, a `Codable` struct and optionals of each — under
/// eight live controllers at once, whose requests filter, sort and section by them. Random
/// transactions write through the store's records, its SQL, another connection and the
/// `sqlite3` shell, with the extreme values of each type (`Int.min` raw values, `Int32.max`,
/// `Float` infinities and `-0.0`, URLs with Unicode and percent escapes, raw values that
/// differ only by case). After each transaction every change set is applied to a strict
/// table-view model, which must equal the controller's snapshot, a fresh fetch, and an
/// oracle computed in Swift from the values written (filter, order, window, section names),
/// and every record read through the controller must be the one written. Values the types
/// cannot hold, written in SQL, must read as the documented `FolioError.decoding` naming
/// the column; a NaN or an unencodable value written through the store must be refused and
/// change nothing.
///
/// Quick tier: 2 seeds of 16 transactions; long tier (`FOLIO_LONG=1`): 24 seeds of 80.
/// `FOLIO_SEED=n` replays one seed, `FOLIO_FIRST_SEED=n FOLIO_SEEDS=k` a range,
/// `FOLIO_TRANSACTIONS=n` sets the transactions per seed:
/// `FOLIO_SEED=5 swift test --filter AttributeTypeWorkloadTests`.
@Suite("Attribute types: randomized workload", .tags(Testing.Tag.longTier))
@MainActor
struct AttributeTypeWorkloadTests {
    nonisolated static var seeds: [UInt64] { workloadSeeds(defaultCount: 24) }

    nonisolated static var transactions: Int {
        environmentInt("FOLIO_TRANSACTIONS") ?? TestTier.pick(quick: 16, long: 80)
    }

    @Test(arguments: seeds)
    func workload(seed: UInt64) async throws {
        let start = ContinuousClock.now
        let run = try TypeWorkRun(seed: seed)
        try run.populate()
        let lists = try await run.lists()
        var stats: [String: Int] = [:]
        for step in 0..<Self.transactions {
            let route = try run.step(step)
            stats["transactions", default: 0] += 1
            stats[route.rawValue, default: 0] += 1
            let context = "seed \(seed), step \(step) (\(route.rawValue))"
            guard try await run.check(lists, context, &stats) else { return run.reportFailure(context) }
            if step % 5 == 2 {
                guard try await run.probeUndecodable(lists, context, &stats) else { return run.reportFailure(context) }
            }
            if step % 11 == 1 {
                guard try await run.probeRefusals(lists, context, &stats) else { return run.reportFailure(context) }
            }
        }
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        let routes = TypeWorkRoute.allCases.map { "\(stats[$0.rawValue, default: 0]) by \($0.rawValue)" }
        print(
            "attribute type workload seed \(seed): passed in \(String(format: "%.2f", seconds)) s, \(stats["transactions", default: 0]) transactions (\(routes.joined(separator: ", "))), \(stats["change sets", default: 0]) change sets applied, \(stats["checks", default: 0]) lists checked against the oracle (\(stats["records read", default: 0]) records read), \(stats["undecodable", default: 0]) undecodable values, \(stats["refused", default: 0]) refused writes, \(run.rows.count) rows at the end"
        )
        #expect(stats["change sets", default: 0] > 0, "seed \(seed) checked no change set")
    }
}

/// One seed's store, second connection, oracle and random choices.
@MainActor
final class TypeWorkRun {
    let seed: UInt64
    let store: Store
    let other: DatabaseQueue
    var rng: SeededRandom
    /// The oracle: every row as written, by identifier.
    var rows: [RecordID: TypeWorkItem] = [:]
    var largestID: Int64 = 0
    var names = 0
    var log: [String] = []

    static let table = "type_work_item"

    static let ratios: [Float] = [
        -.infinity, .infinity, -0.0, 0, .leastNonzeroMagnitude, -.leastNormalMagnitude, .greatestFiniteMagnitude,
        -.greatestFiniteMagnitude, 0.1, 1, -2.5, 1024, 16_777_216,
    ]
    /// Values whose decimal text the shell reads back exactly.
    static let shellRatios: [Float] = [-.infinity, .infinity, -0.0, 0, 1, -2.5, 0.5, 1024]
    static let counts: [Int32] = [.min, .min + 1, -1, 0, 1, 7, .max - 1, .max]
    static let smalls: [Int16] = [.min, -1, 0, 2, .max]
    static let links: [URL] = [
        URL(string: "https://example.com/"), URL(string: "https://EXAMPLE.com/"), URL(string: "https://example.com/a"),
        URL(string: "https://example.com/Z"), URL(string: "https://example.com/a%20b?q=%E2%82%AC#frag"),
        URL(string: "https://例え.jp/パス"), URL(string: "https://example.com/é?x=ü"), URL(string: "file:///tmp/a%2Fb"),
        URL(string: "mailto:someone@example.com"),
        URL(string: "../up", relativeTo: URL(string: "https://example.com/dir/sub/")),
    ].compactMap { $0 }
    static let specs: [TypeWorkSpec] = [
        TypeWorkSpec(), TypeWorkSpec(tag: "a/b", sizes: [1, 2]), TypeWorkSpec(tag: "a/b", sizes: [2, 1]),
        TypeWorkSpec(tag: "é", weight: 0.5), TypeWorkSpec(tag: "", sizes: [Int.max, Int.min]),
    ]

    init(seed: UInt64) throws {
        self.seed = seed
        rng = SeededRandom(seed: seed &* 0x9E37_79B9 &+ 0x41)
        store = try Store.temporary(records: [TypeWorkItem.self])
        other = try DatabaseQueue(path: store.path!)
    }

    // MARK: Random values

    func pick<T>(_ values: [T]) -> T { values.randomElement(using: &rng)! }
    func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }

    /// Changes one field of `item` to a random value; returns its column.
    func mutate(_ item: inout TypeWorkItem, _ field: Int, shellSafe: Bool) -> String {
        switch field {
        case 0:
            names += 1
            item.name = "n\(names)"
            return "name"
        case 1:
            item.level = pick(TypeWorkLevel.allCases)
            return "level"
        case 2:
            item.mood = pick(TypeWorkMood.allCases)
            return "mood"
        case 3:
            item.link = pick(Self.links)
            return "link"
        case 4:
            item.ratio = pick(shellSafe ? Self.shellRatios : Self.ratios)
            return "ratio"
        case 5:
            item.count = pick(Self.counts)
            return "count"
        case 6:
            item.small = pick(Self.smalls)
            return "small"
        case 7:
            item.optionalMood = chance(30) ? nil : pick(TypeWorkMood.allCases)
            return "optionalMood"
        case 8:
            item.optionalRatio = chance(30) ? nil : pick(shellSafe ? Self.shellRatios : Self.ratios)
            return "optionalRatio"
        case 9:
            item.optionalLink = chance(30) ? nil : pick(Self.links)
            return "optionalLink"
        case 10:
            item.spec = pick(Self.specs)
            return "spec"
        default:
            item.optionalSpec = chance(40) ? nil : pick(Self.specs)
            return "optionalSpec"
        }
    }

    func randomItem(shellSafe: Bool) -> TypeWorkItem {
        var item = TypeWorkItem()
        for field in 0..<12 { _ = mutate(&item, field, shellSafe: shellSafe) }
        return item
    }

    func randomID() -> RecordID? { rows.keys.sorted { $0.rawValue < $1.rawValue }.randomElement(using: &rng) }

    // MARK: Stored values

    static func json(_ spec: TypeWorkSpec) -> DatabaseValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The specs above always encode.
        let data = (try? encoder.encode(spec)) ?? Data()
        return String(decoding: data, as: UTF8.self).databaseValue
    }

    /// The columns of a row as the store writes them.
    static func columns(_ item: TypeWorkItem) -> [(String, DatabaseValue)] {
        [
            ("name", item.name.databaseValue),
            ("level", item.level.rawValue.databaseValue),
            ("mood", item.mood.rawValue.databaseValue),
            ("link", item.link.absoluteString.databaseValue),
            ("ratio", Double(item.ratio).databaseValue),
            ("count", Int64(item.count).databaseValue),
            ("small", Int64(item.small).databaseValue),
            ("optionalMood", item.optionalMood?.rawValue.databaseValue ?? .null),
            ("optionalRatio", item.optionalRatio.map { Double($0).databaseValue } ?? .null),
            ("optionalLink", item.optionalLink?.absoluteString.databaseValue ?? .null),
            ("spec", json(item.spec)),
            ("optionalSpec", item.optionalSpec.map(json) ?? .null),
        ]
    }

    static func value(_ item: TypeWorkItem, _ column: String) -> DatabaseValue {
        columns(item).first { $0.0 == column }!.1
    }

    /// A value as SQL text, for the shell.
    static func literal(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: "NULL"
        case .int64(let i): i == .min ? "(-9223372036854775807 - 1)" : String(i)
        case .double(let d): d.isInfinite ? (d < 0 ? "-9e999" : "9e999") : "\(d)"
        case .string(let s): textLiteral(Array(s.utf8))
        case .blob(let b): "x'" + b.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }

    /// Whether a record read back is the one written (a URL as its absolute string).
    static func same(_ a: TypeWorkItem, _ b: TypeWorkItem) -> Bool {
        a.id == b.id && a.name == b.name && a.level == b.level && a.mood == b.mood
            && a.link.absoluteString == b.link.absoluteString && a.ratio == b.ratio && a.count == b.count
            && a.small == b.small && a.optionalMood == b.optionalMood && a.optionalRatio == b.optionalRatio
            && a.optionalLink?.absoluteString == b.optionalLink?.absoluteString && a.spec == b.spec
            && a.optionalSpec == b.optionalSpec
    }

    /// The name of a `REAL` section: SQLite keeps no sign of zero.
    static func realName(_ value: Float) -> String { String(Double(value == 0 ? 0 : value)) }

    // MARK: The lists

    func populate() throws {
        let count = Int.random(in: 10...22, using: &rng)
        try writeSync(store) { tx in
            for _ in 0..<count {
                var item = randomItem(shellSafe: false)
                try tx.insert(&item)
                inserted(item)
            }
        }
    }

    func inserted(_ item: TypeWorkItem) {
        rows[item.id!] = item
        largestID = max(largestID, item.id!.rawValue)
    }

    func lists() async throws -> [TypeWorkList] {
        let minusOne = TypeWorkLevel.minusOne, seven = TypeWorkLevel.seven, top = TypeWorkLevel.top
        let zeroSmall: Int16 = 0, lowRatio: Float = -1, infinity = Float.infinity
        let minCount = Int32.min, maxCount = Int32.max
        let empty = TypeWorkMood.empty
        let home = URL(string: "https://example.com/")!
        let specA = Self.specs[1], specB = Self.specs[3]
        let optionalSpecs: [TypeWorkSpec?] = [specB, nil]
        let moods = [TypeWorkMood.lowerA, .upperA, .omega, .empty]
        func request(
            _ predicate: Predicate<TypeWorkItem>?, _ sortBy: [SortDescriptor<TypeWorkItem>], batchSize: Int,
            limit: Int? = nil, offset: Int? = nil
        ) -> RecordRequest<TypeWorkItem> {
            var request = RecordRequest<TypeWorkItem>(predicate: predicate, sortBy: sortBy, limit: limit, offset: offset)
            request.batchSize = batchSize
            return request
        }
        let level: (TypeWorkItem) -> TypeWorkKey = { .integer(Int64($0.level.rawValue)) }
        let mood: (TypeWorkItem) -> TypeWorkKey = { .text($0.mood.rawValue) }
        let count: (TypeWorkItem) -> TypeWorkKey = { .integer(Int64($0.count)) }
        let small: (TypeWorkItem) -> TypeWorkKey = { .integer(Int64($0.small)) }
        let ratio: (TypeWorkItem) -> TypeWorkKey = { .real(Double($0.ratio)) }
        let link: (TypeWorkItem) -> TypeWorkKey = { .text($0.link.absoluteString) }
        let optionalMood: (TypeWorkItem) -> TypeWorkKey = { $0.optionalMood.map { .text($0.rawValue) } ?? .null }
        let optionalRatio: (TypeWorkItem) -> TypeWorkKey = { $0.optionalRatio.map { .real(Double($0)) } ?? .null }
        let optionalLink: (TypeWorkItem) -> TypeWorkKey = { $0.optionalLink.map { .text($0.absoluteString) } ?? .null }
        return [
            TypeWorkList(
                name: "levels",
                live: try await RelLive(
                    store,
                    request(
                        #Predicate { $0.level >= minusOne && $0.small != zeroSmall },
                        [SortDescriptor(\.level), SortDescriptor(\.count, order: .reverse)], batchSize: 4),
                    sectionBy: .attribute(\.level)),
                filter: { $0.level.rawValue >= -1 && $0.small != 0 }, keys: [level, count], reverse: [false, true],
                section: { TypeWorkSection(name: String($0.level.rawValue)) }),
            TypeWorkList(
                name: "moods",
                live: try await RelLive(
                    store,
                    request(
                        #Predicate { $0.ratio > lowRatio }, [SortDescriptor(\.mood, order: .reverse), SortDescriptor(\.link)],
                        batchSize: 5),
                    sectionBy: .attribute(\.mood)),
                filter: { $0.ratio > -1 }, keys: [mood, link], reverse: [true, false],
                section: { TypeWorkSection(name: $0.mood.rawValue) }),
            TypeWorkList(
                name: "ratios",
                live: try await RelLive(
                    store,
                    request(
                        #Predicate { $0.count > minCount && $0.mood != empty },
                        [SortDescriptor(\.ratio), SortDescriptor(\.count)],
                        batchSize: 6),
                    sectionBy: .attribute(\.ratio)),
                filter: { $0.count > .min && $0.mood != .empty }, keys: [ratio, count], reverse: [false, false],
                section: { TypeWorkSection(name: Self.realName($0.ratio)) }),
            TypeWorkList(
                name: "optional moods",
                live: try await RelLive(
                    store,
                    request(nil, [SortDescriptor(\.optionalMood), SortDescriptor(\.small, order: .reverse)], batchSize: 5),
                    sectionBy: .attribute(\.optionalMood)),
                filter: { _ in true }, keys: [optionalMood, small], reverse: [false, true],
                section: { TypeWorkSection(name: $0.optionalMood?.rawValue ?? "", isNil: $0.optionalMood == nil) }),
            TypeWorkList(
                name: "links",
                live: try await RelLive(
                    store,
                    request(
                        #Predicate { $0.link != home && ($0.optionalMood == nil || $0.level < seven) },
                        [SortDescriptor(\.link, order: .reverse), SortDescriptor(\.ratio)], batchSize: 4, limit: 9, offset: 2)),
                filter: { $0.link.absoluteString != home.absoluteString && ($0.optionalMood == nil || $0.level.rawValue < 7) },
                keys: [link, ratio], reverse: [true, false], window: (2, 9)),
            TypeWorkList(
                name: "specs",
                live: try await RelLive(
                    store,
                    request(
                        #Predicate { $0.spec == specA || optionalSpecs.contains($0.optionalSpec) },
                        [SortDescriptor(\.count, order: .reverse), SortDescriptor(\.optionalRatio)], batchSize: 7)),
                filter: { $0.spec == specA || $0.optionalSpec == specB || $0.optionalSpec == nil }, keys: [count, optionalRatio],
                reverse: [true, false]),
            TypeWorkList(
                name: "members",
                live: try await RelLive(
                    store,
                    request(
                        #Predicate { moods.contains($0.mood) && $0.optionalLink != nil && $0.level != top },
                        [SortDescriptor(\.small), SortDescriptor(\.optionalLink, order: .reverse)], batchSize: 3),
                    sectionBy: .attribute(\.small)),
                filter: { moods.contains($0.mood) && $0.optionalLink != nil && $0.level != .top }, keys: [small, optionalLink],
                reverse: [false, true], section: { TypeWorkSection(name: String($0.small)) }),
            TypeWorkList(
                name: "counts",
                live: try await RelLive(
                    store,
                    request(
                        #Predicate { $0.count < maxCount && $0.ratio != infinity },
                        [SortDescriptor(\.count), SortDescriptor(\.mood)], batchSize: 5),
                    sectionBy: .attribute(\.count)),
                filter: { $0.count < .max && $0.ratio != .infinity }, keys: [count, mood], reverse: [false, false],
                section: { TypeWorkSection(name: String($0.count)) }),
        ]
    }

    // MARK: Transactions

    /// One random transaction; returns how it reached the file.
    func step(_ index: Int) throws -> TypeWorkRoute {
        let roll = Int.random(in: 0..<100, using: &rng)
        let route: TypeWorkRoute =
            switch roll {
            case 0..<45: .records
            case 45..<65: .storeSQL
            case 65..<92: .otherConnection
            default: .shell
            }
        let changes = Int.random(in: 1...4, using: &rng)
        log.append("step \(index) (\(route.rawValue)):")
        switch route {
        case .records:
            try writeSync(store) { tx in
                for _ in 0..<changes { try recordChange(tx) }
            }
        case .storeSQL:
            let statements = (0..<changes).map { _ in sqlChange(shellSafe: false) }
            try writeSync(store) { tx in
                for (sql, arguments) in statements { try tx.database.execute(sql: sql, arguments: Self.arguments(arguments)) }
            }
        case .otherConnection:
            let statements = (0..<changes).map { _ in sqlChange(shellSafe: false) }
            try writeSync(other) { db in
                for (sql, arguments) in statements { try db.execute(sql: sql, arguments: Self.arguments(arguments)) }
            }
            try store.synchronize()
        case .shell:
            let statements = (0..<changes).map { _ in sqlChange(shellSafe: true) }
            let script = statements.map { Self.render($0.0, $0.1) }.joined(separator: "\n")
            try Shell.sqlite3(store.path!, "BEGIN;\n\(script)\nCOMMIT;")
            try store.synchronize()
        }
        return route
    }

    static func arguments(_ values: [DatabaseValue]) -> StatementArguments {
        StatementArguments(values.map { $0 as (any DatabaseValueConvertible)? })
    }

    /// SQL with its `?` replaced by literals.
    static func render(_ sql: String, _ values: [DatabaseValue]) -> String {
        let parts = sql.split(separator: "?", omittingEmptySubsequences: false)
        var text = String(parts[0])
        for (part, value) in zip(parts.dropFirst(), values) { text += literal(value) + part }
        return text + ";"
    }

    /// One change through the store's records, applied to the oracle.
    func recordChange(_ tx: WriteTransaction) throws {
        let roll = Int.random(in: 0..<100, using: &rng)
        guard let id = randomID(), roll >= 30 else {
            var item = randomItem(shellSafe: false)
            try tx.insert(&item)
            inserted(item)
            log.append("  insert \(item)")
            return
        }
        switch roll {
        case 30..<60:
            var item = rows[id]!
            let fields = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                mutate(&item, Int.random(in: 0..<12, using: &rng), shellSafe: false)
            }
            try tx.update(item)
            rows[id] = item
            log.append("  update \(id.rawValue) \(fields): \(item)")
        case 60..<75:
            _ = try tx.delete(TypeWorkItem.self, id: id)
            rows[id] = nil
            log.append("  delete \(id.rawValue)")
        case 75..<88:
            let from = pick(TypeWorkMood.allCases), level = pick(TypeWorkLevel.allCases), ratio = pick(Self.ratios)
            try tx.updateAll(
                TypeWorkItem.self, where: #Predicate { $0.mood == from },
                set: [.set(\.level, to: level), .set(\.ratio, to: ratio)])
            for (id, row) in rows where row.mood == from {
                rows[id]!.level = level
                rows[id]!.ratio = ratio
            }
            log.append("  updateAll mood == \(from.rawValue.debugDescription): level \(level), ratio \(ratio)")
        default:
            let count = pick(Self.counts), link = pick(Self.links), small = pick(Self.smalls)
            let mood: TypeWorkMood? = chance(30) ? nil : pick(TypeWorkMood.allCases)
            try tx.updateAll(
                TypeWorkItem.self, where: #Predicate { $0.count > count && $0.link != link },
                set: [.set(\.optionalMood, to: mood), .set(\.small, to: small)])
            for (id, row) in rows where row.count > count && row.link.absoluteString != link.absoluteString {
                rows[id]!.optionalMood = mood
                rows[id]!.small = small
            }
            log.append(
                "  updateAll count > \(count) && link != \(link): optionalMood \(String(describing: mood)), small \(small)")
        }
    }

    /// One change in SQL (text and arguments), applied to the oracle.
    func sqlChange(shellSafe: Bool) -> (String, [DatabaseValue]) {
        let roll = Int.random(in: 0..<100, using: &rng)
        guard let id = randomID(), roll >= 30 else {
            largestID += 1
            var item = randomItem(shellSafe: shellSafe)
            item.id = RecordID(largestID)
            rows[item.id!] = item
            log.append("  SQL insert \(item)")
            let columns = Self.columns(item)
            return (
                "INSERT INTO \(Self.table) (id, \(columns.map { "\"\($0.0)\"" }.joined(separator: ", "))) VALUES (?\(String(repeating: ", ?", count: columns.count)))",
                [largestID.databaseValue] + columns.map(\.1)
            )
        }
        switch roll {
        case 30..<65:
            var item = rows[id]!
            var fields: [String] = []
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let field = mutate(&item, Int.random(in: 0..<12, using: &rng), shellSafe: shellSafe)
                if !fields.contains(field) { fields.append(field) }
            }
            rows[id] = item
            log.append("  SQL update \(id.rawValue) \(fields): \(item)")
            return (
                "UPDATE \(Self.table) SET \(fields.map { "\"\($0)\" = ?" }.joined(separator: ", ")) WHERE id = ?",
                fields.map { Self.value(item, $0) } + [id.rawValue.databaseValue]
            )
        case 65..<82:
            rows[id] = nil
            log.append("  SQL delete \(id.rawValue)")
            return ("DELETE FROM \(Self.table) WHERE id = ?", [id.rawValue.databaseValue])
        default:
            // Every row of one level at once: sections appear and disappear.
            let level = pick(TypeWorkLevel.allCases), mood = pick(TypeWorkMood.allCases)
            let ratio: Float? = chance(30) ? nil : pick(shellSafe ? Self.shellRatios : Self.ratios)
            for (id, row) in rows where row.level == level {
                rows[id]!.mood = mood
                rows[id]!.optionalRatio = ratio
            }
            log.append(
                "  SQL level == \(level): mood \(mood.rawValue.debugDescription), optionalRatio \(String(describing: ratio))")
            return (
                "UPDATE \(Self.table) SET mood = ?, optionalRatio = ? WHERE level = ?",
                [mood.rawValue.databaseValue, ratio.map { Double($0).databaseValue } ?? .null, level.rawValue.databaseValue]
            )
        }
    }

    // MARK: Checks

    /// Settles every list (change sets applied to its model, which must equal the snapshot
    /// and a fresh fetch), then checks each against the oracle. Returns whether all passed.
    func check(_ lists: [TypeWorkList], _ context: String, _ stats: inout [String: Int]) async throws -> Bool {
        let all = Array(rows.values)
        for list in lists {
            let changes = try await list.live.settle("\(context), list \(list.name); replay: FOLIO_SEED=\(seed)")
            stats["change sets", default: 0] += changes.count
            if list.live.failed { return false }
            if let mismatch = mismatch(list, all, &stats) {
                Issue.record(Comment(rawValue: "\(context), list \(list.name): \(mismatch)"))
                return false
            }
            stats["checks", default: 0] += 1
        }
        return true
    }

    func mismatch(_ list: TypeWorkList, _ all: [TypeWorkItem], _ stats: inout [String: Int]) -> String? {
        let expected = list.expected(all)
        let model = list.live.model
        let controller = list.live.controller
        func describe(_ sections: [[RecordID]]) -> String { sections.map { "\($0.map(\.rawValue))" }.joined(separator: " | ") }
        if list.section != nil {
            let shown = controller.sections.map { TypeWorkSection(name: $0.name, isNil: $0.isNil) }
            guard model.sections == expected.ids, shown == expected.sections else {
                return
                    "the list differs from the oracle\n  shown:    \(model) \(shown)\n  expected: \(describe(expected.ids)) \(expected.sections)"
            }
        } else if model.identifiers != expected.ids.flatMap({ $0 }) {
            return "the list differs from the oracle\n  shown:    \(model)\n  expected: \(describe(expected.ids))"
        }
        for (section, ids) in model.sections.enumerated() {
            for (item, id) in ids.enumerated() {
                guard let record = controller.object(at: IndexPath(item: item, section: section)) else {
                    return
                        "no record for \(id.rawValue) at \(section).\(item): \(String(describing: controller.fetchedObjects?.lastError))"
                }
                guard Self.same(record, rows[id]!) else { return "read \(record), wrote \(rows[id]!)" }
                stats["records read", default: 0] += 1
            }
        }
        return nil
    }

    /// Stored values the types cannot hold, as another program writes them: an integer or
    /// text that is no raw value of a case (a case-pair's mixed case, a trailing space), an
    /// integer out of `Int32`'s or `Int16`'s range, a `REAL` beyond `Float`'s, the empty text
    /// in a URL, JSON that is malformed or of another shape. (A `NULL` in a non-optional
    /// column is refused by its `NOT NULL` constraint.)
    static let undecodable: [(column: String, literal: String)] = [
        ("level", "12345"), ("level", "'seven'"), ("level", "7.5"), ("mood", "'c'"), ("mood", "'aA'"), ("mood", "'a  '"),
        ("optionalMood", "'Ω '"), ("count", "2147483648"), ("count", "-2147483649"), ("count", "9223372036854775807"),
        ("small", "32768"), ("small", "-32769"), ("ratio", "1e39"), ("optionalRatio", "-1e39"), ("link", "''"),
        ("optionalLink", "''"), ("spec", "'{not json'"), ("spec", #"'{"tag":1}'"#), ("optionalSpec", "'[1'"),
        ("optionalSpec", "'null'"),
    ]

    /// Writes a value the type cannot hold into a random row (in SQL, by the store or
    /// another connection), checks that every list still follows and that reading the row
    /// — through the store and through each controller that shows it — reports
    /// `FolioError.decoding` naming the column (never a trap, never `nil` for an optional),
    /// then writes the oracle's value back.
    func probeUndecodable(_ lists: [TypeWorkList], _ context: String, _ stats: inout [String: Int]) async throws -> Bool {
        guard let id = randomID() else { return true }
        let probe = pick(Self.undecodable)
        let external = chance(50)
        let context = "\(context), undecodable \(probe.column) = \(probe.literal) in row \(id.rawValue)"
        log.append("  probe \(probe.column) = \(probe.literal) in \(id.rawValue)\(external ? " (another connection)" : "")")
        let sql = "UPDATE \(Self.table) SET \"\(probe.column)\" = \(probe.literal) WHERE id = \(id.rawValue)"
        if external {
            try writeSync(other) { db in try db.execute(sql: sql) }
            try store.synchronize()
        } else {
            try writeSync(store) { tx in try tx.database.execute(sql: sql) }
        }
        // The lists need no record: they follow as for any value.
        for list in lists {
            stats["change sets", default: 0] += try await list.live.settle(
                "\(context), list \(list.name); replay: FOLIO_SEED=\(seed)"
            ).count
            if list.live.failed { return false }
        }
        func isNamed(_ error: (any Error)?) -> Bool {
            guard case FolioError.decoding(let column, let reason)? = error else { return false }
            return column == probe.column && !reason.isEmpty
        }
        var failures: [String] = []
        do {
            let read = try store.fetchOne(TypeWorkItem.self, id: id)
            failures.append("the store read \(String(describing: read))")
        } catch {
            if !isNamed(error) { failures.append("the store threw \(error)") }
        }
        for list in lists {
            guard let path = list.live.controller.indexPath(for: id) else { continue }
            let record = list.live.controller.object(at: path)
            let error = list.live.controller.fetchedObjects?.lastError
            if record != nil || !isNamed(error) {
                failures.append("list \(list.name) read \(String(describing: record)), error \(String(describing: error))")
            }
        }
        guard failures.isEmpty else {
            Issue.record(Comment(rawValue: "\(context): \(failures.joined(separator: "; "))"))
            return false
        }
        stats["undecodable", default: 0] += 1
        // The oracle's value back.
        let repair = "UPDATE \(Self.table) SET \"\(probe.column)\" = ? WHERE id = ?"
        let arguments = Self.arguments([Self.value(rows[id]!, probe.column), id.rawValue.databaseValue])
        try writeSync(other) { db in try db.execute(sql: repair, arguments: arguments) }
        try store.synchronize()
        return try await check(lists, "\(context), written back", &stats)
    }

    /// Writes the store must refuse — NaN in a `Float`, a `Codable` value with a NaN inside —
    /// each in its own transaction: each throws the documented error and changes nothing.
    func probeRefusals(_ lists: [TypeWorkList], _ context: String, _ stats: inout [String: Int]) async throws -> Bool {
        func refusal(_ body: (WriteTransaction) throws -> Void) -> (any Error)? {
            do {
                try writeSync(store, body)
                return nil
            } catch { return error }
        }
        func isInvalidArgument(_ error: (any Error)?) -> Bool {
            if case FolioError.invalidArgument? = error { return true }
            return false
        }
        func isUnstorable(_ error: (any Error)?, _ attribute: String) -> Bool {
            guard case FolioError.unstorableValue(let entity, let named, _)? = error else { return false }
            return entity == Self.table && named == attribute
        }
        var nanRatio = randomItem(shellSafe: false)
        nanRatio.ratio = .nan
        var nanWeight = randomItem(shellSafe: false)
        nanWeight.optionalSpec = TypeWorkSpec(tag: "nan", weight: .nan)
        var results: [(String, Bool)] = [
            ("insert ratio NaN", isInvalidArgument(refusal { tx in try tx.insert(&nanRatio) })),
            ("insert optionalSpec NaN inside", isUnstorable(refusal { tx in try tx.insert(&nanWeight) }, "optionalSpec")),
            (
                "updateAll optionalRatio NaN",
                isInvalidArgument(
                    refusal { tx in try tx.updateAll(TypeWorkItem.self, set: [.set(\.optionalRatio, to: Float.nan)]) })
            ),
        ]
        if let id = randomID() {
            var item = rows[id]!
            item.optionalRatio = .nan
            results.append(("update optionalRatio NaN", isInvalidArgument(refusal { tx in try tx.update(item) })))
            item = rows[id]!
            item.spec.weight = -.nan
            results.append(("update spec NaN inside", isUnstorable(refusal { tx in try tx.update(item) }, "spec")))
        }
        let wrong = results.filter { !$0.1 }.map(\.0)
        guard wrong.isEmpty else {
            Issue.record(Comment(rawValue: "\(context): not refused as documented: \(wrong)"))
            return false
        }
        stats["refused", default: 0] += results.count
        // Nothing was written: no list changes, and each still equals the oracle.
        for list in lists {
            let changes = try await list.live.settle("\(context), list \(list.name), after refused writes")
            if list.live.failed { return false }
            if !changes.isEmpty {
                Issue.record(Comment(rawValue: "\(context), list \(list.name): refused writes delivered \(changes)"))
                return false
            }
        }
        return try await check(lists, "\(context), after refused writes", &stats)
    }

    func reportFailure(_ context: String) {
        Issue.record(
            Comment(
                rawValue:
                    "attribute type workload \(context) failed; replay: FOLIO_SEED=\(seed) swift test --filter AttributeTypeWorkloadTests; the steps:\n"
                    + log.joined(separator: "\n")))
    }
}
