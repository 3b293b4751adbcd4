import Foundation
import GRDB
import Testing
@testable import Folio

/// Lists of parents follow their children: a child's write changes its parent's derived
/// attribute, and every live list of parents sorted, filtered or sectioned by it gets the
/// exact change set for that one parent row — through the ordinary path, since the
/// trigger's write of the parent is a change like any other.
@Suite("Relationships: lists of parents follow their children")
@MainActor
struct DerivedLiveTests {
    /// 12 boards, each with `3 + index` posts, the first `index % 4` of them read.
    func seeded() throws -> (Store, [Board], [[Post]]) {
        let store = try Store.temporary(records: [Board.self, Post.self])
        var boards: [Board] = [], posts: [[Post]] = []
        try writeSync(store) { tx in
            for index in 0..<12 {
                var board = Board(name: String(format: "board %02d", index))
                try tx.insert(&board)
                boards.append(board)
                var own: [Post] = []
                for number in 0..<(3 + index) {
                    var post = Post(
                        guid: "\(index)-\(number)", isRead: number < index % 4, size: number * 7, score: Double(number),
                        published: Double(index * 100 + number), board: ToOne(board))
                    try tx.insert(&post)
                    own.append(post)
                }
                posts.append(own)
            }
        }
        return (store, boards, posts)
    }

    var byUnread: RecordRequest<Board> {
        RecordRequest<Board>(
            predicate: #Predicate { $0.unreadCount > 0 },
            sortBy: [SortDescriptor(\.unreadCount, order: .reverse), SortDescriptor(\.name)])
    }

    /// The boards a list shows, read.
    func rows(_ list: LiveTable<Board>) -> [Board] {
        guard let records = list.controller.fetchedObjects else { return [] }
        return records.compactMap { $0 }
    }

    /// The rows a change set touches (inserted, deleted, moved, updated).
    func touched(_ changes: [ChangeSet]) -> [RecordID] {
        changes.flatMap { $0.insertedIdentifiers + $0.deletedIdentifiers + $0.movedIdentifiers + $0.updatedIdentifiers }
    }

    @Test func readingOnePostMovesOnlyItsBoard() async throws {
        let (store, boards, posts) = try seeded()
        let list = try await LiveTable(store, byUnread)
        let sections = try await LiveTable(
            store, RecordRequest<Board>(sortBy: [SortDescriptor(\.unreadCount), SortDescriptor(\.name)]),
            sectionBy: .attribute(\Board.unreadCount))
        #expect(rows(list).count == 12)
        // Board 5 has 8 posts, 1 read: 7 unread. Reading one more moves it below board 4's 7.
        var post = posts[5][6]
        post.isRead = true
        let changes = try await list.step { tx in try tx.update(post) }
        #expect(changes.count == 1)
        #expect(touched(changes) == [boards[5].id!])
        let sectionChanges = try await sections.settle()
        #expect(touched(sectionChanges) == [boards[5].id!])
        let board = try #require(rows(list).first { $0.id == boards[5].id })
        #expect(board.unreadCount == 6)
    }

    @Test func aPostWriteThatChangesNoCountDeliversNothing() async throws {
        let (store, _, posts) = try seeded()
        let list = try await LiveTable(store, byUnread)
        var post = posts[3][1]
        post.title = "renamed"  // no derived attribute reads the title
        let changes = try await list.step { tx in try tx.update(post) }
        #expect(changes.isEmpty)
    }

    @Test func boardsEnterAndLeaveTheFilterAsTheirPostsAreRead() async throws {
        let (store, boards, posts) = try seeded()
        let list = try await LiveTable(store, byUnread)
        // Read every post of board 2: it leaves "boards with unread posts".
        try await list.step { tx in
            for var post in posts[2] {
                post.isRead = true
                try tx.update(post)
            }
        }
        #expect(!rows(list).contains { $0.id == boards[2].id })
        // An unread post added by raw SQL brings it back.
        try await list.step { tx in
            try tx.database.execute(
                sql: "INSERT INTO post (guid, title, isRead, size, score, board) VALUES ('back', '', 0, 1, 1.0, ?)",
                arguments: [boards[2].id!.rawValue])
        }
        #expect(rows(list).contains { $0.id == boards[2].id })
        // A cascade of a board's posts by deleting... another board leaves the rest in place.
        try await list.step { tx in _ = try tx.delete(boards[7]) }
        #expect(try DerivedOracle.mismatches(store).isEmpty)
    }

    @Test func anotherProgramsImportMovesTheCounts() async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("live.sqlite")
        let store = try Store(path: path, records: [Board.self, Post.self])
        let boards = try writeSync(store) { tx -> [Board] in
            try (0..<5).map { index in
                var board = Board(name: "b\(index)")
                try tx.insert(&board)
                return board
            }
        }
        let list = try await LiveTable(store, byUnread)
        #expect(rows(list).isEmpty)
        var values: [String] = []
        for number in 0..<200 {
            values.append("('imp\(number)', '', \(number % 3 == 0 ? 1 : 0), \(number), 0.5, \(boards[number % 5].id!.rawValue))")
        }
        try Shell.sqlite3(
            path, "INSERT INTO post (guid, title, isRead, size, score, board) VALUES \(values.joined(separator: ", "));")
        try store.synchronize()
        try await list.settle()
        #expect(rows(list).count == 5)
        #expect(try DerivedOracle.mismatches(store).isEmpty)
        let unread = rows(list).map(\.unreadCount).reduce(0, +)
        #expect(unread == 133)  // the numbers below 200 not divisible by 3
    }
}
