import Foundation
import GRDB

extension DeclaredModel {
    /// Checks the model's derived attributes and returns them, sorted.
    ///
    /// Refused, with ``FolioError/invalidSchema(entity:reason:)``: a derivation through
    /// what is no to-one of a declared child, or through one that points to another entity;
    /// over the entity's own records (a tree: its triggers would have to run within
    /// themselves, which SQLite does only with `PRAGMA recursive_triggers`); a filter that
    /// reads what triggers cannot (folded text, a to-one's target, another derived
    /// attribute); and an attribute of the wrong type for its aggregate — a count is a
    /// non-optional integer, a sum an integer or `Double` (a `Double` for `Double` values),
    /// a minimum or maximum optional and of the child attribute's type.
    static func derivedAttributes(_ entities: [String: DeclaredEntity]) throws -> [DeclaredDerived] {
        var result: [DeclaredDerived] = []
        for entity in entities.values.sorted(by: { $0.name < $1.name }) {
            for declared in entity.derivations {
                func refuse(_ reason: String) -> FolioError {
                    FolioError.invalidSchema(entity: entity.name, reason: "the derived attribute '\(declared.column)' \(reason)")
                }
                let child: DerivationChild
                do {
                    child = try declared.derivation.resolveChild()
                } catch let problem as DerivationProblem {
                    throw refuse("cannot be kept: \(problem.reason)")
                } catch let error as FolioError {
                    throw refuse("has a filter SQLite triggers cannot keep: \(error)")
                }
                guard let childEntity = entities[child.table] else {
                    throw refuse(
                        "reads the records of '\(child.table)', which the store's model does not declare; add its record type to the model"
                    )
                }
                guard child.target == entity.name else {
                    throw refuse("reads through '\(child.table).\(child.reference)', which points to '\(child.target)', not here")
                }
                guard child.table != entity.name else {
                    throw refuse(
                        "reads the records of its own entity (a tree), which SQLite cannot keep for every program (a trigger runs within itself only with PRAGMA recursive_triggers)"
                    )
                }
                try checkType(
                    declared.type, isOptional: declared.isOptional, kind: declared.derivation.kind, child: child, refuse)
                result.append(
                    DeclaredDerived(
                        parent: entity.name, column: declared.column, kind: declared.derivation.kind, type: declared.type,
                        isOptional: declared.isOptional, child: child,
                        childUniqueKeys: SQLBuilder.uniqueKeys(childEntity.schema)))
            }
        }
        return result
    }

    private static func checkType(
        _ type: AttributeType, isOptional: Bool, kind: Derivation.Kind, child: DerivationChild,
        _ refuse: (String) -> FolioError
    ) throws {
        let valueName = child.value.map { "'\(child.table).\($0)'" } ?? ""
        switch kind {
        case .count:
            guard type == .integer, !isOptional else {
                throw refuse(
                    "is a count, which is a non-optional integer (Int, Int64…); it is \(isOptional ? "an optional " : "")\(type.rawValue)"
                )
            }
        case .sum:
            guard let valueType = child.valueType, [.integer, .double].contains(valueType) else {
                throw refuse(
                    "sums \(valueName), a \(child.valueType?.rawValue ?? "?") attribute; a sum reads integers or Doubles")
            }
            guard type == .double || (type == .integer && valueType == .integer) else {
                throw refuse(
                    "sums \(valueName) (\(valueType.rawValue)) into a \(type.rawValue) attribute; it must be \(valueType == .double ? "a Double" : "an integer or a Double")"
                )
            }
        case .minimum, .maximum:
            guard isOptional else {
                throw refuse("is nil for a record without children, so it must be optional")
            }
            guard let valueType = child.valueType, valueType == type, valueType != .json else {
                throw refuse(
                    "must be of the type of \(valueName) (\(child.valueType?.rawValue ?? "?")), a type SQLite compares; it is \(type.rawValue)"
                )
            }
        }
    }
}

