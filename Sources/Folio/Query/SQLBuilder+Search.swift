import Foundation
import GRDB

// Folded keys (the stale-row table and its triggers) and full-text search indexes.
extension SQLBuilder {
    // MARK: Folded keys

    /// Rows whose folded keys another writer made stale, noted by the triggers of
    /// ``foldedKeyTriggers(_:)`` and fixed up by Folio at its next access (``FoldedKeys``).
    /// A rowid table without constraints, so that a trigger's insert can never fail.
    static let staleKeysTable = "folio_stale_keys"
    static let createStaleKeys = "CREATE TABLE IF NOT EXISTS \(staleKeysTable) (entity TEXT NOT NULL, row INTEGER NOT NULL)"
    static let staleRows = "SELECT DISTINCT row FROM \(staleKeysTable) WHERE entity = ? ORDER BY row"
    static let hasStaleRows = "SELECT EXISTS (SELECT 1 FROM \(staleKeysTable) WHERE entity = ?)"
    static let clearStaleRows = "DELETE FROM \(staleKeysTable) WHERE entity = ?"

    /// The `folio_metadata` key that records the folding version of an entity's folded keys.
    static func foldingVersionKey(_ entity: String) -> String { "folding_version:" + entity }

    /// The two triggers that note, in ``staleKeysTable``, a row whose folded keys do not
    /// follow its text: written by another program (the `sqlite3` shell, raw SQL) that
    /// changed a folded column without its key, or a key without its text, or left a key
    /// `NULL` or of another storage class than its text (an integer, a blob), or changed the
    /// row's id (it may have been noted under the old one). SQLite built-ins only, so every other writer keeps working. Folio's own
    /// writes set the keys with the text; a change of case alone (where the key stays) is
    /// noted too, and the fix-up finds nothing to change.
    static func foldedKeyTriggers(_ schema: EntitySchema) -> [(name: String, sql: String)] {
        let table = schema.name
        let pairs = schema.foldedColumns
        guard !pairs.isEmpty else { return [] }
        func q(_ row: String, _ column: String) -> String { "\(row).\(quote(column))" }
        // Folio's key has the storage class of its text (NULL, text, or a blob for a blob).
        let mismatch = pairs.map { "(typeof(\(q("NEW", $0.key))) IS NOT typeof(\(q("NEW", $0.source))))" }
        // The text changed and its key did not, or the key alone changed.
        let changed = pairs.map {
            "((\(q("NEW", $0.source)) IS NOT \(q("OLD", $0.source))) <> (\(q("NEW", $0.key)) IS NOT \(q("OLD", $0.key))))"
        }
        let note = "INSERT INTO \(staleKeysTable) (entity, row) VALUES ('\(table)', NEW.\(quote("id")))"
        // A row whose id changes is noted under its new id: it may have been noted under the
        // old one, which the fix-up would no longer find. (No `UPDATE OF` column list: an
        // update of `rowid` names no column, and would not fire it.)
        let moved = "OLD.\(quote("id")) IS NOT NEW.\(quote("id"))"
        return [
            (
                "folio_\(table)_fold_ins",
                "CREATE TRIGGER \(quote("folio_\(table)_fold_ins")) AFTER INSERT ON \(quote(table)) WHEN \(mismatch.joined(separator: " OR ")) BEGIN \(note); END"
            ),
            (
                "folio_\(table)_fold_upd",
                "CREATE TRIGGER \(quote("folio_\(table)_fold_upd")) AFTER UPDATE ON \(quote(table)) WHEN \(([moved] + changed + mismatch).joined(separator: " OR ")) BEGIN \(note); END"
            ),
        ]
    }

