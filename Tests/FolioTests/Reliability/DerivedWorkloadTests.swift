import Foundation
import GRDB
import Testing
@testable import Folio

/// Randomized workloads that try to break derived attributes: after every transaction of
/// raw writes — by the store's writer or by a second connection — every ``Board``'s
/// derived values must equal SQLite's own aggregate over its posts (``DerivedOracle``), and
/// two live lists of boards (filtered and sorted by the unread count; sectioned by it),
/// applied to a strict table-view model, must equal a fresh fetch.
///
/// The writes: inserts with `OR REPLACE`/`OR IGNORE` on a small pool of unique guids,
/// re-pointing (to nil, to a missing board), read toggles, guid and rowid changes with
/// `UPDATE OR REPLACE`, deletes, cascades, boards inserted under a dangling rowid or
/// replaced by name, reals beside integers, text in number columns, and sums pushed past
/// `Int64` (the transaction is refused and nothing changes).
///
/// Default: 20 seeds of 25 transactions (2 in the quick tier). `FOLIO_SEED=n` replays one.
@Suite("Derived attribute workloads", .tags(Testing.Tag.longTier))
@MainActor
struct DerivedWorkloadTests {
    nonisolated static var seeds: [UInt64] { workloadSeeds(defaultCount: 20) }
    nonisolated static var transactions: Int { environmentInt("FOLIO_TRANSACTIONS") ?? 25 }

    static let sizes: [String] = ["0", "1", "7", "-3", "12", "40", "4611686018427387904", "-9223372036854775808", "'abc'", "2.5"]
    static let scores: [String] = ["0.5", "1", "-0.0", "1e300", "-1e300", "0.1", "3"]
    static let published: [String] = ["NULL", "1.5", "2", "'z'", "-1e-300", "9007199254740993"]

    struct State {
        var boards: [Int64]
        var posts: [Int64]
        var missing: [Int64]
    }

    static func state(_ db: Database) throws -> State {
        let boards = try Int64.fetchAll(db, sql: "SELECT id FROM board ORDER BY id")
        let posts = try Int64.fetchAll(db, sql: "SELECT id FROM post ORDER BY id")
        let dangling = try Int64.fetchAll(
            db, sql: "SELECT DISTINCT board FROM post WHERE board IS NOT NULL AND board NOT IN (SELECT id FROM board)")
        return State(boards: boards, posts: posts, missing: dangling + [800_001, 800_002].filter { !boards.contains($0) })
    }

