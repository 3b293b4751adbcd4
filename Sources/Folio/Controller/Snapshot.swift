import Foundation

/// The sections and identifiers of a controller's results at one moment: what a
/// diffable data source wants, built without loading a single record.
///
/// Taking a snapshot shares the controller's identifier storage (no copy of the
/// identifiers), so it is O(number of sections) whatever the number of rows.
///
/// ```swift
/// let snapshot = controller.snapshot
/// for (index, section) in snapshot.sections.enumerated() {
///     print(section.name, snapshot.identifiers(inSection: index).count)
/// }
/// ```
public struct Snapshot: Sendable, Equatable {
    let state: ResultsState
    /// The sections, in order.
    public let sections: [SectionInfo]

    init(state: ResultsState, sections: [SectionInfo]) {
        self.state = state
        self.sections = sections
    }

    /// Every identifier, in order.
    public var identifiers: RecordIDs { RecordIDs(state.ids) }

    /// The number of items.
    public var numberOfItems: Int { state.ids.count }

    /// The number of sections.
    public var numberOfSections: Int { sections.count }

    /// The identifiers of one section.
    /// - Complexity: O(1); the slice shares storage.
    public func identifiers(inSection section: Int) -> Slice<RecordIDs> {
        let info = sections[section]
        return identifiers[info.offset..<(info.offset + info.numberOfObjects)]
    }

    /// The changes that turn `old` into this snapshot, with the same batch-update rules
    /// as the controller's change sets (moves minimal; no updates, since a snapshot does
    /// not know which records changed).
    ///
    /// - Complexity: O(n log n) in the number of identifiers.
    public func difference(from old: Snapshot) -> ChangeSet {
        ChangeSetBuilder.diff(old: old.state, new: state, changed: nil)
    }

    /// Whether two snapshots have the same identifiers in the same sections with the same names.
    public static func == (lhs: Snapshot, rhs: Snapshot) -> Bool {
        lhs.state == rhs.state && lhs.sections.map(\.name) == rhs.sections.map(\.name)
    }
}
