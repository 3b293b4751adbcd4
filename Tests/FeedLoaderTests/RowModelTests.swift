import Foundation
import Folio
import Testing
@testable import FeedLoader

@Suite("The list's row model")
struct RowModelTests {
    static func ids(_ raw: [Int64]) -> [RecordID] { raw.map(RecordID.init) }

    static func model(_ sections: [(String, [Int64])]) -> RowModel {
        RowModel(sections: sections.map { RowModel.Section(name: $0.0, identifiers: ids($0.1)) })
    }

    @Test func linesInterleaveHeadersAndRows() {
        let model = Self.model([("b", [1, 2]), ("a", [3])])
        #expect(model.lineCount == 5)
        #expect(model.rowCount == 3)
        #expect(
            (0..<5).map { model.line(at: $0) } == [
                .header(section: 0), .row(IndexPath(item: 0, section: 0)), .row(IndexPath(item: 1, section: 0)),
                .header(section: 1), .row(IndexPath(item: 0, section: 1)),
            ])
        #expect(model.indexPath(atRow: 2) == IndexPath(item: 0, section: 1))
        #expect(model.row(of: IndexPath(item: 0, section: 1)) == 2)
        #expect(model.line(of: IndexPath(item: 0, section: 1)) == 4)
    }

    @Test func aChangeSetIsAppliedWithBatchUpdateSemantics() throws {
        var model = Self.model([("d3", [1, 2, 3]), ("d2", [4, 5]), ("d1", [6, 10])])
        var change = ChangeSet()
        change.deletedSections = [2]  // d1 goes (old index)
        change.insertedSections = [0]  // d4 arrives (new index)
        change.deletedItems = [IndexPath(item: 1, section: 0)]  // 2 (old)
        change.movedItems = [
            ChangeSet.Move(from: IndexPath(item: 0, section: 1), to: IndexPath(item: 0, section: 1), isUpdated: true)
        ]
        change.insertedItems = [IndexPath(item: 2, section: 1)]  // 9 at the end of d3 (new)
        change.insertedIdentifiers = Self.ids([9])
        change.updatedItems = [IndexPath(item: 2, section: 0)]  // 3 (old)
        let applied = try model.apply(change) { index in
            #expect(index == 0)
            return RowModel.Section(name: "d4", identifiers: Self.ids([7, 10, 8]))  // 10 came from d1
        }
        // Old d3 = [1, 3] after the deletion and the move out; 4 moves to the top of d3.
        #expect(model == Self.model([("d4", [7, 10, 8]), ("d3", [4, 1, 9, 3]), ("d2", [5])]))
        #expect(applied.inserted == Self.ids([9, 7, 8]), "rows of a new section are new too")
        #expect(Set(applied.updated) == Set(Self.ids([3, 4, 10])))
        #expect(applied.removed == Set(Self.ids([2, 6])))
        #expect(applied.moved.map(\.id) == Self.ids([4, 10]), "10 left d1 for the new d4")
    }

    @Test func aChangeSetThatDoesNotFitIsRefusedAndChangesNothing() {
        var model = Self.model([("a", [1, 2])])
        var change = ChangeSet()
        change.deletedItems = [IndexPath(item: 5, section: 0)]
        #expect(throws: RowModel.ApplyError.self) { _ = try model.apply(change) { _ in fatalError() } }
        #expect(model == Self.model([("a", [1, 2])]))
    }

    /// The list's model follows a live controller through random commits, change set by
    /// change set, and always equals the controller's own snapshot.
    @Test(arguments: [1, 2, 3])
    @MainActor
    func followsALiveControllerThroughRandomCommits(seed: UInt64) async throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let base = Date(timeIntervalSince1970: 1_749_772_800)  // 2025-06-13 00:00 UTC
        var random = SplitMix64(seed: seed)
        func randomItem(_ n: Int) -> FeedItem {
            FeedItem(
                title: "Item \(n)", url: "https://example.com/\(seed)/\(n)",
                published: base.addingTimeInterval(-Double(random.below(6 * 86_400))), summary: "", source: "Example")
        }
        var next = 60
        let initial = (0..<60).map { randomItem($0) }
        try await store.write { tx in
            for item in initial {
                var feed = Feed(item)
                try tx.insert(&feed)
            }
        }
        let source = FeedListSource(.feedList(filter: "", newestFirst: true, batchSize: 10), store: store, tracking: true)
        try source.performFetch()
        var model = RowModel(sections: source.currentSections())
        var failures: [String] = []
        var changeSets = 0
        source.onChange = { change in
            changeSets += 1
            if change.isReload {
                model = RowModel(sections: source.currentSections())
                return
            }
            do { _ = try model.apply(change) { source.section(at: $0) } } catch { failures.append("\(error)") }
        }
        for round in 0..<40 {
            let existing = try store.fetchIdentifiers(RecordRequest<Feed>(sortBy: [SortDescriptor(\.url)]))
            var plan: [(kind: Int, id: RecordID?, item: FeedItem)] = []
            for _ in 0..<(1 + random.below(4)) {
                let kind = existing.isEmpty ? 0 : random.below(3)
                plan.append((kind, existing.isEmpty ? nil : existing[random.below(existing.count)], randomItem(next)))
                next += 1
            }
            let steps = plan
            try await store.write { tx in
                for step in steps {
                    switch step.kind {
                    case 0:
                        var feed = Feed(step.item)
                        try tx.insert(&feed)
                    case 1:
                        _ = try tx.delete(Feed.self, id: step.id!)
                    default:
                        // Re-date a record: it moves, maybe to another day.
                        let id = step.id
                        let request = RecordRequest<Feed>(predicate: #Predicate { $0.id == id })
                        if var feed = try tx.fetchAll(request).first {
                            feed.published = step.item.published
                            feed.title += "'"
                            try tx.update(feed)
                        }
                    }
                }
            }
            await source.controller.waitForChanges()
            #expect(model.sections == source.currentSections(), "round \(round)")
        }
        #expect(failures.isEmpty)
        #expect(changeSets >= 30)
    }
}

