import Foundation
import Folio
import Testing
@testable import FeedLoader

@Suite("Synthetic feeds")
struct FeedGeneratorTests {
    @Test func itemsAreDeterministicUniqueAndDatedBackwards() throws {
        let newest = Date(timeIntervalSince1970: 1_750_000_000)
        let generator = FeedGenerator(seed: 42, newest: newest, spacing: 150)
        let items = generator.items(0..<5_000)
        #expect(items == FeedGenerator(seed: 42, newest: newest, spacing: 150).items(0..<5_000))
        #expect(generator.item(1_234) == items[1_234], "any item can be made on its own")
        #expect(Set(items.map(\.url)).count == items.count)
        #expect(items.allSatisfy { $0.published <= newest && FeedParser.webHost($0.url) != nil })
        #expect(items.last!.published < newest.addingTimeInterval(-4_999 * 150 + 1))
        #expect(Set(items.map(\.source)).count == FeedGenerator.outlets.count)
        #expect(items.allSatisfy { !$0.title.contains("{") && !$0.summary.contains("{") })
        #expect(items.filter { $0.imageURL == nil }.count < items.count / 5)
    }

    @Test func slugsAreLowercaseAsciiWords() {
        #expect(FeedGenerator.slug("Apple's M5 chip — tested in São Paulo!") == "apple-s-m5-chip-tested-in-s-o-paulo")
    }

    @Test func generatingInsertsInChunksWithProgress() async throws {
        let store = try Store.temporary(records: Feed.recordTypes)
        let generator = FeedGenerator(seed: 1, newest: Date(timeIntervalSince1970: 1_750_000_000))
        var steps: [Int] = []
        let count = try await GenerateCommand.insert(generator, count: 2_500, chunk: 1_000, into: store) { steps.append($0) }
        #expect(count == 2_500)
        #expect(steps == [1_000, 2_000, 2_500])
        #expect(try store.count(RecordRequest<Feed>()) == 2_500)
    }
}
