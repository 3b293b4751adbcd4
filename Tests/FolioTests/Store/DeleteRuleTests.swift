import Foundation
import GRDB
import Testing
@testable import Folio

// Record types of the delete-rule suites: a holder and the things that point to it, with
// the holder's to-many rule chosen by a type (`Holder<Cascade>`…), so that every rule is
// the same tables in the file.

protocol RuleChoice: Sendable { static var rule: DeleteRule { get } }
enum Nullify: RuleChoice { static var rule: DeleteRule { .nullify } }
enum Cascade: RuleChoice { static var rule: DeleteRule { .cascade } }
enum Deny: RuleChoice { static var rule: DeleteRule { .deny } }
enum NoAction: RuleChoice { static var rule: DeleteRule { .noAction } }

struct Holder<Rule: RuleChoice>: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    static var entity: EntityDescription<Holder> {
        EntityDescription(
            "holder", [AttributeDescription(\.name)], relationships: [.toMany(\Thing<Rule>.holder, deleteRule: Rule.rule)])
    }
}

struct Thing<Rule: RuleChoice>: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var holder = ToOne<Holder<Rule>>()
    static var entity: EntityDescription<Thing> {
        EntityDescription("thing", [AttributeDescription(\.name)], relationships: [.toOne(\.holder)])
    }
}

/// How a test deletes the holder named "one".
enum Deleter: String, CaseIterable, Sendable {
    case folioDelete, deleteAll, batch, rawSQL, shell
}

/// The outcome every deleter must give: rows and tokens as a rule leaves them.
struct RuleCase: Sendable, CustomTestStringConvertible {
    var rule: DeleteRule
    var deleter: Deleter
    var testDescription: String { "\(rule) by \(deleter)" }
    static let all = DeleteRule.allCases.flatMap { rule in Deleter.allCases.map { RuleCase(rule: rule, deleter: $0) } }
}

@Suite("Delete rules")
struct DeleteRuleTests {
    /// Holders one, two (ids 1, 2); things a, b → one; c → two; d → nil.
    static func seed<Rule: RuleChoice>(_ store: Store, _ rule: Rule.Type) throws {
        try store.write { tx in
            var one = Holder<Rule>(name: "one"), two = Holder<Rule>(name: "two")
            try tx.insert(&one)
            try tx.insert(&two)
            for (name, holder) in [("a", one), ("b", one), ("c", two), ("d", nil)] {
                var thing = Thing<Rule>(name: name, holder: holder.map { ToOne($0) } ?? ToOne())
                try tx.insert(&thing)
            }
        }
    }

