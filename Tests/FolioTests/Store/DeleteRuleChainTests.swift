import Foundation
import GRDB
import Testing
@testable import Folio

// Three entities: a folder cascades to its docs, a doc's rule for its pages is chosen by a
// type (cascade: a chain; deny: a deny below a cascade).

struct Folder<PageRule: RuleChoice>: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    static var entity: EntityDescription<Folder> {
        EntityDescription(
            "folder", [AttributeDescription(\.name)], relationships: [.toMany(\Doc<PageRule>.folder, deleteRule: .cascade)])
    }
}

struct Doc<PageRule: RuleChoice>: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var folder = ToOne<Folder<PageRule>>()
    static var entity: EntityDescription<Doc> {
        EntityDescription(
            "doc", [AttributeDescription(\.name)],
            relationships: [.toOne(\.folder), .toMany(\Page<PageRule>.doc, deleteRule: PageRule.rule)])
    }
}

struct Page<PageRule: RuleChoice>: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var doc = ToOne<Doc<PageRule>>()
    static var entity: EntityDescription<Page> {
        EntityDescription("page", [AttributeDescription(\.name)], relationships: [.toOne(\.doc)])
    }
}

/// A to-one whose target declares no inverse: nullified, as Core Data's default.
struct Colour: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<Colour>("tag", [AttributeDescription(\.name)])
}

struct Sticker: PersistentRecord {
    var id: RecordID?
    var text = ""
    var tag = ToOne<Colour>()
    static let entity = EntityDescription<Sticker>("label", [AttributeDescription(\.text)], relationships: [.toOne(\.tag)])
}

/// Records a controller's change sets.
@MainActor
final class RuleChangeRecorder<R: PersistentRecord>: FetchedResultsControllerDelegate {
    var changeSets: [ChangeSet] = []
    func controller(_ controller: FetchedResultsController<R>, didChangeContentWith changes: ChangeSet) {
        changeSets.append(changes)
    }
}

@Suite("Delete rules: chains, live lists, extreme identifiers")
struct DeleteRuleChainTests {
    /// Folders f1, f2; docs d1, d2 in f1, d3 in f2; pages: two in d1, one in d2, one in d3.
    static func seed<R: RuleChoice>(_ store: Store, _ rule: R.Type) throws {
        try store.write { tx in
            var folders = [Folder<R>(name: "f1"), Folder<R>(name: "f2")]
            for index in folders.indices { try tx.insert(&folders[index]) }
            var docs = [("d1", 0), ("d2", 0), ("d3", 1)].map { Doc<R>(name: $0.0, folder: ToOne(folders[$0.1])) }
            for index in docs.indices { try tx.insert(&docs[index]) }
            for (name, doc) in [("p1", 0), ("p2", 0), ("p3", 1), ("p4", 2)] {
                var page = Page<R>(name: name, doc: ToOne(docs[doc]))
                try tx.insert(&page)
            }
        }
    }

    static func names<R: PersistentRecord>(_ store: Store, _ type: R.Type, _ name: KeyPath<R, String>) throws -> [String] {
        try store.fetch(RecordRequest<R>(sortBy: [SortDescriptor(\R.id)])).compactMap { $0?[keyPath: name] }
    }

    @Test(arguments: [Deleter.folioDelete, .rawSQL, .shell])
    func aCascadeFollowsThroughThreeEntities(_ deleter: Deleter) throws {
        let directory = try ScratchDirectory()
        let path = directory.path("chain.sqlite")
        let store = try Store(path: path, records: [Folder<Cascade>.self, Doc<Cascade>.self, Page<Cascade>.self])
        try Self.seed(store, Cascade.self)
        switch deleter {
        case .shell: try Shell.sqlite3(path, "DELETE FROM folder WHERE name = 'f1'")
        case .rawSQL: try execute(store, "DELETE FROM folder WHERE name = 'f1'")
        default: try store.write { tx in try tx.delete(Folder<Cascade>.self, id: RecordID(1)) }
        }
        try store.synchronize()
        #expect(try Self.names(store, Folder<Cascade>.self, \.name) == ["f2"])
        #expect(try Self.names(store, Doc<Cascade>.self, \.name) == ["d3"])
        #expect(try Self.names(store, Page<Cascade>.self, \.name) == ["p4"])
    }

    @Test(arguments: [Deleter.folioDelete, .deleteAll, .rawSQL, .shell])
    func aDenyBelowACascadeAbortsTheWholeDelete(_ deleter: Deleter) throws {
        let directory = try ScratchDirectory()
        let path = directory.path("chain.sqlite")
        let store = try Store(path: path, records: [Folder<Deny>.self, Doc<Deny>.self, Page<Deny>.self])
        try Self.seed(store, Deny.self)
        let tokens = try [
            store.changeToken(for: Folder<Deny>.self), store.changeToken(for: Doc<Deny>.self),
            store.changeToken(for: Page<Deny>.self),
        ]
        var error: (any Error)?
        do {
            switch deleter {
            case .shell: try Shell.sqlite3(path, "DELETE FROM folder WHERE name = 'f1'")
            case .rawSQL: try execute(store, "DELETE FROM folder WHERE name = 'f1'")
            case .deleteAll: try store.write { tx in try tx.deleteAll(Folder<Deny>.self) }
            default: try store.write { tx in try tx.delete(Folder<Deny>.self, id: RecordID(1)) }
            }
        } catch let caught { error = caught }
        if deleter == .shell {
            #expect((error as? Shell.Failure)?.errors.contains(#"a record of "doc" is referenced through "page.doc""#) == true)
        } else {
            #expect(error as? FolioError == .deleteDenied(entity: "doc", relationship: "page.doc"))
        }
        try store.synchronize()
        #expect(try Self.names(store, Folder<Deny>.self, \.name) == ["f1", "f2"])
        #expect(try Self.names(store, Doc<Deny>.self, \.name) == ["d1", "d2", "d3"])
        #expect(try Self.names(store, Page<Deny>.self, \.name) == ["p1", "p2", "p3", "p4"])
        let after = try [
            store.changeToken(for: Folder<Deny>.self), store.changeToken(for: Doc<Deny>.self),
            store.changeToken(for: Page<Deny>.self),
        ]
        #expect(after == tokens)
        // Once the pages are gone, the cascade goes through.
        try store.write { tx in
            try tx.deleteAll(Page<Deny>.self)
            try tx.delete(Folder<Deny>.self, id: RecordID(1))
        }
        #expect(try Self.names(store, Doc<Deny>.self, \.name) == ["d3"])
    }

