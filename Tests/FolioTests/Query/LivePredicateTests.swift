import Foundation
import GRDB
import Testing
@testable import Folio

/// Predicates on a live controller.
@Suite("Predicates on live lists", .tags(Testing.Tag.threadSanitized))
@MainActor
struct LivePredicateTests {
    /// `#Predicate { $0.score < -1 }` and unary minus translate (they once threw
    /// `unsupportedPredicate`). The SQL of each form is checked in `PredicateTranslationTests`;
    /// here a live controller uses one.
    @Test func negativeLiteralsAndUnaryMinusTranslate() async throws {
        let store = try Store.inMemory(records: [Article.self])
        try writeSync(store) { tx in
            for score in [-5, -2, -1, 0, 3] {
                var a = Article(title: "s\(score)", score: score)
                try tx.insert(&a)
            }
        }
        var request = sorted([SortDescriptor(\.score)])
        request.predicate = #Predicate { $0.score < -1 || -$0.score == -3 }
        let live = try await LiveHarness(store, request)
        #expect(live.controller.snapshot.numberOfItems == 3)
        let changes = try await live.step { tx in
            var a = Article(title: "s-9", score: -9)
            try tx.insert(&a)
        }
        #expect(changes.first?.insertedItems == [IndexPath(item: 0, section: 0)])
        #expect(try store.count(RecordRequest<Article>(predicate: #Predicate { -($0.score + 1) >= 1 })) == 3)
    }
}