    /// Deletes the holder "one" (id 1) as `deleter` does; returns the error, if any.
    static func deleteOne<Rule: RuleChoice>(_ store: Store, path: String, _ deleter: Deleter, _ rule: Rule.Type) -> (any Error)? {
        do {
            switch deleter {
            case .folioDelete:
                try store.write { tx in try tx.delete(Holder<Rule>.self, id: RecordID(1)) }
            case .deleteAll:
                try store.write { tx in try tx.deleteAll(Holder<Rule>.self, where: #Predicate { $0.name == "one" }) }
            case .batch:
                // Several deletes in one transaction: a thing, the holder, another thing.
                try store.write { tx in
                    try tx.delete(Thing<Rule>.self, id: RecordID(4))
                    try tx.delete(Holder<Rule>.self, id: RecordID(1))
                    try tx.delete(Thing<Rule>.self, id: RecordID(999))
                }
            case .rawSQL:
                try store.write { tx in try tx.database.execute(sql: "DELETE FROM holder WHERE name = 'one'") }
            case .shell:
                try Shell.sqlite3(path, "PRAGMA foreign_keys = OFF; DELETE FROM holder WHERE name = 'one';")
                try store.synchronize()
            }
            return nil
        } catch {
            return error
        }
    }

    static func things<Rule: RuleChoice>(_ store: Store, _ rule: Rule.Type) throws -> [String: RecordID?] {
        let all = try store.fetch(RecordRequest<Thing<Rule>>(sortBy: [SortDescriptor(\.name)])).compactMap { $0 }
        return Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.holder.id) })
    }

    @Test(arguments: RuleCase.all)
    func aRuleHoldsWhoeverDeletes(_ setup: RuleCase) throws {
        switch setup.rule {
        case .nullify: try check(setup.deleter, Nullify.self)
        case .cascade: try check(setup.deleter, Cascade.self)
        case .deny: try check(setup.deleter, Deny.self)
        case .noAction: try check(setup.deleter, NoAction.self)
        }
    }

    func check<Rule: RuleChoice>(_ deleter: Deleter, _ rule: Rule.Type) throws {
        let directory = try ScratchDirectory()
        let path = directory.path("rules.sqlite")
        let store = try Store(path: path, records: [Holder<Rule>.self, Thing<Rule>.self])
        try Self.seed(store, rule)
        let tokens = (try store.changeToken(for: Holder<Rule>.self), try store.changeToken(for: Thing<Rule>.self))
        let error = Self.deleteOne(store, path: path, deleter, rule)
        let one = RecordID(1), two = RecordID(2)
        let holders = try store.fetch(RecordRequest<Holder<Rule>>(sortBy: [SortDescriptor(\.name)])).compactMap { $0?.name }
        let things = try Self.things(store, rule)
        // The batch deletes "d" too, when it is not denied.
        let d: [String: RecordID?] = deleter == .batch ? [:] : ["d": nil]
        switch Rule.rule {
        case .nullify:
            #expect(error == nil)
            #expect(holders == ["two"])
            #expect(things == ["a": nil, "b": nil, "c": two].merging(d) { a, _ in a })
        case .cascade:
            #expect(error == nil)
            #expect(holders == ["two"])
            #expect(things == ["c": two].merging(d) { a, _ in a })
        case .noAction:
            #expect(error == nil)
            #expect(holders == ["two"])
            #expect(things == ["a": one, "b": one, "c": two].merging(d) { a, _ in a })
            let dangling = try #require(
                try store.fetch(RecordRequest<Thing<Rule>>(sortBy: [SortDescriptor(\.name)])).first ?? nil)
            #expect(dangling.holder.id == one)
            #expect(try store.fetchOne(dangling.holder) == nil)
        case .deny:
            if deleter == .shell {
                let failure = try #require(error as? Shell.Failure)
                #expect(
                    failure.errors.contains(#"Folio: delete denied: a record of "holder" is referenced through "thing.holder""#))
            } else {
                #expect(error as? FolioError == .deleteDenied(entity: "holder", relationship: "thing.holder"))
            }
            #expect(holders == ["one", "two"])
            #expect(things == ["a": one, "b": one, "c": two, "d": nil])
            #expect(try store.changeToken(for: Holder<Rule>.self) == tokens.0)
            #expect(try store.changeToken(for: Thing<Rule>.self) == tokens.1)
        }
    }

    @Test func deniedIsNamedByHowFolioConvertsErrors() throws {
        let store = try Store.inMemory(records: [Holder<Deny>.self, Thing<Deny>.self])
        try Self.seed(store, Deny.self)
        // Caught inside the write: the transaction goes on, unchanged by the refused statement.
        let caught: FolioError? = try store.write { tx in
            do {
                try tx.database.execute(sql: "DELETE FROM holder")
                return nil
            } catch {
                return FolioError.converting(error)
            }
        }
        #expect(caught == .deleteDenied(entity: "holder", relationship: "thing.holder"))
        #expect(try store.count(RecordRequest<Holder<Deny>>(sortBy: [SortDescriptor(\.name)])) == 2)
        // A holder no thing points to can be deleted; then the other, once its thing is gone.
        try store.write { tx in
            var lone = Holder<Deny>(name: "lone")
            try tx.insert(&lone)
            #expect(try tx.delete(lone))
            try tx.deleteAll(Thing<Deny>.self, where: #Predicate { $0.name == "c" })
            #expect(try tx.delete(Holder<Deny>.self, id: RecordID(2)))
        }
        #expect(FolioError.deleteDenied(message: #"Folio: delete denied: a record of "x" is referenced through "y""#) == nil)
        #expect(FolioError.deleteDenied(message: "constraint failed") == nil)
        let message = FolioError.deleteDeniedMessage(entity: "é", relationship: "a.b")
        #expect(FolioError.deleteDenied(message: message) == .deleteDenied(entity: "é", relationship: "a.b"))
        #expect(FolioError.deleteDenied(entity: "holder", relationship: "thing.holder").description.contains("deny"))
    }

    @Test func aDeleteTheRuleRefusesInABatchUndoesTheWholeTransaction() throws {
        let store = try Store.inMemory(records: [Holder<Deny>.self, Thing<Deny>.self])
        try Self.seed(store, Deny.self)
        let before = try store.changeToken(for: Thing<Deny>.self)
        #expect(throws: FolioError.deleteDenied(entity: "holder", relationship: "thing.holder")) {
            try store.write { tx in
                try tx.deleteAll(Thing<Deny>.self, where: #Predicate { $0.name == "c" })
                try tx.delete(Holder<Deny>.self, id: RecordID(2))  // allowed: "c" is gone
                try tx.delete(Holder<Deny>.self, id: RecordID(1))  // denied: the whole write is undone
            }
        }
        #expect(try Self.things(store, Deny.self).count == 4)
        #expect(try store.count(RecordRequest<Holder<Deny>>(sortBy: [SortDescriptor(\.name)])) == 2)
        #expect(try store.changeToken(for: Thing<Deny>.self) == before)
    }
}