@Suite("Keys from a terminal")
struct KeyTests {
    @Test func escapeSequencesAndControlKeysAreDecoded() {
        let input: [UInt8] = Array("\u{1B}[A\u{1B}[B\u{1B}OC\u{1B}[5~\u{1B}[6~\u{1B}[H\u{1B}[4~jG/\r\u{7F}\u{03}\u{1B}".utf8)
        #expect(
            Key.parse(input) == [
                .up, .down, .right, .pageUp, .pageDown, .home, .end, .character("j"), .character("G"), .character("/"),
                .enter, .backspace, .control("c"), .escape,
            ])
    }

    @Test func utf8CharactersAreWhole() {
        #expect(Key.parse(Array("é→".utf8)) == [.character("é"), .character("→")])
    }
}

@Suite("Fitting text into cells")
struct TextLayoutTests {
    @Test func fitPadsAndCuts() {
        #expect(TextLayout.fit("abc", 5) == "abc  ")
        #expect(TextLayout.fit("abcdef", 4) == "abc…")
        #expect(TextLayout.width(of: "日本") == 4)
        #expect(TextLayout.fit("日本語", 5) == "日本…")
    }

    @Test func wrapBreaksAtSpaces() {
        #expect(TextLayout.wrap("one two three four", 9) == ["one two", "three", "four"])
    }

    @Test func dayTitlesNameTheWeekday() {
        #expect(DayFormat.dayTitle("2025-06-13") == "2025-06-13  Friday 13 June 2025")
        #expect(DayFormat.dayTitle("1970-01-01") == "1970-01-01  Thursday 1 January 1970")
        #expect(DayFormat.dayTitle("") == "")
    }
}
