import Foundation
import GRDB
import GRDBSQLite

/// The folded keys and full-text indexes Folio keeps in a store file (see ``TextFolding``).
///
/// A folded attribute `title` has a column `folio_title_folded`, indexed, holding the folded
/// text. A searchable attribute's key is also in the entity's FTS5 table. Nothing in the
/// schema computes a key — SQLite has no folding of its own, and a custom function in a
/// trigger or index would make every other writer (the `sqlite3` shell, another program)
/// fail — so the keys are kept in three ways:
///
/// - **Folio's writes** set them with the text (insert, update, upsert, `updateAll`).
/// - **Other writes** — raw SQL, another process — leave a key behind its text. Triggers
///   made of SQLite built-ins notice it (``SQLBuilder/foldedKeyTriggers(_:)``) and note the
///   row in `folio_stale_keys`. Folio fixes the noted rows up (``fixUp(_:_:)``) at the end of
///   each of its write transactions, before each fetch, and when it looks for other
///   processes' commits — so a fetch or a live controller never sees a stale key, and the
///   fix-up is an ordinary commit that controllers follow like any other.
/// - **A change of the folding** (a Folio with another ``TextFolding/version``, older or
///   newer: any other version) is noticed at open, from the version recorded per entity in
///   `folio_metadata`, and every key of the entity is computed again, its full-text index
///   rebuilt, in the opening transaction — reporting its progress (``RowProgress``).
///
/// The full-text index is an FTS5 table kept by triggers equal to the searchable keys,
/// whoever writes (``SQLBuilder/searchTriggers(_:)``).
enum FoldedKeys {
    /// Creates or repairs an entity's folded-key triggers, full-text index and its
    /// triggers, and computes every key again when the file's folding version for the entity
    /// is not this one. In the caller's write transaction.
    ///
    /// What another program may have damaged is repaired, never trusted: a folded-key
    /// trigger that is missing or not Folio's means rows written meanwhile were not noted,
    /// so every key is computed again; a full-text index of another shape, with a trigger
    /// missing or not Folio's, or whose rows are not the table's (another program deleted
    /// or inserted some), is made again from the keys.
    ///
    /// Whether the index has as many rows as the table is counted here when the table's
    /// rowids span at most ``countedSpan`` (a few milliseconds), or when `countingRows`; on a
    /// larger table only its smallest and largest rowids are compared here (O(log n)), and the
    /// store counts after the opening, before the index answers a search
    /// (``defersRowCount(_:_:)``).
    ///
    /// - Parameters:
    ///   - folding: the folding whose keys the file must hold: ``TextFolding/Definition/current``
    ///     (tests open a file as a Folio of another version would).
    ///   - progress: counts the rows rewritten (keys computed again, index filled).
    static func prepare(
        _ schema: EntitySchema, in db: Database, countingRows: Bool = false, folding: TextFolding.Definition = .current,
        progress: RowProgress? = nil
    ) throws {
        guard schema.hasFoldedColumns else { return }
        try db.execute(sql: SQLBuilder.createStaleKeys)
        let keyTriggersRepaired = try db.installTriggers(SQLBuilder.foldedKeyTriggers(schema))
        let versionKey = SQLBuilder.foldingVersionKey(schema.name)
        let version = try DatabaseValue.fetchOne(db, sql: SQLBuilder.readStoreMetadata, arguments: [versionKey])
        var fillIndex = false
        // Any other version — older or newer — or none: the keys are not this folding's.
        if version != folding.version.databaseValue || keyTriggersRepaired {
            // Keys of another folding, of none yet, or written unnoticed: all computed
            // again (only the rows whose keys change are written), the index after.
            for trigger in SQLBuilder.searchTriggers(schema) { try db.execute(sql: SQLBuilder.dropTrigger(trigger.name)) }
            try progress?.include("keys:" + schema.name) { try rowCount(schema, db) }
            try refold(schema, db, folding: folding, progress: progress)
            try db.execute(sql: SQLBuilder.writeStoreMetadata, arguments: [versionKey, folding.version])
            fillIndex = true
        }
        guard !schema.searchableKeyColumns.isEmpty else { return }
        let table = SQLBuilder.searchTable(schema.name)
        let wanted = SQLBuilder.createSearchTable(schema)
        let triggers = SQLBuilder.searchTriggers(schema)
        let existing = try String.fetchOne(db, sql: SQLBuilder.objectSQL, arguments: ["table", table])
        if existing == wanted, !fillIndex {
            let counting = try countingRows || !defersRowCount(schema, db)
            fillIndex = try !isSearchIndexIntact(schema, triggers, db, countingRows: counting)
        }
        if existing != wanted || fillIndex {
            // Missing (a new entity, a migration dropped it), of another shape, or not
            // following the table: made again, and filled before its triggers exist, so
            // that nothing is indexed twice.
            for trigger in triggers { try db.execute(sql: SQLBuilder.dropTrigger(trigger.name)) }
            if existing != nil { try dropSearchTable(table, db) }
            try db.execute(sql: wanted)
            try progress?.include("index:" + schema.name) { try rowCount(schema, db) }
            try fillSearchTable(schema, db, progress: progress)
        }
        try db.installTriggers(triggers)
    }