    /// The folded columns and their keys of rows, by rowid: `id, source1, key1, source2, key2…`;
    /// of one row (`id = ?`), or of the first `?2` rows from `?1` on (`range`: inclusive, so
    /// that a row of id `Int64.min` is read too).
    static func foldedValues(table: String, pairs: [(source: String, key: String)], range: Bool) -> String {
        let columns = pairs.flatMap { [quote($0.source), quote($0.key)] }.joined(separator: ", ")
        let filter =
            range
            ? "\(quote("id")) >= ? ORDER BY \(quote("id")) LIMIT ?"
            : "\(quote("id")) = ?"
        return "SELECT \(quote("id")), \(columns) FROM \(quote(table)) WHERE \(filter)"
    }

    /// Sets the folded keys of one row: `key1 = ?, key2 = ?… WHERE id = ?`.
    static func writeFoldedKeys(table: String, keys: [String]) -> String {
        "UPDATE \(quote(table)) SET " + keys.map { "\(quote($0)) = ?" }.joined(separator: ", ") + " WHERE \(quote("id")) = ?"
    }

    // MARK: Full-text search

    /// An entity's full-text index: an FTS5 table of the folded keys of its searchable
    /// attributes, kept by the triggers of ``searchTriggers(_:)``. It keeps its own copy of
    /// the keys (not an external-content table): a row removed without a delete trigger
    /// (`REPLACE` by a connection without recursive triggers) can then never leave words
    /// behind that a later `delete` would have to name exactly.
    static func searchTable(_ entity: String) -> String { "folio_\(entity)_fts" }

    /// How the index splits text into words (``SearchText/isIndexedWordCharacter(_:)``):
    /// letters, digits, marks and private use, and characters Unicode 15.0 does not assign,
    /// make words; everything else separates them — by `unicode61`'s Unicode 6.1 categories,
    /// and the characters assigned since that are not word characters as separators. No
    /// diacritic removal or case folding of its own beyond what the folded keys already have.
    static let searchTokenizer =
        "unicode61 remove_diacritics 0 categories 'L* N* Co M*' separators '"
        + SearchText.separatorsSinceUnicode61.replacingOccurrences(of: "'", with: "''") + "'"

    /// ``searchTokenizer`` as the name and arguments FTS5 reads from it: what a
    /// ``SearchMatcher`` creates the same tokenizer from.
    static let searchTokenizerComponents = [
        "unicode61", "remove_diacritics", "0", "categories", "L* N* Co M*", "separators",
        SearchText.separatorsSinceUnicode61,
    ]

    /// The prefix lengths, in characters, the index keeps a prefix index of (FTS5's
    /// `prefix`): a search of a word's first one, two or three letters (`"c" *`, as typed)
    /// reads that index's one entry per prefix instead of merging the entries of every word
    /// that starts so. Longer prefixes match few enough words to merge.
    static let searchPrefixLengths = "1 2 3"

    static func createSearchTable(_ schema: EntitySchema) -> String {
        let columns = schema.searchableKeyColumns.joined(separator: ", ")
        let tokenizer = searchTokenizer.replacingOccurrences(of: "'", with: "''")
        return
            "CREATE VIRTUAL TABLE \(quote(searchTable(schema.name))) USING fts5(\(columns), tokenize = '\(tokenizer)', prefix = '\(searchPrefixLengths)')"
    }

    /// The three triggers that keep the full-text index equal to the table's searchable
    /// folded keys, whoever writes. Each removes a row's entry before adding it again, so a
    /// stale entry under the same rowid never survives.
    static func searchTriggers(_ schema: EntitySchema) -> [(name: String, sql: String)] {
        let table = schema.name, fts = quote(searchTable(schema.name))
        let keys = schema.searchableKeyColumns
        guard !keys.isEmpty else { return [] }
        let id = quote("id")
        let columns = (["rowid"] + keys.map(quote)).joined(separator: ", ")
        let values = (["NEW.\(id)"] + keys.map { "NEW.\(quote($0))" }).joined(separator: ", ")
        let add = "DELETE FROM \(fts) WHERE rowid = NEW.\(id); INSERT INTO \(fts) (\(columns)) VALUES (\(values));"
        let changed = (["OLD.\(id) IS NOT NEW.\(id)"] + keys.map { "OLD.\(quote($0)) IS NOT NEW.\(quote($0))" }).joined(
            separator: " OR ")
        return [
            (
                "folio_\(table)_fts_ins",
                "CREATE TRIGGER \(quote("folio_\(table)_fts_ins")) AFTER INSERT ON \(quote(table)) BEGIN \(add) END"
            ),
            (
                "folio_\(table)_fts_del",
                "CREATE TRIGGER \(quote("folio_\(table)_fts_del")) AFTER DELETE ON \(quote(table)) BEGIN DELETE FROM \(fts) WHERE rowid = OLD.\(id); END"
            ),
            (
                "folio_\(table)_fts_upd",
                "CREATE TRIGGER \(quote("folio_\(table)_fts_upd")) AFTER UPDATE ON \(quote(table)) WHEN \(changed) BEGIN DELETE FROM \(fts) WHERE rowid = OLD.\(id); \(add) END"
            ),
        ]
    }

