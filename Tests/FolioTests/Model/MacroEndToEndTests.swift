import Foundation
import GRDB
import Testing

@testable import Folio

/// A shipment's status: an enum stored by its `String` raw value, sorted and sectioned by it.
enum ShipmentStatus: String, Codable, Comparable, AttributeValue, CaseIterable {
    case delivered, pending, shipped
}

/// What a shipment carries: a `Codable` struct stored as JSON text (equality-only in predicates).
struct Parcel: Codable, Equatable, Sendable {
    var weight = 0.0
    var fragile = false
    var labels: [String] = []
}

/// A warehouse: a unique, folded name renamed from `label`, an optional URL, and the inverse
/// to-many of its shipments with a cascade.
@PersistentRecord("e2e_warehouse")
struct Warehouse: Equatable {
    var id: RecordID?
    @Stored(.unique, .folded, renamedFrom: "label") var name = ""
    var website: URL? = nil
    @ToMany(\Shipment.warehouse, deleteRule: .cascade) var shipments: RecordRequest<Shipment>
}

/// A shipment: every kind of property the macro reads, among them the types apps store.
@PersistentRecord("e2e_shipment")
struct Shipment: Equatable {
    var id: RecordID?
    @Stored(.searchable) var title = ""
    @Stored(.indexed) var status = ShipmentStatus.pending
    var tracking = URL(string: "https://example.com/track")!
    var parcel = Parcel()
    @Stored(.indexed) var shipped = Date(timeIntervalSince1970: 0)
    var priority: UInt8 = 0
    var rating: Float = 0
    var note: String? = nil
    @Stored(column: "warehouse_id") var warehouse = ToOne<Warehouse>()
    @NotStored var isExpanded = false

    #CompoundIndex<Shipment>(\.status, \.shipped)
}

/// The same two entities, written by hand.
enum HandWrittenShipping {
    static let warehouse = EntityDescription<Warehouse>(
        "e2e_warehouse",
        [
            AttributeDescription(\.name, unique: true, folded: true, renamedFrom: "label"),
            AttributeDescription(\.website),
        ],
        relationships: [.toMany(\Shipment.warehouse, deleteRule: .cascade)])

    static let shipment = EntityDescription<Shipment>(
        "e2e_shipment",
        [
            AttributeDescription(\.title, searchable: true),
            AttributeDescription(\.status, indexed: true),
            AttributeDescription(\.tracking),
            AttributeDescription(\.parcel),
            AttributeDescription(\.shipped, indexed: true),
            AttributeDescription(\.priority),
            AttributeDescription(\.rating),
            AttributeDescription(\.note),
        ],
        relationships: [.toOne(\.warehouse, column: "warehouse_id")],
        indexes: [IndexDescription([\.status, \.shipped])])
}

/// The warehouse of an older model version: its name was `label`.
@PersistentRecord("e2e_warehouse")
struct LegacyWarehouse {
    var id: RecordID?
    @Stored(.unique) var label = ""
    var website: URL? = nil
}

@Suite("@PersistentRecord end to end")
struct MacroEndToEndTests {
    static let day: TimeInterval = 86_400

