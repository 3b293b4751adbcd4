import Foundation
import GRDB
import Testing
@testable import Folio

// Models the store refuses at open, and the triggers it keeps exactly the declared ones.

struct Lost: PersistentRecord {
    var id: RecordID?
    static let entity = EntityDescription<Lost>("lost", [])
}

struct Orphan: PersistentRecord {
    var id: RecordID?
    var lost = ToOne<Lost>()
    static let entity = EntityDescription<Orphan>("orphan", [], relationships: [.toOne(\.lost)])
}

/// A to-many whose child holds the reference without declaring the to-one.
struct Undeclared: PersistentRecord {
    var id: RecordID?
    var owner = ToOne<Owner>()
    static let entity = EntityDescription<Undeclared>("undeclared", [])
}

struct Owner: PersistentRecord {
    var id: RecordID?
    static let entity = EntityDescription<Owner>("owner", [], relationships: [.toMany(\Undeclared.owner)])
}

/// Two to-manys with one inverse.
struct Twice: PersistentRecord {
    var id: RecordID?
    static let entity = EntityDescription<Twice>(
        "twice", [], relationships: [.toMany(\Once.twice, deleteRule: .cascade), .toMany(\Once.twice, deleteRule: .deny)])
}

struct Once: PersistentRecord {
    var id: RecordID?
    var twice = ToOne<Twice>()
    static let entity = EntityDescription<Once>("once", [], relationships: [.toOne(\.twice)])
}

/// A tree: a node's rule for its children is chosen by a type.
struct Node<Rule: RuleChoice>: PersistentRecord {
    var id: RecordID?
    var name = ""
    var parent = ToOne<Node>()
    static var entity: EntityDescription<Node> {
        EntityDescription(
            "node", [AttributeDescription(\.name)],
            relationships: [.toOne(\.parent), .toMany(\Node.parent, deleteRule: Rule.rule)])
    }
}

/// Two entities that cascade to each other.
struct Ping: PersistentRecord {
    var id: RecordID?
    var pong = ToOne<Pong>()
    static let entity = EntityDescription<Ping>(
        "ping", [], relationships: [.toOne(\.pong), .toMany(\Pong.ping, deleteRule: .cascade)])
}

struct Pong: PersistentRecord {
    var id: RecordID?
    var ping = ToOne<Ping>()
    static let entity = EntityDescription<Pong>(
        "pong", [], relationships: [.toOne(\.ping), .toMany(\Ping.pong, deleteRule: .cascade)])
}

/// Trigger names that clash: `p_c` ← `x.y` and `p` ← `c_x.y` both want `folio_rule_p_c_x_y`.
struct ClashP: PersistentRecord {
    var id: RecordID?
    static let entity = EntityDescription<ClashP>("p", [])
}

struct ClashPC: PersistentRecord {
    var id: RecordID?
    static let entity = EntityDescription<ClashPC>("p_c", [])
}

struct ClashX: PersistentRecord {
    var id: RecordID?
    var y = ToOne<ClashPC>()
    static let entity = EntityDescription<ClashX>("x", [], relationships: [.toOne(\.y)])
}

struct ClashCX: PersistentRecord {
    var id: RecordID?
    var y = ToOne<ClashP>()
    static let entity = EntityDescription<ClashCX>("c_x", [], relationships: [.toOne(\.y)])
}

/// An entity whose change triggers start as delete-rule triggers do (`folio_rule_x_ins`).
struct RuleX: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<RuleX>("rule_x", [AttributeDescription(\.name)])
}

@Suite("Delete rules: the model and the file's triggers")
struct DeleteRuleModelTests {
    static func invalidReason(_ records: [any PersistentRecord.Type]) -> (entity: String, reason: String)? {
        do {
            _ = try Store.inMemory(records: records)
        } catch FolioError.invalidSchema(let entity, let reason) {
            return (entity, reason)
        } catch {
            Issue.record("unexpected \(error)")
        }
        return nil
    }

    @Test func relationshipsTheModelCannotKeepAreRefusedAtOpen() throws {
        let missing = try #require(Self.invalidReason([Orphan.self]))
        #expect(missing.entity == "orphan" && missing.reason.contains("'lost'") && missing.reason.contains("does not declare"))
        let child = try #require(Self.invalidReason([Owner.self]))
        #expect(child.entity == "owner" && child.reason.contains("'undeclared'"))
        let notToOne = try #require(Self.invalidReason([Owner.self, Undeclared.self]))
        #expect(notToOne.entity == "owner" && notToOne.reason.contains("not a to-one of 'undeclared'"))
        let twice = try #require(Self.invalidReason([Twice.self, Once.self]))
        #expect(twice.entity == "twice" && twice.reason.contains("two to-manys"))
        // A cascade within one entity is a tree, kept (see TreeTests); a cycle through others is not.
        #expect(throws: Never.self) { try Store.inMemory(records: [Node<Cascade>.self]) }
        let cycle = try #require(Self.invalidReason([Ping.self, Pong.self]))
        #expect(cycle.reason.contains("cascade back") && cycle.reason.contains("recursive_triggers"))
        #expect(throws: FolioError.self) { try Store.inMemory(records: [ClashP.self, ClashPC.self, ClashX.self, ClashCX.self]) }
        do {
            _ = try Store.inMemory(records: [ClashP.self, ClashPC.self, ClashX.self, ClashCX.self])
        } catch FolioError.nameClash(let name, _, _) {
            #expect(name == "folio_rule_p_c_x_y")
        }
    }

