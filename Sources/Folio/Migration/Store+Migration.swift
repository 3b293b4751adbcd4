import Foundation
import GRDB

extension Store {
    /// Throws ``FolioError/modelVersionChanged(path:found:opened:)`` when the file was
    /// migrated to another model version since this store opened it (by another process:
    /// in this one a migration waits for every other store to close). Its tables may then
    /// differ from the ones this store's statements and controllers read, and a column
    /// renamed or reused would give wrong data instead of an error.
    ///
    /// One `PRAGMA schema_version` (the schema cookie in the file's header, read in the
    /// caller's transaction) per read or write; only when it moved — any schema change,
    /// such as another store creating an entity's table — is the model version read again.
    func checkModelUnchanged(_ db: Database) throws {
        guard let path else { return }
        let cookie = try Int64.fetchOne(db.cachedStatement(sql: SQLBuilder.schemaVersion)) ?? 0
        if cookie == schemaCookie.current { return }
        let found = try Migrator.modelVersion(db, path: path) ?? 0
        if found != modelVersion {
            throw FolioError.modelVersionChanged(path: path, found: found, opened: modelVersion)
        }
        schemaCookie.withLock { $0 = cookie }
    }

    /// ``checkModelUnchanged(_:)`` where the store looks for other processes' commits
    /// (``synchronize()``, ``observeExternalChanges(every:)``): when the model version
    /// changed, the live controllers are told too (once), so that a list following the
    /// store reports the error rather than showing the old results as current. Writer
    /// queue only.
    func checkModelUnchangedTellingControllers(_ db: Database) throws {
        do {
            try checkModelUnchanged(db)
        } catch let error as FolioError {
            if case .modelVersionChanged = error { hub.modelChanged(error) }
            throw error
        }
    }
}
