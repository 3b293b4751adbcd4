import Foundation
import GRDB

// The upkeep of folded keys (``FoldedKeys``) around the store's reads and writes: fixed up
// at the end of every write and before a read of a table with stale rows, and the objects
// derived from folded attributes repaired when another program changed the schema.

extension Store {
    /// Fixes the folded keys that other writers made stale (``FoldedKeys``), in the
    /// caller's write transaction: at the end of every write, so that what it commits (raw
    /// SQL included) and what other processes wrote before it are consistent.
    func fixUpFoldedKeys(_ db: Database) throws {
        try repairSchemaObjectsIfSchemaChanged(db)
        guard !foldedSchemas.isEmpty else { return }
        try FoldedKeys.fixUp(foldedSchemas.values.sorted { $0.name < $1.name }, db)
    }

    /// When another program (or raw SQL) changed the schema since Folio last looked, Folio's
    /// objects in the file are made again as at open: each entity's change-log, `REPLACE`
    /// and folded-key triggers, full-text index and stale-row table
    /// (``SchemaCheck/prepare(_:in:)``), and the delete rules' triggers
    /// (``DeleteRuleTriggers/install(_:_:)``) — so that a rule another program dropped holds
    /// again from the store's next write or follow, not from its next open. When a trigger
    /// that logs changes had to be made again, rows written meanwhile may be missing from
    /// the log: the next follow tells every live list so, and each rescans
    /// (``ChangeHub/changesWentUnlogged(_:)``).
    ///
    /// A table whose columns no longer match its entity (renamed or dropped by raw SQL) is left
    /// as it is, and the store's next open refuses the file by name
    /// (``FolioError/schemaMismatch(entity:differences:)``).
    ///
    /// In the caller's write transaction; one `PRAGMA schema_version` when nothing changed.
    func repairSchemaObjectsIfSchemaChanged(_ db: Database) throws {
        guard try schemaVersion(db) != schemaObjectsCookie.current else { return }
        var unlogged: [String] = []
        for schema in declared.sortedEntities.map(\.schema) {
            // A table whose columns no longer match (renamed or dropped by raw SQL) is left as
            // it is: its triggers name its columns, and the next open refuses it by name.
            guard try !db.tableExists(schema.name) || SchemaCheck.differences(schema, db).isEmpty else { continue }
            if try SchemaCheck.prepare(schema, in: db) { unlogged.append(schema.name) }
            // Counted here, as no search waits for the store to count it (another program
            // that changed the schema may have written rows without the triggers).
            if schema.hasFoldedColumns { try FoldedKeys.prepare(schema, in: db, countingRows: true) }
        }
        try DeleteRuleTriggers.install(declared, db)
        try DerivedAttributeTriggers.install(declared, db)
        let cookie = try schemaVersion(db)
        schemaObjectsCookie.withLock { $0 = cookie }
        if !unlogged.isEmpty {
            hub.changesWentUnlogged(
                "another program dropped or replaced the triggers that log the changes of \(unlogged.joined(separator: ", ")); they were made again, and rows written meanwhile may not be in the change log"
            )
        }
    }

    /// Whether the schema changed since Folio last made or checked its objects.
    func schemaChangedSinceRepair(_ db: Database) throws -> Bool {
        try schemaVersion(db) != schemaObjectsCookie.current
    }