    /// Fills a new full-text index from the table's folded keys: every row, or (`range`) the
    /// rows whose id is in `?1...?2`.
    static func fillSearchTable(_ schema: EntitySchema, range: Bool = false) -> String {
        let keys = schema.searchableKeyColumns.map(quote), id = quote("id")
        return
            "INSERT INTO \(quote(searchTable(schema.name))) (rowid, \(keys.joined(separator: ", "))) SELECT \(id), \(keys.joined(separator: ", ")) FROM \(quote(schema.name))"
            + (range ? " WHERE \(id) BETWEEN ? AND ?" : "")
    }

    /// The largest id and the number of rows among the first `?2` rows of a table from id
    /// `?1` on (`NULL` and 0 past the last row): the next batch of a batched pass over it.
    static func nextBatch(table: String) -> String {
        let id = quote("id")
        return "SELECT max(\(id)), count(*) FROM (SELECT \(id) FROM \(quote(table)) WHERE \(id) >= ? ORDER BY \(id) LIMIT ?)"
    }

    /// Whether an entity's full-text index has the table's rows: as many, with the same
    /// smallest and largest rowid (read from the index's row-size table, one small row per
    /// record). O(n): both counts read every row (about a second each at 10,000,000 rows
    /// from a cold cache); see ``searchIndexHasTableBounds(_:)``.
    static func searchIndexHasTableRows(_ table: String) -> String {
        let sizes = quote(searchTable(table) + "_docsize"), id = quote("id"), rows = quote(table)
        return
            "SELECT (SELECT count(*) FROM \(sizes)) = (SELECT count(*) FROM \(rows)) AND (SELECT min(\(id)) FROM \(sizes)) IS (SELECT min(\(id)) FROM \(rows)) AND (SELECT max(\(id)) FROM \(sizes)) IS (SELECT max(\(id)) FROM \(rows))"
    }

    /// Whether an entity's full-text index has the table's smallest and largest rowid:
    /// O(log n), the part of ``searchIndexHasTableRows(_:)`` an opening runs on a table
    /// too large to count (``rowIDSpan(_:)``).
    static func searchIndexHasTableBounds(_ table: String) -> String {
        let sizes = quote(searchTable(table) + "_docsize"), id = quote("id"), rows = quote(table)
        return
            "SELECT (SELECT min(\(id)) FROM \(sizes)) IS (SELECT min(\(id)) FROM \(rows)) AND (SELECT max(\(id)) FROM \(sizes)) IS (SELECT max(\(id)) FROM \(rows))"
    }

    /// The largest rowid of a table minus its smallest (`NULL` when empty; a real number
    /// when the difference overflows): an upper bound of its row count, in O(log n). Two
    /// subqueries: SQLite reads a lone `min` or `max` from the end of the b-tree, but
    /// `max(id) - min(id)` in one query scans every row.
    static func rowIDSpan(_ table: String) -> String {
        let id = quote("id"), rows = quote(table)
        return "SELECT (SELECT max(\(id)) FROM \(rows)) - (SELECT min(\(id)) FROM \(rows))"
    }

