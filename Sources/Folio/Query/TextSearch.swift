import Foundation

/// A full-text search: the records whose searchable attributes contain the words of a text,
/// typed by a user, case- and diacritic-insensitively.
///
/// Set it as a request's ``RecordRequest/search``; it is combined with the request's
/// predicate (both must hold) and works everywhere a request does — fetches, counts,
/// background fetches, and live controllers, whose change sets include the rows that come
/// to match or stop matching.
///
/// ```swift
/// var request = RecordRequest<Article>(
///     predicate: #Predicate { $0.isRead == false },
///     sortBy: [SortDescriptor(\.published, order: .reverse)])
/// request.search = TextSearch("ipad pro", matchingPrefixes: true)   // as the user types
/// ```
///
/// How the text is read — never as SQL or FTS5 syntax, so no input is an error:
/// - Words are separated by spaces; every word must appear (in any searchable attribute,
///   or in one of ``attributes``).
/// - A word ending with `*` matches the words it begins (`ipa*` finds "iPad"); with
///   ``matchesPrefixes`` every word does.
/// - Text in double quotes is a phrase: its words must appear one after the other. A quote
///   that is not closed runs to the end of the text.
/// - Everything else is plain text: `AND`, `OR`, `NOT`, `NEAR`, parentheses, `:`, `^`, `+`
///   and `-` are searched as written, never interpreted.
/// - The words are folded (`String.folded`) as the index is: "Café" finds "cafe",
///   "STRASSE" finds "Straße". Inside a word, characters other than letters, digits and
///   marks — NUL included — separate words as the index does: `iPad-Pro` and `iPad\0Pro`
///   are the phrase "ipad pro".
/// - A word with no letter or digit (`-`, `🙂`) is left out; a search with no word left
///   matches every record.
///
/// Searches need the entity's full-text index: declare its text attributes with
/// `AttributeDescription(\.title, searchable: true)`. See <doc:SearchingAndSortingText>.
// @unchecked Sendable: the key paths are immutable values; nothing else is mutable state.
public struct TextSearch<R: PersistentRecord>: @unchecked Sendable {
    /// The text to search for, as the user typed it.
    public var text: String
    /// The searchable attributes to search in; empty for all of the entity's.
    public var attributes: [PartialKeyPath<R>]
    /// Whether every word matches the words it begins, not only words ending with `*`:
    /// what a search field that filters as the user types wants.
    public var matchesPrefixes: Bool
    /// Whether results come in order of relevance (SQLite's `bm25`), best first, before the
    /// request's sort descriptors. For one-shot fetches only: a live controller throws
    /// ``FolioError/invalidArgument(_:)``, since a record's relevance changes with every
    /// other record written.
    public var ranksByRelevance: Bool

    /// Creates a search.
    ///
    /// - Parameters:
    ///   - text: the text to search for, as typed; see ``TextSearch`` for how it is read.
    ///   - attributes: the searchable attributes to search in; empty (the default) for all.
    ///   - matchingPrefixes: every word also matches the words it begins.
    ///   - rankedByRelevance: order the results by relevance first (one-shot fetches only).
    public init(
        _ text: String, in attributes: [PartialKeyPath<R>] = [], matchingPrefixes: Bool = false,
        rankedByRelevance: Bool = false
    ) {
        self.text = text
        self.attributes = attributes
        self.matchesPrefixes = matchingPrefixes
        self.ranksByRelevance = rankedByRelevance
    }

    /// The search as a full-text query on `entity`'s index, and whether it ranks.
    func compile() throws -> SearchClause {
        let entity = R.entity
        let searchable = entity.attributes.filter(\.isSearchable)
        guard !searchable.isEmpty else { throw FolioError.attributeNotSearchable(entity: entity.name, attribute: nil) }
        var columns: [String] = []
        for keyPath in attributes {
            guard let attribute = entity.attribute(for: keyPath) else {
                throw FolioError.unknownKeyPath(entity: entity.name, keyPath: String(describing: keyPath))
            }
            guard attribute.isSearchable else {
                throw FolioError.attributeNotSearchable(entity: entity.name, attribute: attribute.column)
            }
            let key = ColumnSchema.foldedKeyColumn(of: attribute.column)
            if !columns.contains(key) { columns.append(key) }
        }
        let terms = SearchText.terms(of: text, prefixes: matchesPrefixes)
        return SearchClause(
            table: entity.name, query: terms.isEmpty ? nil : SearchText.query(terms, columns: columns),
            ranked: ranksByRelevance, terms: terms, columns: columns,
            indexedColumns: searchable.map { ColumnSchema.foldedKeyColumn(of: $0.column) })
    }
}

/// A compiled ``TextSearch``: the FTS5 query on an entity's index (`nil` when the text has
/// no word: every record matches), and whether results are ranked.
struct SearchClause: Sendable, Hashable {
    var table: String
    var query: String?
    var ranked: Bool
    /// The terms `query` was written from, every one required.
    var terms: [SearchText.Term] = []
    /// The index columns the terms must appear in (`query`'s column filter); empty for any.
    var columns: [String] = []
    /// Every column of the entity's full-text index.
    var indexedColumns: [String] = []
}

/// Reads a user's search text into FTS5 query terms (``TextSearch`` documents the rules).
enum SearchText {
    struct Term: Hashable {
        /// The folded words, one after the other (one word, or a phrase).
        var text: String
        var prefix: Bool
    }

