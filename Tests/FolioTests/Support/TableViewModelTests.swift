import Foundation
import Testing
@testable import Folio

/// The table-view model must reject every inconsistency UIKit rejects (and the breaches
/// of the change-set contract UIKit would not notice), or the randomized suites could
/// pass without proving anything.
@Suite("Table-view model")
struct TableViewModelTests {
    static func path(_ section: Int, _ item: Int) -> IndexPath { IndexPath(item: item, section: section) }

    /// Two sections: [1 2 3] and [4 5].
    static func model() -> TableViewModel {
        TableViewModel(sections: [[1, 2, 3].map(RecordID.init), [4, 5].map(RecordID.init)])
    }

    /// A hand-built change set against ``model()``; the identifiers of deleted, moved and
    /// updated rows are filled in from the model (0 for a path outside it), as Folio does.
    static func change(_ edit: (inout ChangeSet) -> Void) -> ChangeSet {
        var change = ChangeSet()
        edit(&change)
        let rows = model().sections
        func id(_ p: IndexPath) -> RecordID {
            guard rows.indices.contains(p.section), rows[p.section].indices.contains(p.item) else { return RecordID(0) }
            return rows[p.section][p.item]
        }
        change.deletedIdentifiers = change.deletedItems.map(id)
        change.movedIdentifiers = change.movedItems.map { id($0.from) }
        change.updatedIdentifiers = change.updatedItems.map(id)
        return change
    }

    static func rejects(
        _ change: ChangeSet, _ dataSource: [[Int64]], _ message: String, sectioned: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var model = model()
        do {
            try model.apply(change, dataSource: .testing(dataSource, sectioned: sectioned))
            Issue.record("accepted an inconsistent change set: \(change)", sourceLocation: sourceLocation)
        } catch let error as TableViewModel.Inconsistency {
            #expect(error.description.contains(message), "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record(error, sourceLocation: sourceLocation)
        }
    }

    @Test func appliesAConsistentChangeSetAndReportsWhatItTouched() throws {
        var model = Self.model()
        // 1 deleted, 3 updated, 2 moved to section 1, 6 inserted, a new section [7] at the end.
        let change = Self.change {
            $0.deletedItems = [Self.path(0, 0)]
            $0.updatedItems = [Self.path(0, 2)]
            $0.movedItems = [ChangeSet.Move(from: Self.path(0, 1), to: Self.path(1, 2), isUpdated: true)]
            $0.insertedItems = [Self.path(1, 0)]
            $0.insertedIdentifiers = [RecordID(6)]
            $0.insertedSections = [2]
        }
        let applied = try model.apply(change, dataSource: .testing([[3], [6, 4, 2, 5], [7]]))
        #expect(model.sections == [[3], [6, 4, 2, 5], [7]].map { $0.map(RecordID.init) })
        #expect(applied.deleted == [RecordID(1)])
        #expect(Set(applied.inserted) == [RecordID(6), RecordID(7)])
        #expect(applied.moved == [RecordID(2): true])
        #expect(applied.updated == [RecordID(3)])
        #expect(applied.reconfigured == [RecordID(2), RecordID(3)])
    }

    @Test func rejectsIdentifiersThatAreNotTheRowsNamed() {
        var wrong = Self.change { $0.deletedItems = [Self.path(0, 0)] }
        wrong.deletedIdentifiers = [RecordID(2)]
        Self.rejects(wrong, [[2, 3], [4, 5]], "deleted identifiers")
        var missing = Self.change { $0.updatedItems = [Self.path(1, 1)] }
        missing.updatedIdentifiers = []
        Self.rejects(missing, [[1, 2, 3], [4, 5]], "updated identifiers")
    }

    @Test func deletesAndInsertsSections() throws {
        var model = Self.model()
        let change = Self.change {
            $0.deletedSections = [0]
            $0.insertedSections = [1]
        }
        let applied = try model.apply(change, dataSource: .testing([[4, 5], [8, 9]]))
        #expect(model.sections == [[4, 5], [8, 9]].map { $0.map(RecordID.init) })
        #expect(Set(applied.deleted) == Set([1, 2, 3].map(RecordID.init)))
        #expect(Set(applied.inserted) == Set([8, 9].map(RecordID.init)))
    }

