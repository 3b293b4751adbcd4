import Foundation
import GRDB

// Rows that SQLite's `REPLACE` conflict resolution deletes: the triggers that note them and
// keep the change log, the full-text index and the delete rules right for every writer.
//
// When `INSERT OR REPLACE`, `REPLACE INTO`, `UPDATE OR REPLACE` (or an upsert into a table
// whose other unique constraint says `ON CONFLICT REPLACE`) deletes the rows that hold a
// unique value, SQLite runs their delete triggers only under `PRAGMA recursive_triggers`,
// which the `sqlite3` shell and other programs do not set: the change log, the full-text
// index and the delete rules would never hear of them. So, for an entity with unique
// attributes:
//
// - a `BEFORE INSERT` trigger, and a `BEFORE UPDATE OF` the unique columns, note in
//   ``replacedRowsTable`` the rows that hold the new row's unique values (the rows a
//   `REPLACE` would delete; `NULL`s never conflict), after clearing what an earlier statement
//   noted there. A `BEFORE` trigger cannot know how the conflict will be resolved, so it
//   deletes nothing;
// - `AFTER` triggers of the same events then act on the noted rows that are gone — deleted
//   by the statement — and only on those: the change log gets them (``replacedRowsTrigger(_:)``),
//   the full-text index loses their entries (``searchReplacedRowsTriggers(_:)``), and the
//   delete rules apply to the rows that pointed to them
//   (``deleteRuleReplacedRowsTriggers(parent:uniqueColumns:child:column:rule:)``).
//
// With `OR IGNORE`, `ON CONFLICT DO NOTHING` or `DO UPDATE` the noted rows are still there
// (no `AFTER INSERT` runs for an ignored row at all); with `ABORT`, `FAIL` or `ROLLBACK` the
// statement's trigger effects are undone with it. A row replaced under its own rowid (an
// `INSERT OR REPLACE` naming an existing `id`) is there after the statement: it is an
// update, which the insert triggers already log and index.
extension SQLBuilder {
    /// The rows noted by the conflict triggers of the statement running now (and those of
    /// the last statement that noted any, until the next one clears them). A rowid table
    /// without constraints, so that a trigger's insert can never fail.
    static let replacedRowsTable = "folio_replaced"
    static let createReplacedRows =
        "CREATE TABLE IF NOT EXISTS \(replacedRowsTable) (entity TEXT NOT NULL, row INTEGER NOT NULL)"

    /// The unique keys of an entity: the columns of each unique index Folio makes.
    static func uniqueKeys(_ schema: EntitySchema) -> [[String]] {
        schema.storedColumns.filter(\.isUnique).map(\.indexedColumns)
    }

    /// The names of an entity's conflict triggers, whether it has any or not (to drop them).
    static func replaceTriggerNames(table: String) -> [String] {
        ["conflict_ins", "conflict_upd", "replaced_ins", "replaced_upd", "fts_replaced_ins", "fts_replaced_upd"].map {
            "folio_\(table)_\($0)"
        }
    }

    /// The noted rows of `table` that are no longer there: those the statement deleted.
    /// (`folio_r`: an alias no entity can be named, so `"t"` inside is always the table.)
    static func replacedRows(table: String) -> String {
        "SELECT folio_r.row FROM \(replacedRowsTable) AS folio_r WHERE folio_r.entity = '\(table)' AND NOT EXISTS (SELECT 1 FROM \(quote(table)) WHERE \(quote(table)).\(quote("id")) = folio_r.row)"
    }

    /// Whether rows of `table` are noted (the `WHEN` of the `AFTER` triggers: one probe of an
    /// almost always empty table per row written).
    private static func anyNoted(table: String) -> String {
        "EXISTS (SELECT 1 FROM \(replacedRowsTable) WHERE entity = '\(table)')"
    }

    /// The `AFTER` events the noted rows are acted on at: after an insert, and after an
    /// update of the unique columns (the events of the `BEFORE` triggers that note them).
    private static func afterEvents(_ uniqueColumns: [String]) -> [(suffix: String, event: String)] {
        [("ins", "INSERT"), ("upd", "UPDATE OF \(uniqueColumns.map(quote).joined(separator: ", "))")]
    }

    /// The unique columns of an entity, in the order of its keys, once each.
    static func uniqueColumns(_ schema: EntitySchema) -> [String] {
        var seen: Set<String> = []
        return uniqueKeys(schema).flatMap { $0 }.filter { seen.insert($0).inserted }
    }