    /// The tables an FTS5 index keeps its internals in, after its name and `_`.
    static let searchShadowTables = ["config", "content", "data", "docsize", "idx"]
    /// How many of them a file has (`?1` is the index's name and `_`).
    static let searchShadowTableCount =
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (\(searchShadowTables.map { "?1 || '\($0)'" }.joined(separator: ", ")))"

    /// Makes an index's configuration and data tables again, as FTS5 makes them, when
    /// another program dropped them (an empty structure record, format version 4), so that
    /// SQLite can open the index to drop it.
    static func restoreSearchShadowTables(_ table: String) -> [String] {
        let data = quote(table + "_data"), config = quote(table + "_config")
        return [
            "CREATE TABLE IF NOT EXISTS \(data) (id INTEGER PRIMARY KEY, block BLOB)",
            "INSERT OR IGNORE INTO \(data) (id, block) VALUES (10, x'00000000000000')",
            "CREATE TABLE IF NOT EXISTS \(config) (k PRIMARY KEY, v) WITHOUT ROWID",
            "INSERT OR REPLACE INTO \(config) (k, v) VALUES ('version', 4)",
        ]
    }

    /// A query that reads an index's configuration, terms and own copy of the text, one
    /// row at most of each.
    static func probeSearchTable(_ schema: EntitySchema) -> String {
        let fts = quote(searchTable(schema.name)), column = quote(schema.searchableKeyColumns[0])
        return
            "SELECT (SELECT length(\(column)) FROM \(fts) LIMIT 1), (SELECT rowid FROM \(fts) WHERE \(fts) MATCH '\"folio\"' LIMIT 1)"
    }

    /// The names of the triggers Folio derives from an entity's attributes — folded and
    /// searchable ones, the change log's update trigger, which names every stored
    /// column (``logUpdateTrigger(_:)``), and the conflict triggers of unique ones
    /// (``replaceTriggers(_:)``) — whatever they are (to drop them before a
    /// migration changes the table).
    static func derivedTriggerNames(table: String) -> [String] {
        ["fold_ins", "fold_upd", "fts_ins", "fts_del", "fts_upd", "changed"].map { "folio_\(table)_\($0)" }
            + replaceTriggerNames(table: table)
    }

    static func dropVirtualTable(_ name: String) -> String { "DROP TABLE IF EXISTS \(quote(name))" }

    /// `id IN (the rows the full-text query matches)`: the search as a filter.
    static func searchFilter(table: String, query: String) -> SQLFragment {
        let fts = quote(searchTable(table))
        return SQLFragment("(\(quote("id")) IN (SELECT rowid FROM \(fts) WHERE \(fts) MATCH ?))", [query.databaseValue])
    }

    /// The rows the full-text query matches, in ascending rowid order (FTS5 reads its index
    /// in that order: no sort): the same rows as ``searchFilter(table:query:)``'s subquery.
    static func searchMatches(table: String, query: String) -> SQLFragment {
        let fts = quote(searchTable(table))
        return SQLFragment("SELECT rowid FROM \(fts) WHERE \(fts) MATCH ? ORDER BY rowid", [query.databaseValue])
    }

    /// The indexed text of one row, read from the full-text index itself (its own copy of
    /// what it tokenized): no row when the index does not hold the rowid.
    static func searchContent(table: String, columns: [String]) -> String {
        "SELECT \(columns.map(quote).joined(separator: ", ")) FROM \(quote(searchTable(table))) WHERE rowid = ?"
    }

    /// The table's largest rowid (one seek at the end of its b-tree), `NULL` when empty.
    static func largestRowid(table: String) -> String { "SELECT max(rowid) FROM \(quote(table))" }

    /// A text placeholder for arbitrary bytes (a prefix's upper bound need not be UTF-8).
    static func textPlaceholder(bytes: [UInt8]) -> SQLFragment {
        SQLFragment("CAST(? AS TEXT)", [Data(bytes).databaseValue])
    }
}