    @Test func aWrongButWellFormedMoveIsCaughtByTheComparison() throws {
        // Structurally valid, so UIKit accepts it, but row 1 ends up in the wrong place:
        // only comparing the model with a fresh fetch catches this, which the suites do.
        var model = Self.model()
        let change = Self.change {
            $0.movedItems = [ChangeSet.Move(from: Self.path(0, 0), to: Self.path(0, 1), isUpdated: false)]
        }
        let dataSource = Snapshot.testing([[3, 1, 2], [4, 5]])
        try model.apply(change, dataSource: dataSource)
        #expect(model != TableViewModel(dataSource))
    }

    @Test func rejectsRowCountsThatDoNotAddUp() {
        // The data source gained a row nobody inserted.
        Self.rejects(ChangeSet(), [[1, 2, 3, 9], [4, 5]], "invalid number of rows in section 0")
        // A row deleted that the data source still has.
        Self.rejects(
            Self.change { $0.deletedItems = [Self.path(1, 0)] }, [[1, 2, 3], [4, 5]], "invalid number of rows in section 1")
        // A move that leaves one section short and another long.
        Self.rejects(
            Self.change { $0.movedItems = [ChangeSet.Move(from: Self.path(0, 0), to: Self.path(0, 2), isUpdated: false)] },
            [[2, 3], [1, 4, 5]], "out of range")
    }

    @Test func rejectsSectionCountsThatDoNotAddUp() {
        Self.rejects(ChangeSet(), [[1, 2, 3], [4, 5], [6]], "invalid number of sections")
        Self.rejects(Self.change { $0.deletedSections = [1] }, [[1, 2, 3], [4, 5]], "invalid number of sections")
        Self.rejects(Self.change { $0.deletedSections = [1, 1] }, [[1, 2, 3]], "deletedSections not strictly ascending")
        Self.rejects(Self.change { $0.deletedSections = [2] }, [[1, 2, 3]], "out of range")
        Self.rejects(Self.change { $0.insertedSections = [3] }, [[1, 2, 3], [4, 5], [6]], "out of range")
    }

    @Test func rejectsARowDeletedAndUpdated() {
        Self.rejects(
            Self.change {
                $0.deletedItems = [Self.path(0, 1)]
                $0.updatedItems = [Self.path(0, 1)]
            }, [[1, 3], [4, 5]], "deleted and updated")
    }

    @Test func rejectsIndexesOutOfRange() {
        Self.rejects(Self.change { $0.deletedItems = [Self.path(0, 3)] }, [[1, 2, 3], [4, 5]], "out of range")
        Self.rejects(Self.change { $0.updatedItems = [Self.path(1, 2)] }, [[1, 2, 3], [4, 5]], "out of range")
        Self.rejects(Self.change { $0.updatedItems = [Self.path(2, 0)] }, [[1, 2, 3], [4, 5]], "section out of range")
        Self.rejects(Self.change { $0.deletedItems = [Self.path(0, -1)] }, [[1, 2, 3], [4, 5]], "out of range")
        Self.rejects(
            Self.change {
                $0.insertedItems = [Self.path(1, 5)]
                $0.insertedIdentifiers = [RecordID(9)]
            }, [[1, 2, 3], [4, 5, 9]], "out of range")
        Self.rejects(
            Self.change {
                $0.movedItems = [ChangeSet.Move(from: Self.path(0, 0), to: Self.path(1, 9), isUpdated: false)]
            }, [[2, 3], [4, 5, 1]], "out of range")
    }

    @Test func rejectsAMoveFromADeletedRowOrSection() {
        Self.rejects(
            Self.change {
                $0.deletedItems = [Self.path(0, 0)]
                $0.movedItems = [ChangeSet.Move(from: Self.path(0, 0), to: Self.path(1, 0), isUpdated: false)]
            }, [[2, 3], [1, 4, 5]], "move from deleted row")
        Self.rejects(
            Self.change {
                $0.deletedSections = [0]
                $0.movedItems = [ChangeSet.Move(from: Self.path(0, 0), to: Self.path(0, 0), isUpdated: false)]
            }, [[1, 4, 5]], "in a deleted section")
    }

    @Test func rejectsAMoveOrInsertIntoAnInsertedSection() {
        Self.rejects(
            Self.change {
                $0.insertedSections = [2]
                $0.movedItems = [ChangeSet.Move(from: Self.path(0, 0), to: Self.path(2, 0), isUpdated: false)]
            }, [[2, 3], [4, 5], [1]], "in an inserted section")
        Self.rejects(
            Self.change {
                $0.insertedSections = [2]
                $0.insertedItems = [Self.path(2, 0)]
                $0.insertedIdentifiers = [RecordID(9)]
            }, [[1, 2, 3], [4, 5], [9]], "in an inserted section")
    }

