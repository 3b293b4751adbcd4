import Foundation
import GRDB
import Testing
@testable import Folio

/// A folder and its subfolders: deleting a folder deletes its subtree (a cascade within one
/// entity), and its documents with it (a cascade to another entity).
struct TreeFolder: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var parent = ToOne<TreeFolder>()
    static let entity = EntityDescription<TreeFolder>(
        "folder", [AttributeDescription(\.name, unique: true)],
        relationships: [
            .toOne(\.parent), .toMany(\TreeFolder.parent, deleteRule: .cascade),
            .toMany(\TreeDocument.folder, deleteRule: .cascade),
        ])
}

struct TreeDocument: PersistentRecord, Equatable {
    var id: RecordID?
    var title = ""
    var folder = ToOne<TreeFolder>()
    static let entity = EntityDescription<TreeDocument>(
        "document", [AttributeDescription(\.title)], relationships: [.toOne(\.folder)])
}

/// Trees: a cascade within one entity holds for every writer — Folio, the `sqlite3` shell
/// (which sets no `recursive_triggers`), a program that does set it, a `REPLACE` — without
/// looping on a cycle another program wrote, and live lists see every row it deleted.
@Suite("Relationships: trees")
struct TreeTests {
    let directory: ScratchDirectory
    var path: String { directory.path("tree.sqlite") }

    init() throws { directory = try ScratchDirectory() }

    func open() throws -> Store { try Store(path: path, records: [TreeFolder.self, TreeDocument.self]) }

    /// Rows that point to a missing folder: none may be left by a cascade.
    func orphans(_ store: Store) throws -> Int {
        try store.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT (SELECT count(*) FROM folder WHERE parent IS NOT NULL AND parent NOT IN (SELECT id FROM folder)) \
                    + (SELECT count(*) FROM document WHERE folder IS NOT NULL AND folder NOT IN (SELECT id FROM folder))
                    """) ?? -1
        }
    }

    func count(_ store: Store, _ table: String) throws -> Int {
        try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? -1 }
    }

    /// A tree of `count` folders written by the shell: folder i's parent is (i - 1) / 3 (a
    /// ternary tree rooted at 1, with ids from 1), each with one document.
    func shellTree(_ count: Int) throws {
        try Shell.sqlite3(
            path,
            """
            WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < \(count))
            INSERT INTO folder (id, name, parent) SELECT i, 'f' || i, CASE WHEN i = 1 THEN NULL ELSE (i + 1) / 3 END FROM seq;
            INSERT INTO document (title, folder) SELECT 'd', id FROM folder;
            """)
    }

    @Test func theShellDeletesASubtreeOfTenThousandFolders() throws {
        let store = try open()
        try shellTree(10_000)
        #expect(try count(store, "folder") == 10_000)
        // TreeFolder 2's subtree: 2, 5…7, 14…22, …: every descendant, not only its children.
        let subtree = try store.read { db in
            try Int.fetchOne(
                db,
                sql:
                    "WITH RECURSIVE s(id) AS (SELECT 2 UNION SELECT folder.id FROM folder JOIN s ON folder.parent = s.id) SELECT count(*) FROM s"
            ) ?? 0
        }
        #expect(subtree > 3_000)
        try Shell.sqlite3(path, "DELETE FROM folder WHERE id = 2;")
        #expect(try count(store, "folder") == 10_000 - subtree)
        #expect(try count(store, "document") == 10_000 - subtree)
        #expect(try orphans(store) == 0)
        // The root, by a program that sets recursive_triggers: everything.
        try Shell.sqlite3(path, "PRAGMA recursive_triggers = ON; DELETE FROM folder WHERE id = 1;")
        #expect(try count(store, "folder") == 0)
        #expect(try count(store, "document") == 0)
    }

    @Test func folioDeletesASubtreeAndAnAnotherProgramsCycleEnds() throws {
        let store = try open()
        try shellTree(40)
        _ = try writeSync(store) { tx in try tx.delete(TreeFolder.self, id: RecordID(3)) }
        #expect(try orphans(store) == 0)
        // A cycle another program wrote (a folder its own parent, two folders each other's).
        try Shell.sqlite3(
            path,
            """
            INSERT INTO folder (id, name, parent) VALUES (100, 'self', 100), (101, 'a', 102), (102, 'b', 101), (103, 'c', 101);
            INSERT INTO document (title, folder) VALUES ('in a cycle', 102);
            DELETE FROM folder WHERE id = 100;
            DELETE FROM folder WHERE id = 101;
            """)
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM folder WHERE id >= 100") } == 0)
        #expect(try orphans(store) == 0)
        try Shell.sqlite3(
            path,
            "PRAGMA recursive_triggers = ON; INSERT INTO folder (id, name, parent) VALUES (200, 'x', 201), (201, 'y', 200); DELETE FROM folder WHERE id = 200;"
        )
        #expect(try orphans(store) == 0)
    }

    @Test func aReplaceThatDeletesAFolderDeletesItsSubtree() throws {
        let store = try open()
        try shellTree(40)
        let before = try count(store, "folder")
        // 'f2' taken by a new row: the old folder 2 is deleted unseen by delete triggers.
        try Shell.sqlite3(path, "INSERT OR REPLACE INTO folder (name, parent) VALUES ('f2', NULL);")
        #expect(try orphans(store) == 0)
        #expect(try count(store, "folder") < before)
    }

    @MainActor
    @Test func aLiveListOfFoldersSeesEverySubtreeRowDeleted() async throws {
        let store = try Store.temporary(records: [TreeFolder.self, TreeDocument.self])
        try writeSync(store) { tx in
            var ids: [RecordID] = []
            for index in 0..<200 {
                var folder = TreeFolder(name: "f\(index)", parent: ToOne(index == 0 ? nil : ids[(index - 1) / 3]))
                try tx.insert(&folder)
                ids.append(folder.id!)
            }
        }
        let list = try await LiveTable(store, RecordRequest<TreeFolder>(sortBy: [SortDescriptor(\.name)]))
        let changes = try await list.step { tx in _ = try tx.delete(TreeFolder.self, id: RecordID(2)) }
        let deleted = changes.flatMap(\.deletedIdentifiers).count
        #expect(deleted > 60)
        #expect(deleted + (list.controller.fetchedObjects?.count ?? 0) == 200)
    }
}
