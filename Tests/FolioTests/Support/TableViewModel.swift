import Foundation
import GRDB
@testable import Folio

/// A model of a table view applying batch updates, strict like UIKit: it throws on any
/// inconsistency (counts that do not add up, an index out of range, a row deleted and
/// updated, a move from a deleted row or section, duplicates) and on any breach of the
/// ``ChangeSet`` contract that UIKit would let through silently (lists out of order,
/// inserted identifiers that are not the rows the data source shows there).
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

    /// Which records a change set touched, read from the model before the update.
    struct Applied: Equatable {
        /// Rows removed: deleted rows and the rows of deleted sections.
        var deleted: [RecordID] = []
        /// Rows added: inserted rows and the rows of inserted sections.
        var inserted: [RecordID] = []
        /// Rows moved, with their `isUpdated` flag.
        var moved: [RecordID: Bool] = [:]
        /// Rows updated in place.
        var updated: [RecordID] = []
        /// Rows whose cell must be reconfigured: updated in place or moved and updated.
        var reconfigured: Set<RecordID> { Set(updated).union(moved.filter(\.value).keys) }
    }

    init(sections: [[RecordID]]) { self.sections = sections }

    init(_ snapshot: Snapshot) {
        sections = (0..<snapshot.numberOfSections).map { Array(snapshot.identifiers(inSection: $0)) }
    }

    var description: String { sections.map { "\($0.map(\.rawValue))" }.joined(separator: " | ") }

    /// Every identifier, in order.
    var identifiers: [RecordID] { sections.flatMap { $0 } }

    private static func fail(_ text: String) -> Inconsistency { Inconsistency(description: text) }

    /// The user drags a row, as a table view moves it itself (`moveRowAt`): `to` is in the
    /// table after the move; a section it empties stays, empty, until a change set deletes it.
    mutating func applyUserMove(from: IndexPath, to: IndexPath) throws {
        guard sections.indices.contains(from.section), sections[from.section].indices.contains(from.item) else {
            throw Self.fail("user move from \(from): no such row")
        }
        let id = sections[from.section].remove(at: from.item)
        guard sections.indices.contains(to.section), to.item >= 0, to.item <= sections[to.section].count else {
            throw Self.fail("user move to \(to): no such place")
        }
        sections[to.section].insert(id, at: to.item)
    }

    /// The model's own consistency: no identifier twice.
    func checkInvariants() throws {
        var seen = Set<RecordID>()
        for id in identifiers where !seen.insert(id).inserted { throw Self.fail("\(id) shown twice") }
    }

    /// A data source must itself be consistent before a table view trusts it. Only the
    /// public surface of ``Snapshot`` is used, so the model stays independent of the engine.
    static func check(dataSource: Snapshot) throws {
        var offset = 0
        for (index, info) in dataSource.sections.enumerated() {
            guard info.offset == offset else {
                throw fail("data source: section \(index) starts at \(info.offset), expected \(offset)")
            }
            guard dataSource.identifiers(inSection: index).count == info.numberOfObjects else {
                throw fail("data source: section \(index) count differs from its identifiers")
            }
            offset += info.numberOfObjects
        }
        guard offset == dataSource.numberOfItems, dataSource.identifiers.count == dataSource.numberOfItems else {
            throw fail("data source: section counts add up to \(offset), it has \(dataSource.numberOfItems) items")
        }
        // Sectioned results have no empty section; unsectioned ones have exactly one.
        if dataSource.numberOfSections != 1 || dataSource.numberOfItems > 0 {
            for (index, info) in dataSource.sections.enumerated() where info.numberOfObjects == 0 {
                throw fail("data source: empty section \(index)")
            }
        }
        // No section value twice, as far as names show values: names compared by bytes
        // (Swift's == would merge NFC and NFD), except names of text that was not valid
        // UTF-8 (repaired to U+FFFD, so distinct values can share one); the workloads check
        // section values themselves.
        var names = Set<[UInt8]>()
        for info in dataSource.sections where !info.isNil && !info.name.unicodeScalars.contains("\u{FFFD}") {
            guard names.insert(Array(info.name.utf8)).inserted else {
                throw fail("data source: a section value appears twice: \(dataSource.sections.map(\.name))")
            }
        }
        let nilSections = dataSource.sections.filter(\.isNil).count
        guard nilSections <= 1 else { throw fail("data source: \(nilSections) nil sections") }
        guard Set(dataSource.identifiers).count == dataSource.numberOfItems else {
            throw fail("data source: an identifier appears twice")
        }
    }

    private static func checkAscending(_ list: [Int], _ what: String) throws {
        for i in list.indices.dropFirst() where list[i - 1] >= list[i] { throw fail("\(what) not strictly ascending: \(list)") }
    }

    private static func checkAscending(_ list: [IndexPath], _ what: String) throws {
        for i in list.indices.dropFirst() where !precedes(list[i - 1], list[i]) {
            throw fail("\(what) not strictly ascending at \(list[i]): \(list.map { "\($0.section).\($0.item)" })")
        }
    }

    private static func precedes(_ a: IndexPath, _ b: IndexPath) -> Bool {
        a.section != b.section ? a.section < b.section : a.item < b.item
    }

    @discardableResult
    mutating func apply(_ change: ChangeSet, dataSource: Snapshot) throws -> Applied {
        try Self.check(dataSource: dataSource)
        if change.isReload {
            guard change.deletedSections.isEmpty, change.insertedSections.isEmpty, change.deletedItems.isEmpty,
                change.insertedItems.isEmpty, change.movedItems.isEmpty, change.updatedItems.isEmpty
            else { throw Self.fail("a reload with changes listed") }
            let old = Set(identifiers)
            self = TableViewModel(dataSource)
            let new = Set(identifiers)
            return Applied(deleted: Array(old.subtracting(new)), inserted: Array(new.subtracting(old)))
        }
        if change.isCompletion {
            guard change.isEmpty == false, change.deletedSections.isEmpty, change.insertedSections.isEmpty,
                change.deletedItems.isEmpty, change.insertedItems.isEmpty, change.movedItems.isEmpty,
                change.updatedItems.isEmpty, !change.isReload
            else { throw Self.fail("a completion with changes listed") }
            // Only rows after the last row shown and sections after the last section shown.
            let new = TableViewModel(dataSource)
            guard new.sections.count >= sections.count else {
                throw Self.fail("a completion removed sections: \(sections.count) shown, \(new.sections.count) after")
            }
            for (index, shown) in sections.enumerated() {
                let after = new.sections[index]
                let isLast = index == sections.count - 1
                guard isLast ? Array(after.prefix(shown.count)) == shown : after == shown else {
                    throw Self.fail(
                        "a completion changed section \(index): \(shown.map(\.rawValue)) became \(after.prefix(shown.count + 3).map(\.rawValue))…"
                    )
                }
            }
            let old = Set(identifiers)
            self = new
            return Applied(inserted: identifiers.filter { !old.contains($0) })
        }
        // The documented order of every list.
        try Self.checkAscending(change.deletedSections, "deletedSections")
        try Self.checkAscending(change.insertedSections, "insertedSections")
        try Self.checkAscending(change.deletedItems, "deletedItems")
        try Self.checkAscending(change.insertedItems, "insertedItems")
        try Self.checkAscending(change.updatedItems, "updatedItems")
        try Self.checkAscending(change.movedItems.map(\.from), "movedItems (by origin)")

        let oldCount = sections.count
        var applied = Applied()
        // Sections.
        guard Set(change.deletedSections).count == change.deletedSections.count else { throw Self.fail("section deleted twice") }
        guard Set(change.insertedSections).count == change.insertedSections.count else {
            throw Self.fail("section inserted twice")
        }
        for s in change.deletedSections where s < 0 || s >= oldCount {
            throw Self.fail("deleted section \(s) out of range 0..<\(oldCount)")
        }
        let newCount = oldCount - change.deletedSections.count + change.insertedSections.count
        guard newCount == dataSource.numberOfSections else {
            throw Self.fail(
                "invalid number of sections: \(newCount) after the update (\(oldCount) before, \(change.deletedSections.count) deleted, \(change.insertedSections.count) inserted), the data source has \(dataSource.numberOfSections)"
            )
        }
        for s in change.insertedSections where s < 0 || s >= newCount {
            throw Self.fail("inserted section \(s) out of range 0..<\(newCount)")
        }
        let deletedSections = Set(change.deletedSections)
        let insertedSections = Set(change.insertedSections)
        var survivingOld = (0..<oldCount).filter { !deletedSections.contains($0) }.makeIterator()
        var oldForNew = [Int?](repeating: nil, count: newCount)
        for n in 0..<newCount where !insertedSections.contains(n) { oldForNew[n] = survivingOld.next() }
        for s in deletedSections { applied.deleted += sections[s] }

        func checkOld(_ p: IndexPath, _ what: String) throws {
            guard p.count == 2 else { throw Self.fail("\(what) \(p) is not a two-element index path") }
            guard p.section >= 0, p.section < oldCount else {
                throw Self.fail("\(what) \(p) section out of range 0..<\(oldCount)")
            }
            guard !deletedSections.contains(p.section) else { throw Self.fail("\(what) \(p) is in a deleted section") }
            guard p.item >= 0, p.item < sections[p.section].count else {
                throw Self.fail("\(what) \(p) out of range: section \(p.section) has \(sections[p.section].count) rows")
            }
        }
        func checkNew(_ p: IndexPath, _ what: String) throws {
            guard p.count == 2 else { throw Self.fail("\(what) \(p) is not a two-element index path") }
            guard p.section >= 0, p.section < newCount else {
                throw Self.fail("\(what) \(p) section out of range 0..<\(newCount)")
            }
            guard !insertedSections.contains(p.section) else { throw Self.fail("\(what) \(p) is in an inserted section") }
            guard p.item >= 0, p.item < dataSource.sections[p.section].numberOfObjects else {
                throw Self.fail(
                    "\(what) \(p) out of range: the data source's section \(p.section) has \(dataSource.sections[p.section].numberOfObjects) rows"
                )
            }
        }
        var removed = Set<IndexPath>()
        for p in change.deletedItems {
            try checkOld(p, "deleted row")
            guard removed.insert(p).inserted else { throw Self.fail("row \(p) deleted twice") }
            applied.deleted.append(sections[p.section][p.item])
        }
        var movedFrom = Set<IndexPath>()
        for m in change.movedItems {
            try checkOld(m.from, "moved row")
            guard !removed.contains(m.from) else { throw Self.fail("move from deleted row \(m.from)") }
            guard movedFrom.insert(m.from).inserted else { throw Self.fail("row \(m.from) moved twice") }
            try checkNew(m.to, "move target")
            applied.moved[sections[m.from.section][m.from.item]] = m.isUpdated
        }
        var updated = Set<IndexPath>()
        for p in change.updatedItems {
            try checkOld(p, "updated row")
            guard !removed.contains(p) else { throw Self.fail("row \(p) deleted and updated") }
            guard !movedFrom.contains(p) else { throw Self.fail("row \(p) moved and updated in place") }
            guard updated.insert(p).inserted else { throw Self.fail("row \(p) updated twice") }
            applied.updated.append(sections[p.section][p.item])
        }
        // The identifiers that travel with deletions, moves and updates are the rows they name.
        guard change.deletedIdentifiers == change.deletedItems.map({ sections[$0.section][$0.item] }) else {
            throw Self.fail("deleted identifiers \(change.deletedIdentifiers) are not the deleted rows")
        }
        guard change.movedIdentifiers == change.movedItems.map({ sections[$0.from.section][$0.from.item] }) else {
            throw Self.fail("moved identifiers \(change.movedIdentifiers) are not the moved rows")
        }
        guard change.updatedIdentifiers == change.updatedItems.map({ sections[$0.section][$0.item] }) else {
            throw Self.fail("updated identifiers \(change.updatedIdentifiers) are not the updated rows")
        }
        guard change.insertedItems.count == change.insertedIdentifiers.count else {
            throw Self.fail(
                "\(change.insertedItems.count) inserted rows but \(change.insertedIdentifiers.count) inserted identifiers")
        }
        var targets: [Int: [Int: RecordID?]] = [:]  // new section → item → carried id (nil: from data source)
        for (p, id) in zip(change.insertedItems, change.insertedIdentifiers) {
            try checkNew(p, "inserted row")
            guard targets[p.section, default: [:]][p.item] == nil else { throw Self.fail("two rows inserted or moved to \(p)") }
            targets[p.section, default: [:]][p.item] = .some(nil)
            let shown = dataSource.identifiers(inSection: p.section)
            let actual = shown[shown.startIndex + p.item]
            guard actual == id else { throw Self.fail("inserted identifier \(id) at \(p), the data source has \(actual) there") }
            applied.inserted.append(id)
        }
        for m in change.movedItems {
            guard targets[m.to.section, default: [:]][m.to.item] == nil else {
                throw Self.fail("two rows inserted or moved to \(m.to)")
            }
            targets[m.to.section, default: [:]][m.to.item] = .some(sections[m.from.section][m.from.item])
        }
        // Build the new sections.
        var result: [[RecordID]] = []
        for n in 0..<newCount {
            let expected = Array(dataSource.identifiers(inSection: n))
            guard let o = oldForNew[n] else {
                result.append(expected)
                applied.inserted += expected
                continue
            }
            let staying = sections[o].indices.filter { item in
                let p = IndexPath(item: item, section: o)
                return !removed.contains(p) && !movedFrom.contains(p)
            }
            var remaining = staying.map { sections[o][$0] }.makeIterator()
            let incoming = targets[n] ?? [:]
            let total = staying.count + incoming.count
            guard total == expected.count else {
                throw Self.fail(
                    "invalid number of rows in section \(n): \(total) after the update (\(sections[o].count) before, \(sections[o].count - staying.count) out, \(incoming.count) in), the data source has \(expected.count)"
                )
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
            result.append(rows)
        }
        sections = result
        try checkInvariants()
        return applied
    }
}

extension Snapshot {
    /// A data source of the given sections (names "s0", "s1"…), for tests of the model.
    static func testing(_ sections: [[Int64]], sectioned: Bool = true) -> Snapshot {
        precondition(sectioned || sections.count == 1)
        let runs = sections.enumerated().map { SectionRun(value: "s\($0.offset)".databaseValue, count: $0.element.count) }
        let state = ResultsState(ids: IdentifierList(sections.flatMap { $0 }), runs: runs, sectioned: sectioned)
        var offset = 0
        let infos = sections.enumerated().map { index, ids in
            defer { offset += ids.count }
            return SectionInfo(name: "s\(index)", indexTitle: nil, numberOfObjects: ids.count, offset: offset, isNil: false)
        }
        return Snapshot(state: state, sections: infos)
    }
}