    /// The rows an opening will rewrite for an entity whose keys were made by another
    /// folding than `folding` (or whose version is not recorded): `keys:<entity>` and, when
    /// it is searchable, `index:<entity>`, each its table's row count. Empty for an entity
    /// whose keys are current, without folded attributes, or without a table yet. O(n) when
    /// not empty (a count of the rows), else two lookups.
    static func plannedRewrite(
        _ schema: EntitySchema, _ db: Database, folding: TextFolding.Definition = .current
    ) throws -> [String: Int] {
        guard schema.hasFoldedColumns, try db.tableExists(schema.name) else { return [:] }
        let version = try DatabaseValue.fetchOne(
            db, sql: SQLBuilder.readStoreMetadata, arguments: [SQLBuilder.foldingVersionKey(schema.name)])
        guard version != folding.version.databaseValue else { return [:] }
        let rows = try rowCount(schema, db)
        var planned = ["keys:" + schema.name: rows]
        if !schema.searchableKeyColumns.isEmpty { planned["index:" + schema.name] = rows }
        return planned
    }

    private static func rowCount(_ schema: EntitySchema, _ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: SQLBuilder.countRows(schema.name)) ?? 0
    }

    /// Fills a new full-text index from the table's folded keys, a thousand rows at a time
    /// when `progress` counts them (one statement otherwise).
    private static func fillSearchTable(_ schema: EntitySchema, _ db: Database, progress: RowProgress?) throws {
        guard let progress else {
            try db.execute(sql: SQLBuilder.fillSearchTable(schema))
            return
        }
        let batch = try db.makeStatement(sql: SQLBuilder.nextBatch(table: schema.name))
        let fill = try db.makeStatement(sql: SQLBuilder.fillSearchTable(schema, range: true))
        var from = Int64.min
        while true {
            guard let row = try Row.fetchOne(batch, arguments: [from, 1_000]), let last = row[0] as Int64? else { break }
            try fill.execute(arguments: [from, last])
            progress.advance(by: row[1])
            if last == Int64.max { break }
            from = last + 1
        }
    }

    /// Makes an entity's full-text index again from its folded keys, whatever state its
    /// tables are in (SQLite found it damaged while the store was open).
    static func rebuildSearchIndex(_ schema: EntitySchema, _ db: Database) throws {
        guard !schema.searchableKeyColumns.isEmpty else { return }
        let table = SQLBuilder.searchTable(schema.name)
        let triggers = SQLBuilder.searchTriggers(schema)
        for trigger in triggers { try db.execute(sql: SQLBuilder.dropTrigger(trigger.name)) }
        if try String.fetchOne(db, sql: SQLBuilder.objectSQL, arguments: ["table", table]) != nil {
            try dropSearchTable(table, db)
        }
        try db.execute(sql: SQLBuilder.createSearchTable(schema))
        try db.execute(sql: SQLBuilder.fillSearchTable(schema))
        try db.installTriggers(triggers)
    }

    /// The largest span of rowids (largest minus smallest) of a table whose full-text index
    /// has its rows counted at open; beyond it, the count is the store's, after the opening.
    static let countedSpan: Int64 = 100_000

    /// Whether an opening leaves the count of the entity's full-text index's rows to the
    /// store (``prepare(_:in:countingRows:)``): it has one, and the table's rowids span more than
    /// ``countedSpan`` (an upper bound of its rows). O(log n).
    static func defersRowCount(_ schema: EntitySchema, _ db: Database) throws -> Bool {
        guard !schema.searchableKeyColumns.isEmpty else { return false }
        let span = try Double.fetchOne(db, sql: SQLBuilder.rowIDSpan(schema.name)) ?? 0
        return span > Double(countedSpan)
    }

    /// Whether the entity's full-text index has as many rows as its table, with the same
    /// smallest and largest rowid. O(n) (``SQLBuilder/searchIndexHasTableRows(_:)``). An index
    /// SQLite cannot read is not.
    static func hasTableRows(_ schema: EntitySchema, _ db: Database) throws -> Bool {
        guard !schema.searchableKeyColumns.isEmpty else { return true }
        do {
            return try Bool.fetchOne(db, sql: SQLBuilder.searchIndexHasTableRows(schema.name)) ?? false
        } catch {
            return false
        }
    }

    /// Whether the full-text index can be trusted: its triggers are Folio's, its tables are
    /// there and readable, and it has the table's rows (their smallest and largest rowids,
    /// and, when `countingRows`, their number: read from the index's own row table, a few
    /// milliseconds per million). A damaged index (a table of its internals dropped by
    /// another program) is not intact.
    private static func isSearchIndexIntact(
        _ schema: EntitySchema, _ triggers: [(name: String, sql: String)], _ db: Database, countingRows: Bool
    ) throws -> Bool {
        for trigger in triggers {
            let existing = try String.fetchOne(db, sql: SQLBuilder.objectSQL, arguments: ["trigger", trigger.name])
            if existing != trigger.sql { return false }
        }
        let shadows = try Int.fetchOne(
            db, sql: SQLBuilder.searchShadowTableCount, arguments: [SQLBuilder.searchTable(schema.name) + "_"])
        guard shadows == SQLBuilder.searchShadowTables.count else { return false }
        do {
            // Reads the index's terms and its own copy of the text: fails when their tables
            // are damaged.
            _ = try Row.fetchAll(db, sql: SQLBuilder.probeSearchTable(schema))
            let check =
                countingRows
                ? SQLBuilder.searchIndexHasTableRows(schema.name) : SQLBuilder.searchIndexHasTableBounds(schema.name)
            return try Bool.fetchOne(db, sql: check) ?? false
        } catch {
            return false
        }
    }

    /// Drops a full-text index. One whose configuration or data table another program
    /// dropped cannot be opened, and so not dropped either: those two are made again, empty
    /// (an empty structure record, the format version), and the index dropped then; when
    /// even that fails, a clear error.
    private static func dropSearchTable(_ table: String, _ db: Database) throws {
        do {
            try db.execute(sql: SQLBuilder.dropVirtualTable(table))
            return
        } catch is DatabaseError {}
        do {
            for sql in SQLBuilder.restoreSearchShadowTables(table) { try db.execute(sql: sql) }
            try db.execute(sql: SQLBuilder.dropVirtualTable(table))
        } catch let error as DatabaseError {
            throw FolioError.invalidStoreMetadata(
                path: sqlite3_db_filename(db.sqliteConnection, "main").map { String(cString: $0) } ?? ":memory:",
                reason:
                    "the full-text index '\(table)' is damaged and cannot be dropped to be made again (\(error.message ?? "\(error.resultCode)")); remove it and its tables '\(table)_*' from the file (Folio makes it again at the next open)"
            )
        }
    }

    /// Drops the triggers and the full-text index derived from a table's folded attributes
    /// (a migration drops them before it changes the table; ``prepare(_:in:)`` makes them
    /// again for the declared entity).
    static func dropDerivedObjects(table: String, _ db: Database) throws {
        for name in SQLBuilder.derivedTriggerNames(table: table) { try db.execute(sql: SQLBuilder.dropTrigger(name)) }
        try db.execute(sql: SQLBuilder.dropVirtualTable(SQLBuilder.searchTable(table)))
    }

    /// Forgets what Folio recorded about an entity's folded keys — its folding version and
    /// its rows noted stale — when a migration removes or renames it (a renamed entity's
    /// keys are all computed again under its new name).
    static func forget(entity: String, _ db: Database) throws {
        try db.execute(sql: SQLBuilder.deleteStoreMetadata, arguments: [SQLBuilder.foldingVersionKey(entity)])
        if try db.tableExists(SQLBuilder.staleKeysTable) {
            try db.execute(sql: SQLBuilder.clearStaleRows, arguments: [entity])
        }
    }

    /// Computes every folded key of the entity again, a thousand rows at a time (each batch
    /// counted in `progress`); forgets its noted stale rows. Writes only the rows whose keys
    /// change.
    static func refold(
        _ schema: EntitySchema, _ db: Database, folding: TextFolding.Definition = .current, progress: RowProgress? = nil
    ) throws {
        let pairs = schema.foldedColumns
        guard !pairs.isEmpty else { return }
        let select = try db.makeStatement(sql: SQLBuilder.foldedValues(table: schema.name, pairs: pairs, range: true))
        let write = try db.makeStatement(sql: SQLBuilder.writeFoldedKeys(table: schema.name, keys: pairs.map(\.key)))
        var from = Int64.min
        while true {
            var changes: [(Int64, [DatabaseValue])] = []
            var count = 0
            var last = from
            try select.setArguments([from, 1_000])
            try select.forEachRow(in: db) { row in
                count += 1
                last = sqlite3_column_int64(row, 0)
                if let keys = newKeys(row, pairs: pairs.count, folding) { changes.append((last, keys)) }
            }
            for (id, keys) in changes {
                try write.setExactArguments(keys + [id.databaseValue])
                try write.execute()
            }
            progress?.advance(by: count)
            if count < 1_000 || last == Int64.max { break }
            from = last + 1
        }
        if try db.tableExists(SQLBuilder.staleKeysTable) {
            try db.execute(sql: SQLBuilder.clearStaleRows, arguments: [schema.name])
        }
    }

    /// Fixes the keys of the rows noted stale, for the entities among `schemas` that have
    /// folded attributes; returns the number of rows whose keys changed. In the caller's
    /// write transaction.
    @discardableResult
    static func fixUp(_ schemas: [EntitySchema], _ db: Database) throws -> Int {
        var fixed = 0
        for schema in schemas {
            let pairs = schema.foldedColumns
            let rows = try Int64.fetchAll(db.cachedStatement(sql: SQLBuilder.staleRows), arguments: [schema.name])
            guard !rows.isEmpty else { continue }
            let select = try db.cachedStatement(sql: SQLBuilder.foldedValues(table: schema.name, pairs: pairs, range: false))
            let write = try db.cachedStatement(sql: SQLBuilder.writeFoldedKeys(table: schema.name, keys: pairs.map(\.key)))
            for id in rows {
                var keys: [DatabaseValue]? = nil
                try select.setArguments([id])
                try select.forEachRow(in: db) { keys = newKeys($0, pairs: pairs.count, .current) }
                guard let keys else { continue }  // gone, or already right
                try write.setExactArguments(keys + [id.databaseValue])
                try write.execute()
                fixed += 1
            }
            try db.execute(sql: SQLBuilder.clearStaleRows, arguments: [schema.name])
        }
        return fixed
    }

    /// Whether rows of the entity are noted stale (read before a fetch).
    static func hasStaleRows(_ schema: EntitySchema, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: SQLBuilder.hasStaleRows), arguments: [schema.name]) ?? false
    }

    /// The keys a row of `id, source1, key1, source2, key2…` should have, or `nil` when it
    /// has them all already.
    private static func newKeys(_ row: OpaquePointer, pairs: Int, _ folding: TextFolding.Definition) -> [DatabaseValue]? {
        var keys: [DatabaseValue] = []
        var differs = false
        for pair in 0..<pairs {
            let source = Int32(1 + 2 * pair)
            let value = SQLiteValue(sqliteStatement: row, index: source)
            let folded: SQLiteValue
            if case .text(let bytes) = value {
                folded = .text(Array(bytes.withUnsafeBufferPointer { folding.fold($0) }.utf8))
            } else {
                folded = value  // NULL stays NULL; a blob (raw SQL) is its own key
            }
            let current = SQLiteValue(sqliteStatement: row, index: source + 1)
            if !isSame(current, folded) { differs = true }
            keys.append(folded.databaseValue)
        }
        return differs ? keys : nil
    }

    /// The same stored value: storage class and bytes (SQLite's `IS`, with `1` and `1.0` apart).
    private static func isSame(_ a: SQLiteValue, _ b: SQLiteValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.text(let x), .text(let y)): x == y
        case (.blob(let x), .blob(let y)): x == y
        case (.integer(let x), .integer(let y)): x == y
        case (.real(let x), .real(let y)): x.bitPattern == y.bitPattern
        default: false
        }
    }
}

