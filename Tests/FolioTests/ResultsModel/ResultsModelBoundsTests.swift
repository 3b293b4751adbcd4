import Foundation
import Testing
@testable import Folio

/// A position outside a section's items stops the program with a message naming the index
/// and the range — never the row of the next section, which shares the same results.
@Suite("FetchedResultsModel: positions out of range")
struct ResultsModelBoundsTests {
    /// The second section's items of 20 articles in four categories: positions 5..<10 of the results.
    @MainActor
    static func secondSection() -> FetchedItems<Article>? {
        guard let store = try? Store.inMemory(records: [Article.self]), (try? seed(store, count: 20)) != nil else { return nil }
        let model = FetchedResultsModel(
            articles(sortBy: [SortDescriptor(\.category), SortDescriptor(\.score)]), store: store,
            sectionBy: .attribute(\.category))
        guard (try? model.performFetch()) != nil, model.sections.count == 4 else { return nil }
        return model.sections[1].items
    }

    @Test func aPositionPastTheSectionStopsWithAMessage() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                guard let items = ResultsModelBoundsTests.secondSection(), items.count == 5 else { return }
                _ = items[5]
            }
        }
        let printed = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(printed.contains("Index 5 out of range 0..<5"), "\(printed.suffix(400))")
    }

    @Test func aNegativePositionStopsWithAMessage() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                guard let items = ResultsModelBoundsTests.secondSection(), items.count == 5 else { return }
                _ = items[-1]
            }
        }
        let printed = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(printed.contains("Index -1 out of range 0..<5"), "\(printed.suffix(400))")
    }
}
