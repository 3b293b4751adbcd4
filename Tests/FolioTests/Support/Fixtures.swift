import Foundation
import Folio

/// The record most tests use.
struct Article: PersistentRecord, Equatable {
    var id: RecordID?
    var title = ""
    var url = ""
    var published = Date(timeIntervalSince1970: 0)
    var score = 0
    var category: String? = nil
    var isRead = false

    static let entity = EntityDescription<Article>(
        "article",
        [
            AttributeDescription(\.title),
            AttributeDescription(\.url, unique: true),
            AttributeDescription(\.published, indexed: true),
            AttributeDescription(\.score, indexed: true),
            AttributeDescription(\.category),
            AttributeDescription(\.isRead),
        ])

    init() {}
    init(
        title: String, url: String? = nil, published: Date = Date(timeIntervalSince1970: 0), score: Int = 0,
        category: String? = nil
    ) {
        self.title = title
        self.url = url ?? "https://example.com/\(UUID().uuidString)"
        self.published = published
        self.score = score
        self.category = category
    }
}

/// Inserts `count` articles with score = index, published = index hours after 1970.
func seed(_ store: Store, count: Int, categories: [String?] = ["a", "b", "c", nil]) throws {
    try store.write { tx in
        for i in 0..<count {
            var a = Article(
                title: "Article \(i)", url: "https://example.com/\(i)",
                published: Date(timeIntervalSince1970: Double(i) * 3600), score: i,
                category: categories.isEmpty ? nil : categories[i % categories.count])
            try tx.insert(&a)
        }
    }
}

/// A new file store holding ten articles "t0"…"t9" scored 0, 10, …, 90, and a `.computed`
/// section key by tens that puts 55 in section "0": a row scored 55 makes the sections
/// non-contiguous — a commit no controller can follow.
func tensWithABreakingSectionKey() throws -> (store: Store, key: SectionKey<Article>) {
    let store = try Store.temporary(records: [Article.self])
    try store.write { tx in
        for i in 0..<10 {
            var a = Article(title: "t\(i)", score: i * 10)
            try tx.insert(&a)
        }
    }
    let key = SectionKey<Article>.computed(\.score, name: "tens, but 55 is zero") { $0 == 55 ? "0" : "\($0 / 10)" }
    return (store, key)
}

/// Captures the SQL a store runs.
final class SQLRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    init(_ store: Store) {
        store.diagnostics.logSQL { [weak self] line in
            guard let self else { return }
            self.lock.lock(); self.lines.append(line); self.lock.unlock()
        }
    }
    var statements: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    func reset() { lock.lock(); lines = []; lock.unlock() }
}

/// The synchronous `write`, callable from async tests (where the async overload wins).
func writeSync<T>(_ store: Store, _ body: (WriteTransaction) throws -> T) throws -> T {
    try store.write(body)
}
