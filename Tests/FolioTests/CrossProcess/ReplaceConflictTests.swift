import Foundation
import GRDB
import Testing
@testable import Folio

// Rows that SQLite's REPLACE conflict resolution deletes for a unique value — by the `sqlite3`
// shell, a second raw connection, or raw SQL on the store's own connection, none of which
// sets `PRAGMA recursive_triggers` — reach open controllers as deletes, leave the full-text
// index, and keep the delete rules; conflicts resolved otherwise change nothing.

/// A note with a unique code and a searchable body.
struct RplNote: PersistentRecord, Equatable {
    var id: RecordID?
    var code = ""
    var body = ""
    var rank = 0

    static let entity = EntityDescription<RplNote>(
        "rplnote",
        [
            AttributeDescription(\.code, unique: true),
            AttributeDescription(\.body, searchable: true),
            AttributeDescription(\.rank, indexed: true),
        ])
}

/// A row without a unique attribute: only its rowid can conflict.
struct RplPlain: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var rank = 0

    static let entity = EntityDescription<RplPlain>(
        "rplplain", [AttributeDescription(\.name), AttributeDescription(\.rank, indexed: true)])
}

/// A parent with a unique key, its to-many's rule chosen by a type.
struct RplParent<Rule: RuleChoice>: PersistentRecord, Equatable {
    var id: RecordID?
    var key = ""
    static var entity: EntityDescription<RplParent> {
        EntityDescription(
            "rplparent", [AttributeDescription(\.key, unique: true)],
            relationships: [.toMany(\RplChild<Rule>.parent, deleteRule: Rule.rule)])
    }
}

struct RplChild<Rule: RuleChoice>: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var parent = ToOne<RplParent<Rule>>()
    static var entity: EntityDescription<RplChild> {
        EntityDescription("rplchild", [AttributeDescription(\.name)], relationships: [.toOne(\.parent)])
    }
}

/// An entity whose insert trigger would take the name of `rplclash`'s conflict trigger.
struct RplClash: PersistentRecord, Equatable {
    var id: RecordID?
    var key = ""
    static let entity = EntityDescription<RplClash>("rplclash", [AttributeDescription(\.key, unique: true)])
}

struct RplClashConflict: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<RplClashConflict>("rplclash_conflict", [AttributeDescription(\.name)])
}

/// Who writes the raw SQL: another process, another connection of this process, or the
/// store's own connection (`WriteTransaction.database`).
enum RplWriter: String, CaseIterable, Sendable {
    case shell, secondConnection, ownConnection

    func run(_ store: Store, _ sql: String) throws {
        switch self {
        case .shell:
            try Shell.sqlite3(store.path!, sql)
        case .secondConnection:
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: store.path!, configuration: configuration)
            try queue.write { db in try db.execute(sql: sql) }
            try queue.close()
        case .ownConnection:
            try store.write { tx in try tx.database.execute(sql: sql) }
        }
    }
}

/// A controller of any record whose change sets are applied to a table-view model.
@MainActor
final class RplTable<R: PersistentRecord>: FetchedResultsControllerDelegate {
    let controller: FetchedResultsController<R>
    var model: TableViewModel
    var changeSets: [ChangeSet] = []
    var failures: [String] = []

