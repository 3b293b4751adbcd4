import Foundation
import GRDB

/// How a request ordered by hand is written: its order attribute, and its section attribute.
/// The one place the writes of a user's moves are made (in the write transaction a
/// controller hands it), beside the tracker that must not echo them.
// @unchecked Sendable: its properties are immutable key paths (values) and a name.
struct ManualOrder<R: PersistentRecord>: @unchecked Sendable {
    /// The order attribute's key path (an integer attribute).
    let keyPath: AnyKeyPath
    let column: String
    /// The section attribute's key path, for sections by an attribute of the entity.
    let sectionKeyPath: AnyKeyPath?

    var movesAcrossSections: Bool { sectionKeyPath != nil }

    /// Checks that `request` is ordered by hand: sorted, after the section attribute if
    /// any (`sectioned`), by an integer attribute of the entity, ascending, with no window.
    /// `sectionKeyPath` is the section attribute a move across sections sets, when the
    /// sections are by an attribute of the entity itself.
    init(request: RecordRequest<R>, sectioned: Bool, sectionKeyPath: AnyKeyPath?) throws {
        let query = try request.compile(requireSort: true)
        if query.isWindowed {
            throw FolioError.invalidArgument("moveObject(at:to:) needs a request without a limit or an offset")
        }
        var terms = query.order[...]
        if sectioned { terms = terms.dropFirst() }
        self.sectionKeyPath = sectioned ? sectionKeyPath : nil
        let descriptors = request.sortBy.dropFirst(sectioned ? 1 : 0)
        guard let term = terms.first, !term.isRowID, term.related == nil, term.type == .integer, !term.descending,
            let keyPath = descriptors.first?.keyPath, let attribute = R.entity.attribute(for: keyPath),
            attribute.reference == nil, attribute.holdsEveryInt64
        else {
            throw FolioError.invalidArgument(
                "moveObject(at:to:) needs a request ordered by hand: sorted by an Int or Int64 attribute, ascending"
                    + (sectioned ? ", right after the section attribute" : ""))
        }
        self.keyPath = keyPath
        self.column = attribute.column
    }

    /// Writes the moves the user made, in order, in `tx`: each moved row's order value (and
    /// its section attribute when it changed section), placed among its neighbours in the
    /// state after it (`before` with the moves up to it applied). Returns the rows written.
    func write(_ moves: [UserMove], from before: ResultsState, sectionValues: [DatabaseValue?], _ tx: WriteTransaction)
        throws -> Set<Int64>
    {
        var state = before
        var written: Set<Int64> = []
        for (move, sectionValue) in zip(moves, sectionValues) {
            let (after, emptied) = state.applying(move)
            // The target section in the results after the move (an emptied section is gone).
            let section = emptied.map { $0 < move.to.section ? move.to.section - 1 : move.to.section } ?? move.to.section
            written.formUnion(try write(move, in: after, section: section, sectionValue: sectionValue, tx))
            state = after
        }
        return written
    }

    /// Writes the order value of the moved row (and its section attribute when
    /// `sectionValue` is set), spreading the values of the rows around it when its gap is
    /// used up. `state` is the results with the move applied, where the row is item
    /// `move.to.item` of section `section`. Returns the rows written.
    private func write(
        _ move: UserMove, in state: ResultsState, section: Int, sectionValue: DatabaseValue?, _ tx: WriteTransaction
    ) throws -> Set<Int64> {
        let lowest = state.offsets[section]
        let end = lowest + state.runs[section].count
        let target = lowest + move.to.item
        var radius = 0
        while true {
            let start = Swift.max(lowest, target - radius), stop = Swift.min(end, target + radius + 1)
            let lower: Int64?? = start > lowest ? try value(of: state.ids[start - 1], tx) : nil
            let upper: Int64?? = stop < end ? try value(of: state.ids[stop], tx) : nil
            if stop - start == 1, let key = OrderKeys.between(lower, upper) {
                try set(move.id, to: key, sectionValue: sectionValue, tx)
                return [move.id]
            }
            if stop - start > 1, let keys = OrderKeys.spread(stop - start, between: lower, and: upper) {
                for (offset, key) in keys.enumerated() {
                    let id = state.ids[start + offset]
                    try set(id, to: key, sectionValue: id == move.id ? sectionValue : nil, tx)
                }
                return Set((start..<stop).map { state.ids[$0] })
            }
            radius = Swift.max(1, radius * 2)
        }
    }

    /// A row's order value; `.some(nil)` when it is `NULL`, not an integer, or the row is
    /// gone (no room: the window widens, and the spread repairs it).
    private func value(of id: Int64, _ tx: WriteTransaction) throws -> Int64?? {
        let row = try Row.fetchOne(
            tx.database, sql: SQLBuilder.columnValues(table: R.entity.name, column: column),
            arguments: [IdentifierList.jsonArray([id])])
        guard let row else { return .some(nil) }
        if case .int64(let value) = (row[1] as DatabaseValue).storage { return .some(value) }
        return .some(nil)
    }

    private func set(_ id: Int64, to key: Int64, sectionValue: DatabaseValue?, _ tx: WriteTransaction) throws {
        var assignments = [Assignment<R>(keyPath: keyPath, value: key.databaseValue)]
        if let sectionValue, let sectionKeyPath { assignments.append(Assignment(keyPath: sectionKeyPath, value: sectionValue)) }
        try tx.update(R.self, id: id, set: assignments)
    }
}