extension Database {
    /// Makes each trigger exactly the given text (created, or replaced when it differs):
    /// Folio's folded-key and full-text triggers, and the change triggers of
    /// ``SchemaCheck/installChangeTriggers(table:_:)``. In the caller's transaction.
    ///
    /// - Returns: whether any was missing or different.
    @discardableResult
    func installTriggers(_ triggers: [(name: String, sql: String)]) throws -> Bool {
        var installed = false
        for trigger in triggers {
            let existing = try String.fetchOne(self, sql: SQLBuilder.objectSQL, arguments: ["trigger", trigger.name])
            if existing == trigger.sql { continue }  // what ``triggersAreCurrent(_:)`` checks
            if existing != nil { try execute(sql: SQLBuilder.dropTrigger(trigger.name)) }
            try execute(sql: trigger.sql)
            installed = true
        }
        return installed
    }

    /// Whether every trigger exists with exactly the given text (what ``installTriggers(_:)``
    /// would leave as it is).
    func triggersAreCurrent(_ triggers: [(name: String, sql: String)]) throws -> Bool {
        try triggers.allSatisfy { trigger in
            try String.fetchOne(self, sql: SQLBuilder.objectSQL, arguments: ["trigger", trigger.name]) == trigger.sql
        }
    }

    /// Makes the triggers among `names` exactly `triggers`: each of them made as
    /// ``installTriggers(_:)`` makes it, and the other names dropped where they exist.
    ///
    /// - Returns: whether any was missing, different or dropped.
    @discardableResult
    func reconcileTriggers(_ triggers: [(name: String, sql: String)], among names: [String]) throws -> Bool {
        var changed = try installTriggers(triggers)
        let wanted = Set(triggers.map { $0.name.lowercased() })
        for name in names where !wanted.contains(name.lowercased()) {
            guard try String.fetchOne(self, sql: SQLBuilder.objectSQL, arguments: ["trigger", name]) != nil else { continue }
            try execute(sql: SQLBuilder.dropTrigger(name))
            changed = true
        }
        return changed
    }
}
