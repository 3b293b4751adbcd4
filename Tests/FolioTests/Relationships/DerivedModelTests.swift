import Foundation
import GRDB
import Testing
@testable import Folio

/// ``Board`` before it had derived attributes: the same table.
struct BoardV1: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<BoardV1>("board", [AttributeDescription(\.name, unique: true)])
}

/// A parent whose derived attributes' filters hold values at the extremes, written into the
/// triggers as literals.
struct Rack: PersistentRecord {
    var id: RecordID?
    var numbers = 0
    var reals = 0
    var quoted = 0
    var nfd = 0
    static let least = Int64.min
    static let most = Int64.max
    static let big = Double(Int64(1) << 53)
    static let minusZero: Double = -0.0
    static let infinity = Double.infinity
    static let nul = "it's\u{0}?\""
    static let decomposed = "e\u{301}"
    static let entity = EntityDescription<Rack>(
        "rack",
        [
            AttributeDescription(
                \.numbers, derived: .count(\Volume.rack, where: #Predicate { $0.number == least || $0.number == most })),
            AttributeDescription(
                \.reals,
                derived: .count(\Volume.rack, where: #Predicate { $0.real == minusZero || $0.real == infinity || $0.real == big })
            ),
            AttributeDescription(\.quoted, derived: .count(\Volume.rack, where: #Predicate { $0.title == nul })),
            AttributeDescription(\.nfd, derived: .count(\Volume.rack, where: #Predicate { $0.title == decomposed })),
        ],
        relationships: [.toMany(\Volume.rack)])
}

struct Volume: PersistentRecord {
    var id: RecordID?
    var title = ""
    var number: Int64 = 0
    var real = 0.0
    var rack = ToOne<Rack>()
    static let entity = EntityDescription<Volume>(
        "volume",
        [AttributeDescription(\.title), AttributeDescription(\.number), AttributeDescription(\.real)],
        relationships: [.toOne(\.rack)])
}

/// Derived attributes added to an existing file, repaired after another program dropped a
/// trigger, refused when they cannot be kept, and values written into triggers exactly.
@Suite("Relationships: derived attributes in the model and the file")
struct DerivedModelTests {
    let directory: ScratchDirectory
    var path: String { directory.path("derived-model.sqlite") }

    init() throws { directory = try ScratchDirectory() }

    @Test func addingDerivedAttributesToAFileComputesThemOnce() throws {
        do {
            let old = try Store(path: path, model: StoreModel(version: 1, records: [BoardV1.self, Post.self]))
            try writeSync(old) { tx in
                for index in 0..<30 {
                    var board = BoardV1(name: "b\(index)")
                    try tx.insert(&board)
                }
                for number in 0..<3000 {
                    var post = Post(
                        guid: "p\(number)", isRead: number % 4 == 0, size: number, score: 0.5,
                        published: Double(number), board: ToOne(RecordID(Int64(number % 31 + 1))))  // some dangle
                    try tx.insert(&post)
                }
            }
            try old.close()
        }
        let steps = Locked<[OpeningProgress]>([])
        let store = try Store(path: path, model: StoreModel(version: 2, records: [Board.self, Post.self])) { step in
            steps.withLock { $0.append(step) }
        }
        #expect(try DerivedOracle.mismatches(store).isEmpty)
        // Six derived attributes of 30 boards, told from 0 to the end.
        let told = steps.withLock { $0 }
        #expect(told.first == OpeningProgress(completed: 0, total: 180))
        #expect(told.last == OpeningProgress(completed: 180, total: 180, isFinished: true))
        #expect(told.map(\.completed) == told.map(\.completed).sorted())
        let board = try #require(try store.fetch(RecordRequest<Board>(sortBy: [SortDescriptor(\.name)])).first ?? nil)
        #expect(board.postCount > 0 && board.unreadCount > 0)
        try store.close()
        // Opened again, the triggers are there: no row is computed or written again.
        func logged() throws -> Int? {
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            return try queue.read { db in try Int.fetchOne(db, sql: "SELECT max(seq) FROM folio_changes") }
        }
        let before = try logged()
        try Store(path: path, model: StoreModel(version: 2, records: [Board.self, Post.self])).close()
        #expect(try logged() == before)
    }

    @Test func aTriggerAnotherProgramDroppedIsMadeAgainAndTheColumnRecomputed() throws {
        let store = try Store(path: path, records: [Board.self, Post.self])
        try writeSync(store) { tx in
            var board = Board(name: "one")
            try tx.insert(&board)
        }
        try Shell.sqlite3(
            path,
            """
            DROP TRIGGER folio_derived_board_unreadCount_ins;
            INSERT INTO post (guid, title, isRead, size, score, board) VALUES ('a', '', 0, 1, 1.0, 1), ('b', '', 0, 2, 1.0, 1);
            """)
        // Stale until the store makes its objects again (its watch of the file may already
        // have: it follows other processes' commits with a write of its own).
        let before = try DerivedOracle.mismatches(store)
        #expect(before.isEmpty || before == ["board 1 unreadCount 0 ≠ 2"])
        // The store's next write sees the schema changed and makes Folio's objects again.
        try writeSync(store) { tx in
            var post = Post(guid: "c", board: ToOne(RecordID(1)))
            try tx.insert(&post)
        }
        #expect(try DerivedOracle.mismatches(store).isEmpty)
        #expect(try store.fetch(RecordRequest<Board>()).first??.unreadCount == 3)
        let made = try store.read { db in
            try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE name = 'folio_derived_board_unreadCount_ins'")
        }
        #expect(made != nil)
    }

    /// The documented limit: a program that writes a derived column itself is not corrected
    /// (no trigger watches the column: one would cost every child's write a count), until
    /// the column's triggers are made again — here, after another program dropped one.
    @Test func aProgramWritingTheColumnItselfIsNotCorrectedUntilTheTriggersAreMadeAgain() throws {
        let store = try Store(path: path, records: [Board.self, Post.self])
        try writeSync(store) { tx in
            var board = Board(name: "one")
            try tx.insert(&board)
            var post = Post(guid: "a", board: ToOne(board))
            try tx.insert(&post)
        }
        try Shell.sqlite3(path, "UPDATE board SET postCount = 40;")
        #expect(try DerivedOracle.mismatches(store) == ["board 1 postCount 40 ≠ 1"])
        try Shell.sqlite3(path, "DROP TRIGGER folio_derived_board_postCount_del;")
        try writeSync(store) { tx in _ = try tx.updateAll(Post.self, set: [.set(\.title, to: "x")]) }
        #expect(try DerivedOracle.mismatches(store).isEmpty)
    }

    @Test func filtersHoldValuesAtTheExtremesExactly() throws {
        let store = try Store.temporary(records: [Rack.self, Volume.self])
        let values: [(String, Int64, Double)] = [
            ("x", .min, 1), ("x", .max, 1), ("x", 0, -0.0), ("x", 0, 0.0), ("x", 0, .infinity), ("x", 0, -.infinity),
            ("x", 0, 9_007_199_254_740_992), ("x", 0, 9_007_199_254_740_994), ("it's\u{0}?\"", 1, 1), ("it's", 1, 1),
            ("e\u{301}", 1, 1), ("é", 1, 1), ("x", .max - 1, 1),
        ]
        try writeSync(store) { tx in
            var rack = Rack()
            try tx.insert(&rack)
            for (title, number, real) in values {
                var volume = Volume(title: title, number: number, real: real, rack: ToOne(rack))
                try tx.insert(&volume)
            }
        }
        let rack = try #require(try store.fetch(RecordRequest<Rack>()).first ?? nil)
        #expect(rack.numbers == 2)  // Int64.min, Int64.max; not Int64.max - 1
        #expect(rack.reals == 4)  // -0.0 and 0.0 (equal in SQL), +infinity, 2^53 (2^53 + 2 is not)
        #expect(rack.quoted == 1)
        #expect(rack.nfd == 1)  // NFD only: SQLite compares bytes
    }

    @Test func literalsReadBackAsTheValuesTheyWrite() throws {
        let queue = try DatabaseQueue()
        var reals: [Double] = [
            0, -0.0, .ulpOfOne, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude,
            -.greatestFiniteMagnitude, .infinity, -.infinity, 0.1, 1e-300, 123_456_789.123_456_79, Double(Int64(1) << 53) * 3,
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            reals.append(Double(bitPattern: generator.next() & ~(0x7FF << 52) | (UInt64.random(in: 1...0x7FE) << 52)))
        }
        let integers: [Int64] = [.min, .min + 1, -1, 0, 1, .max, 1 << 53, (1 << 53) + 1]
        let texts = ["", "it's", "''", "\u{0}", "a\u{0}b", "?", "e\u{301}", "é", "\"x\"", "🙂", "K", "\u{212A}"]
        try queue.read { db in
            for real in reals {
                let literal = SQLBuilder.literal(real.databaseValue)
                let back = try Double.fetchOne(db, sql: "SELECT \(literal)")
                #expect(back?.bitPattern == real.bitPattern || (real == 0 && back == 0), "\(real) as \(literal)")
                #expect(try String.fetchOne(db, sql: "SELECT typeof(\(literal))") == "real")
            }
            for integer in integers {
                let literal = SQLBuilder.literal(integer.databaseValue)
                #expect(try Int64.fetchOne(db, sql: "SELECT \(literal)") == integer, "\(integer) as \(literal)")
                #expect(try String.fetchOne(db, sql: "SELECT typeof(\(literal))") == "integer")
            }
            for text in texts {
                let literal = SQLBuilder.literal(text.databaseValue)
                let back = try Data.fetchOne(db, sql: "SELECT CAST(\(literal) AS BLOB)")
                #expect(back == Data(text.utf8), "\(text.debugDescription) as \(literal)")
                #expect(try String.fetchOne(db, sql: "SELECT typeof(\(literal))") == "text")
            }
            let blob = Data([0, 1, 0xFF, 0x27])
            #expect(try Data.fetchOne(db, sql: "SELECT \(SQLBuilder.literal(blob.databaseValue))") == blob)
        }
        // A placeholder inside a quoted literal or identifier is text, not a value.
        let inlined = try SQLBuilder.inlined(
            SQLFragment("\"a?\" = ? AND x = '?' AND y = ?", [1.databaseValue, "q".databaseValue]))
        #expect(inlined == "\"a?\" = 1 AND x = '?' AND y = 'q'")
        #expect(throws: FolioError.self) { try SQLBuilder.inlined(SQLFragment("? = ?", [1.databaseValue])) }
    }
}

/// Derivations that cannot be kept are refused when the store opens, by name.
@Suite("Relationships: derived attributes refused", .serialized)
struct DerivedRefusalTests {
    struct Node: PersistentRecord {
        var id: RecordID?
        var children = 0
        var parent = ToOne<Node>()
        static let entity = EntityDescription<Node>(
            "node", [AttributeDescription(\.children, derived: .count(\Node.parent))], relationships: [.toOne(\.parent)])
    }

    struct Wrong: PersistentRecord {
        var id: RecordID?
        var text = ""
        var optionalCount: Int? = nil
        var total = 0
        var least = 0
        var titled: String? = nil
        var folded = 0
        var through = 0
        var other = 0
        static let kinds: [String: AttributeDescription<Wrong>] = [
            "text": AttributeDescription(\.text, derived: .count(\Leaf.wrong)),
            "optionalCount": AttributeDescription(\.optionalCount, derived: .count(\Leaf.wrong)),
            "total": AttributeDescription(\.total, derived: .sum(\Leaf.title, of: \Leaf.wrong)),
            "least": AttributeDescription(\.least, derived: .minimum(\Leaf.size, of: \Leaf.wrong)),
            "titled": AttributeDescription(\.titled, derived: .maximum(\Leaf.size, of: \Leaf.wrong)),
            "folded": AttributeDescription(\.folded, derived: .count(\Leaf.wrong, where: #Predicate { $0.title.folded == "a" })),
            "through": AttributeDescription(\.through, derived: .count(\Leaf.wrong, where: #Predicate { $0.wrong.text == "a" })),
            "other": AttributeDescription(\.other, derived: .count(\Leaf.elsewhere)),
        ]
        nonisolated(unsafe) static var chosen = "text"
        static var entity: EntityDescription<Wrong> {
            EntityDescription("wrong", [kinds[chosen]!])
        }
    }

    struct Leaf: PersistentRecord {
        var id: RecordID?
        var title = ""
        var size = 0
        var wrong = ToOne<Wrong>()
        var elsewhere = ToOne<BoardV1>()
        static let entity = EntityDescription<Leaf>(
            "leaf", [AttributeDescription(\.title, folded: true), AttributeDescription(\.size)],
            relationships: [.toOne(\.wrong), .toOne(\.elsewhere)])
    }

    @Test func aTreeIsRefused() {
        let error = folioError { try Store.temporary(records: [Node.self]) }
        #expect("\(String(describing: error))".contains("its own entity"))
    }

    @Test(arguments: [
        ("text", "non-optional integer"), ("optionalCount", "non-optional integer"), ("total", "integers or Doubles"),
        ("least", "must be optional"), ("titled", "must be of the type"), ("folded", "folded text"),
        ("through", "to-one's target"), ("other", "not here"),
    ])
    func eachWrongDerivationIsRefusedByName(kind: String, reason: String) {
        Wrong.chosen = kind
        let error = folioError { try Store.temporary(records: [Wrong.self, Leaf.self, BoardV1.self]) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("'\(kind)'") && text.contains(reason), "\(text)")
    }
}

/// ``Board`` without two of its derived attributes: a migration removes their columns.
struct BoardFewer: PersistentRecord {
    var id: RecordID?
    var name = ""
    var postCount = 0
    var unreadCount = 0
    static let entity = EntityDescription<BoardFewer>(
        "board",
        [
            AttributeDescription(\.name, unique: true),
            AttributeDescription(\.postCount, derived: .count(\PostFewer.board)),
            AttributeDescription(\.unreadCount, derived: .count(\PostFewer.board, where: #Predicate { $0.isRead == false })),
        ],
        relationships: [.toMany(\PostFewer.board, deleteRule: .cascade)])
}

/// ``Post`` without its title and score: a migration rebuilds or alters the child's table,
/// where the derived attributes' triggers are.
struct PostFewer: PersistentRecord {
    var id: RecordID?
    var guid = ""
    var isRead = false
    var size = 0
    var published: Double? = nil
    var board = ToOne<BoardFewer>()
    static let entity = EntityDescription<PostFewer>(
        "post",
        [
            AttributeDescription(\.guid, unique: true), AttributeDescription(\.isRead), AttributeDescription(\.size),
            AttributeDescription(\.published),
        ],
        relationships: [.toOne(\.board)])
}

@Suite("Relationships: derived attributes across migrations")
struct DerivedMigrationTests {
    @Test func migrationsThatRemoveColumnsOfParentAndChildKeepTheRestExact() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("derived-migration.sqlite")
        do {
            let store = try Store(path: path, model: StoreModel(version: 1, records: [Board.self, Post.self]))
            try writeSync(store) { tx in
                for index in 0..<5 {
                    var board = Board(name: "b\(index)")
                    try tx.insert(&board)
                    for number in 0..<20 {
                        var post = Post(
                            guid: "\(index)-\(number)", isRead: number % 3 == 0, size: number, board: ToOne(board))
                        try tx.insert(&post)
                    }
                }
            }
            try store.close()
        }
        // A derived column's values can always be computed again, but the file does not say
        // it was derived: its removal is allowed as any attribute's.
        let discarded: [StoreModel.DiscardedData] =
            ["totalSize", "totalScore", "smallest", "newest"].map { .attribute($0, of: "board") }
            + ["title", "score"].map { .attribute($0, of: "post") }
        let store = try Store(
            path: path, model: StoreModel(version: 2, records: [BoardFewer.self, PostFewer.self], discarding: discarded))
        let wrong = try store.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT b.id FROM board b WHERE b.postCount IS NOT (SELECT count(*) FROM post WHERE post.board = b.id) \
                    OR b.unreadCount IS NOT (SELECT count(*) FROM post WHERE post.board = b.id AND post.isRead = 0)
                    """)
        }
        #expect(wrong.isEmpty)
        // The triggers of the removed attributes are gone; those kept still keep their values.
        let triggers = try store.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name GLOB 'folio_derived_*'")
        }
        #expect(!triggers.isEmpty && triggers.allSatisfy { $0.contains("postCount") || $0.contains("unreadCount") })
        try writeSync(store) { tx in
            try tx.database.execute(sql: "UPDATE post SET isRead = NOT isRead WHERE id % 2 = 0")
            try tx.database.execute(sql: "DELETE FROM post WHERE id % 7 = 0")
        }
        let after = try store.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM board b WHERE b.postCount IS NOT (SELECT count(*) FROM post WHERE post.board = b.id) \
                    OR b.unreadCount IS NOT (SELECT count(*) FROM post WHERE post.board = b.id AND post.isRead = 0)
                    """)
        }
        #expect(after == 0)
    }
}
