import Foundation
import Folio

/// What the list shows: sections of record identifiers, laid out as display lines (a
/// header line, then one line per row). It holds identifiers only — records are asked
/// for as lines are drawn — and it changes only by applying each ``ChangeSet`` the way
/// a table view applies batch updates, never by being rebuilt on a change.
struct RowModel: Equatable {
    struct Section: Equatable {
        /// The section's name (a day, `YYYY-MM-DD`).
        var name: String
        var identifiers: [RecordID]
    }

    /// A display line.
    enum Line: Equatable {
        case header(section: Int)
        case row(IndexPath)
    }

    enum ApplyError: Error, Equatable, CustomStringConvertible {
        case outOfRange(String)
        var description: String {
            switch self {
            case .outOfRange(let what): "a change set does not fit the list: \(what)"
            }
        }
    }

    private(set) var sections: [Section]
    /// The display line of each section's header.
    private(set) var headerLines: [Int] = []
    /// The flat index of each section's first row.
    private(set) var rowStarts: [Int] = []
    private(set) var rowCount = 0

    init(sections: [Section] = []) {
        self.sections = sections
        reindex()
    }

    var lineCount: Int { rowCount + sections.count }
    var isEmpty: Bool { rowCount == 0 }

    func identifier(at indexPath: IndexPath) -> RecordID { sections[indexPath.section].identifiers[indexPath.item] }

    /// - Complexity: O(log sections).
    func line(at index: Int) -> Line {
        let section = Self.lastIndex(in: headerLines, notAbove: index)
        let offset = index - headerLines[section]
        return offset == 0 ? .header(section: section) : .row(IndexPath(item: offset - 1, section: section))
    }

    func line(of indexPath: IndexPath) -> Int { headerLines[indexPath.section] + 1 + indexPath.item }

    /// The row at a flat position (rows only, headers not counted).
    func indexPath(atRow row: Int) -> IndexPath {
        let section = Self.lastIndex(in: rowStarts, notAbove: row)
        return IndexPath(item: row - rowStarts[section], section: section)
    }

    func row(of indexPath: IndexPath) -> Int { rowStarts[indexPath.section] + indexPath.item }

    /// Where an identifier is, looking first in the section named `hint`.
    /// - Complexity: O(rows of that section), O(rows) when it is elsewhere.
    func indexPath(of id: RecordID, hint: String? = nil) -> IndexPath? {
        if let hint, let section = sections.firstIndex(where: { $0.name == hint }),
            let item = sections[section].identifiers.firstIndex(of: id)
        {
            return IndexPath(item: item, section: section)
        }
        for (section, value) in sections.enumerated() {
            if let item = value.identifiers.firstIndex(of: id) { return IndexPath(item: item, section: section) }
        }
        return nil
    }

    /// The reader moved a row within its section, as a drag moves it in a table view:
    /// applied before the controller is told (``FeedListSource/moveObject(at:to:)``).
    mutating func applyUserMove(from: IndexPath, to: IndexPath) {
        precondition(from.section == to.section, "a row moves within its section")
        let id = sections[from.section].identifiers.remove(at: from.item)
        sections[to.section].identifiers.insert(id, at: to.item)
    }

    /// What applying a change set did, for highlighting.
    struct Applied: Equatable {
        var inserted: [RecordID] = []
        var updated: [RecordID] = []
        var removed: Set<RecordID> = []
        var moved: [(id: RecordID, to: IndexPath)] = []

        static func == (lhs: Applied, rhs: Applied) -> Bool {
            lhs.inserted == rhs.inserted && lhs.updated == rhs.updated && lhs.removed == rhs.removed
                && lhs.moved.map(\.id) == rhs.moved.map(\.id) && lhs.moved.map(\.to) == rhs.moved.map(\.to)
        }
    }