    @Test func theMacroEntitiesAreTheHandWrittenOnes() throws {
        expectSameEntity(Warehouse.entity, HandWrittenShipping.warehouse)
        expectSameEntity(Shipment.entity, HandWrittenShipping.shipment)
        #expect(
            Shipment.entity.schema.columns.map(\.name) == [
                "title", "status", "tracking", "parcel", "shipped", "priority", "rating", "note", "warehouse_id",
            ])
        let types = Dictionary(uniqueKeysWithValues: Shipment.entity.schema.columns.map { ($0.name, $0.type) })
        #expect(types["status"] == .string && types["tracking"] == .string && types["parcel"] == .json)
        #expect(types["priority"] == .integer && types["rating"] == .double)
        // The file's columns are the declared ones (the folded and full-text keys are Folio's own).
        let directory = try ScratchDirectory()
        let path = directory.path("shipping.sqlite")
        try Store(path: path, records: [Warehouse.self, Shipment.self]).close()
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        let columns = try queue.read { db in
            try Row.fetchAll(db, sql: "PRAGMA table_info(e2e_shipment)").map { $0["name"] as String }
        }
        #expect(columns.filter { !$0.hasPrefix("folio_") } == ["id"] + Shipment.entity.schema.columns.map(\.name))
    }

    /// Two warehouses and six shipments of every status, written through the macro's entities.
    func stocked() throws -> (Store, north: Warehouse, south: Warehouse) {
        let store = try Store.temporary(records: [Warehouse.self, Shipment.self])
        let (north, south) = try store.write { tx -> (Warehouse, Warehouse) in
            var north = Warehouse(name: "North", website: URL(string: "https://north.example/stock?q=é"))
            var south = Warehouse(name: "Süd")
            try tx.insert(&north)
            try tx.insert(&south)
            for number in 0..<6 {
                var shipment = Shipment()
                shipment.title = "Shipment \(number)"
                shipment.status = ShipmentStatus.allCases[number % 3]
                shipment.tracking = URL(string: "https://example.com/track/\(number)")!
                shipment.parcel = Parcel(weight: Double(number) / 2, fragile: number.isMultiple(of: 2), labels: ["n\(number)"])
                shipment.shipped = Date(timeIntervalSince1970: Double(number) * Self.day)
                shipment.priority = UInt8(200 + number)
                shipment.rating = Float(number) / 4
                shipment.note = number == 0 ? nil : "note \(number)"
                shipment.warehouse = ToOne(number < 4 ? north : south)
                shipment.isExpanded = true
                try tx.insert(&shipment)
            }
            return (north, south)
        }
        return (store, north, south)
    }

    @Test func writesAndReadsEveryType() throws {
        let (store, north, _) = try stocked()
        let all = try store.fetch(RecordRequest<Shipment>(sortBy: [SortDescriptor(\.title)])).map { $0! }
        #expect(all.count == 6)
        let fifth = all[5]
        #expect(fifth.status == .shipped && fifth.priority == 205 && fifth.rating == 1.25)
        #expect(fifth.tracking.absoluteString == "https://example.com/track/5")
        #expect(fifth.parcel == Parcel(weight: 2.5, fragile: false, labels: ["n5"]))
        #expect(all.allSatisfy { !$0.isExpanded }, "a @NotStored property reads as its initial value")
        #expect(all[0].note == nil && all[1].note == "note 1")
        let northID = try #require(north.id)
        let readNorth = try #require(try store.fetchOne(Warehouse.self, id: northID))
        #expect(readNorth == north)
        #expect(readNorth.website?.absoluteString == north.website?.absoluteString)
        #expect(try store.fetchOne(fifth.warehouse)?.name == "Süd")
    }

    @Test func predicatesAndSortsOnTheNewTypes() throws {
        let (store, north, _) = try stocked()
        let shipped = ShipmentStatus.shipped
        let tracked = URL(string: "https://example.com/track/2")!
        let parcel = Parcel(weight: 1.5, fragile: false, labels: ["n3"])
        let northName: String? = "North"
        func titles(_ predicate: Predicate<Shipment>, _ sort: [SortDescriptor<Shipment>] = [SortDescriptor(\.title)])
            throws -> [String]
        {
            try store.fetch(RecordRequest<Shipment>(predicate: predicate, sortBy: sort)).map { $0!.title }
        }
        #expect(try titles(#Predicate { $0.status == shipped }) == ["Shipment 2", "Shipment 5"])
        #expect(try titles(#Predicate { $0.status < shipped }) == ["Shipment 0", "Shipment 1", "Shipment 3", "Shipment 4"])
        #expect(try titles(#Predicate { $0.tracking == tracked }) == ["Shipment 2"])
        #expect(try titles(#Predicate { $0.parcel == parcel }) == ["Shipment 3"])
        #expect(try titles(#Predicate { $0.priority > 203 && $0.rating < 1.2 }) == ["Shipment 4"])
        #expect(try titles(#Predicate { $0.warehouse.name == northName && $0.note == nil }) == ["Shipment 0"])
        // Sorts by the enum's raw value (delivered < pending < shipped), then the date, reversed.
        let byStatus = try titles(
            #Predicate { _ in true }, [SortDescriptor(\.status), SortDescriptor(\.shipped, order: .reverse)])
        #expect(byStatus == ["Shipment 3", "Shipment 0", "Shipment 4", "Shipment 1", "Shipment 5", "Shipment 2"])
        let byRating = try titles(#Predicate { _ in true }, [SortDescriptor(\.rating, order: .reverse)])
        #expect(byRating.first == "Shipment 5")
        #expect(try store.count(north.shipments) == 4)
        let plan = try store.explain(
            RecordRequest<Shipment>(predicate: #Predicate { $0.status == shipped }, sortBy: [SortDescriptor(\.shipped)]))
        #expect(plan.description.contains("folio_e2e_shipment_status_shipped_index"), "\(plan)")
    }

    @Test @MainActor func aLiveListSectionedByTheEnum() async throws {
        let (store, north, _) = try stocked()
        let request = RecordRequest<Shipment>(sortBy: [SortDescriptor(\.status), SortDescriptor(\.shipped)])
        let controller = FetchedResultsController(request, store: store, sectionBy: .attribute(\.status))
        try await controller.performFetch()
        #expect(controller.sections.map(\.name) == ["delivered", "pending", "shipped"])
        #expect(controller.sections.map(\.numberOfObjects) == [2, 2, 2])
        #expect(controller.object(at: IndexPath(item: 1, section: 2))?.title == "Shipment 5")
        let changes = controller.changes
        try await store.write { tx in
            var first = try #require(try tx.fetchAll(RecordRequest<Shipment>(sortBy: [SortDescriptor(\.title)])).first)
            first.status = .shipped
            first.shipped = Date(timeIntervalSince1970: 10 * Self.day)
            try tx.update(first)
        }
        for await _ in changes { break }
        #expect(controller.sections.map(\.numberOfObjects) == [1, 2, 3])
        #expect(controller.object(at: IndexPath(item: 2, section: 2))?.title == "Shipment 0")
        // The cascade of the to-many: deleting a warehouse deletes its shipments.
        try await store.write { tx in try tx.delete(north) }
        for await _ in changes { break }
        #expect(controller.sections.map(\.name) == ["pending", "shipped"])
        #expect(controller.sections.map(\.numberOfObjects) == [1, 1])
    }

    /// A file of the older version, whose warehouses had a `label`, opens with the macro's
    /// entities: the column is renamed, its values kept.
    @Test func theRenamedAttributeKeepsItsValues() throws {
        let directory = try ScratchDirectory()
        let path = directory.path("legacy.sqlite")
        let old = try Store(path: path, model: StoreModel(version: 1, records: [LegacyWarehouse.self]))
        try old.write { tx in
            var warehouse = LegacyWarehouse(label: "Depot", website: URL(string: "https://depot.example"))
            try tx.insert(&warehouse)
        }
        try old.close()
        let store = try Store(path: path, model: StoreModel(version: 2, records: [Warehouse.self, Shipment.self]))
        let warehouses = try store.fetch(RecordRequest<Warehouse>()).map { $0! }
        #expect(warehouses.map(\.name) == ["Depot"])
        #expect(warehouses.first?.website == URL(string: "https://depot.example"))
    }
}
