import Foundation
import GRDB

// Reading a to-one's target: one record, or the targets of many references in one query.

extension Store {
    /// The target of a to-one relationship, or `nil` when the relationship is empty or its
    /// target is missing (deleted with a ``DeleteRule/noAction`` rule, or by another program
    /// that left the reference dangling).
    ///
    /// ```swift
    /// let source = try store.fetchOne(item.source)   // Source?
    /// ```
    ///
    /// - Throws: ``FolioError/unknownEntity(_:)`` when the store was not opened with `Target`.
    /// - Complexity: one lookup by rowid; none for an empty relationship.
    public func fetchOne<Target: PersistentRecord>(_ reference: ToOne<Target>) throws -> Target? {
        try requireEntity(Target.self)
        guard let id = reference.id else { return nil }
        return try readSync { db in try Self.fetchTargets([id], in: db, diagnostics: diagnostics)[id] }
    }

    /// The targets of many to-one references, by identifier, read in one query: the
    /// relationship of each record of a list, say, without a query per record. Empty
    /// references, and those whose target is missing, have no entry.
    ///
    /// ```swift
    /// let sources = try store.fetchTargets(items.map(\.source))   // [RecordID: Source]
    /// let name = item.source.id.flatMap { sources[$0]?.name }
    /// ```
    ///
    /// - Throws: ``FolioError/unknownEntity(_:)`` when the store was not opened with `Target`.
    /// - Complexity: O(n) for n references, and one query that looks up each distinct
    ///   identifier by rowid (the identifiers travel as one bound JSON array); none when
    ///   every reference is empty.
    public func fetchTargets<Target: PersistentRecord>(_ references: some Sequence<ToOne<Target>>) throws -> [RecordID: Target] {
        try requireEntity(Target.self)
        let ids = Self.distinctIdentifiers(references)
        guard !ids.isEmpty else { return [:] }
        return try readSync { db in try Self.fetchTargets(ids, in: db, diagnostics: diagnostics) }
    }

    /// The distinct identifiers of the non-empty references, in their first order.
    static func distinctIdentifiers<Target>(_ references: some Sequence<ToOne<Target>>) -> [RecordID] {
        var seen: Set<RecordID> = []
        var ids: [RecordID] = []
        for reference in references {
            if let id = reference.id, seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }

    /// The records of `Target` among `ids`, by identifier, in one query.
    static func fetchTargets<Target: PersistentRecord>(
        _ ids: [RecordID], in db: Database, diagnostics: Diagnostics
    ) throws -> [RecordID: Target] {
        let entity = Target.entity
        let statement = try db.cachedStatement(
            sql: SQLBuilder.batch(table: entity.name, columns: entity.attributes.map(\.column)))
        // Integers only: the JSON text is built from them, never from user text.
        try statement.setArguments(["[" + ids.map { String($0.rawValue) }.joined(separator: ",") + "]"])
        var found: [RecordID: Target] = [:]
        let decoder = entity.rowDecoder
        try statement.forEachRow(in: db) { row in
            let record = try decoder.decode(row)
            if let id = record.id { found[id] = record }
        }
        diagnostics.count { $0.recordsMaterialized += found.count }
        return found
    }
}

extension WriteTransaction {
    /// The target of a to-one relationship as the transaction sees it, or `nil` when the
    /// relationship is empty or its target is missing (see ``Store/fetchOne(_:)``).
    ///
    /// - Throws: ``FolioError/unknownEntity(_:)`` when the store was not opened with `Target`.
    /// - Complexity: one lookup by rowid; none for an empty relationship.
    public func fetchOne<Target: PersistentRecord>(_ reference: ToOne<Target>) throws -> Target? {
        try store.requireEntity(Target.self)
        guard let id = reference.id else { return nil }
        return try folio { try Store.fetchTargets([id], in: database, diagnostics: store.diagnostics)[id] }
    }

    /// The targets of many to-one references as the transaction sees them, by identifier,
    /// in one query (see ``Store/fetchTargets(_:)``).
    ///
    /// - Throws: ``FolioError/unknownEntity(_:)`` when the store was not opened with `Target`.
    /// - Complexity: O(n) for n references, and one query that looks up each distinct
    ///   identifier by rowid; none when every reference is empty.
    public func fetchTargets<Target: PersistentRecord>(_ references: some Sequence<ToOne<Target>>) throws -> [RecordID: Target] {
        try store.requireEntity(Target.self)
        let ids = Store.distinctIdentifiers(references)
        guard !ids.isEmpty else { return [:] }
        return try folio { try Store.fetchTargets(ids, in: database, diagnostics: store.diagnostics) }
    }
}
