import Foundation
import GRDB
import GRDBSQLite

/// Decides whether one row matches a full-text search the way the index does: the row's
/// indexed text, read from the index's own copy, is split into words by the index's own
/// tokenizer (created from the same arguments, on the same connection), and the search's
/// phrases — tokenized by it too, as FTS5 tokenizes a query — are looked for among them:
/// every phrase must appear, its words one after the other in one column (one of the
/// search's columns when it names some), the last word matching the words it begins when
/// the phrase is a prefix.
///
/// That is FTS5's own definition of a match for the queries Folio writes (phrases joined by
/// `AND`, under an optional column filter), so a row is kept exactly when the index would
/// return it. Where FTS5 would do something this does not model — a phrase with no word, a
/// word too long for the index (FTS5 cuts words at 32,768 bytes) — the matcher says it
/// cannot decide, and the caller asks the index instead.
final class SearchMatcher {
    /// A phrase of the search: its words (the tokenizer's bytes) and whether the last one
    /// is a prefix.
    private struct Phrase {
        var words: [[UInt8]]
        var prefix: Bool
    }

    /// Words the index keeps whole; longer ones it cuts, which this does not model.
    private static let longestWord = 32_768 - 1

    private let tokenizer: any FTS5Tokenizer
    private let phrases: [Phrase]
    /// Per column read by ``contentSQL``, whether the phrases may match in it.
    private let searched: [Bool]
    private let words = WordList()

    /// The statement that reads a row's indexed text, one column per index column.
    let contentSQL: String

    /// The matcher of `search`, or `nil` when the search has no term or a term this does
    /// not model.
    init?(_ db: Database, _ search: SearchClause) throws {
        guard !search.terms.isEmpty, !search.indexedColumns.isEmpty else { return nil }
        tokenizer = try db.makeTokenizer(FTS5TokenizerDescriptor(components: SQLBuilder.searchTokenizerComponents))
        var phrases: [Phrase] = []
        for term in search.terms {
            let words = WordList()
            let flags = FTS5Tokenization.query.rawValue | (term.prefix ? FTS5Tokenization.prefix.rawValue : 0)
            guard words.fill(tokenizer, Array(term.text.utf8), flags: flags), !words.isEmpty else { return nil }
            phrases.append(Phrase(words: words.all, prefix: term.prefix))
        }
        self.phrases = phrases
        searched = search.indexedColumns.map { search.columns.isEmpty || search.columns.contains($0) }
        contentSQL = SQLBuilder.searchContent(table: search.table, columns: search.indexedColumns)
    }

    /// Whether the row the content statement stepped to (its columns the index columns)
    /// matches; `nil` when it cannot be decided here.
    func matches(_ sqlite: OpaquePointer) -> Bool? {
        var found = [Bool](repeating: false, count: phrases.count)
        var remaining = phrases.count
        for column in searched.indices where searched[column] {
            let count = Int(sqlite3_column_bytes(sqlite, Int32(column)))
            guard count > 0, let text = sqlite3_column_text(sqlite, Int32(column)) else { continue }
            let bytes = UnsafeBufferPointer(start: text, count: count)
            guard words.fill(tokenizer, bytes, flags: FTS5Tokenization.document.rawValue) else { return nil }
            for (p, phrase) in phrases.enumerated() where !found[p] && words.contains(phrase.words, prefix: phrase.prefix) {
                found[p] = true
                remaining -= 1
            }
            if remaining == 0 { return true }
        }
        return false
    }

    /// The words one text was split into: their bytes one after the other, and where each ends.
    private final class WordList {
        private var bytes: [UInt8] = []
        private var ends: [Int] = []
        private var tooLong = false

        var isEmpty: Bool { ends.isEmpty }

        var all: [[UInt8]] {
            ends.indices.map { Array(bytes[(($0 == 0) ? 0 : ends[$0 - 1])..<ends[$0]]) }
        }

        /// Splits `text`; `false` when the tokenizer failed or a word is too long to model.
        func fill<Bytes: Collection<UInt8>>(_ tokenizer: any FTS5Tokenizer, _ text: Bytes, flags: Int32) -> Bool {
            bytes.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
            tooLong = false
            let code =
                text.withContiguousStorageIfAvailable { buffer -> Int32 in
                    tokenize(tokenizer, buffer, flags: flags)
                } ?? Array(text).withUnsafeBufferPointer { tokenize(tokenizer, $0, flags: flags) }
            return code == SQLITE_OK && !tooLong
        }

        private func tokenize(_ tokenizer: any FTS5Tokenizer, _ text: UnsafeBufferPointer<UInt8>, flags: Int32) -> Int32 {
            guard let base = text.baseAddress, text.count > 0 else { return SQLITE_OK }
            return base.withMemoryRebound(to: CChar.self, capacity: text.count) { pointer in
                tokenizer.tokenize(
                    context: Unmanaged.passUnretained(self).toOpaque(),
                    tokenization: FTS5Tokenization(rawValue: flags), pText: pointer, nText: Int32(text.count),
                    tokenCallback: { context, _, token, length, _, _ in
                        guard let context else { return SQLITE_ERROR }
                        let list = Unmanaged<WordList>.fromOpaque(context).takeUnretainedValue()
                        if length > SearchMatcher.longestWord { list.tooLong = true }
                        if let token, length > 0 {
                            token.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                                list.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: Int(length)))
                            }
                        }
                        list.ends.append(list.bytes.count)
                        return SQLITE_OK
                    })
            }
        }

        /// Whether `phrase` appears: its words at consecutive positions, the last a prefix
        /// of the word there when `prefix`.
        func contains(_ phrase: [[UInt8]], prefix: Bool) -> Bool {
            let n = phrase.count
            guard ends.count >= n else { return false }
            return bytes.withUnsafeBufferPointer { all in
                for start in 0...(ends.count - n) {
                    var matched = true
                    for (k, word) in phrase.enumerated() {
                        let index = start + k
                        let from = index == 0 ? 0 : ends[index - 1]
                        let length = ends[index] - from
                        let isLast = k == n - 1
                        if prefix && isLast ? length < word.count : length != word.count {
                            matched = false
                            break
                        }
                        if !word.isEmpty,
                            !word.withUnsafeBufferPointer({ w in memcmp(all.baseAddress! + from, w.baseAddress!, w.count) == 0 })
                        {
                            matched = false
                            break
                        }
                    }
                    if matched { return true }
                }
                return false
            }
        }
    }
}
