import Foundation
import GRDB

/// Rebuilds one table into its declared shape, in the migration's transaction: SQLite's
/// procedure for changes `ALTER TABLE` cannot make (sqlite.org/lang_altertable.html,
/// section 7), with Folio's guarantees added.
///
/// 1. Remember the table's other indexes and triggers (not Folio's own) with their SQL,
///    and its AUTOINCREMENT counter (`sqlite_sequence`).
/// 2. `CREATE TABLE folio_migrating_<name>` as the entity declares it.
/// 3. Copy every row, **rowid included** (`id`, or the implicit `rowid` of a table made
///    elsewhere without one), the declared columns by name.
/// 4. `DROP TABLE` the old one (foreign-key enforcement is off around the transaction, so
///    no `ON DELETE` action of another table fires).
/// 5. Rename the new table to the old name with `legacy_alter_table` on, so that SQLite
///    neither rewrites nor re-checks views and triggers that name the table (they name it
///    by the same name again once the rename is done).
/// 6. Raise the AUTOINCREMENT counter back to what it was — copying rows sets it to the
///    largest copied rowid, lower than the old counter when the last records were
///    deleted — so a deleted record's identifier is never given to a new one.
/// 7. Recreate the remembered indexes and triggers; an index on a column that no longer
///    exists goes with it, a trigger that no longer compiles refuses the migration.
///
/// Folio's own indexes and change triggers are recreated afterwards by the migrator
/// (declared indexes) and ``SchemaCheck`` (triggers).
struct TableRebuild {
    let table: MigrationPlan.TableMigration

    init(_ table: MigrationPlan.TableMigration) { self.table = table }

    private var name: String { table.entity.name }
    private var temporaryName: String { "folio_migrating_\(name)" }

    func run(_ db: Database) throws {
        let objects = try otherObjects(db)
        let counter = try autoincrementCounter(db)
        try db.execute(sql: SQLBuilder.createTableOnly(table.entity.schema, named: temporaryName))
        try db.execute(
            sql: SQLBuilder.copyRows(
                from: name, to: temporaryName, columns: table.entity.schema.storedColumns.map(\.name),
                rowIDColumn: table.rowIDColumn))
        try db.execute(sql: SQLBuilder.dropTable(name))
        let legacy = try Bool.fetchOne(db, sql: SQLBuilder.legacyAlterTable) ?? false
        try db.execute(sql: SQLBuilder.setLegacyAlterTable(true))
        do {
            try db.execute(sql: SQLBuilder.renameTable(temporaryName, to: name))
        } catch {
            try? db.execute(sql: SQLBuilder.setLegacyAlterTable(legacy))
            throw error
        }
        try db.execute(sql: SQLBuilder.setLegacyAlterTable(legacy))
        if let counter {
            try db.execute(sql: SQLBuilder.insertSequence, arguments: [name, counter])
            try db.execute(sql: SQLBuilder.raiseSequence, arguments: [name, counter])
        }
        for object in objects {
            do {
                try db.execute(sql: object.sql)
            } catch {
                throw FolioError.migrationRefused(
                    entity: name,
                    reason:
                        "its \(object.type) '\(object.name)' cannot be recreated after the table is rebuilt (\((error as? DatabaseError)?.message ?? "\(error)")); drop or change it in a MigrationStep"
                )
            }
        }
    }

    /// The table's indexes and triggers that are not Folio's, with their SQL; indexes on
    /// columns the rebuild removes are left out.
    private func otherObjects(_ db: Database) throws -> [(type: String, name: String, sql: String)] {
        let folioTriggers = Set(
            (SQLBuilder.changeTriggers(table: name) + SQLBuilder.changeTriggers(table: table.file.name)).map(\.name))
        let kept = Set(table.entity.schema.storedColumns.map { $0.name.lowercased() })
        var objects: [(type: String, name: String, sql: String)] = []
        for row in try Row.fetchAll(db, sql: SQLBuilder.tableObjects, arguments: [name]) {
            let type: String = row[0], objectName: String = row[1], sql: String = row[2]
            switch type {
            case "trigger" where folioTriggers.contains(objectName):
                continue
            case "index":
                if table.isFolioIndex(objectName) { continue }
                let columns = try Row.fetchAll(db, sql: SQLBuilder.indexColumns, arguments: [objectName]).map { $0[0] as String? }
                // An expression index is kept: if it names a removed column it fails below.
                if columns.contains(where: { $0.map { !kept.contains($0.lowercased()) && $0.lowercased() != "id" } ?? false }) {
                    continue
                }
            default:
                break
            }
            objects.append((type, objectName, sql))
        }
        return objects
    }

    /// The table's AUTOINCREMENT counter, `nil` when it has none.
    private func autoincrementCounter(_ db: Database) throws -> Int64? {
        guard try Bool.fetchOne(db, sql: SQLBuilder.hasSequenceTable) == true else { return nil }
        return try Int64.fetchOne(db, sql: SQLBuilder.readSequence, arguments: [name])
    }
}
