import Foundation
import GRDB

/// The triggers that keep the model's delete rules in the file
/// (``SQLBuilder/deleteRuleTrigger(parent:child:column:rule:)``), made of SQLite built-ins
/// only, so that the rules hold whoever deletes: Folio, raw SQL, another process, the
/// `sqlite3` shell with `PRAGMA foreign_keys` off.
///
/// They are made exactly the declared ones at every open, once every table is prepared, in
/// the opening transaction (``install(_:_:)``), as the change and folded-key triggers are
/// (with, for a parent that has unique attributes, those that keep the rule for the rows a
/// `REPLACE` deletes: ``SQLBuilder/deleteRuleReplacedRowsTriggers(parent:uniqueColumns:child:column:rule:)``):
/// a missing one is created, one whose text differs (a rule changed from cascade to deny)
/// replaced, and one the model no longer declares dropped. A file whose triggers are
/// already the declared ones is not written to. A migration drops those on its tables
/// before its contract phase (``drop(on:_:_:)``): a trigger that names a column the
/// migration removes would make SQLite refuse the removal.
enum DeleteRuleTriggers {
    /// Makes the delete-rule triggers on the model's tables exactly the declared ones.
    ///
    /// A trigger named with the prefix on a table the model does not declare is left alone
    /// (another model's, on a file two apps share), and so is another of Folio's triggers
    /// the prefix happens to match (the change triggers of an entity named `rule_x`).
    ///
    /// - Returns: whether any trigger was created, replaced or dropped.
    @discardableResult
    static func install(_ model: DeclaredModel, _ db: Database) throws -> Bool {
        let wanted = model.deleteRules.flatMap { rule in
            // The rule for the rows a `REPLACE` deletes for a unique value of the parent.
            let unique = model.entities[rule.parent].map { SQLBuilder.uniqueColumns($0.schema) } ?? []
            return [rule.trigger].compactMap { $0 }
                + SQLBuilder.deleteRuleReplacedRowsTriggers(
                    parent: rule.parent, uniqueColumns: unique, child: rule.child, column: rule.column, rule: rule.rule)
        }
        let names = Set(wanted.map { $0.name.lowercased() })
        var changed = false
        let prefix = SQLBuilder.deleteRuleTriggerPrefix
        for stale in try existing(prefix: prefix, on: Set(model.entities.keys), model: model, db)
        where !names.contains(stale.lowercased()) {
            try db.execute(sql: SQLBuilder.dropTrigger(stale))
            changed = true
        }
        return try db.installTriggers(wanted) || changed
    }

    /// Drops every delete-rule trigger on `tables` (file names), before a migration changes
    /// them; ``install(_:_:)`` makes the declared ones again after it.
    static func drop(on tables: Set<String>, _ model: DeclaredModel, _ db: Database) throws {
        for name in try existing(prefix: SQLBuilder.deleteRuleTriggerPrefix, on: tables, model: model, db) {
            try db.execute(sql: SQLBuilder.dropTrigger(name))
        }
    }

    /// The names of the triggers on `tables` named with `prefix` (the delete rules' or the
    /// derived attributes'), without Folio's other triggers of the model's entities.
    static func existing(prefix: String, on tables: Set<String>, model: DeclaredModel, _ db: Database) throws -> [String] {
        let lowered = Set(tables.map { $0.lowercased() })
        var others: Set<String> = []
        for table in Set(model.entities.keys).union(tables) {
            for name in SQLBuilder.changeTriggers(table: table).map(\.name) + SQLBuilder.derivedTriggerNames(table: table) {
                others.insert(name.lowercased())
            }
        }
        return try Row.fetchAll(db, sql: SQLBuilder.triggers(namedWith: prefix)).compactMap { row in
            let name: String = row[0], table: String = row[1]
            guard lowered.contains(table.lowercased()), !others.contains(name.lowercased()) else { return nil }
            return name
        }
    }
}