    /// One random write, as raw SQL.
    static func change(_ db: Database, _ state: State, _ rng: inout SplitMix64, log: inout [String]) throws {
        func reference() -> String {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<7: state.boards.randomElement(using: &rng).map(String.init) ?? "NULL"
            case 7: "NULL"
            default: state.missing.randomElement(using: &rng).map(String.init) ?? "NULL"
            }
        }
        func post() -> Int64? { state.posts.randomElement(using: &rng) }
        let guid = "'g\(Int.random(in: 0..<40, using: &rng))'"
        let sql: String
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<30:
            let verb = rng.pick(["INSERT OR REPLACE", "INSERT OR IGNORE", "INSERT OR IGNORE", "REPLACE"])
            let id = rng.chance(0.2) ? (post().map(String.init) ?? "NULL") : "NULL"
            sql = """
                \(verb) INTO post (id, guid, title, isRead, size, score, published, board) VALUES \
                (\(id), \(guid), '', \(Int.random(in: 0...1, using: &rng)), \(rng.pick(sizes)), \(rng.pick(scores)), \
                \(rng.pick(published)), \(reference()))
                """
        case 30..<45:
            guard let post = post() else { return }
            sql = "UPDATE post SET isRead = NOT isRead WHERE id = \(post)"
        case 45..<57:
            guard let post = post() else { return }
            sql = "UPDATE post SET board = \(reference()) WHERE id = \(post)"
        case 57..<63:
            guard let post = post() else { return }
            sql =
                "UPDATE post SET size = \(rng.pick(sizes)), score = \(rng.pick(scores)), published = \(rng.pick(published)) WHERE id = \(post)"
        case 63..<68:
            guard let post = post() else { return }
            sql = "UPDATE OR REPLACE post SET guid = \(guid) WHERE id = \(post)"
        case 68..<72:
            guard let post = post(), let other = state.posts.randomElement(using: &rng) else { return }
            sql = "UPDATE OR REPLACE post SET id = \(rng.chance(0.5) ? String(other) : String(post + 1000)) WHERE id = \(post)"
        case 72..<80:
            guard let post = post() else { return }
            sql = "DELETE FROM post WHERE id = \(post)"
        case 80..<84:
            guard let board = state.boards.randomElement(using: &rng) else { return }
            sql = "DELETE FROM board WHERE id = \(board)"  // cascades its posts
        case 84..<89:
            let id = rng.chance(0.5) ? (state.missing.randomElement(using: &rng).map(String.init) ?? "NULL") : "NULL"
            sql = "INSERT OR IGNORE INTO board (id, name) VALUES (\(id), 'b\(Int.random(in: 0..<12, using: &rng))')"
        case 89..<92:
            sql = "INSERT OR REPLACE INTO board (name) VALUES ('b\(Int.random(in: 0..<12, using: &rng))')"
        case 92..<95:
            guard let board = state.boards.randomElement(using: &rng) else { return }
            sql = "UPDATE OR IGNORE board SET id = \(board + 500) WHERE id = \(board)"
        default:
            sql = "UPDATE post SET isRead = NOT isRead WHERE id % \(Int.random(in: 2...5, using: &rng)) = 0"
        }
        log.append(sql)
        try db.execute(sql: sql)
    }

    @Test(arguments: seeds)
    func derivedValuesHoldAndListsOfParentsFollow(seed: UInt64) async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("derived-\(seed).sqlite")
        let store = try Store(path: path, records: [Board.self, Post.self])
        try writeSync(store) { tx in
            for index in 0..<6 {
                var board = Board(name: "b\(index)")
                try tx.insert(&board)
            }
        }
        let other = try DatabaseQueue(path: path)
        defer { try? other.close() }
        let filtered = try await LiveTable(
            store,
            RecordRequest<Board>(
                predicate: #Predicate { $0.unreadCount > 0 },
                sortBy: [SortDescriptor(\.unreadCount, order: .reverse), SortDescriptor(\.name)]))
        let sectioned = try await LiveTable(
            store, RecordRequest<Board>(sortBy: [SortDescriptor(\.unreadCount), SortDescriptor(\.id)]),
            sectionBy: .attribute(\Board.unreadCount))
        var rng = SplitMix64(seed: seed)
        var log: [String] = []
        var refused = 0
        for transaction in 0..<Self.transactions {
            let byOther = rng.chance(0.25)
            let count = Int.random(in: 1...6, using: &rng)
            var steps = rng
            let body = { (db: Database) throws in
                let state = try Self.state(db)
                for _ in 0..<count { try Self.change(db, state, &steps, log: &log) }
            }
            do {
                if byOther {
                    try other.write(body)
                    try store.synchronize()
                } else {
                    try writeSync(store) { tx in try body(tx.database) }
                }
            } catch let error as DatabaseError where error.message?.contains("integer overflow") == true {
                refused += 1  // a sum past Int64: the transaction is undone whole
            } catch let error as FolioError where "\(error)".contains("integer overflow") {
                refused += 1
            }
            rng = steps
            let wrong = try DerivedOracle.mismatches(store)
            #expect(
                wrong.isEmpty,
                "seed \(seed), transaction \(transaction)\(byOther ? " (other connection)" : ""): \(wrong.prefix(4)); last: \(log.suffix(6))"
            )
            if !wrong.isEmpty { return }
            try await filtered.settle()
            try await sectioned.settle()
        }
        #expect(refused < Self.transactions)
    }
}