    @Test func aToOneWithoutInverseIsNullified() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("tags.sqlite")
        let store = try Store(path: path, records: [Colour.self, Sticker.self])
        try store.write { tx in
            var tags = [Colour(name: "red"), Colour(name: "blue")]
            for index in tags.indices { try tx.insert(&tags[index]) }
            for (text, tag) in [("a", 0), ("b", 1), ("c", 0)] {
                var label = Sticker(text: text, tag: ToOne(tags[tag]))
                try tx.insert(&label)
            }
        }
        try store.write { tx in try tx.delete(Colour.self, id: RecordID(1)) }
        try Shell.sqlite3(path, "DELETE FROM tag WHERE name = 'blue'")
        try store.synchronize()
        let labels = try store.fetch(RecordRequest<Sticker>(sortBy: [SortDescriptor(\.text)])).compactMap { $0 }
        #expect(labels.map(\.text) == ["a", "b", "c"])
        #expect(labels.allSatisfy { $0.tag.id == nil })
    }

    @MainActor
    @Test(arguments: [DeleteRule.nullify, .cascade])
    func aLiveListOfTheChildrenSeesWhatTheRuleDid(_ rule: DeleteRule) async throws {
        if rule == .nullify { try await follow(Nullify.self) } else { try await follow(Cascade.self) }
    }

    @MainActor
    func follow<R: RuleChoice>(_ rule: R.Type) async throws {
        let store = try Store.temporary(records: [Holder<R>.self, Thing<R>.self])
        try DeleteRuleTests.seed(store, rule)
        let controller = FetchedResultsController(
            RecordRequest<Thing<R>>(sortBy: [SortDescriptor(\.name)]), store: store)
        let recorder = RuleChangeRecorder<Thing<R>>()
        controller.delegate = recorder
        try await controller.performFetch()
        await controller.waitForChanges()
        _ = try writeSync(store) { tx in try tx.delete(Holder<R>.self, id: RecordID(1)) }
        await controller.waitForChanges()
        let changes = try #require(recorder.changeSets.last)
        #expect(recorder.changeSets.count == 1)
        #expect(!changes.isReload)
        if R.rule == .cascade {
            #expect(Set(changes.deletedIdentifiers) == [RecordID(1), RecordID(2)])
            #expect(changes.updatedIdentifiers.isEmpty)
            #expect(controller.snapshot.identifiers.count == 2)
        } else {
            #expect(Set(changes.updatedIdentifiers) == [RecordID(1), RecordID(2)])
            #expect(changes.deletedIdentifiers.isEmpty)
            #expect(controller.snapshot.identifiers.count == 4)
        }
        // A delete the rule leaves alone (a holder no thing points to) tells the list nothing.
        _ = try writeSync(store) { tx in
            var lone = Holder<R>(name: "lone")
            try tx.insert(&lone)
            try tx.delete(lone)
        }
        await controller.waitForChanges()
        #expect(recorder.changeSets.count == 1)
    }

    @Test(arguments: [Int64.max, Int64.min, 0, -1])
    func extremeIdentifiersAreKeptAndRead(_ raw: Int64) throws {
        let store = try Store.inMemory(records: [Holder<Cascade>.self, Thing<Cascade>.self])
        let id = RecordID(raw)
        try store.write { tx in
            var holder = Holder<Cascade>(id: id, name: "Ünïcødé 🚀 \u{301}")
            try tx.insert(&holder)
            var other = Holder<Cascade>(id: RecordID(raw == 5 ? 6 : 5), name: "other")
            try tx.insert(&other)
            var thing = Thing<Cascade>(id: RecordID(raw == 7 ? 8 : 7), name: "t", holder: ToOne(id))
            try tx.insert(&thing)
            #expect(try tx.fetchOne(thing.holder) == holder)
            #expect(try tx.fetchTargets([thing.holder, ToOne(other), ToOne(id), ToOne()]) == [id: holder, other.id!: other])
        }
        #expect(try store.fetchOne(ToOne<Holder<Cascade>>(id))?.name == "Ünïcødé 🚀 \u{301}")
        try store.write { tx in try tx.deleteAll(Holder<Cascade>.self, where: #Predicate { $0.name == "Ünïcødé 🚀 \u{301}" }) }
        #expect(try store.count(RecordRequest<Thing<Cascade>>(sortBy: [SortDescriptor(\.name)])) == 0)
        #expect(try store.fetchOne(ToOne<Holder<Cascade>>(id)) == nil)
    }
}