    private func schemaVersion(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: SQLBuilder.schemaVersion)) ?? 0
    }

    /// Whether keys must be fixed up before a read of `schema`'s table: rows are noted
    /// stale, or the schema changed since Folio last checked its objects (another program
    /// may have dropped a trigger or the stale-row table itself).
    private func needsFixUp(_ schema: EntitySchema, _ db: Database) throws -> Bool {
        if try schemaChangedSinceRepair(db) { return true }
        return try FoldedKeys.hasStaleRows(schema, db)
    }

    /// The same in a transaction of its own, outside any (synchronize, a wake-up): a commit
    /// that controllers follow like any other, when there was anything to fix or repair.
    func fixUpFoldedKeysInTransaction(_ db: Database) throws {
        guard try !foldedSchemas.isEmpty || schemaChangedSinceRepair(db) else { return }
        try db.inTransaction(.immediate) {
            try fixUpFoldedKeys(db)
            return .commit
        }
    }

    /// Runs `body` in a read transaction in which no row of `tables` has a stale folded key:
    /// when one has (another process wrote), the keys are fixed up first — a write, an
    /// ordinary commit that live controllers follow — and the read runs again. For tables
    /// without folded attributes, a plain read.
    /// A search of `searching` first has its full-text index counted (``countSearchIndex(_:)``).
    func readWithCurrentKeys<T>(_ tables: [String], searching: String? = nil, _ body: (Database) throws -> T) throws -> T {
        try countSearchIndex(searching)
        let schemas = tables.compactMap { foldedSchemas[$0] }
        guard !schemas.isEmpty else { return try readSync(body) }
        for attempt in 0..<3 {
            var stale = false
            let result: T?
            do {
                result = try readSync { db -> T? in
                    stale = try schemas.contains { try needsFixUp($0, db) }
                    return stale ? nil : try body(db)
                }
            } catch let error where attempt < 2 {
                guard let damaged = schemas.first(where: { Self.isDamagedSearchIndex(error, $0) }) else { throw error }
                try rebuildSearchIndex(damaged)
                continue
            }
            if !stale, let result { return result }
            try fixUpStaleKeys()
        }
        // Another writer keeps making keys stale: read what is there.
        return try readSync(body)
    }

    /// `readWithCurrentKeys(_:_:)` without blocking the caller's thread.
    func readWithCurrentKeys<T: Sendable>(
        _ tables: [String], searching: String? = nil, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await countSearchIndex(searching)
        let schemas = tables.compactMap { foldedSchemas[$0] }
        guard !schemas.isEmpty else { return try await read(body) }
        for attempt in 0..<3 {
            let result: (stale: Bool, value: T?)
            do {
                result = try await read { db in
                    if try schemas.contains(where: { try self.needsFixUp($0, db) }) { return (true, nil) }
                    return (false, try body(db))
                }
            } catch let error where attempt < 2 {
                guard let damaged = schemas.first(where: { Self.isDamagedSearchIndex(error, $0) }) else { throw error }
                try rebuildSearchIndex(damaged)
                continue
            }
            if !result.stale, let value = result.value { return value }
            try await fixUpStaleKeys()
        }
        return try await read(body)
    }

    /// Whether `error` is SQLite finding an entity's full-text index damaged — its data or
    /// configuration changed by another program (`SQLITE_CORRUPT_VTAB`, or an FTS5 error):
    /// the index is derived from the folded keys, and made again.
    private static func isDamagedSearchIndex(_ error: any Error, _ schema: EntitySchema) -> Bool {
        guard !schema.searchableKeyColumns.isEmpty, case .sqlite(let code, let message, _, _) = error as? FolioError
        else { return false }
        return code == 267 || message.contains("fts5")
    }

    /// Makes an entity's full-text index again from its folded keys (``FoldedKeys``).
    private func rebuildSearchIndex(_ schema: EntitySchema) throws {
        try guardedWrite { db in try FoldedKeys.rebuildSearchIndex(schema, db) }
    }

    /// Fixes the folded keys of `tables` up when rows are noted stale (before a read that
    /// reports progress as it goes, and so cannot run twice).
    func fixUpIfStale(_ tables: [String]) async throws {
        let schemas = tables.compactMap { foldedSchemas[$0] }
        guard !schemas.isEmpty else { return }
        if try await read({ db in try schemas.contains { try self.needsFixUp($0, db) } }) { try await fixUpStaleKeys() }
    }

    /// Counts the rows of the full-text index of `table` against the table's, when the
    /// opening left that to the store (``uncountedSearchIndexes``), and makes the index again
    /// when they differ: before the first search of the table, so that no search is
    /// answered by an index another program changed while no store had the file open. Does
    /// nothing for a table counted already, or without an index.
    ///
    /// - Complexity: O(1) once counted; otherwise O(n), about a second at 10,000,000 rows
    ///   from a cold cache (the background count after the opening usually did it first).
    func countSearchIndex(_ table: String?) throws {
        guard let table, let schema = schemas[table], uncountedSearchIndexes.withLock({ $0.contains(table) }) else {
            return
        }
        if try !readSync({ db in try FoldedKeys.hasTableRows(schema, db) }) {
            try guardedWrite { db in
                if try !FoldedKeys.hasTableRows(schema, db) { try FoldedKeys.rebuildSearchIndex(schema, db) }
            }
        }
        uncountedSearchIndexes.withLock { _ = $0.remove(table) }
    }

    /// `countSearchIndex(_:)` without blocking the caller's thread.
    func countSearchIndex(_ table: String?) async throws {
        guard let table, let schema = schemas[table], uncountedSearchIndexes.withLock({ $0.contains(table) }) else {
            return
        }
        if try await !read({ db in try FoldedKeys.hasTableRows(schema, db) }) {
            try await guardedWrite { db in
                if try !FoldedKeys.hasTableRows(schema, db) { try FoldedKeys.rebuildSearchIndex(schema, db) }
            }
        }
        uncountedSearchIndexes.withLock { _ = $0.remove(table) }
    }

    /// Counts, in a background task, the full-text indexes the opening left uncounted
    /// (``countSearchIndex(_:)``), so that the first search rarely waits for it. A store
    /// closed meanwhile stops it (its read throws).
    func countSearchIndexesInBackground() {
        let tables = uncountedSearchIndexes.withLock { $0.sorted() }
        guard !tables.isEmpty else { return }
        let file = openFileIdentity
        Task.detached(priority: .utility) { [weak self] in
            for table in tables {
                do { try await OpenStoreFiles.step(file) { try await self?.countSearchIndex(table) } } catch { return }
            }
        }
    }

    private func fixUpStaleKeys() throws {
        try guardedWrite { db in try fixUpFoldedKeys(db) }
    }

    private func fixUpStaleKeys() async throws {
        try await guardedWrite { db in try self.fixUpFoldedKeys(db) }
    }
}