    /// Applies a change set with batch-update semantics: deletions (sections and rows) and
    /// move sources in old coordinates, then insertions (sections and rows) and move
    /// destinations in new coordinates. A new section's rows come from `newSection`, as a
    /// table view takes them from its data source.
    ///
    /// - Throws: ``ApplyError`` when the change set does not fit; the model is unchanged.
    /// - Complexity: O(rows of the sections it touches + changes · log changes).
    mutating func apply(_ change: ChangeSet, newSection: (Int) -> Section) throws -> Applied {
        precondition(!change.isReload, "a reload is not applied, it is reloaded")
        var applied = Applied()
        func id(_ path: IndexPath, _ what: String) throws -> RecordID {
            guard sections.indices.contains(path.section), sections[path.section].identifiers.indices.contains(path.item)
            else { throw ApplyError.outOfRange("\(what) \(path.section).\(path.item)") }
            return sections[path.section].identifiers[path.item]
        }
        for path in change.updatedItems { applied.updated.append(try id(path, "updated row")) }
        var removals: [Int: [Int]] = [:]
        for path in change.deletedItems {
            applied.removed.insert(try id(path, "deleted row"))
            removals[path.section, default: []].append(path.item)
        }
        var arrivals: [(path: IndexPath, id: RecordID)] = []
        for move in change.movedItems {
            let moved = try id(move.from, "moved row")
            removals[move.from.section, default: []].append(move.from.item)
            arrivals.append((move.to, moved))
            applied.moved.append((moved, move.to))
            if move.isUpdated { applied.updated.append(moved) }
        }
        guard change.insertedItems.count == change.insertedIdentifiers.count else {
            throw ApplyError.outOfRange(
                "\(change.insertedItems.count) inserted rows, \(change.insertedIdentifiers.count) identifiers")
        }
        for (path, inserted) in zip(change.insertedItems, change.insertedIdentifiers) {
            arrivals.append((path, inserted))
            applied.inserted.append(inserted)
        }
        let deletedSections = Set(change.deletedSections)
        for section in deletedSections {
            guard sections.indices.contains(section) else { throw ApplyError.outOfRange("deleted section \(section)") }
            for removed in sections[section].identifiers { applied.removed.insert(removed) }
        }

        var next: [Section] = []
        next.reserveCapacity(sections.count + change.insertedSections.count)
        for (index, section) in sections.enumerated() where !deletedSections.contains(index) {
            if var gone = removals[index] {
                gone.sort()
                var kept: [RecordID] = []
                kept.reserveCapacity(max(0, section.identifiers.count - gone.count))
                var cursor = 0
                for (item, identifier) in section.identifiers.enumerated() {
                    if cursor < gone.count, gone[cursor] == item {
                        while cursor < gone.count, gone[cursor] == item { cursor += 1 }
                    } else {
                        kept.append(identifier)
                    }
                }
                next.append(RowModel.Section(name: section.name, identifiers: kept))
            } else {
                next.append(section)
            }
        }
        for section in change.insertedSections.sorted() {
            guard section <= next.count else { throw ApplyError.outOfRange("inserted section \(section)") }
            let arriving = newSection(section)
            next.insert(arriving, at: section)
            // A new section's rows are new records, or records that left another section
            // (reported there as deleted): those moved.
            for (item, id) in arriving.identifiers.enumerated() {
                if applied.removed.remove(id) != nil {
                    applied.moved.append((id, IndexPath(item: item, section: section)))
                    applied.updated.append(id)
                } else {
                    applied.inserted.append(id)
                }
            }
        }
        arrivals.sort { ($0.path.section, $0.path.item) < ($1.path.section, $1.path.item) }
        for (path, arriving) in arrivals {
            guard next.indices.contains(path.section), path.item <= next[path.section].identifiers.count else {
                throw ApplyError.outOfRange("row arriving at \(path.section).\(path.item)")
            }
            next[path.section].identifiers.insert(arriving, at: path.item)
        }
        sections = next
        reindex()
        return applied
    }

    private mutating func reindex() {
        headerLines = []
        rowStarts = []
        headerLines.reserveCapacity(sections.count)
        rowStarts.reserveCapacity(sections.count)
        var line = 0, row = 0
        for section in sections {
            headerLines.append(line)
            rowStarts.append(row)
            line += 1 + section.identifiers.count
            row += section.identifiers.count
        }
        rowCount = row
    }

    /// The last index whose value is ≤ `value` in an ascending list (0 when none is).
    /// (Sections are never empty, so a row's section is the last one starting at or before it.)
    private static func lastIndex(in list: [Int], notAbove value: Int) -> Int {
        var low = 0, high = list.count - 1, found = 0
        while low <= high {
            let middle = (low + high) / 2
            if list[middle] <= value {
                found = middle
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        return found
    }
}
