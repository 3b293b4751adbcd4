import Foundation
import GRDB

/// The one place where Folio writes SQL text.
///
/// Identifiers come only from entities that ``Store`` validated (``validateIdentifier(_:entity:)``),
/// and are always quoted; every value is a bound argument.
enum SQLBuilder {
    static let metadataTable = "folio_entities"

    /// `name` → `"name"`. Callers pass validated identifiers only.
    static func quote(_ identifier: String) -> String { "\"\(identifier)\"" }

    /// Letters, digits and `_`, starting with a letter or `_`, at most 64 bytes: a name
    /// that ``quote(_:)`` makes a safe identifier.
    static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 64,
            first == "_" || (first.isASCII && first.properties.isAlphabetic)
        else { return false }
        return name.unicodeScalars.allSatisfy {
            $0 == "_" || ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0)
        }
    }

    static func validateIdentifier(_ name: String, entity: String) throws {
        guard isPlainIdentifier(name) else {
            throw FolioError.invalidSchema(
                entity: entity,
                reason:
                    "'\(name)' is not a valid identifier (letters, digits and _, starting with a letter or _, at most 64 bytes)")
        }
        let lower = name.lowercased()
        if lower.hasPrefix("sqlite_") || lower.hasPrefix("folio_") {
            throw FolioError.invalidSchema(entity: entity, reason: "'\(name)' uses a reserved prefix (sqlite_ or folio_)")
        }
    }

    /// The placeholder of one bound value: `?`, or `CAST(? AS TEXT)` with the UTF-8 bytes
    /// bound as a blob for text that contains a NUL, which GRDB would bind cut short.
    static func placeholder(for value: DatabaseValue) -> SQLFragment {
        if case .string(let text) = value.storage, text.containsNUL {
            return SQLFragment("CAST(? AS TEXT)", [Data(text.utf8).databaseValue])
        }
        return SQLFragment("?", [value])
    }

    // MARK: Schema

    /// Folio's per-entity table: version hash, schema, and the change token.
    ///
    /// `change_id` (16 random bytes, renewed by the triggers at every row written) is the
    /// change token; `change_token` is the counter of internal schema version 1, still
    /// kept by the triggers for files an older Folio may open, and never trusted.
    /// Upgraded files get `change_id` by `ALTER TABLE … ADD COLUMN`, which gives exactly
    /// this text: fresh and upgraded files have the same schema.
    static let createEntityMetadata =
        "CREATE TABLE \(metadataTable) (name TEXT PRIMARY KEY NOT NULL, version_hash TEXT NOT NULL, schema TEXT NOT NULL, change_token INTEGER NOT NULL DEFAULT 0, change_id BLOB)"

    /// Folio's key/value table: the internal schema version, the database identity, and
    /// (later) the model version.
    static let storeMetadataTable = "folio_metadata"
    static let createStoreMetadata = "CREATE TABLE \(storeMetadataTable) (key TEXT PRIMARY KEY NOT NULL, value NOT NULL)"
    static let readStoreMetadata = "SELECT value FROM \(storeMetadataTable) WHERE key = ?"
    static let deleteStoreMetadata = "DELETE FROM \(storeMetadataTable) WHERE key = ?"
    static let writeStoreMetadata =
        "INSERT INTO \(storeMetadataTable) (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
    /// A new random database identity (`randomblob` runs in SQLite, like the triggers' tokens).
    static let writeNewIdentity =
        "INSERT INTO \(storeMetadataTable) (key, value) VALUES (?, randomblob(16)) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
    static let addChangeID = "ALTER TABLE \(metadataTable) ADD COLUMN change_id BLOB"
    static let renewAllChangeIDs = "UPDATE \(metadataTable) SET change_id = randomblob(16)"
    static let entityNames = "SELECT name FROM \(metadataTable) ORDER BY name"
    static let objectSQL = "SELECT sql FROM sqlite_master WHERE type = ? AND name = ?"

    static func createTable(_ schema: EntitySchema) -> [String] {
        var statements = [createTableOnly(schema, named: schema.name)]
        for c in schema.storedColumns where c.isIndexed {
            statements.append(createIndex(table: schema.name, column: c))
        }
        return statements + changeTriggers(table: schema.name).map(\.sql)
    }

    /// The `CREATE TABLE` statement of an entity, under `table` (the entity's name, or the
    /// temporary name of a migration's rebuild).
    static func createTableOnly(_ schema: EntitySchema, named table: String) -> String {
        // AUTOINCREMENT: a deleted record's rowid is never given to another record, so a
        // stale identifier can only read as nil, never as someone else.
        var columns = ["\(quote("id")) INTEGER PRIMARY KEY AUTOINCREMENT"]
        for c in schema.storedColumns {
            columns.append("\(quote(c.name)) \(c.type.sqlType)\(c.isOptional ? "" : " NOT NULL")")
        }
        return "CREATE TABLE \(quote(table)) (\(columns.joined(separator: ", ")))"
    }

    static func createIndex(table: String, column c: ColumnSchema) -> String {
        let columns = c.indexedColumns.map(quote).joined(separator: ", ")
        return "CREATE \(c.isUnique ? "UNIQUE " : "")INDEX \(quote(indexName(table, c.name))) ON \(quote(table))(\(columns))"
    }

    /// The three triggers that renew an entity's change token at every row inserted,
    /// updated or deleted, by any connection or process. SQLite built-ins only
    /// (`randomblob`), so the `sqlite3` shell and every other program can still write.
    static func changeTriggers(table: String) -> [(name: String, sql: String)] {
        [("INSERT", "ins"), ("UPDATE", "upd"), ("DELETE", "del")].map { event, suffix in
            let name = "folio_\(table)_\(suffix)"
            return (
                name,
                """
                CREATE TRIGGER \(quote(name)) AFTER \(event) ON \(quote(table)) \
                BEGIN UPDATE \(metadataTable) SET change_token = change_token + 1, change_id = randomblob(16) \
                WHERE name = '\(table)'; END
                """
            )
        }
    }

    static func dropTrigger(_ name: String) -> String { "DROP TRIGGER IF EXISTS \(quote(name))" }

    static let rowIDChangedFunction = "folio_rowid_changed"

    /// A temporary trigger (writer connection only) that reports the old rowid of an
    /// `UPDATE` changing it, which SQLite's update hook does not report.
    static func rowIDChangeTrigger(table: String) -> String {
        """
        CREATE TEMP TRIGGER IF NOT EXISTS \(quote("folio_\(table)_rowid")) AFTER UPDATE ON main.\(quote(table)) \
        WHEN OLD.\(quote("id")) IS NOT NEW.\(quote("id")) \
        BEGIN SELECT \(rowIDChangedFunction)('\(table)', OLD.\(quote("id"))); END
        """
    }

    static func indexName(_ table: String, _ column: String) -> String { "\(table)_\(column)_index" }

    /// A table's columns in declaration order: name, declared type, `NOT NULL`, primary key.
    static let tableInfo = "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid"
    /// Name, uniqueness and origin (`c` for `CREATE INDEX`, `u` for a `UNIQUE` constraint,
    /// `pk` for a primary key) of a table's indexes.
    static let indexList = "SELECT name, \"unique\", origin FROM pragma_index_list(?)"
    static let dataVersion = "PRAGMA data_version"
    static let tableSQL = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?"
    static let readMetadata = "SELECT version_hash, schema FROM \(metadataTable) WHERE name = ?"
    /// An entity's row; a new one gets a random change token, an existing one keeps its own.
    static let writeMetadata =
        "INSERT INTO \(metadataTable) (name, version_hash, schema, change_token, change_id) VALUES (?, ?, ?, 0, randomblob(16)) ON CONFLICT(name) DO UPDATE SET version_hash = excluded.version_hash, schema = excluded.schema, change_id = coalesce(change_id, excluded.change_id)"
    /// The database identity and an entity's change token, read together.
    static let changeToken =
        "SELECT (SELECT value FROM \(storeMetadataTable) WHERE key = 'database_identity'), change_id FROM \(metadataTable) WHERE name = ?"

    // MARK: Reads

    static func whereClause(_ q: CompiledQuery, extra: String? = nil) -> (String, [DatabaseValue]) {
        var parts: [String] = []
        var args: [DatabaseValue] = []
        if let extra { parts.append(extra) }
        if let filter = q.filter { parts.append(filter.sql); args += filter.arguments }
        return parts.isEmpty ? ("", []) : (" WHERE " + parts.joined(separator: " AND "), args)
    }

    static func orderBy(_ q: CompiledQuery) -> String {
        let terms = q.order.map { quote($0.column) + ($0.descending ? " DESC" : "") }
        return " ORDER BY " + (q.rankingQuery == nil ? terms : ["folio_search_rank"] + terms).joined(separator: ", ")
    }

    /// `FROM table WHERE filter` — or, for a search ranked by relevance, the table joined
    /// with the full-text matches and their rank (`folio_search_rank`, which ``orderBy(_:)``
    /// puts first; the names cannot clash with an attribute's, which never start with `folio_`).
    static func source(_ q: CompiledQuery) -> (sql: String, arguments: [DatabaseValue]) {
        guard let ranking = q.rankingQuery else {
            let (whereSQL, whereArgs) = whereClause(q)
            return (" FROM \(quote(q.table))\(whereSQL)", whereArgs)
        }
        let fts = quote(searchTable(q.table))
        var conditions = ["\(quote("id")) = folio_search_rowid"]
        var arguments = [ranking.databaseValue]
        if let predicate = q.predicate {
            conditions.append(predicate.sql)
            arguments += predicate.arguments
        }
        return (
            " FROM \(quote(q.table)), (SELECT rowid AS folio_search_rowid, rank AS folio_search_rank FROM \(fts) WHERE \(fts) MATCH ?) WHERE "
                + conditions.joined(separator: " AND "), arguments
        )
    }

    static func window(_ q: CompiledQuery) -> (String, [DatabaseValue]) {
        switch (q.limit, q.offset) {
        case (nil, nil), (nil, 0?): return ("", [])
        case (let limit, let offset):
            return (" LIMIT ? OFFSET ?", [Int64(limit ?? -1).databaseValue, Int64(offset ?? 0).databaseValue])
        }
    }

    static func recordColumns(_ q: CompiledQuery) -> String {
        ([quote("id")] + q.columns.map(quote)).joined(separator: ", ")
    }

    /// The identifiers in order, optionally with a section value: the scan behind every batched fetch.
    static func identifiers(_ q: CompiledQuery, section: SQLFragment? = nil, windowed: Bool = true) -> SQLFragment {
        let (sourceSQL, sourceArgs) = source(q)
        let (windowSQL, windowArgs) = windowed ? window(q) : ("", [])
        let select = section.map { "\(quote("id")), \($0.sql)" } ?? quote("id")
        return SQLFragment(
            "SELECT \(select)\(sourceSQL)\(orderBy(q))\(windowSQL)",
            (section?.arguments ?? []) + sourceArgs + windowArgs)
    }

    /// Whole records in order (fetches without a batch size).
    static func records(_ q: CompiledQuery) -> SQLFragment {
        let (sourceSQL, sourceArgs) = source(q)
        let (windowSQL, windowArgs) = window(q)
        return SQLFragment(
            "SELECT \(recordColumns(q))\(sourceSQL)\(orderBy(q))\(windowSQL)",
            sourceArgs + windowArgs)
    }

    static func count(_ q: CompiledQuery) -> SQLFragment {
        let (whereSQL, whereArgs) = whereClause(q)
        if q.isWindowed {
            let (windowSQL, windowArgs) = window(q)
            return SQLFragment(
                "SELECT COUNT(*) FROM (SELECT \(quote("id")) FROM \(quote(q.table))\(whereSQL)\(windowSQL))",
                whereArgs + windowArgs)
        }
        return SQLFragment("SELECT COUNT(*) FROM \(quote(q.table))\(whereSQL)", whereArgs)
    }

    /// One batch: the identifiers travel as one bound JSON array, so the statement text
    /// is the same whatever the batch size, and is prepared once.
    static func batch(table: String, columns: [String]) -> String {
        let list = ([quote("id")] + columns.map(quote)).joined(separator: ", ")
        return "SELECT \(list) FROM \(quote(table)) WHERE \(quote("id")) IN (SELECT value FROM json_each(?))"
    }

    /// The changed rows that match the request now, in order, with their sort keys and
    /// section value: what a controller asks after a commit.
    static func changedRows(_ q: CompiledQuery, section: SQLFragment?, identifiersJSON: String) -> SQLFragment {
        let (whereSQL, whereArgs) = whereClause(q, extra: "\(quote("id")) IN (SELECT value FROM json_each(?))")
        return SQLFragment(
            "SELECT \(sortKeyColumns(q, section: section)) FROM \(quote(q.table))\(whereSQL)\(orderBy(q))",
            (section?.arguments ?? []) + [identifiersJSON.databaseValue] + whereArgs)
    }

    /// `id, key1, key2, …, section`.
    static func sortKeyColumns(_ q: CompiledQuery, section: SQLFragment?) -> String {
        var list = [quote("id")] + q.order.filter { $0.column != "id" }.map { quote($0.column) }
        if let section { list.append(section.sql) }
        return list.joined(separator: ", ")
    }

    /// The sort keys of one row (binary searches probe with it).
    static func sortKeys(_ q: CompiledQuery, section: SQLFragment?) -> SQLFragment {
        SQLFragment(
            "SELECT \(sortKeyColumns(q, section: section)) FROM \(quote(q.table)) WHERE \(quote("id")) = ?",
            section?.arguments ?? [])
    }

    // MARK: Writes

    static func insert(table: String, columns: [String]) -> String {
        // An entity without attributes: SQLite has no `() VALUES ()`.
        if columns.isEmpty { return "INSERT INTO \(quote(table)) DEFAULT VALUES" }
        let names = columns.map(quote).joined(separator: ", ")
        let marks = columns.map { _ in "?" }.joined(separator: ", ")
        return "INSERT INTO \(quote(table)) (\(names)) VALUES (\(marks))"
    }

    static func insertWithID(table: String, columns: [String]) -> String {
        insert(table: table, columns: ["id"] + columns)
    }

    /// For an entity without attributes, which has nothing to set, the `SELECT` that
    /// finds the row (``WriteTransaction/update(_:)`` writes nothing then).
    static func update(table: String, columns: [String]) -> String {
        if columns.isEmpty { return selectID(table: table, column: "id") }
        let sets = columns.map { "\(quote($0)) = ?" }.joined(separator: ", ")
        return "UPDATE \(quote(table)) SET \(sets) WHERE \(quote("id")) = ?"
    }

    static func delete(table: String) -> String {
        "DELETE FROM \(quote(table)) WHERE \(quote("id")) = ?"
    }

    /// `INSERT … ON CONFLICT(key) DO UPDATE`: reported to observers as an insert or an
    /// update, unlike `INSERT OR REPLACE`, whose implicit deletes are not.
    static func upsert(table: String, columns: [String], conflict: String) -> String {
        let sets = columns.filter { $0 != conflict }.map { "\(quote($0)) = excluded.\(quote($0))" }
        let action = sets.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + sets.joined(separator: ", ")
        return insert(table: table, columns: columns)
            + " ON CONFLICT(\(quote(conflict))) \(action) RETURNING \(quote("id"))"
    }

    static func selectID(table: String, column: String) -> String {
        "SELECT \(quote("id")) FROM \(quote(table)) WHERE \(quote(column)) = ?"
    }

    static func updateAll(table: String, assignments: [String], filter: SQLFragment?) -> String {
        let sets = assignments.map { "\(quote($0)) = ?" }.joined(separator: ", ")
        return "UPDATE \(quote(table)) SET \(sets)" + (filter.map { " WHERE \($0.sql)" } ?? "")
    }

    static func deleteAll(table: String, filter: SQLFragment?) -> String {
        "DELETE FROM \(quote(table))" + (filter.map { " WHERE \($0.sql)" } ?? "")
    }

    // MARK: Sections

    static func section(attribute column: String) -> SQLFragment { SQLFragment(quote(column)) }

    /// The first character: a prefix of the string's bytes, so it orders as the string
    /// does (case mapping would not: "A…" < "B…" < "a…").
    static func section(firstLetterOf column: String) -> SQLFragment {
        SQLFragment("substr(\(quote(column)), 1, 1)")
    }

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

    /// The folded columns and their keys of rows, by rowid: `id, source1, key1, source2, key2…`.
    static func foldedValues(table: String, pairs: [(source: String, key: String)], range: Bool) -> String {
        let columns = pairs.flatMap { [quote($0.source), quote($0.key)] }.joined(separator: ", ")
        let filter =
            range
            ? "\(quote("id")) > ? ORDER BY \(quote("id")) LIMIT ?"
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

    static func createSearchTable(_ schema: EntitySchema) -> String {
        let columns = schema.searchableKeyColumns.joined(separator: ", ")
        let tokenizer = searchTokenizer.replacingOccurrences(of: "'", with: "''")
        return "CREATE VIRTUAL TABLE \(quote(searchTable(schema.name))) USING fts5(\(columns), tokenize = '\(tokenizer)')"
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

    /// Fills a new full-text index from the table's folded keys.
    static func fillSearchTable(_ schema: EntitySchema) -> String {
        let keys = schema.searchableKeyColumns.map(quote)
        return
            "INSERT INTO \(quote(searchTable(schema.name))) (rowid, \(keys.joined(separator: ", "))) SELECT \(quote("id")), \(keys.joined(separator: ", ")) FROM \(quote(schema.name))"
    }

    /// Whether an entity's full-text index has the table's rows: as many, with the same
    /// smallest and largest rowid (read from the index's row-size table, one small row per
    /// record; counts are a few milliseconds per million rows, the bounds O(log n)).
    static func searchIndexHasTableRows(_ table: String) -> String {
        let sizes = quote(searchTable(table) + "_docsize"), id = quote("id"), rows = quote(table)
        return
            "SELECT (SELECT count(*) FROM \(sizes)) = (SELECT count(*) FROM \(rows)) AND (SELECT min(\(id)) FROM \(sizes)) IS (SELECT min(\(id)) FROM \(rows)) AND (SELECT max(\(id)) FROM \(sizes)) IS (SELECT max(\(id)) FROM \(rows))"
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

    /// The names of the triggers Folio derives from an entity's folded and searchable
    /// attributes, whatever they are (to drop them before a migration changes the table).
    static func derivedTriggerNames(table: String) -> [String] {
        ["fold_ins", "fold_upd", "fts_ins", "fts_del", "fts_upd"].map { "folio_\(table)_\($0)" }
    }

    static func dropVirtualTable(_ name: String) -> String { "DROP TABLE IF EXISTS \(quote(name))" }

    /// `id IN (the rows the full-text query matches)`: the search as a filter.
    static func searchFilter(table: String, query: String) -> SQLFragment {
        let fts = quote(searchTable(table))
        return SQLFragment("(\(quote("id")) IN (SELECT rowid FROM \(fts) WHERE \(fts) MATCH ?))", [query.databaseValue])
    }

    /// A text placeholder for arbitrary bytes (a prefix's upper bound need not be UTF-8).
    static func textPlaceholder(bytes: [UInt8]) -> SQLFragment {
        SQLFragment("CAST(? AS TEXT)", [Data(bytes).databaseValue])
    }

    // MARK: Migrations

    static let modelVersionKey = "model_version"
    /// The `folio_metadata` key that records a custom migration step as run.
    static func stepKey(_ name: String) -> String { "migration_step:" + name }
    static let schemaVersion = "PRAGMA schema_version"
    static let foreignKeys = "PRAGMA foreign_keys"
    static func setForeignKeys(_ on: Bool) -> String { "PRAGMA foreign_keys = \(on ? "ON" : "OFF")" }
    static let legacyAlterTable = "PRAGMA legacy_alter_table"
    static func setLegacyAlterTable(_ on: Bool) -> String { "PRAGMA legacy_alter_table = \(on ? "ON" : "OFF")" }
    static let foreignKeyCheck = "PRAGMA foreign_key_check"
    /// A table's name as the file spells it (SQLite's names ignore ASCII case).
    static let tableName = "SELECT name FROM sqlite_master WHERE type = 'table' AND lower(name) = lower(?)"
    static let entityRows = "SELECT name, version_hash, schema FROM \(metadataTable) ORDER BY name"
    static let columnNames = "SELECT name FROM pragma_table_info(?) ORDER BY cid"
    /// The columns of an index; `NULL` names for expressions.
    static let indexColumns = "SELECT name FROM pragma_index_info(?) ORDER BY seqno"
    /// Whether a table is `WITHOUT ROWID`.
    static let isWithoutRowID = "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?"
    /// The indexes and triggers a table carries, with their SQL (automatic indexes have none). `tbl_name` is compared without case: a trigger's is
    /// spelled as its `ON` clause spells the table (`ON NOTE`), an index's as the table is.
    static let tableObjects =
        "SELECT type, name, sql FROM sqlite_master WHERE lower(tbl_name) = lower(?) AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name"
    static let hasSequenceTable = "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'"
    static let readSequence = "SELECT max(seq) FROM sqlite_sequence WHERE lower(name) = lower(?)"
    static let raiseSequence = "UPDATE sqlite_sequence SET seq = ?2 WHERE name = ?1 AND seq < ?2"
    static let insertSequence =
        "INSERT INTO sqlite_sequence (name, seq) SELECT ?1, ?2 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?1)"
    static let deleteEntityMetadata = "DELETE FROM \(metadataTable) WHERE name = ?"
    static let renameEntityMetadata = "UPDATE \(metadataTable) SET name = ?2 WHERE name = ?1"
    static let renewChangeID = "UPDATE \(metadataTable) SET change_id = randomblob(16) WHERE name = ?"

    /// Any name from the file (another program's table or view), as an identifier: in
    /// double quotes, its own double quotes doubled. Used only to prepare statements that
    /// check the schema compiles, never to run them.
    static func quoteAnyName(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
    /// The tables and views of the file, but SQLite's own.
    /// (Folio's own tables — metadata, stale keys, full-text indexes and FTS5's tables behind
    /// them — are left out: none of them has a trigger or view of the app's.)
    static let schemaObjects =
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'folio\\_%' ESCAPE '\\' ORDER BY name"
    /// Statements that, prepared, compile a table's triggers (every `UPDATE OF` column is set).
    static func compileChecks(table: String, columns: [String]) -> [String] {
        let name = quoteAnyName(table)
        var checks = ["INSERT INTO \(name) DEFAULT VALUES", "DELETE FROM \(name)"]
        if !columns.isEmpty {
            checks.append(
                "UPDATE \(name) SET " + columns.map { "\(quoteAnyName($0)) = \(quoteAnyName($0))" }.joined(separator: ", "))
        }
        return checks
    }
    static func compileCheck(view: String) -> String { "SELECT * FROM \(quoteAnyName(view))" }

    static func renameTable(_ table: String, to newName: String) -> String {
        "ALTER TABLE \(quote(table)) RENAME TO \(quote(newName))"
    }

    static func renameColumn(_ column: String, to newName: String, in table: String) -> String {
        "ALTER TABLE \(quote(table)) RENAME COLUMN \(quote(column)) TO \(quote(newName))"
    }

    /// An added attribute's column, always nullable at first: existing rows hold `NULL`
    /// until a custom step or the declared default fills them, and a rebuild applies
    /// `NOT NULL` (SQLite adds a `NOT NULL` column only with a `DEFAULT` in the schema).
    static func addColumn(_ column: ColumnSchema, to table: String) -> String {
        "ALTER TABLE \(quote(table)) ADD COLUMN \(quote(column.name)) \(column.type.sqlType)"
    }

    static func dropTable(_ table: String) -> String { "DROP TABLE \(quote(table))" }
    static func dropIndex(_ name: String) -> String { "DROP INDEX \(quote(name))" }
    static func countRows(_ table: String) -> String { "SELECT count(*) FROM \(quote(table))" }
    static func countNulls(_ column: String, in table: String) -> String {
        "SELECT count(*) FROM \(quote(table)) WHERE \(quote(column)) IS NULL"
    }
    static func countValues(_ column: String, in table: String) -> String {
        "SELECT count(*) FROM \(quote(table)) WHERE \(quote(column)) IS NOT NULL"
    }
    static func fillNulls(_ column: String, in table: String) -> String {
        "UPDATE \(quote(table)) SET \(quote(column)) = ? WHERE \(quote(column)) IS NULL"
    }
    /// The number of distinct non-`NULL` values that appear more than once (a unique index
    /// allows several `NULL`s).
    static func duplicateValues(_ column: String, in table: String) -> String {
        "SELECT count(*) FROM (SELECT 1 FROM \(quote(table)) WHERE \(quote(column)) IS NOT NULL GROUP BY \(quote(column)) HAVING count(*) > 1)"
    }

    /// Copies every row of a rebuilt table, keeping rowids: `id` (or the implicit `rowid`
    /// of a table that has no `id` column) and the declared columns, by name.
    static func copyRows(from table: String, to newTable: String, columns: [String], rowIDColumn: String) -> String {
        let target = ([quote("id")] + columns.map(quote)).joined(separator: ", ")
        let source = ([quote(rowIDColumn)] + columns.map(quote)).joined(separator: ", ")
        return "INSERT INTO \(quote(newTable)) (\(target)) SELECT \(source) FROM \(quote(table))"
    }
}
