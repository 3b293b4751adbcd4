import Foundation
import GRDB

/// Folio's own tables in a store file, their version, and the upgrades from older versions.
///
/// | version | written by | what it has |
/// |---|---|---|
/// | 0 | — | no Folio table (a new file, or tables made elsewhere) |
/// | 1 | earlier Folio releases | `folio_entities` with a change counter kept by triggers; no `folio_metadata` |
/// | 2 | earlier Folio releases | `folio_metadata` (internal schema version, database identity); `folio_entities.change_id`, 16 random bytes the triggers renew at every row written |
/// | 3 | earlier Folio releases | the change log `folio_changes`, filled by the change triggers in every process, and `folio_change_readers`, the stores' progress it is trimmed by |
/// | 4 | this version | `folio_replaced`, where the conflict triggers of entities with unique attributes note the rows a `REPLACE` may delete, so that the change log, the full-text index and the delete rules hear of those it did delete, whoever wrote (``SQLBuilder/replaceTriggers(_:)``) |
///
/// The version lives in `folio_metadata` under ``versionKey``. A file of an older version
/// is upgraded in place, in the write transaction that opens the store: all of it or
/// none. A newer one is refused before anything is written (``FolioError/newerStoreFormat(path:version:newestSupported:)``).
/// The model version (``StoreModel/version``) goes into the same key/value table.
enum InternalSchema {
    /// The internal schema version this build writes.
    static let current = 4
    static let versionKey = "internal_schema_version"
    static let identityKey = "database_identity"

    /// The internal schema version of the file `db` is connected to.
    static func version(_ db: Database, path: String) throws -> Int {
        if try db.tableExists(SQLBuilder.storeMetadataTable) {
            let value = try DatabaseValue.fetchOne(db, sql: SQLBuilder.readStoreMetadata, arguments: [versionKey])
            guard let value, case .int64(let version) = value.storage, version >= 2, version <= Int64(Int32.max) else {
                throw FolioError.invalidStoreMetadata(
                    path: path, reason: "the internal schema version is \(value.map { "\($0)" } ?? "missing")")
            }
            return Int(version)
        }
        return try db.tableExists(SQLBuilder.metadataTable) ? 1 : 0
    }

    /// Refuses a file written by a newer Folio.
    static func checkNotNewer(_ db: Database, path: String) throws {
        let version = try version(db, path: path)
        if version > current { throw FolioError.newerStoreFormat(path: path, version: version, newestSupported: current) }
    }

    /// Creates Folio's tables in a new file or upgrades an older file's, in the caller's
    /// write transaction. Returns the database identity.
    static func prepare(_ db: Database, path: String) throws -> Data {
        let found = try version(db, path: path)
        if found <= current {
            // The change log's tables, before the triggers that fill it (made again if another
            // program dropped them: every write to an entity would fail without). An older
            // file's triggers are replaced as each entity's table is prepared (another
            // model's entities' when that model opens the file): they log nothing until then.
            try db.execute(sql: SQLBuilder.createChangeLog)
            try db.execute(sql: SQLBuilder.createChangeReaders)
            // Before the conflict triggers that write to it, made as each entity's table is
            // prepared: an older file's entities have none until then.
            try db.execute(sql: SQLBuilder.createReplacedRows)
            try db.execute(sql: SQLBuilder.createDerivedNotes)
        }
        switch found {
        case 0:
            try db.execute(sql: SQLBuilder.createEntityMetadata)
            try db.execute(sql: SQLBuilder.createStoreMetadata)
        case 1:
            try upgradeFrom1(db, path: path)
        case 2, 3:
            break  // the change log's tables, made above; the triggers, at every open
        case current:
            break
        default:
            throw FolioError.newerStoreFormat(path: path, version: found, newestSupported: current)
        }
        if found != current {
            try db.execute(sql: SQLBuilder.writeStoreMetadata, arguments: [versionKey, current])
        }
        if let identity = try identity(db), identity.count == 16 { return identity }
        // A new file, an upgraded one, or a damaged identity: a new one (a damaged one only
        // costs the caches written for the old one).
        try db.execute(sql: SQLBuilder.writeNewIdentity, arguments: [identityKey])
        guard let identity = try identity(db), identity.count == 16 else {
            throw FolioError.invalidStoreMetadata(path: path, reason: "the database identity could not be written")
        }
        return identity
    }

    static func identity(_ db: Database) throws -> Data? {
        guard let value = try DatabaseValue.fetchOne(db, sql: SQLBuilder.readStoreMetadata, arguments: [identityKey]),
            case .blob(let data) = value.storage
        else { return nil }
        return data
    }

    /// Version 1 → 2: the key/value table, a random change token per entity, and triggers
    /// that renew it — for every entity of the file, not only the ones this store declares
    /// (another store may open the file with other record types).
    private static func upgradeFrom1(_ db: Database, path: String) throws {
        let columns = try Row.fetchAll(db, sql: SQLBuilder.tableInfo, arguments: [SQLBuilder.metadataTable]).map {
            ($0[0] as String).lowercased()
        }
        guard columns == ["name", "version_hash", "schema", "change_token"] else {
            throw FolioError.invalidStoreMetadata(
                path: path, reason: "\(SQLBuilder.metadataTable) has the columns \(columns), not those of version 1")
        }
        try db.execute(sql: SQLBuilder.createStoreMetadata)
        try db.execute(sql: SQLBuilder.addChangeID)
        try db.execute(sql: SQLBuilder.renewAllChangeIDs)
        for name in try String.fetchAll(db, sql: SQLBuilder.entityNames) {
            // A name that is not a valid identifier can be no store's entity: its row stays,
            // and no SQL is built from it.
            guard (try? SQLBuilder.validateIdentifier(name, entity: name)) != nil, try db.tableExists(name) else { continue }
            try SchemaCheck.installChangeTriggers(table: name, db)
        }
    }
}
