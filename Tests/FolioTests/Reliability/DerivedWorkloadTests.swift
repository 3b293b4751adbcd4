import Foundation
import GRDB
import Testing
@testable import Folio

/// Randomized workloads that try to break derived attributes: after every transaction of
/// writes — raw SQL by the store's writer, Folio's typed writes, a second connection, the
/// `sqlite3` shell (another process) — every ``Board``'s
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

    nonisolated static func state(_ db: Database) throws -> State {
        let boards = try Int64.fetchAll(db, sql: "SELECT id FROM board ORDER BY id")
        let posts = try Int64.fetchAll(db, sql: "SELECT id FROM post ORDER BY id")
        let dangling = try Int64.fetchAll(
            db, sql: "SELECT DISTINCT board FROM post WHERE board IS NOT NULL AND board NOT IN (SELECT id FROM board)")
        return State(boards: boards, posts: posts, missing: dangling + [800_001, 800_002].filter { !boards.contains($0) })
    }

    /// One random write, as raw SQL, run on `db`.
    static func change(_ db: Database, _ state: State, _ rng: inout SplitMix64, log: inout [String]) throws {
        guard let sql = sql(state, &rng) else { return }
        log.append(sql)
        try db.execute(sql: sql)
    }

    /// One random write, as raw SQL; `nil` when there is nothing to write it to.
    static func sql(_ state: State, _ rng: inout SplitMix64) -> String? {
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
            guard let post = post() else { return nil }
            sql = "UPDATE post SET isRead = NOT isRead WHERE id = \(post)"
        case 45..<57:
            guard let post = post() else { return nil }
            sql = "UPDATE post SET board = \(reference()) WHERE id = \(post)"
        case 57..<63:
            guard let post = post() else { return nil }
            sql =
                "UPDATE post SET size = \(rng.pick(sizes)), score = \(rng.pick(scores)), published = \(rng.pick(published)) WHERE id = \(post)"
        case 63..<68:
            guard let post = post() else { return nil }
            sql = "UPDATE OR REPLACE post SET guid = \(guid) WHERE id = \(post)"
        case 68..<72:
            guard let post = post(), let other = state.posts.randomElement(using: &rng) else { return nil }
            sql = "UPDATE OR REPLACE post SET id = \(rng.chance(0.5) ? String(other) : String(post + 1000)) WHERE id = \(post)"
        case 72..<80:
            guard let post = post() else { return nil }
            sql = "DELETE FROM post WHERE id = \(post)"
        case 80..<84:
            guard let board = state.boards.randomElement(using: &rng) else { return nil }
            sql = "DELETE FROM board WHERE id = \(board)"  // cascades its posts
        case 84..<89:
            let id = rng.chance(0.5) ? (state.missing.randomElement(using: &rng).map(String.init) ?? "NULL") : "NULL"
            sql = "INSERT OR IGNORE INTO board (id, name) VALUES (\(id), 'b\(Int.random(in: 0..<12, using: &rng))')"
        case 89..<92:
            sql = "INSERT OR REPLACE INTO board (name) VALUES ('b\(Int.random(in: 0..<12, using: &rng))')"
        case 92..<95:
            guard let board = state.boards.randomElement(using: &rng) else { return nil }
            sql = "UPDATE OR IGNORE board SET id = \(board + 500) WHERE id = \(board)"
        default:
            sql = "UPDATE post SET isRead = NOT isRead WHERE id % \(Int.random(in: 2...5, using: &rng)) = 0"
        }
        return sql
    }

    /// The state, read synchronously (in an async context the async `read` would be chosen).
    nonisolated static func readState(_ store: Store) throws -> State {
        try store.read { db in try state(db) }
    }

    /// Who writes a transaction.
    enum Writer: CaseIterable {
        /// Raw SQL in the store's own write.
        case store
        /// Folio's typed writes: a post read and updated (every column), or inserted.
        case records
        /// A second connection in this process, followed with `synchronize()`.
        case connection
        /// The `sqlite3` shell: another process.
        case shell
    }

    /// Folio's typed writes: toggles and re-points posts, and inserts one.
    static func recordWrites(_ tx: WriteTransaction, _ state: State, _ rng: inout SplitMix64, log: inout [String]) throws {
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            guard let id = state.posts.randomElement(using: &rng) else { continue }
            let read: Post?
            do {
                read = try tx.fetchOne(ToOne<Post>(RecordID(id)))
            } catch let error as FolioError where "\(error)".contains("Cannot decode") {
                continue  // raw SQL wrote a value the record cannot hold ('abc' as a size): refused by name
            }
            guard var post = read else { continue }
            post.isRead.toggle()
            if rng.chance(0.3) { post.board = ToOne(state.boards.randomElement(using: &rng).map { RecordID($0) }) }
            log.append("Folio: update post \(id)")
            try tx.update(post)
        }
        var post = Post(
            guid: "folio\(Int.random(in: 0..<1_000_000, using: &rng))", size: Int.random(in: -5...50, using: &rng),
            board: ToOne(state.boards.randomElement(using: &rng).map { RecordID($0) }))
        log.append("Folio: insert a post")
        try tx.insert(&post)
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
            let writer = rng.pick([Writer.store, .store, .records, .connection, .shell])
            let count = Int.random(in: 1...6, using: &rng)
            var steps = rng
            let body = { (db: Database) throws in
                let state = try Self.state(db)
                for _ in 0..<count { try Self.change(db, state, &steps, log: &log) }
            }
            do {
                switch writer {
                case .store:
                    try writeSync(store) { tx in try body(tx.database) }
                case .records:
                    try writeSync(store) { tx in try Self.recordWrites(tx, try Self.state(tx.database), &steps, log: &log) }
                case .connection:
                    try other.write(body)
                    try store.synchronize()
                case .shell:
                    let state = try Self.readState(store)
                    let statements = (0..<count).compactMap { _ in Self.sql(state, &steps) }
                    log += statements.map { "shell: \($0)" }
                    try Shell.sqlite3(path, "BEGIN; " + statements.map { $0 + ";" }.joined(separator: " ") + " COMMIT;")
                    try store.synchronize()
                }
            } catch let error as DatabaseError where error.message?.contains("integer overflow") == true {
                refused += 1  // a sum past Int64: the transaction is undone whole
            } catch let error as FolioError where "\(error)".contains("integer overflow") {
                refused += 1
            } catch let error as Shell.Failure where error.errors.contains("integer overflow") {
                refused += 1  // the shell stops at the error (-bail); its transaction is not committed
            }
            rng = steps
            let wrong = try DerivedOracle.mismatches(store)
            #expect(
                wrong.isEmpty, "seed \(seed), transaction \(transaction) by \(writer): \(wrong.prefix(4)); last: \(log.suffix(6))"
            )
            if !wrong.isEmpty { return }
            try await filtered.settle()
            try await sectioned.settle()
        }
        #expect(refused < Self.transactions)
    }
}
