import Foundation
@testable import Folio

/// A model of a table view applying batch updates, strict like UIKit: it throws on any
/// inconsistency (counts that do not add up, an index out of range, a row deleted and
/// updated, a move from a deleted row or section, duplicates).
///
/// Rows of inserted sections and rows inserted in surviving sections are taken from the
/// data source after the update, as a table view asks its data source for cells; every
/// other row is carried from the old state, so comparing with a fresh fetch proves the
/// change set put it where it belongs.
struct TableViewModel: Equatable, CustomStringConvertible {
    var sections: [[RecordID]]

    struct Inconsistency: Error, CustomStringConvertible {
        var description: String
    }

    init(sections: [[RecordID]]) { self.sections = sections }

    init(_ snapshot: Snapshot) {
        sections = (0..<snapshot.numberOfSections).map { Array(snapshot.identifiers(inSection: $0)) }
    }

    var description: String { sections.map { "\($0.map(\.rawValue))" }.joined(separator: " | ") }

    private static func fail(_ text: String) -> Inconsistency { Inconsistency(description: text) }

    mutating func apply(_ change: ChangeSet, dataSource: Snapshot) throws {
        if change.isReload {
            self = TableViewModel(dataSource)
            return
        }
        let oldCount = sections.count
        // Sections.
        guard Set(change.deletedSections).count == change.deletedSections.count else { throw Self.fail("section deleted twice") }
        guard Set(change.insertedSections).count == change.insertedSections.count else { throw Self.fail("section inserted twice") }
        for s in change.deletedSections where s < 0 || s >= oldCount { throw Self.fail("deleted section \(s) out of range 0..<\(oldCount)") }
        let newCount = oldCount - change.deletedSections.count + change.insertedSections.count
        guard newCount == dataSource.numberOfSections else {
            throw Self.fail("invalid number of sections: \(newCount) after the update, the data source has \(dataSource.numberOfSections)")
        }
        for s in change.insertedSections where s < 0 || s >= newCount { throw Self.fail("inserted section \(s) out of range 0..<\(newCount)") }
        let deletedSections = Set(change.deletedSections)
        let insertedSections = Set(change.insertedSections)
        var survivingOld = (0..<oldCount).filter { !deletedSections.contains($0) }.makeIterator()
        var oldForNew = [Int?](repeating: nil, count: newCount)
        for n in 0..<newCount where !insertedSections.contains(n) { oldForNew[n] = survivingOld.next() }
        var newForOld = [Int?](repeating: nil, count: oldCount)
        for (n, o) in oldForNew.enumerated() { if let o { newForOld[o] = n } }

        func checkOld(_ p: IndexPath, _ what: String) throws {
            guard p.section >= 0, p.section < oldCount else { throw Self.fail("\(what) \(p) section out of range") }
            guard !deletedSections.contains(p.section) else { throw Self.fail("\(what) \(p) is in a deleted section") }
            guard p.item >= 0, p.item < sections[p.section].count else {
                throw Self.fail("\(what) \(p) out of range: section has \(sections[p.section].count) rows")
            }
        }
        func checkNew(_ p: IndexPath, _ what: String) throws {
            guard p.section >= 0, p.section < newCount else { throw Self.fail("\(what) \(p) section out of range") }
            guard !insertedSections.contains(p.section) else { throw Self.fail("\(what) \(p) is in an inserted section") }
        }
        var removed = Set<IndexPath>()
        for p in change.deletedItems {
            try checkOld(p, "deleted row")
            guard removed.insert(p).inserted else { throw Self.fail("row \(p) deleted twice") }
        }
        var movedFrom = Set<IndexPath>()
        for m in change.movedItems {
            try checkOld(m.from, "moved row")
            guard !removed.contains(m.from) else { throw Self.fail("move from deleted row \(m.from)") }
            guard movedFrom.insert(m.from).inserted else { throw Self.fail("row \(m.from) moved twice") }
            try checkNew(m.to, "move target")
        }
        var updated = Set<IndexPath>()
        for p in change.updatedItems {
            try checkOld(p, "updated row")
            guard !removed.contains(p) else { throw Self.fail("row \(p) deleted and updated") }
            guard !movedFrom.contains(p) else { throw Self.fail("row \(p) moved and updated in place") }
            guard updated.insert(p).inserted else { throw Self.fail("row \(p) updated twice") }
        }
        guard change.insertedItems.count == change.insertedIdentifiers.count else { throw Self.fail("inserted identifiers misaligned") }
        var targets: [Int: [Int: RecordID?]] = [:]  // new section → item → carried id (nil: from data source)
        for p in change.insertedItems {
            try checkNew(p, "inserted row")
            guard targets[p.section, default: [:]][p.item] == nil else { throw Self.fail("two rows inserted or moved to \(p)") }
            targets[p.section, default: [:]][p.item] = .some(nil)
        }
        for m in change.movedItems {
            guard targets[m.to.section, default: [:]][m.to.item] == nil else { throw Self.fail("two rows inserted or moved to \(m.to)") }
            targets[m.to.section, default: [:]][m.to.item] = .some(sections[m.from.section][m.from.item])
        }
        // Build the new sections.
        var result: [[RecordID]] = []
        for n in 0..<newCount {
            let expected = Array(dataSource.identifiers(inSection: n))
            guard let o = oldForNew[n] else {
                result.append(expected)
                continue
            }
            var remaining = sections[o].enumerated().filter { item in
                let p = IndexPath(item: item.offset, section: o)
                return !removed.contains(p) && !movedFrom.contains(p)
            }.map(\.element).makeIterator()
            let remainingCount = sections[o].count - sections[o].indices.filter {
                let p = IndexPath(item: $0, section: o)
                return removed.contains(p) || movedFrom.contains(p)
            }.count
            let incoming = targets[n] ?? [:]
            let total = remainingCount + incoming.count
            guard total == expected.count else {
                throw Self.fail("invalid number of rows in section \(n): \(total) after the update (\(sections[o].count) before, \(sections[o].count - remainingCount) out, \(incoming.count) in), the data source has \(expected.count)")
            }
            var rows: [RecordID] = []
            for item in 0..<total {
                if let carried = incoming[item] {
                    rows.append(carried ?? expected[item])
                } else if let next = remaining.next() {
                    rows.append(next)
                } else {
                    throw Self.fail("row \(item) of section \(n) has no source")
                }
            }
            for item in incoming.keys where item >= total { throw Self.fail("row \(n).\(item) inserted out of range") }
            result.append(rows)
        }
        _ = newForOld
        sections = result
    }
}