    /// The terms of `text`: words and phrases, folded, without the ones that have no word
    /// character for the index.
    static func terms(of text: String, prefixes: Bool) -> [Term] {
        var terms: [Term] = []
        // A word typed twice is one condition: a pasted text repeating a word thousands of
        // times would otherwise be as many phrases for the index to match (seconds each 100,000).
        var seen: Set<Term> = []
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func add(_ raw: [Unicode.Scalar], starred: Bool) {
            var view = String.UnicodeScalarView()
            view.append(contentsOf: raw)
            var folded = TextFolding.fold(String(view))
            guard folded.unicodeScalars.contains(where: isIndexedWordCharacter) else { return }
            // Inside a word, NUL separates words as `-` does (the index's tokenizer makes no
            // word of it): `a\0b` is the phrase "a b". A space says the same to FTS5 inside a
            // phrase, and a NUL would end the query text early.
            if folded.utf8.contains(0) {
                folded = String(String.UnicodeScalarView(folded.unicodeScalars.map { $0 == "\u{0}" ? " " : $0 }))
            }
            let term = Term(text: folded, prefix: starred || prefixes)
            if seen.insert(term).inserted { terms.append(term) }
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar.properties.isWhitespace {
                index += 1
            } else if scalar == "\"" {
                var end = index + 1
                while end < scalars.count && scalars[end] != "\"" { end += 1 }
                let phrase = Array(scalars[(index + 1)..<end])
                index = end + 1
                let starred = index < scalars.count && scalars[index] == "*"
                if starred { index += 1 }
                add(phrase, starred: starred)
            } else {
                var end = index
                while end < scalars.count && !scalars[end].properties.isWhitespace && scalars[end] != "\"" { end += 1 }
                var word = Array(scalars[index..<end])
                index = end
                var starred = false
                while word.last == "*" {
                    word.removeLast()
                    starred = true
                }
                add(word, starred: starred)
            }
        }
        return terms
    }

    /// A character the index makes words of: a letter, digit, mark or private-use character
    /// of Unicode 15.0 (the version the folding stops at), or a character Unicode 15.0 does
    /// not assign, which the folding keeps as it is. Everything else — punctuation, symbols,
    /// emoji, spaces, controls — separates words.
    ///
    /// SQLite's `unicode61` tokenizer knows Unicode 6.1 only, and makes words of every
    /// character 6.1 does not assign: the index's tokenizer is told that the characters
    /// assigned since, up to 15.0, that are not letters, digits or marks are separators
    /// (``separatorsSinceUnicode61``), so that the index and the search agree on every
    /// character — "thanks🙂" has the word "thanks" in both.
    static func isIndexedWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        // The two noncharacters SQLite's tables, unlike Swift's, do not leave unassigned.
        if scalar.value == 0xFFFE || scalar.value == 0xFFFF { return false }
        guard let age = scalar.properties.age, !isNewerThanFolding(age),
            scalar.properties.generalCategory != .unassigned
        else { return true }
        return isWordCategory(scalar.properties.generalCategory)
    }

    /// Letters, numbers, marks and private use: `categories 'L* N* Co M*'`.
    private static func isWordCategory(_ category: Unicode.GeneralCategory) -> Bool {
        switch category {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .privateUse,
            .nonspacingMark, .spacingMark, .enclosingMark:
            true
        default:
            false
        }
    }

    private static func isNewerThanFolding(_ age: Unicode.Version) -> Bool {
        let newest = TextFolding.unicodeVersion
        return age.major > newest.major || (age.major == newest.major && age.minor > newest.minor)
    }

    /// The characters assigned after Unicode 6.1, up to 15.0, that are not letters, digits,
    /// marks or private use — emoji, symbols, punctuation — in descending order (SQLite
    /// inserts each into a sorted list, and descending order makes that linear). The index's
    /// tokenizer separates words at them (``SQLBuilder/searchTokenizer``); without them its
    /// Unicode 6.1 tables would join `🙂` (Unicode 7.0) to the word before it. No character
    /// of planes 4 to 13 or 15 and 16 is assigned by 15.0 other than as private use.
    static let separatorsSinceUnicode61: String = {
        var separators = String.UnicodeScalarView()
        for range in [0xE0000...0xE0FFF, 0x80...0x3FFFF] {
            for value in range.reversed() {
                guard let scalar = Unicode.Scalar(value), let age = scalar.properties.age,
                    age.major > 6 || (age.major == 6 && age.minor > 1), !isNewerThanFolding(age),
                    scalar.properties.generalCategory != .unassigned,
                    !isWordCategory(scalar.properties.generalCategory)
                else { continue }
                separators.append(scalar)
            }
        }
        return String(separators)
    }()

    /// The FTS5 query: every term an FTS5 string (double quotes doubled), `*` after a
    /// prefix, all required; restricted to `columns` when there are any.
    static func query(_ terms: [Term], columns: [String]) -> String {
        let body = terms.map { term in
            "\"" + term.text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" + (term.prefix ? " *" : "")
        }.joined(separator: " AND ")
        guard !columns.isEmpty else { return body }
        return "{" + columns.joined(separator: " ") + "} : (" + body + ")"
    }
}
