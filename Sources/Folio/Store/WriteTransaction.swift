import Foundation
import GRDB

/// The writes of one transaction, passed to the `body` of `Store.write(_:)`.
///
/// Everything done here, the raw SQL on ``database`` included, is committed together
/// and reported to live controllers once, after the commit.
public struct WriteTransaction {
    /// The GRDB connection of the transaction: the raw-SQL escape hatch. Writes made with
    /// it are still reported to controllers (except to `WITHOUT ROWID` tables), rows that
    /// `INSERT OR REPLACE` or `UPDATE OR REPLACE` deletes for a declared unique attribute
    /// included (see <doc:StoresAndFiles>).
    public let database: Database
    let store: Store

    init(db: Database, store: Store) {
        self.database = db
        self.store = store
    }

    /// Inserts a record and sets its `id` to the new rowid (or uses the `id` it has).
    public func insert<R: PersistentRecord>(_ record: inout R) throws {
        let sql = try store.writeSQL(for: R.self)
        var values = try R.entity.writableValues(record)
        try folio {
            if let id = record.id {
                values.insert(id.rawValue.databaseValue, at: 0)
                try run(sql.insertWithID, values)
            } else {
                try run(sql.insert, values)
                record.id = RecordID(database.lastInsertedRowID)
            }
        }
    }

    /// Updates every attribute of a stored record (for an entity without attributes, only
    /// checks that the record is stored).
    /// - Throws: ``FolioError/recordNotFound(entity:id:)`` if it has no `id` or no row.
    public func update<R: PersistentRecord>(_ record: R) throws {
        let sql = try store.writeSQL(for: R.self)
        let entity = R.entity
        guard let id = record.id else { throw FolioError.recordNotFound(entity: entity.name, id: nil) }
        if entity.writtenAttributes.isEmpty {
            // Nothing to write (SQLite has no `SET` of nothing): only check the row is there,
            // and report no change.
            let found = try folio { try Int64.fetchOne(database.cachedStatement(sql: sql.update), arguments: [id.rawValue]) }
            if found == nil { throw FolioError.recordNotFound(entity: entity.name, id: id) }
            return
        }
        let values = try entity.writableValues(record) + [id.rawValue.databaseValue]
        try folio {
            try run(sql.update, values)
        }
        if database.changesCount == 0 { throw FolioError.recordNotFound(entity: entity.name, id: id) }
    }

    /// Deletes a record; returns whether a row was deleted.
    @discardableResult
    public func delete<R: PersistentRecord>(_ record: R) throws -> Bool {
        guard let id = record.id else { return false }
        return try delete(R.self, id: id)
    }

    /// Deletes the record with `id`; returns whether a row was deleted.
    @discardableResult
    public func delete<R: PersistentRecord>(_ type: R.Type, id: RecordID) throws -> Bool {
        let sql = try store.writeSQL(for: R.self)
        try folio {
            try database.cachedStatement(sql: sql.delete).execute(arguments: [id.rawValue])
        }
        return database.changesCount > 0
    }

    /// Inserts the record, or updates the row that has the same value in the unique
    /// column `key`; sets the record's `id` either way.
    ///
    /// Uses `INSERT … ON CONFLICT(key) DO UPDATE`, which SQLite reports as an insert or
    /// an update (`INSERT OR REPLACE` would delete rows unseen).
    ///
    /// `key` is the key path of a unique attribute, of any attribute type.
    public func upsert<R: PersistentRecord, V>(_ record: inout R, onConflict key: KeyPath<R, V>) throws {
        try store.requireEntity(R.self)
        let entity = R.entity
        guard let attribute = entity.attribute(for: key) else {
            throw FolioError.unknownKeyPath(entity: entity.name, keyPath: String(describing: key))
        }
        guard attribute.isUnique else {
            throw FolioError.invalidArgument(
                "upsert needs a unique attribute; '\(attribute.column)' of '\(entity.name)' is not unique")
        }
        let columns = entity.storedColumnNames
        let values = try entity.writableValues(record)
        let id: Int64? = try folio {
            let statement = try database.cachedStatement(
                sql: SQLBuilder.upsert(table: entity.name, columns: columns, conflict: attribute.column))
            try statement.setExactArguments(values)
            if let id = try Int64.fetchOne(statement) { return id }
            let select = try database.cachedStatement(sql: SQLBuilder.selectID(table: entity.name, column: attribute.column))
            try select.setExactArguments([entity.storedValue(of: attribute, in: record)])
            return try Int64.fetchOne(select)
        }
        guard let id else { throw FolioError.recordNotFound(entity: entity.name, id: nil) }
        record.id = RecordID(id)
    }

    /// Sets attributes on every row that matches `predicate`, in SQL, loading no record
    /// (Core Data's `NSBatchUpdateRequest` — whose changes its controllers never saw;
    /// Folio's controllers do). Returns the number of rows changed.
    @discardableResult
    public func updateAll<R: PersistentRecord>(
        _ type: R.Type, where predicate: Predicate<R>? = nil, set assignments: [Assignment<R>]
    ) throws -> Int {
        try store.requireEntity(R.self)
        let filter = try predicate.map { try PredicateTranslator(entity: R.entity).translate($0) }
        return try update(R.self, filter: filter, set: assignments)
    }