    init(_ store: Store, _ request: RecordRequest<R>) async throws {
        controller = FetchedResultsController(request, store: store)
        try await controller.performFetch()
        model = TableViewModel(controller.snapshot)
        controller.delegate = self
    }

    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
        do { try model.apply(changes, dataSource: controller.snapshot) } catch { failures.append("\(changes): \(error)") }
    }

    func fresh() throws -> TableViewModel {
        let fresh = FetchedResultsController(controller.fetchRequest, store: controller.store)
        fresh.firstScreenRule = nil
        try fresh.performFetch()
        return TableViewModel(fresh.snapshot)
    }

    /// Waits until the controller shows a fresh fetch (and `count` change sets came), then
    /// checks the change sets applied give the same.
    func settle(_ what: String, count: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [ChangeSet] {
        try controller.store.synchronize()
        for _ in 0..<2_000 {
            if changeSets.count >= count, TableViewModel(controller.snapshot) == (try fresh()) { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        let fresh = try fresh()
        #expect(TableViewModel(controller.snapshot) == fresh, "\(what): the controller follows", sourceLocation: sourceLocation)
        #expect(model == fresh, "\(what): the change sets applied give a fresh fetch", sourceLocation: sourceLocation)
        #expect(failures.isEmpty, "\(what): \(failures)", sourceLocation: sourceLocation)
        defer { changeSets = [] }
        return changeSets
    }
}

@Suite("REPLACE conflicts deleting rows, whoever writes")
@MainActor
struct ReplaceConflictTests {
    static let columns = "(title, url, published, score, category, isRead)"

    static func url(_ i: Int) -> String { "'https://example.com/\(i)'" }

    /// The seeded articles' ids: article `i` (url …/i, score i) has id i + 1.
    static func id(_ i: Int) -> RecordID { RecordID(Int64(i + 1)) }

    static func ids(_ changes: [ChangeSet], _ path: KeyPath<ChangeSet, [RecordID]>) -> Set<RecordID> {
        Set(changes.flatMap { $0[keyPath: path] })
    }

    /// Every REPLACE form, each deleting another row for its unique value (or its rowid):
    /// each deleted row leaves the list as a delete; a row replaced under its own rowid is
    /// an update.
    @Test(arguments: RplWriter.allCases)
    func everyReplaceFormDeletesTheConflictingRowFromTheList(_ writer: RplWriter) async throws {
        let directory = try ScratchDirectory()
        let store = try Store(path: directory.path("store.sqlite"), records: [Article.self])
        try seed(store, count: 60)
        let table = try await RplTable(store, RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]))
        let c = Self.columns

        try writer.run(store, "INSERT OR REPLACE INTO article \(c) VALUES ('r1', \(Self.url(5)), 0, 500, 'b', 0);")
        var changes = try await table.settle("INSERT OR REPLACE", count: 1)
        #expect(Self.ids(changes, \.deletedIdentifiers) == [Self.id(5)], "\(changes)")
        #expect(changes.flatMap(\.insertedItems).count == 1)

        try writer.run(store, "REPLACE INTO article \(c) VALUES ('r2', \(Self.url(7)), 0, 501, 'b', 0);")
        changes = try await table.settle("REPLACE INTO", count: 1)
        #expect(Self.ids(changes, \.deletedIdentifiers) == [Self.id(7)], "\(changes)")

        try writer.run(store, "UPDATE OR REPLACE article SET url = \(Self.url(9)) WHERE url = \(Self.url(10));")
        changes = try await table.settle("UPDATE OR REPLACE", count: 1)
        #expect(Self.ids(changes, \.deletedIdentifiers) == [Self.id(9)], "\(changes)")

        // The same rowid, the same unique value: the row stays, changed.
        try writer.run(
            store, "INSERT OR REPLACE INTO article (id, \(c.dropFirst()) VALUES (12, 'same', \(Self.url(11)), 0, 11, 'c', 1);")
        changes = try await table.settle("the same rowid", count: 1)
        #expect(changes.flatMap(\.deletedItems).isEmpty, "\(changes)")
        #expect(Self.ids(changes, \.updatedIdentifiers) == [Self.id(11)], "\(changes)")

        // Its rowid (article 13) and the unique value of another row (article 20): both go,
        // the row comes back under id 14.
        try writer.run(
            store, "INSERT OR REPLACE INTO article (id, \(c.dropFirst()) VALUES (14, 'both', \(Self.url(20)), 0, 13, 'c', 1);")
        changes = try await table.settle("a rowid and a unique value", count: 1)
        #expect(Self.ids(changes, \.deletedIdentifiers) == [Self.id(20)], "\(changes)")
        #expect(try readNow(store) { db in try String.fetchOne(db, sql: "SELECT title FROM article WHERE id = 14") } == "both")

        // Several rows in one statement, each replacing another.
        try writer.run(
            store,
            "INSERT OR REPLACE INTO article \(c) SELECT 'copy', 'https://example.com/' || (score + 10), 0, score + 1000, 'd', 0 FROM article WHERE score BETWEEN 30 AND 33;"
        )
        changes = try await table.settle("a multi-row INSERT OR REPLACE", count: 1)
        #expect(Self.ids(changes, \.deletedIdentifiers) == Set((40...43).map(Self.id)), "\(changes)")
        #expect(changes.flatMap(\.insertedItems).count == 4)

        // An update of several rows to one value: each replaces the one before.
        try writer.run(store, "UPDATE OR REPLACE article SET url = 'chain' WHERE score BETWEEN 50 AND 53;")
        changes = try await table.settle("UPDATE OR REPLACE of several rows", count: 1)
        #expect(Self.ids(changes, \.deletedIdentifiers) == Set((50...52).map(Self.id)), "\(changes)")
        #expect(try readNow(store) { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM article WHERE url = 'chain'") } == 1)
        #expect(store.diagnostics.counters.changeLogReloads == 0)
        #expect(changes.allSatisfy { !$0.isReload })
    }

    /// Conflicts resolved by ignoring, doing nothing, updating or failing delete nothing,
    /// log no deleted row and deliver nothing; the next real change is the only one seen.
    @Test(arguments: RplWriter.allCases)
    func conflictsResolvedOtherwiseChangeNothing(_ writer: RplWriter) async throws {
        let directory = try ScratchDirectory()
        let store = try Store(path: directory.path("store.sqlite"), records: [Article.self])
        try seed(store, count: 20)
        let table = try await RplTable(store, RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]))
        let c = Self.columns
        let before = try readNow(store) { db in try Row.fetchAll(db, sql: "SELECT * FROM article ORDER BY id") }
        let logged = { try readNow(store) { db in try Int.fetchOne(db, sql: "SELECT max(seq) FROM folio_changes") } }
        let seq = try logged()
        let ignored = [
            "INSERT OR IGNORE INTO article \(c) VALUES ('x', \(Self.url(3)), 0, 999, 'a', 0);",
            "INSERT INTO article \(c) VALUES ('x', \(Self.url(3)), 0, 999, 'a', 0) ON CONFLICT DO NOTHING;",
            "INSERT INTO article \(c) VALUES ('x', \(Self.url(3)), 0, 999, 'a', 0) ON CONFLICT(url) DO NOTHING;",
            "UPDATE OR IGNORE article SET url = \(Self.url(4)) WHERE url = \(Self.url(5));",
            // An upsert that sets the values the row has.
            "INSERT INTO article \(c) VALUES ('Article 6', \(Self.url(6)), 21600, 6, 'c', 0) ON CONFLICT(url) DO UPDATE SET score = excluded.score;",
        ]
        for sql in ignored { try writer.run(store, sql) }
        let failing = [
            "INSERT INTO article \(c) VALUES ('x', \(Self.url(3)), 0, 999, 'a', 0);",
            "INSERT OR ABORT INTO article \(c) VALUES ('x', \(Self.url(3)), 0, 999, 'a', 0);",
            "INSERT OR FAIL INTO article \(c) VALUES ('x', \(Self.url(3)), 0, 999, 'a', 0);",
            "INSERT OR ROLLBACK INTO article \(c) VALUES ('x', \(Self.url(3)), 0, 999, 'a', 0);",
            "UPDATE article SET url = \(Self.url(4)) WHERE url = \(Self.url(5));",
            "UPDATE OR ABORT article SET url = \(Self.url(4)) WHERE url = \(Self.url(5));",
        ]
        for sql in failing {
            #expect(throws: (any Error).self, "\(sql)") { try writer.run(store, sql) }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await table.settle("conflicts resolved otherwise").isEmpty)
        #expect(try readNow(store) { db in try Row.fetchAll(db, sql: "SELECT * FROM article ORDER BY id") } == before)
        #expect(try logged() == seq, "nothing logged")

        // The next change is delivered alone: no noted row turns into an update or a delete.
        try writer.run(store, "UPDATE article SET title = 'changed' WHERE score = 10;")
        let changes = try await table.settle("the next change", count: 1)
        #expect(changes.count == 1, "\(changes)")
        #expect(Self.ids(changes, \.updatedIdentifiers) == [Self.id(10)], "\(changes)")
        #expect(changes.flatMap(\.deletedItems).isEmpty && changes.flatMap(\.insertedItems).isEmpty)
        #expect(try readNow(store) { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
    }

    /// A row replaced for its unique value leaves the full-text index, and live searches.
    @Test(arguments: RplWriter.allCases)
    func aReplacedRowLeavesTheSearchIndex(_ writer: RplWriter) async throws {
        let directory = try ScratchDirectory()
        let store = try Store(path: directory.path("store.sqlite"), records: [RplNote.self])
        try writeSync(store) { tx in
            for (i, word) in ["apple", "banana", "cherry", "apple pie", "date"].enumerated() {
                var note = RplNote(code: "c\(i)", body: word, rank: i)
                try tx.insert(&note)
            }
        }
        var request = RecordRequest<RplNote>(sortBy: [SortDescriptor(\.rank)])
        request.search = TextSearch("apple")
        let table = try await RplTable(store, request)
        #expect(table.controller.snapshot.numberOfItems == 2)
        // Replaces "apple" (c0, id 1) with a row that is not an apple; and the banana by an apple.
        try writer.run(store, "INSERT OR REPLACE INTO rplnote (code, body, rank) VALUES ('c0', 'kiwi', 10);")
        try writer.run(store, "UPDATE OR REPLACE rplnote SET code = 'c1' WHERE code = 'c3';")
        let changes = try await table.settle("searched list", count: 1)
        #expect(Self.ids(changes, \.deletedIdentifiers) == [RecordID(1)], "\(changes)")
        let (indexed, rows, gone) = try readNow(store) { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_rplnote_fts"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM rplnote"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_rplnote_fts WHERE rowid IN (1, 2)")
            )
        }
        #expect(indexed == rows && rows == 4 && gone == 0, "\(String(describing: indexed)) \(String(describing: rows))")
        let found = try fetchNow(store, request).compactMap { $0?.body }
        #expect(found == ["apple pie"])
        var kiwi = RecordRequest<RplNote>(sortBy: [SortDescriptor(\.rank)])
        kiwi.search = TextSearch("kiwi")
        #expect(try fetchNow(store, kiwi).compactMap { $0?.code } == ["c0"])
    }

    /// Without a unique attribute only the rowid conflicts: the row stays, an update; no
    /// conflict trigger is made.
    @Test(arguments: RplWriter.allCases)
    func anEntityWithoutUniqueAttributesReplacesInPlace(_ writer: RplWriter) async throws {
        let directory = try ScratchDirectory()
        let store = try Store(path: directory.path("store.sqlite"), records: [RplPlain.self])
        try writeSync(store) { tx in
            for i in 0..<5 {
                var row = RplPlain(name: "p\(i)", rank: i)
                try tx.insert(&row)
            }
        }
        let table = try await RplTable(store, RecordRequest<RplPlain>(sortBy: [SortDescriptor(\.rank)]))
        try writer.run(store, "INSERT OR REPLACE INTO rplplain (id, name, rank) VALUES (2, 'moved', 100);")
        let changes = try await table.settle("the same rowid", count: 1)
        #expect(changes.flatMap(\.deletedItems).isEmpty && changes.flatMap(\.movedItems).count == 1, "\(changes)")
        let triggers = try readNow(store) { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%replaced%'")
        }
        #expect(triggers == 0)
    }

    /// A parent replaced for its unique key keeps its to-many's delete rule, whoever writes:
    /// its children cascade, are nullified, or the statement is refused (deny); with no
    /// action they keep pointing to the deleted row, as after a plain delete.
    @Test(arguments: DeleteRule.allCases.flatMap { rule in RplWriter.allCases.map { (rule, $0) } })
    func aReplacedParentKeepsItsDeleteRule(_ rule: DeleteRule, _ writer: RplWriter) async throws {
        switch rule {
        case .nullify: try await checkRule(Nullify.self, writer)
        case .cascade: try await checkRule(Cascade.self, writer)
        case .deny: try await checkRule(Deny.self, writer)
        case .noAction: try await checkRule(NoAction.self, writer)
        }
    }

    func checkRule<Rule: RuleChoice>(_ rule: Rule.Type, _ writer: RplWriter) async throws {
        let directory = try ScratchDirectory()
        let store = try Store(path: directory.path("rules.sqlite"), records: [RplParent<Rule>.self, RplChild<Rule>.self])
        // Parents k1, k2, k3 (ids 1, 2, 3); children a, b → k1; c → k2; d → k3.
        try writeSync(store) { tx in
            var parents: [RplParent<Rule>] = []
            for key in ["k1", "k2", "k3"] {
                var parent = RplParent<Rule>(key: key)
                try tx.insert(&parent)
                parents.append(parent)
            }
            for (name, parent) in [("a", 0), ("b", 0), ("c", 1), ("d", 2)] {
                var child = RplChild<Rule>(name: name, parent: ToOne(parents[parent]))
                try tx.insert(&child)
            }
        }
        let children = try await RplTable(store, RecordRequest<RplChild<Rule>>(sortBy: [SortDescriptor(\.name)]))
        let parents = try await RplTable(store, RecordRequest<RplParent<Rule>>(sortBy: [SortDescriptor(\.key)]))
        var errors: [any Error] = []
        for sql in [
            "INSERT OR REPLACE INTO rplparent (key) VALUES ('k1');",
            "UPDATE OR REPLACE rplparent SET key = 'k2' WHERE key = 'k3';",
        ] {
            do { try writer.run(store, sql) } catch { errors.append(error) }
        }
        _ = try await parents.settle("parents")
        _ = try await children.settle("children")
        let rows = try readNow(store) { db in
            try Row.fetchAll(db, sql: "SELECT name, parent FROM rplchild ORDER BY name").map {
                "\($0[0] as String)→\(($0[1] as Int64?).map(String.init) ?? "nil")"
            }
        }
        let keys = try readNow(store) { db in try String.fetchAll(db, sql: "SELECT key || ':' || id FROM rplparent ORDER BY key")
        }
        switch Rule.rule {
        case .cascade:
            #expect(errors.isEmpty, "\(errors)")
            #expect(keys == ["k1:4", "k2:3"])
            #expect(rows == ["d→3"])
        case .nullify:
            #expect(errors.isEmpty, "\(errors)")
            #expect(keys == ["k1:4", "k2:3"])
            #expect(rows == ["a→nil", "b→nil", "c→nil", "d→3"])
        case .noAction:
            #expect(errors.isEmpty, "\(errors)")
            #expect(rows == ["a→1", "b→1", "c→2", "d→3"])
        case .deny:
            #expect(errors.count == 2, "both refused")
            if writer == .ownConnection {
                #expect(
                    errors.allSatisfy { ($0 as? FolioError).map { if case .deleteDenied = $0 { true } else { false } } ?? false },
                    "\(errors)")
            }
            #expect(keys == ["k1:1", "k2:2", "k3:3"])
            #expect(rows == ["a→1", "b→1", "c→2", "d→3"])
        }
        #expect(try readNow(store) { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
    }

    /// A file of internal schema version 3 (no conflict triggers, no `folio_replaced`) is
    /// upgraded at open; REPLACE then deletes rows from the list as in a new file.
    @Test func aVersionThreeFileIsUpgradedAtOpen() async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("store.sqlite")
        do {
            let store = try Store(path: path, records: [Article.self])
            try seed(store, count: 10)
            try store.close()
        }
        // Made as version 3 made it.
        let queue = try DatabaseQueue(path: path)
        try writeSync(queue) { db in
            for name in SQLBuilder.replaceTriggerNames(table: "article") { try db.execute(sql: "DROP TRIGGER IF EXISTS \(name)") }
            try db.execute(sql: "DROP TABLE folio_replaced")
            try db.execute(sql: "UPDATE folio_metadata SET value = 3 WHERE key = 'internal_schema_version'")
        }
        try queue.close()
        let store = try Store(path: path, records: [Article.self])
        let (version, triggers, table) = try readNow(store) { db in
            (
                try Int.fetchOne(db, sql: "SELECT value FROM folio_metadata WHERE key = 'internal_schema_version'"),
                try Int.fetchOne(
                    db,
                    sql:
                        "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'article' AND (name LIKE '%conflict%' OR name LIKE '%replaced%')"
                ),
                try db.tableExists("folio_replaced")
            )
        }
        #expect(version == 4 && triggers == 4 && table)
        let list = try await RplTable(store, RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]))
        try Shell.sqlite3(path, "REPLACE INTO article \(Self.columns) VALUES ('r', \(Self.url(2)), 0, 50, 'a', 0);")
        let changes = try await list.settle("after the upgrade", count: 1)
        #expect(Self.ids(changes, \.deletedIdentifiers) == [Self.id(2)], "\(changes)")
    }

    /// The conflict triggers' names are claimed with the others': a model where another
    /// entity's trigger would take one is refused before the file is touched.
    @Test func aConflictTriggerNameTakenByAnotherEntityIsAClash() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("clash.sqlite")
        do {
            _ = try Store(path: path, records: [RplClash.self, RplClashConflict.self])
            Issue.record("opened")
        } catch FolioError.nameClash(let name, _, _) {
            #expect(name.lowercased() == "folio_rplclash_conflict_ins")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

/// The synchronous fetch, callable from async tests.
private func fetchNow<R: PersistentRecord>(_ store: Store, _ request: RecordRequest<R>) throws -> [R?] {
    try store.fetch(request).map { $0 }
}
