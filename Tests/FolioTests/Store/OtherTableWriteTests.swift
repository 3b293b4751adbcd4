import Foundation
import GRDB
import Testing
@testable import Folio

/// A commit to another table, by any writer, is nothing to a live list: after
/// `synchronize()` (or before the store's next write) a controller delivers nothing and
/// the model does not notify, with or without a cache name, also after the list followed
/// commits of its own table (a tracker always keeps its table's change token).
@Suite("Live lists: another table's writes")
@MainActor
struct OtherTableWriteTests {
    enum Writer: String, CaseIterable, Sendable {
        case otherConnection, secondStore, sqliteShell
    }

    struct Setup: Sendable, CustomTestStringConvertible {
        var writer: Writer
        var cacheName: String?
        var testDescription: String { "\(writer.rawValue), \(cacheName.map { "cache \($0)" } ?? "no cache")" }
    }

    nonisolated static let setups: [Setup] = Writer.allCases.flatMap { writer in
        [Setup(writer: writer, cacheName: nil), Setup(writer: writer, cacheName: "articles")]
    }

    /// Writes a note to `path` the way `writer` does.
    static func writeNote(_ writer: Writer, path: String, secondStore: Store) throws {
        switch writer {
        case .otherConnection:
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in try db.execute(sql: "INSERT INTO note (text) VALUES ('elsewhere')") }
            try queue.close()
        case .secondStore:
            try writeSync(secondStore) { tx in
                var note = Note(text: "from the second store")
                try tx.insert(&note)
            }
        case .sqliteShell:
            try Shell.sqlite3(path, "INSERT INTO note (text) VALUES ('from the shell'); UPDATE note SET text = text || '!';")
        }
    }

    @Test(arguments: setups)
    func anotherTablesCommitThenSynchronizeDeliversNothing(_ setup: Setup) async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("two-tables.sqlite")
        let store = try Store(path: path, records: [Article.self, Note.self])
        let secondStore = try Store(path: path, records: [Article.self, Note.self])
        try seed(store, count: 30)
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.score)]), cacheName: setup.cacheName)
        let model = FetchedResultsModel(articles(), store: store, cacheName: setup.cacheName.map { $0 + "-model" })
        try await model.performFetch()
        let results = ObservationCounter { readEverythingButRecords(model) }

        // The list follows a commit of its own table first (before: its token was dropped then).
        let own = try await live.step { tx in try tx.database.execute(sql: "UPDATE article SET title = 'x' WHERE score = 3") }
        #expect(own.count == 1 && !(own.first?.isReload ?? true))
        await model.waitForChanges()
        _ = results.take()

        for round in 0..<2 {
            try Self.writeNote(setup.writer, path: path, secondStore: secondStore)
            try store.synchronize()
            #expect(try await live.settle() == [], "round \(round)")
            await model.waitForChanges()
            #expect(results.take() == 0, "round \(round)")
        }

        // Another table's commit just before one of the list's own: that commit is
        // followed row by row, not as a reload.
        try Self.writeNote(setup.writer, path: path, secondStore: secondStore)
        let next = try await live.step { tx in try tx.database.execute(sql: "UPDATE article SET score = 100 WHERE score = 4") }
        #expect(next.count == 1)
        #expect(next.first?.isReload == false)
        #expect(next.first?.movedIdentifiers.count == 1)
        await model.waitForChanges()
        #expect(results.take() >= 1)
        #expect(model.items.map(\.id) == Array(live.controller.snapshot.identifiers))

        // A write to the list's own table by another process is still seen, row by row.
        try Shell.sqlite3(path, "UPDATE article SET title = 'shell' WHERE score = 5")
        try store.synchronize()
        let external = try await live.settle()
        #expect(external.map(\.isReload) == [false])
        #expect(external.first?.updatedIdentifiers.count == 1)
    }

    /// A write that sets rows to their values renews the table's change token without
    /// reporting a row: the tracker reads the token again, so a later commit to another
    /// table still delivers nothing.
    @Test(arguments: [nil, "articles"] as [String?])
    func anUnchangedWriteThenAnotherTablesCommitDeliversNothing(cacheName: String?) async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("unchanged.sqlite")
        let store = try Store(path: path, records: [Article.self, Note.self])
        try seed(store, count: 20)
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.score)]), cacheName: cacheName)
        #expect(try await live.step { tx in try tx.database.execute(sql: "UPDATE article SET title = title") } == [])
        try Shell.sqlite3(path, "INSERT INTO note (text) VALUES ('after an unchanged write')")
        try store.synchronize()
        #expect(try await live.settle() == [])
    }

    @Test func observingExternalChangesDeliversNothingForAnotherTable() async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("observed.sqlite")
        let store = try Store(path: path, records: [Article.self, Note.self])
        try seed(store, count: 10)
        let live = try await LiveHarness(store, sorted([SortDescriptor(\.score)]))
        try await live.step { tx in try tx.database.execute(sql: "UPDATE article SET title = 'y' WHERE score = 1") }
        let task = store.observeExternalChanges(every: .milliseconds(20))
        defer { task.cancel() }
        try Shell.sqlite3(path, "INSERT INTO note (text) VALUES ('a'), ('b')")
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await live.settle() == [])
    }
}