    @Test func aTreeNullifiesOrDeniesItsChildren() throws {
        let store = try Store.inMemory(records: [Node<Nullify>.self])
        try store.write { tx in
            var root = Node<Nullify>(name: "root")
            try tx.insert(&root)
            for name in ["a", "b"] {
                var node = Node<Nullify>(name: name, parent: ToOne(root))
                try tx.insert(&node)
            }
            try tx.delete(root)
        }
        let nodes = try store.fetch(RecordRequest<Node<Nullify>>(sortBy: [SortDescriptor(\.name)])).compactMap { $0 }
        #expect(nodes.map(\.name) == ["a", "b"] && nodes.allSatisfy { $0.parent.id == nil })

        let denying = try Store.inMemory(records: [Node<Deny>.self])
        #expect(throws: FolioError.deleteDenied(entity: "node", relationship: "node.parent")) {
            try denying.write { tx in
                var root = Node<Deny>(name: "root")
                try tx.insert(&root)
                var leaf = Node<Deny>(name: "leaf", parent: ToOne(root))
                try tx.insert(&leaf)
                try tx.delete(root)
            }
        }
    }

    static func ruleTriggers(_ path: String) throws -> String {
        try Shell.sqlite3(path, "SELECT name || ' ' || sql FROM sqlite_master WHERE name GLOB 'folio_rule*' ORDER BY name")
    }

    @Test func theTriggersFollowTheDeclaredRuleAtEveryOpen() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("rules.sqlite")
        func open<R: RuleChoice>(_ rule: R.Type) throws -> Store {
            try Store(path: path, records: [Holder<R>.self, Thing<R>.self, RuleX.self])
        }
        var store: Store? = try open(Cascade.self)
        try DeleteRuleTests.seed(store!, Cascade.self)
        try store?.close()
        #expect(try Self.ruleTriggers(path).contains("AFTER DELETE ON \"holder\" BEGIN DELETE FROM \"thing\""))
        // Opened again as it is: the trigger is not made again (its row in the schema stays).
        let schema = "SELECT rowid, type, name, sql FROM sqlite_master ORDER BY rowid"
        let before = try Shell.sqlite3(path, schema)
        store = try open(Cascade.self)
        try store?.close()
        #expect(try Shell.sqlite3(path, schema) == before)

        // Cascade → deny: the next open replaces the trigger.
        store = try open(Deny.self)
        #expect(throws: FolioError.deleteDenied(entity: "holder", relationship: "thing.holder")) {
            try store?.write { tx in try tx.delete(Holder<Deny>.self, id: RecordID(1)) }
        }
        try store?.close()
        // Another program drops it: made again at the next open.
        try Shell.sqlite3(path, "DROP TRIGGER folio_rule_holder_thing_holder")
        store = try open(Deny.self)
        try store?.close()
        #expect(try Self.ruleTriggers(path).contains("RAISE(ABORT"))
        // No action: no trigger; the entity `rule_x` keeps its change triggers.
        store = try open(NoAction.self)
        #expect(try Self.ruleTriggers(path).split(separator: "\n").allSatisfy { $0.hasPrefix("folio_rule_x_") })
        #expect(
            try Shell.sqlite3(path, "SELECT count(*) FROM sqlite_master WHERE name GLOB 'folio_rule_x_*'") == "4",
            "three change triggers and the log's")
        try store?.write { tx in try tx.delete(Holder<NoAction>.self, id: RecordID(1)) }
        #expect(try store?.count(RecordRequest<Thing<NoAction>>(sortBy: [SortDescriptor(\.name)])) == 4)
        try store?.close()
        // Another model's trigger on a table this model does not declare is left alone.
        try Shell.sqlite3(
            path,
            "CREATE TABLE other (id INTEGER PRIMARY KEY); CREATE TRIGGER folio_rule_other AFTER DELETE ON other BEGIN SELECT 1; END"
        )
        store = try open(Nullify.self)
        try store?.close()
        let triggers = try Self.ruleTriggers(path)
        #expect(triggers.contains("folio_rule_other ") && triggers.contains("SET \"holder\" = NULL"))
    }

    @Test func aReferenceAnotherProgramWroteThatNamesNoRowReadsAsEmpty() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("refs.sqlite")
        let store = try Store(path: path, records: [Holder<NoAction>.self, Thing<NoAction>.self])
        try DeleteRuleTests.seed(store, NoAction.self)
        // Text that is no integer, a real, a blob; text of an integer becomes the integer
        // (the column's INTEGER affinity); a missing row.
        try Shell.sqlite3(
            path,
            "UPDATE thing SET holder = CASE name WHEN 'a' THEN 'abc' WHEN 'b' THEN 2.5 WHEN 'c' THEN x'01' ELSE '2' END; INSERT INTO thing (name, holder) VALUES ('e', 77)"
        )
        try store.synchronize()
        let things = try store.fetch(RecordRequest<Thing<NoAction>>(sortBy: [SortDescriptor(\.name)])).compactMap { $0 }
        #expect(things.map(\.holder.id) == [nil, nil, nil, RecordID(2), RecordID(77)])
        let targets = try store.fetchTargets(things.map(\.holder))
        #expect(targets.keys.sorted() == [RecordID(2)] && targets[RecordID(2)]?.name == "two")
        #expect(try store.fetchOne(things[0].holder) == nil)
        #expect(try store.fetchOne(things[4].holder) == nil)
        #expect(try store.fetchTargets([ToOne<Holder<NoAction>>]()) == [:])
        // One query for all, as for one.
        let recorder = SQLRecorder(store)
        _ = try store.fetchTargets(Array(repeating: things[3].holder, count: 500) + things.map(\.holder))
        #expect(recorder.statements.filter { $0.contains("FROM \"holder\"") }.count == 1)
        #expect(throws: FolioError.unknownEntity(String(describing: Lost.self))) { try store.fetchOne(ToOne<Lost>(RecordID(1))) }
    }
}
