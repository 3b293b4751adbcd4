import Foundation
import GRDB
import Testing

@testable import Folio

/// Live lists sorted and sectioned by enum attributes (and sorted by a `Float`): inserts,
/// updates that change the enum, deletes and raw SQL, each commit's change set applied to a
/// strict table-view model that must match a fresh fetch.
@MainActor
@Suite("Attribute types: live sections by enums")
struct LiveEnumSectionTests {
    enum Layout: String, CaseIterable, Sendable {
        /// Sorted and sectioned by a String-raw enum declared `Codable` only (plus `Comparable`).
        case status
        /// Sorted and sectioned by an Int8-raw `AttributeValue` enum, then by a Float.
        case priorityThenRatio
        /// Sorted and sectioned by an optional enum: `nil` is a section, first.
        case optionalStatus
        /// Sectioned by a title computed from the enum, sorted by it in reverse.
        case computedStatus
    }

    func controller(_ layout: Layout, _ store: Store) -> FetchedResultsController<Gadget> {
        var request: RecordRequest<Gadget>
        let key: SectionKey<Gadget>
        switch layout {
        case .status:
            request = RecordRequest(sortBy: [SortDescriptor(\.status), SortDescriptor(\.name)])
            key = .attribute(\.status)
        case .priorityThenRatio:
            request = RecordRequest(sortBy: [SortDescriptor(\.priority), SortDescriptor(\.ratio, order: .reverse)])
            key = .attribute(\.priority)
        case .optionalStatus:
            request = RecordRequest(sortBy: [SortDescriptor(\.optionalStatus), SortDescriptor(\.name)])
            key = .attribute(\.optionalStatus)
        case .computedStatus:
            request = RecordRequest(sortBy: [SortDescriptor(\.status, order: .reverse), SortDescriptor(\.name)])
            key = .computed(\.status, name: "status title") { $0.rawValue.capitalized }
        }
        request.batchSize = 7
        return FetchedResultsController(request, store: store, sectionBy: key)
    }

    /// The section names a fresh fetch gives, from the records themselves.
    func expectedNames(_ layout: Layout, _ records: [Gadget]) -> [String] {
        switch layout {
        case .status: Array(Set(records.map(\.status))).sorted().map(\.rawValue)
        case .priorityThenRatio: Array(Set(records.map(\.priority))).sorted().map { String($0.rawValue) }
        case .optionalStatus:
            (records.contains { $0.optionalStatus == nil } ? [""] : [])
                + Array(Set(records.compactMap(\.optionalStatus))).sorted().map(\.rawValue)
        case .computedStatus: Array(Set(records.map(\.status))).sorted(by: >).map { $0.rawValue.capitalized }
        }
    }

    @Test(arguments: Layout.allCases)
    func sectionsFollowEveryKindOfChange(_ layout: Layout) async throws {
        let store = try Store.temporary(records: [Gadget.self])
        var random = SeededRandom(seed: 0x41 &+ UInt64(Layout.allCases.firstIndex(of: layout)!))
        func randomGadget(_ name: String) -> Gadget {
            var g = Gadget(name)
            g.status = GadgetStatus.allCases.randomElement(using: &random)!
            g.priority = GadgetPriority.allCases.randomElement(using: &random)!
            g.optionalStatus = Bool.random(using: &random) ? nil : GadgetStatus.allCases.randomElement(using: &random)!
            g.ratio = [Float(-0.0), 0, 0.5, -1, .infinity, .leastNonzeroMagnitude, 3.25].randomElement(using: &random)!
            return g
        }
        let seeded = (0..<30).map { randomGadget("seed \($0)") }
        try writeSync(store) { tx in
            for var g in seeded { try tx.insert(&g) }
        }
        let controller = controller(layout, store)
        let recorder = IncompleteRecorder<Gadget>()
        controller.delegate = recorder
        try fetchNow(controller)
        await controller.waitForChanges()
        var model = TableViewModel(controller.snapshot)
        var applied = recorder.changeSets.count
        var nextName = 0
        for step in 0..<60 {
            let ids = try readNow(store) { db in try Int64.fetchAll(db, sql: "SELECT id FROM gadget ORDER BY id") }
            let pick = ids.isEmpty ? nil : ids.randomElement(using: &random).map(RecordID.init)
            let status = GadgetStatus.allCases.randomElement(using: &random)!
            let priority = GadgetPriority.allCases.randomElement(using: &random)!
            let clearsOptional = Bool.random(using: &random)
            switch (step % 6, pick) {
            case (0, _), (_, nil):
                let inserted = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                    nextName += 1
                    return randomGadget("new \(nextName)")
                }
                try writeSync(store) { tx in
                    for var g in inserted { try tx.insert(&g) }
                }
            case (1, let id?):
                // An update that moves the row to another section (or keeps it in its own).
                try writeSync(store) { tx in
                    var g = try #require(try tx.fetchAll(RecordRequest<Gadget>(predicate: #Predicate { $0.id == id })).first)
                    g.status = status
                    g.optionalStatus = clearsOptional ? nil : status
                    g.priority = priority
                    try tx.update(g)
                }
            case (2, let id?):
                try writeSync(store) { tx in _ = try tx.delete(Gadget.self, id: id) }
            case (3, _):
                // Every row of one status changes at once, in SQL: a section may disappear.
                let from = GadgetStatus.allCases.randomElement(using: &random)!
                _ = try writeSync(store) { tx in
                    try tx.updateAll(
                        Gadget.self, where: #Predicate { $0.status == from },
                        set: [.set(\.status, to: status), .set(\.optionalStatus, to: status)])
                }
            case (4, let id?):
                // Raw SQL, as another program writes: a raw value, an Int8 raw value, a REAL.
                try execute(
                    store, "UPDATE gadget SET status = ?, priority = ?, ratio = ? WHERE id = ?",
                    [status.rawValue, priority.rawValue, -2.5, id.rawValue])
            default:
                // An update that changes nothing the list shows, and one that changes only the name.
                try writeSync(store) { tx in
                    try tx.updateAll(Gadget.self, set: [.set(\.i32, to: Int32(step))])
                    if let id = pick {
                        try tx.updateAll(
                            Gadget.self, where: #Predicate { $0.id == id }, set: [.set(\.name, to: "renamed \(step)")])
                    }
                }
            }
            await controller.waitForChanges()
            let delivered = Array(recorder.changeSets[applied...]), snapshots = Array(recorder.snapshots[applied...])
            applied = recorder.changeSets.count
            for (change, snapshot) in zip(delivered, snapshots) { try model.apply(change, dataSource: snapshot) }
            #expect(model == TableViewModel(controller.snapshot), "step \(step)")
            #expect(model == (try freshModel(of: controller)), "step \(step): the live list differs from a fresh fetch")
            let records = try writeSync(store) { tx in try tx.fetchAll(RecordRequest<Gadget>()) }
            #expect(controller.sections.map(\.name) == expectedNames(layout, records), "step \(step)")
            #expect(controller.sections.map(\.numberOfObjects).reduce(0, +) == records.count)
        }
        #expect(recorder.errors.isEmpty)
        #expect(recorder.changeSets.count >= 40, "every visible commit made a change set")
        // Each section holds the rows of its value, in the sort's order.
        if layout == .status {
            for (index, section) in controller.sections.enumerated() {
                let statuses = (0..<section.numberOfObjects).map {
                    controller.object(at: IndexPath(item: $0, section: index))?.status.rawValue
                }
                #expect(Set(statuses) == [section.name])
            }
        }
    }
}
