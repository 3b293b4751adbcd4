import Foundation
import GRDB

// Relationships: the triggers that keep the delete rules, and the reads of a to-one's targets.
extension SQLBuilder {
    /// The prefix of every delete-rule trigger's name.
    static let deleteRuleTriggerPrefix = "folio_rule_"

    /// The name of the trigger that keeps the rule of `child.column` (a to-one that points
    /// to `parent`): `folio_rule_<parent>_<child>_<column>`.
    static func deleteRuleTriggerName(parent: String, child: String, column: String) -> String {
        "\(deleteRuleTriggerPrefix)\(parent)_\(child)_\(column)"
    }

    /// The trigger that keeps `rule` when a row of `parent` is deleted, for the rows of
    /// `child` whose `column` holds its identifier; `nil` for ``DeleteRule/noAction``.
    /// SQLite built-ins only, so that the rule holds whoever deletes (the `sqlite3` shell,
    /// with `PRAGMA foreign_keys` off, another program), and the column references are
    /// qualified with the child's table (a child column may be named like the parent).
    ///
    /// - nullify: `AFTER DELETE`, the references set to `NULL`;
    /// - cascade: `AFTER DELETE`, the rows deleted (their own rules then apply);
    /// - deny: `BEFORE DELETE`, when a row points to the deleted one, `RAISE(ABORT, …)` with
    ///   ``FolioError/deleteDeniedMessage(entity:relationship:)``: SQLite undoes the whole
    ///   statement, the deletes of the rules that fired before it included.
    ///
    /// Every name is a validated identifier.
    static func deleteRuleTrigger(
        parent: String, child: String, column: String, rule: DeleteRule, treeColumns: [String] = []
    ) -> (name: String, sql: String)? {
        let name = deleteRuleTriggerName(parent: parent, child: child, column: column)
        let pointing = "\(quote(child)).\(quote(column)) = OLD.\(quote("id"))"
        let head = "CREATE TRIGGER \(quote(name))"
        switch rule {
        case .nullify:
            return (
                name,
                "\(head) AFTER DELETE ON \(quote(parent)) BEGIN UPDATE \(quote(child)) SET \(quote(column)) = NULL WHERE \(pointing); END"
            )
        case .cascade where parent == child:
            let subtree = self.subtree(
                table: parent, columns: treeColumns.isEmpty ? [column] : treeColumns, roots: "= OLD.\(quote("id"))")
            return (
                name,
                "\(head) AFTER DELETE ON \(quote(parent)) BEGIN DELETE FROM \(quote(child)) WHERE \(quote("id")) IN (\(subtree)); END"
            )
        case .cascade:
            return (name, "\(head) AFTER DELETE ON \(quote(parent)) BEGIN DELETE FROM \(quote(child)) WHERE \(pointing); END")
        case .deny:
            // An SQL text literal: a quote doubled (there is none in identifiers).
            let message = FolioError.deleteDeniedMessage(entity: parent, relationship: "\(child).\(column)")
                .replacingOccurrences(of: "'", with: "''")
            return (
                name,
                "\(head) BEFORE DELETE ON \(quote(parent)) WHEN EXISTS (SELECT 1 FROM \(quote(child)) WHERE \(pointing)) BEGIN SELECT RAISE(ABORT, '\(message)'); END"
            )
        case .noAction:
            return nil
        }
    }

    /// The rows of a tree below its roots: those whose to-ones among `columns` point to a
    /// root (`roots`: `= OLD."id"`, `IN (…)`), and those below them, as a recursive common
    /// table expression. `UNION` (not `UNION ALL`) ends on a cycle another program wrote.
    static func subtree(table: String, columns: [String], roots: String) -> String {
        let t = quote(table), id = quote("id")
        let top = columns.map { "\(t).\(quote($0)) \(roots)" }.joined(separator: " OR ")
        let below = columns.map { "\(t).\(quote($0)) = folio_subtree.id" }.joined(separator: " OR ")
        return
            "WITH RECURSIVE folio_subtree(id) AS (SELECT \(t).\(id) FROM \(t) WHERE \(top) UNION SELECT \(t).\(id) FROM \(t) JOIN folio_subtree ON \(below)) SELECT id FROM folio_subtree"
    }

    /// Every trigger of the file whose name starts with `prefix` (the delete rules' or the
    /// derived attributes', plain identifiers): name, table, SQL.
    static func triggers(namedWith prefix: String) -> String {
        "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND name GLOB '\(prefix)*'"
    }
}
