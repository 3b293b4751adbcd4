import Foundation
import GRDB
import Testing
@testable import Folio

/// Derived attributes (``Derivation``) equal SQLite's own aggregate over the children after
/// every commit, whoever writes: Folio, raw SQL (`REPLACE` conflicts, rowid changes,
/// re-pointing, dangling references), the `sqlite3` shell, a second store.
@Suite("Relationships: derived attributes")
struct DerivedAttributeTests {
    let directory: ScratchDirectory
    var path: String { directory.path("derived.sqlite") }

    init() throws { directory = try ScratchDirectory() }

    func open() throws -> Store { try Store(path: path, records: [Board.self, Post.self]) }

    func board(_ store: Store, _ name: String) throws -> Board? {
        try store.fetch(RecordRequest<Board>(predicate: #Predicate { $0.name == name })).first ?? nil
    }

    func expectExact(_ store: Store, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let wrong = try DerivedOracle.mismatches(store)
        #expect(wrong.isEmpty, "after \(what): \(wrong.prefix(5))", sourceLocation: sourceLocation)
    }

    @Test func folioWritesKeepEveryAggregate() throws {
        let store = try open()
        let (a, b) = try writeSync(store) { tx -> (Board, Board) in
            var a = Board(name: "a"), b = Board(name: "b")
            try tx.insert(&a)
            try tx.insert(&b)
            return (a, b)
        }
        try expectExact(store, "two empty boards")
        #expect(try board(store, "a")?.smallest == nil)
        var posts: [Post] = []
        try writeSync(store) { tx in
            for i in 0..<40 {
                var post = Post(
                    guid: "g\(i)", isRead: i % 3 == 0, size: i, score: Double(i) / 10,
                    published: i % 5 == 0 ? nil : Double(i) * 1.5, board: ToOne(i % 2 == 0 ? a : b))
                try tx.insert(&post)
                posts.append(post)
            }
        }
        try expectExact(store, "inserts")
        let stored = try #require(try board(store, "a"))
        #expect(stored.postCount == 20)
        #expect(stored.unreadCount == 13)
        #expect(stored.totalSize == 380)  // 0 + 2 + … + 38
        #expect(stored.smallest == 0)
        try writeSync(store) { tx in
            var toggled = posts[4]
            toggled.isRead.toggle()
            try tx.update(toggled)  // filter changes
            var moved = posts[6]
            moved.board = ToOne(b)
            try tx.update(moved)  // re-pointed
            var orphan = posts[8]
            orphan.board = ToOne()
            orphan.size = 1000
            try tx.update(orphan)  // to nil, with its value changed
            try tx.delete(posts[10])
        }
        try expectExact(store, "toggle, re-point, nil, delete")
        // Writing the record back with stale derived values writes none of them.
        var stale = stored
        stale.postCount = 999
        stale.totalSize = -5
        stale.newest = 1
        try writeSync(store) { tx in try tx.update(stale) }
        try expectExact(store, "an update carrying stale derived values")
        _ = try writeSync(store) { tx in try tx.delete(a) }  // cascades its posts
        try expectExact(store, "a cascade")
        #expect(try store.count(RecordRequest<Board>()) == 1)
    }

    @Test func rawSQLReplaceConflictsAndRowidChanges() throws {
        let store = try open()
        try writeSync(store) { tx in
            let db = tx.database
            try db.execute(sql: "INSERT INTO board (id, name) VALUES (1, 'one'), (2, 'two'), (3, 'three')")
            for i in 0..<30 {
                try db.execute(
                    sql:
                        "INSERT INTO post (id, guid, title, isRead, size, score, published, board) VALUES (?, ?, '', ?, ?, ?, ?, ?)",
                    arguments: [i + 1, "g\(i)", i % 2, i * 3, Double(i) + 0.25, Double(i), i % 3 + 1])
            }
        }
        try expectExact(store, "raw inserts")
        let steps: [(String, String)] = [
            (
                "REPLACE on a unique guid, other board",
                "INSERT OR REPLACE INTO post (guid, title, isRead, size, score, published, board) VALUES ('g4', '', 0, 7, 1.5, 99.0, 3)"
            ),
            (
                "REPLACE under its own rowid",
                "INSERT OR REPLACE INTO post (id, guid, title, isRead, size, score, published, board) VALUES (6, 'g5', '', 1, 11, 2.0, NULL, 1)"
            ),
            (
                "REPLACE taking two rows at once",
                "INSERT OR REPLACE INTO post (id, guid, title, isRead, size, score, published, board) VALUES (8, 'g9', '', 0, 12, 3.0, 5.0, 2)"
            ),
            ("UPDATE OR REPLACE of the guid", "UPDATE OR REPLACE post SET guid = 'g11' WHERE guid = 'g12'"),
            ("UPDATE OR REPLACE of the rowid", "UPDATE OR REPLACE post SET id = 14 WHERE id = 15"),
            ("a rowid change", "UPDATE post SET id = 1000 WHERE id = 16"),
            (
                "INSERT OR IGNORE of a taken guid",
                "INSERT OR IGNORE INTO post (guid, title, isRead, size, score, board) VALUES ('g20', '', 0, 1, 1.0, 1)"
            ),
            ("then a delete of the row the ignore noted", "DELETE FROM post WHERE guid = 'g20'"),
            (
                "then an ordinary insert",
                "INSERT INTO post (guid, title, isRead, size, score, board) VALUES ('new', '', 0, 2, 2.0, 1)"
            ),
            (
                "an upsert doing an update",
                "INSERT INTO post (guid, title, isRead, size, score, board) VALUES ('g21', '', 1, 50, 9.0, 2) ON CONFLICT(guid) DO UPDATE SET board = excluded.board, size = excluded.size"
            ),
            ("a dangling reference", "UPDATE post SET board = 77 WHERE id IN (2, 3)"),
            ("the missing board inserted", "INSERT INTO board (id, name) VALUES (77, 'late')"),
            ("a board's rowid changed", "UPDATE board SET id = 78 WHERE id = 77"),
            ("a board replaced under its name", "INSERT OR REPLACE INTO board (id, name) VALUES (90, 'two')"),
            ("reals beside integers", "UPDATE post SET score = 5, size = 12 WHERE id % 4 = 0"),
            ("text in a number column", "UPDATE post SET size = 'abc', published = 'zzz' WHERE id % 7 = 0"),
            ("a bulk re-point", "UPDATE post SET board = CASE WHEN board = 1 THEN 3 ELSE 1 END"),
            ("a bulk delete", "DELETE FROM post WHERE id % 5 = 0"),
        ]
        for (what, sql) in steps {
            try writeSync(store) { tx in try tx.database.execute(sql: sql) }
            try expectExact(store, what)
        }
    }

    @Test func theShellAndASecondStoreKeepThemToo() throws {
        let store = try open()
        try writeSync(store) { tx in
            for name in ["x", "y"] {
                var board = Board(name: name)
                try tx.insert(&board)
            }
        }
        try Shell.sqlite3(
            path,
            """
            INSERT INTO post (guid, title, isRead, size, score, published, board) VALUES ('s1', '', 0, 5, 0.5, 1.0, 1), ('s2', '', 0, 15, 1.5, 2.0, 1), ('s3', '', 1, 25, 2.5, 3.0, 2);
            UPDATE post SET isRead = 1 WHERE guid = 's1';
            INSERT OR REPLACE INTO post (guid, title, isRead, size, score, board) VALUES ('s2', '', 0, 1, 0.0, 2);
            DELETE FROM board WHERE name = 'y';
            """)
        try expectExact(store, "the shell's writes")
        #expect(try DerivedOracle.mismatches(path: path).isEmpty)
        let second = try open()
        try writeSync(second) { tx in
            var post = Post(guid: "from second", size: 40, board: ToOne(RecordID(1)))
            try tx.insert(&post)
        }
        try expectExact(store, "a second store's insert")
    }

    @Test func anIntegerSumPastInt64IsRefusedAndChangesNothing() throws {
        let store = try open()
        let board = try writeSync(store) { tx -> Board in
            var board = Board(name: "big")
            try tx.insert(&board)
            var post = Post(guid: "max", size: Int.max, board: ToOne(board))
            try tx.insert(&post)
            return board
        }
        try expectExact(store, "Int.max")
        #expect(throws: (any Error).self) {
            try writeSync(store) { tx in
                var post = Post(guid: "one more", size: 1, board: ToOne(board))
                try tx.insert(&post)
            }
        }
        #expect(try store.count(RecordRequest<Post>()) == 1)
        try writeSync(store) { tx in
            var post = Post(guid: "min", size: Int.min, board: ToOne(board))
            try tx.insert(&post)
        }
        try expectExact(store, "Int.max and Int.min")
        #expect(try self.board(store, "big")?.totalSize == -1)
    }

    @Test func updateAllRefusesADerivedAttribute() throws {
        let store = try open()
        let error = folioError {
            try writeSync(store) { tx in try tx.updateAll(Board.self, set: [.set(\.unreadCount, to: 3)]) }
        }
        #expect("\(String(describing: error))".contains("derived"))
    }
}
