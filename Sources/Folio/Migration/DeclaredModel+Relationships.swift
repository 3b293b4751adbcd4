import Foundation
import GRDB

/// An inverse to-many as a ``StoreModel`` declares it: where its records are (the child's
/// table, and its to-one's reference column, `nil` when the inverse key path is no declared
/// to-one of the child), and its delete rule.
struct DeclaredToMany: Sendable {
    var child: String
    var column: String?
    /// The inverse key path, for messages.
    var inverse: String
    var rule: DeleteRule
}

/// The delete rule of one to-one, `child.column`, which points to `parent`: its inverse
/// to-many's rule, or ``DeleteRule/nullify`` when the target declares no inverse (as Core
/// Data's default). Kept in the file by ``SQLBuilder/deleteRuleTrigger(parent:child:column:rule:)``.
struct DeclaredDeleteRule: Sendable, Hashable {
    var parent: String
    var child: String
    var column: String
    var rule: DeleteRule
    /// For a cascade within one entity (a tree: `parent == child`), every to-one of the
    /// entity that cascades to it: the trigger deletes the whole subtree they reach at once.
    var treeColumns: [String] = []

    /// The trigger that keeps the rule; `nil` for ``DeleteRule/noAction``.
    var trigger: (name: String, sql: String)? {
        SQLBuilder.deleteRuleTrigger(parent: parent, child: child, column: column, rule: rule, treeColumns: treeColumns)
    }
}

extension DeclaredModel {
    /// Checks the model's relationships and returns the delete rule of each to-one, sorted.
    ///
    /// Refused, with ``FolioError/invalidSchema(entity:reason:)``: a to-one whose target
    /// the model does not declare; a to-many whose child the model does not declare, whose
    /// inverse is no declared to-one of the child, or is one that points to another entity;
    /// two to-manys with one inverse; and a cycle of cascades through other entities that
    /// reaches the entity it starts from. SQLite runs a trigger within itself only with
    /// `PRAGMA recursive_triggers`, which the `sqlite3` shell and other programs do not set:
    /// the rows such a cycle reaches again would be left pointing to deleted records. A
    /// cascade within one entity (a tree: a folder's subfolders) is kept: its trigger deletes
    /// the whole subtree at once, with a recursive common table expression.
    static func deleteRules(_ entities: [String: DeclaredEntity]) throws -> [DeclaredDeleteRule] {
        var rules: [String: DeclaredDeleteRule] = [:]  // by "child.column", lowercased
        var inverses: [String: String] = [:]
        for entity in entities.values.sorted(by: { $0.name < $1.name }) {
            for column in entity.schema.columns {
                guard let target = column.references else { continue }
                guard entities[target] != nil else {
                    throw FolioError.invalidSchema(
                        entity: entity.name,
                        reason:
                            "the to-one '\(column.name)' points to the entity '\(target)', which the store's model does not declare; add its record type to the model"
                    )
                }
                rules["\(entity.name).\(column.name)".lowercased()] = DeclaredDeleteRule(
                    parent: target, child: entity.name, column: column.name, rule: .nullify)
            }
        }
        for parent in entities.values.sorted(by: { $0.name < $1.name }) {
            for toMany in parent.toManys {
                let what = "the to-many whose inverse is \(toMany.inverse)"
                guard let child = entities[toMany.child] else {
                    throw FolioError.invalidSchema(
                        entity: parent.name,
                        reason:
                            "\(what) lists the records of '\(toMany.child)', which the store's model does not declare; add its record type to the model"
                    )
                }
                guard let column = toMany.column, let reference = child.schema.columns.first(where: { $0.name == column }),
                    let target = reference.references
                else {
                    throw FolioError.invalidSchema(
                        entity: parent.name,
                        reason:
                            "the inverse \(toMany.inverse) of a to-many is not a to-one of '\(child.name)'; declare it in its relationships with .toOne"
                    )
                }
                guard target == parent.name else {
                    throw FolioError.invalidSchema(
                        entity: parent.name,
                        reason:
                            "the inverse '\(child.name).\(column)' of a to-many points to '\(target)', not to '\(parent.name)'")
                }
                let key = "\(child.name).\(column)".lowercased()
                if let other = inverses.updateValue(parent.name, forKey: key) {
                    throw FolioError.invalidSchema(
                        entity: parent.name,
                        reason:
                            "two to-manys\(other == parent.name ? "" : " (of '\(other)' too)") declare the inverse '\(child.name).\(column)'; declare one"
                    )
                }
                rules[key]?.rule = toMany.rule
            }
        }
        // A tree: each cascade of an entity to itself deletes the subtree every such to-one reaches.
        var treeColumns: [String: [String]] = [:]
        for rule in rules.values where rule.rule == .cascade && rule.parent == rule.child {
            treeColumns[rule.parent, default: []].append(rule.column)
        }
        for key in rules.keys {
            guard let rule = rules[key], rule.rule == .cascade, rule.parent == rule.child else { continue }
            rules[key]?.treeColumns = treeColumns[rule.parent, default: []].sorted()
        }
        let sorted = rules.values.sorted { ($0.parent, $0.child, $0.column) < ($1.parent, $1.child, $1.column) }
        try checkNoCascadeCycle(sorted)
        return sorted
    }

    /// Refuses cascades that reach, through other entities, the entity they start from
    /// (see ``deleteRules(_:)``).
    private static func checkNoCascadeCycle(_ rules: [DeclaredDeleteRule]) throws {
        var edges: [String: [DeclaredDeleteRule]] = [:]
        // A cascade within one entity is a tree, kept by one trigger (``DeclaredDeleteRule/treeColumns``).
        for rule in rules where rule.rule == .cascade && rule.parent != rule.child {
            edges[rule.parent, default: []].append(rule)
        }
        for start in edges.keys.sorted() {
            // Depth-first from `start`, the path of rules kept to name the cycle.
            var stack: [(entity: String, path: [DeclaredDeleteRule])] = [(start, [])]
            var seen: Set<String> = []
            while let (entity, path) = stack.popLast() {
                for rule in edges[entity] ?? [] {
                    if rule.child == start {
                        let cycle = (path + [rule]).map { "'\($0.parent)' → '\($0.child).\($0.column)'" }
                        throw FolioError.invalidSchema(
                            entity: start,
                            reason:
                                "its delete rules cascade back to it (\(cycle.joined(separator: ", "))), which SQLite cannot keep for every program (it runs a trigger within itself only with PRAGMA recursive_triggers, which the sqlite3 shell and other programs do not set); make one of them nullify or deny"
                        )
                    }
                    if seen.insert(rule.child).inserted { stack.append((rule.child, path + [rule])) }
                }
            }
        }
    }
}