/// The triggers that keep the model's derived attributes
/// (``SQLBuilder/derivedAttributeTriggers(_:)``), made exactly the declared ones at every
/// open, with the delete rules' (``DeleteRuleTriggers``): one missing or different — a new
/// derived attribute, a changed filter, one another program dropped — is made again and its
/// column computed anew for every row, in the opening transaction; one the model no longer
/// declares is dropped. A migration drops those on its tables before its contract phase
/// (``drop(on:_:_:)``) and they are made, and computed, again after it.
enum DerivedAttributeTriggers {
    /// Makes the derived attributes' triggers exactly the declared ones, computing anew the
    /// column of each whose triggers were missing or different.
    ///
    /// - Returns: whether any trigger was created, replaced or dropped.
    /// - Parameter progress: counts the parent rows computed, 1,000 at a time (one
    ///   statement per column without it).
    @discardableResult
    static func install(_ model: DeclaredModel, _ db: Database, progress: RowProgress? = nil) throws -> Bool {
        var wanted: Set<String> = []
        var changed = false
        for derived in model.derivedAttributes {
            let triggers = SQLBuilder.derivedAttributeTriggers(derived)
            wanted.formUnion(triggers.map { $0.name.lowercased() })
            if try db.installTriggers(triggers) {
                try recompute(derived, db, progress: progress)
                changed = true
            }
        }
        let prefix = SQLBuilder.derivedAttributeTriggerPrefix
        for stale in try DeleteRuleTriggers.existing(prefix: prefix, on: Set(model.entities.keys), model: model, db)
        where !wanted.contains(stale.lowercased()) {
            try db.execute(sql: SQLBuilder.dropTrigger(stale))
            changed = true
        }
        return changed
    }

    /// The parent rows ``install(_:_:progress:)`` will compute, by derived attribute
    /// (`derived:<parent>.<column>`), for the progress's total: every row of the entity of
    /// each derived attribute whose triggers are missing or different.
    static func plannedRecompute(_ model: DeclaredModel, _ db: Database) throws -> [String: Int] {
        var planned: [String: Int] = [:]
        for derived in model.derivedAttributes {
            guard try !db.triggersAreCurrent(SQLBuilder.derivedAttributeTriggers(derived)), try db.tableExists(derived.parent)
            else { continue }
            planned[progressKey(derived)] = try Int.fetchOne(db, sql: SQLBuilder.countRows(derived.parent)) ?? 0
        }
        return planned
    }

    private static func progressKey(_ derived: DeclaredDerived) -> String { "derived:\(derived.parent).\(derived.column)" }

    /// Computes `derived` anew for every row: in one statement, or 1,000 rows at a time by
    /// rowid when `progress` counts them.
    private static func recompute(_ derived: DeclaredDerived, _ db: Database, progress: RowProgress?) throws {
        guard let progress else {
            try db.execute(sql: SQLBuilder.recomputeDerived(derived))
            return
        }
        try progress.include(progressKey(derived)) {
            try Int.fetchOne(db, sql: SQLBuilder.countRows(derived.parent)) ?? 0
        }
        let ids = try Int64.fetchAll(db, sql: SQLBuilder.allRowIDs(table: derived.parent))
        var start = 0
        while start < ids.count {
            let end = min(ids.count, start + 1_000)
            try db.execute(
                sql: SQLBuilder.recomputeDerived(derived, rowIDsBetween: true), arguments: [ids[start], ids[end - 1]])
            progress.advance(by: end - start)
            start = end
        }
    }

    /// Drops every derived attribute's trigger on `tables` (file names), before a migration
    /// changes them; ``install(_:_:)`` makes the declared ones again after it.
    static func drop(on tables: Set<String>, _ model: DeclaredModel, _ db: Database) throws {
        let prefix = SQLBuilder.derivedAttributeTriggerPrefix
        for name in try DeleteRuleTriggers.existing(prefix: prefix, on: tables, model: model, db) {
            try db.execute(sql: SQLBuilder.dropTrigger(name))
        }
    }
}