    @Test func rejectsDuplicates() {
        Self.rejects(
            Self.change { $0.deletedItems = [Self.path(0, 0), Self.path(0, 0)] }, [[2, 3], [4, 5]], "not strictly ascending")
        Self.rejects(
            Self.change {
                $0.movedItems = [
                    ChangeSet.Move(from: Self.path(0, 0), to: Self.path(0, 2), isUpdated: false),
                    ChangeSet.Move(from: Self.path(0, 0), to: Self.path(0, 1), isUpdated: false),
                ]
            }, [[2, 3, 1], [4, 5]], "movedItems (by origin) not strictly ascending")
        Self.rejects(
            Self.change {
                $0.insertedItems = [Self.path(0, 0)]
                $0.insertedIdentifiers = [RecordID(9)]
                $0.movedItems = [ChangeSet.Move(from: Self.path(1, 0), to: Self.path(0, 0), isUpdated: false)]
            }, [[9, 4, 1, 2, 3], [5]], "two rows inserted or moved")
        Self.rejects(
            Self.change {
                $0.movedItems = [ChangeSet.Move(from: Self.path(0, 0), to: Self.path(0, 1), isUpdated: false)]
                $0.updatedItems = [Self.path(0, 0)]
            }, [[2, 1, 3], [4, 5]], "moved and updated in place")
        // The same record shown twice after the update: row 1 is inserted in section 1
        // but never deleted from section 0 (row 2 is deleted instead, so counts add up).
        Self.rejects(
            Self.change {
                $0.deletedItems = [Self.path(0, 1)]
                $0.insertedItems = [Self.path(1, 0)]
                $0.insertedIdentifiers = [RecordID(1)]
            }, [[2, 3], [1, 4, 5]], "#1 shown twice")
    }

    @Test func rejectsInsertedIdentifiersThatAreNotTheRowsShown() {
        Self.rejects(
            Self.change {
                $0.insertedItems = [Self.path(1, 0)]
                $0.insertedIdentifiers = [RecordID(8)]
            }, [[1, 2, 3], [9, 4, 5]], "the data source has #9")
        Self.rejects(
            Self.change {
                $0.insertedItems = [Self.path(1, 0)]
            }, [[1, 2, 3], [9, 4, 5]], "inserted identifiers")
    }

    @Test func rejectsListsOutOfOrder() {
        Self.rejects(
            Self.change { $0.deletedItems = [Self.path(0, 2), Self.path(0, 0)] }, [[2], [4, 5]],
            "deletedItems not strictly ascending")
        Self.rejects(
            Self.change { $0.updatedItems = [Self.path(1, 0), Self.path(0, 0)] }, [[1, 2, 3], [4, 5]],
            "updatedItems not strictly ascending")
        Self.rejects(Self.change { $0.deletedSections = [1, 0] }, [], "deletedSections not strictly ascending")
    }

    @Test func rejectsAReloadThatListsChanges() {
        var change = ChangeSet.reload
        change.deletedItems = [Self.path(0, 0)]
        Self.rejects(change, [[2, 3], [4, 5]], "a reload with changes listed")
    }

    @Test func rejectsAnInconsistentDataSource() {
        let runs = [SectionRun(value: "a".databaseValue, count: 2), SectionRun(value: "a".databaseValue, count: 1)]
        let state = ResultsState(_uncheckedIDs: IdentifierList([1, 2, 3]), runs: runs, sectioned: true)
        let sections = [
            SectionInfo(name: "a", indexTitle: nil, numberOfObjects: 2, offset: 0, isNil: false),
            SectionInfo(name: "a", indexTitle: nil, numberOfObjects: 1, offset: 2, isNil: false),
        ]
        var model = TableViewModel(sections: [[1, 2].map(RecordID.init), [RecordID(3)]])
        #expect(throws: TableViewModel.Inconsistency.self) {
            try model.apply(ChangeSet(), dataSource: Snapshot(state: state, sections: sections))
        }
        Self.rejects(ChangeSet(), [[1, 2, 3], [4, 5, 5]], "appears twice")
    }
}