    /// Sets attributes of one row (the order value and section attribute of a row the user
    /// moved): ``updateAll(_:where:set:)`` by identifier.
    func update<R: PersistentRecord>(_ type: R.Type, id: Int64, set assignments: [Assignment<R>]) throws {
        _ = try update(R.self, filter: SQLFragment("\(SQLBuilder.quote("id")) = ?", [id.databaseValue]), set: assignments)
    }

    private func update<R: PersistentRecord>(_ type: R.Type, filter: SQLFragment?, set assignments: [Assignment<R>]) throws
        -> Int
    {
        guard !assignments.isEmpty else { throw FolioError.invalidArgument("updateAll needs at least one assignment") }
        let entity = R.entity
        var columns = try assignments.map { try entity.column(for: $0.keyPath) }
        if columns.contains("id") { throw FolioError.invalidArgument("updateAll cannot assign the id") }
        for (column, assignment) in zip(columns, assignments) {
            if entity.attribute(for: assignment.keyPath)?.derivation != nil {
                throw FolioError.invalidArgument(
                    "'\(column)' of '\(entity.name)' is a derived attribute, which SQLite keeps from the records it counts; it cannot be set"
                )
            }
            if let problem = assignment.problem {
                throw FolioError.unstorableValue(entity: entity.name, attribute: column, reason: problem)
            }
            try entity.checkWritable(assignment.value, column: column, type: entity.attribute(for: assignment.keyPath)?.type)
        }
        var values = assignments.map(\.value)
        // A folded attribute's key is set with it.
        for (column, value) in zip(columns, values)
        where entity.attributes.contains(where: { $0.column == column && $0.isFolded }) {
            columns.append(ColumnSchema.foldedKeyColumn(of: column))
            values.append(EntityDescription<R>.foldedKey(of: value))
        }
        let sql = SQLBuilder.updateAll(table: entity.name, assignments: columns, filter: filter)
        try folio {
            try run(sql, values + (filter?.arguments ?? []))
        }
        return database.changesCount
    }

    /// Deletes every row that matches `predicate` (all rows when `nil`), loading no
    /// record. Returns the number of rows deleted.
    @discardableResult
    public func deleteAll<R: PersistentRecord>(_ type: R.Type, where predicate: Predicate<R>? = nil) throws -> Int {
        try store.requireEntity(R.self)
        let entity = R.entity
        let filter = try predicate.map { try PredicateTranslator(entity: entity).translate($0) }
        try folio {
            try run(SQLBuilder.deleteAll(table: entity.name, filter: filter), filter?.arguments ?? [])
        }
        return database.changesCount
    }

    /// Runs one statement, binding text with every byte (see ``Statement/setExactArguments(_:)``).
    private func run(_ sql: String, _ values: [DatabaseValue]) throws {
        let statement = try database.cachedStatement(sql: sql)
        try statement.setExactArguments(values)
        try statement.execute()
    }

    /// Every matching record, loaded now, in the transaction.
    public func fetchAll<R: PersistentRecord>(_ request: RecordRequest<R>) throws -> [R] {
        try store.requireEntity(R.self)
        try store.fixUpFoldedKeys(database)
        return try store.fetchRecords(request.compile(), in: database)
    }

    /// The number of matching records, in the transaction.
    public func count<R: PersistentRecord>(_ request: RecordRequest<R>) throws -> Int {
        try store.requireEntity(R.self)
        try store.fixUpFoldedKeys(database)
        let fragment = SQLBuilder.count(try request.compile())
        return try folio { try Int.fetchOne(database, sql: fragment.sql, arguments: fragment.statementArguments) ?? 0 }
    }
}

/// One `column = value` of ``WriteTransaction/updateAll(_:where:set:)``.
// @unchecked Sendable: the key path is immutable and the value is a stored value.
public struct Assignment<R: PersistentRecord>: @unchecked Sendable {
    let keyPath: AnyKeyPath
    let value: DatabaseValue
    /// Why `value` could not be encoded, if it could not: ``WriteTransaction/updateAll(_:where:set:)``
    /// throws it, naming the attribute.
    var problem: String? = nil

    /// Sets the attribute at `keyPath` to `value`.
    /// - Complexity: O(1), plus encoding the value.
    public static func set<V: AttributeValue>(_ keyPath: WritableKeyPath<R, V>, to value: V) -> Assignment {
        Assignment(keyPath: keyPath, value: value.storedValue)
    }

    /// Sets an attribute of a `Codable` type that is no ``AttributeValue`` (an enum stored
    /// by its raw value, a value stored as JSON) to `value`, stored as the attribute stores
    /// it. A value that does not encode makes ``WriteTransaction/updateAll(_:where:set:)``
    /// throw ``FolioError/unstorableValue(entity:attribute:reason:)``.
    /// - Complexity: O(1), plus encoding the value.
    @_disfavoredOverload
    public static func set<V: Codable & Sendable>(_ keyPath: WritableKeyPath<R, V>, to value: V) -> Assignment {
        do {
            return Assignment(keyPath: keyPath, value: try CodableStorage<V>.chosen.encode(value))
        } catch {
            return Assignment(keyPath: keyPath, value: .null, problem: (error as? UnstorableValue)?.reason ?? "\(error)")
        }
    }
}