    /// The two `BEFORE` triggers that note the rows a `REPLACE` would delete, and the
    /// `AFTER` triggers that log those it did delete; none for an entity without a unique
    /// attribute. SQLite built-ins only.
    static func replaceTriggers(_ schema: EntitySchema) -> [(name: String, sql: String)] {
        let table = schema.name
        let keys = uniqueKeys(schema)
        guard !keys.isEmpty else { return [] }
        let id = quote("id")
        func note(excludingOld: Bool) -> String {
            let clear = "DELETE FROM \(replacedRowsTable) WHERE entity = '\(table)';"
            let inserts = keys.map { key in
                var match = key.map { "\(quote(table)).\(quote($0)) = NEW.\(quote($0))" }
                if excludingOld { match.append("\(quote(table)).\(id) IS NOT OLD.\(id)") }
                return
                    " INSERT INTO \(replacedRowsTable) (entity, row) SELECT '\(table)', \(quote(table)).\(id) FROM \(quote(table)) WHERE \(match.joined(separator: " AND "));"
            }
            return clear + inserts.joined()
        }
        let columns = uniqueColumns(schema).map(quote).joined(separator: ", ")
        let log =
            "INSERT INTO \(changeLogTable) (entity, row) SELECT DISTINCT '\(table)', row FROM (\(replacedRows(table: table)));"
        return [
            (
                "folio_\(table)_conflict_ins",
                "CREATE TRIGGER \(quote("folio_\(table)_conflict_ins")) BEFORE INSERT ON \(quote(table)) BEGIN \(note(excludingOld: false)) END"
            ),
            (
                "folio_\(table)_conflict_upd",
                "CREATE TRIGGER \(quote("folio_\(table)_conflict_upd")) BEFORE UPDATE OF \(columns) ON \(quote(table)) BEGIN \(note(excludingOld: true)) END"
            ),
        ]
            + afterEvents(uniqueColumns(schema)).map { suffix, event in
                let name = "folio_\(table)_replaced_\(suffix)"
                return (
                    name,
                    "CREATE TRIGGER \(quote(name)) AFTER \(event) ON \(quote(table)) WHEN \(anyNoted(table: table)) BEGIN \(log) END"
                )
            }
    }

    /// The triggers that remove from the full-text index the entries of rows a `REPLACE`
    /// deleted; none for an entity without unique or searchable attributes.
    static func searchReplacedRowsTriggers(_ schema: EntitySchema) -> [(name: String, sql: String)] {
        let table = schema.name
        guard !uniqueKeys(schema).isEmpty, !schema.searchableKeyColumns.isEmpty else { return [] }
        let fts = quote(searchTable(table))
        return afterEvents(uniqueColumns(schema)).map { suffix, event in
            let name = "folio_\(table)_fts_replaced_\(suffix)"
            return (
                name,
                "CREATE TRIGGER \(quote(name)) AFTER \(event) ON \(quote(table)) WHEN \(anyNoted(table: table)) BEGIN DELETE FROM \(fts) WHERE rowid IN (\(replacedRows(table: table))); END"
            )
        }
    }

    /// The triggers that keep a delete rule (see
    /// ``deleteRuleTrigger(parent:child:column:rule:)``) for the rows of `parent` a `REPLACE`
    /// deleted: cascade and nullify act on the rows of `child` that pointed to them; deny
    /// undoes the statement (`RAISE(ABORT, …)` after it, which SQLite undoes whole). None
    /// for ``DeleteRule/noAction`` or a parent without unique attributes.
    ///
    /// Named `folio_rule_<parent>_<child>_<column>_replaced_ins` and `…_upd`: with the
    /// rules' prefix, so that they are reconciled with them.
    static func deleteRuleReplacedRowsTriggers(
        parent: String, uniqueColumns: [String], child: String, column: String, rule: DeleteRule
    ) -> [(name: String, sql: String)] {
        guard !uniqueColumns.isEmpty else { return [] }
        let base = deleteRuleTriggerName(parent: parent, child: child, column: column)
        let gone = replacedRows(table: parent)
        let pointing = "\(quote(child)).\(quote(column)) IN (\(gone))"
        let action: (when: String, body: String)
        switch rule {
        case .nullify:
            action = (anyNoted(table: parent), "UPDATE \(quote(child)) SET \(quote(column)) = NULL WHERE \(pointing);")
        case .cascade:
            action = (anyNoted(table: parent), "DELETE FROM \(quote(child)) WHERE \(pointing);")
        case .deny:
            let message = FolioError.deleteDeniedMessage(entity: parent, relationship: "\(child).\(column)")
                .replacingOccurrences(of: "'", with: "''")
            action = (
                "\(anyNoted(table: parent)) AND EXISTS (SELECT 1 FROM \(quote(child)) WHERE \(pointing))",
                "SELECT RAISE(ABORT, '\(message)');"
            )
        case .noAction:
            return []
        }
        return afterEvents(uniqueColumns).map { suffix, event in
            let name = "\(base)_replaced_\(suffix)"
            return (
                name,
                "CREATE TRIGGER \(quote(name)) AFTER \(event) ON \(quote(parent)) WHEN \(action.when) BEGIN \(action.body) END"
            )
        }
    }
}
