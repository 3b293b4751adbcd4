import Foundation
import GRDB

/// A derived attribute as the store keeps it (``Derivation``, checked): the parent's
/// column, what it aggregates, and the child's side.
struct DeclaredDerived: Sendable, Hashable {
    var parent: String
    var column: String
    var kind: Derivation.Kind
    /// The derived attribute's own type, and whether it is optional.
    var type: AttributeType
    var isOptional: Bool
    var child: DerivationChild
    /// The child's unique keys (the columns of each), whose rows a `REPLACE` deletes.
    var childUniqueKeys: [[String]]
}

/// A declared derivation that can be resolved: ``DerivedFrom``, whose filter Query translates.
protocol ResolvableDerivation {
    func resolve() throws -> DerivationChild
}

extension DerivedFrom: ResolvableDerivation {
    func resolve() throws -> DerivationChild {
        try DerivationChild(inverse: inverse, value: value, filter: filter)
    }
}

extension Derivation {
    /// The child's side, resolved (``DerivationChild``).
    func resolveChild() throws -> DerivationChild {
        guard let source = source as? any ResolvableDerivation else {
            throw DerivationProblem("its declaration cannot be read")
        }
        return try source.resolve()
    }
}

/// The child side of a ``Derivation``, resolved: the child's table, its to-one's reference
/// column and the entity it points to, the value attribute, and the filter as SQL over the
/// three rows a trigger reads (values written as literals: a trigger binds none).
struct DerivationChild: Sendable, Hashable {
    var table: String
    var reference: String
    /// The entity the to-one points to (the derived attribute's entity, once checked).
    var target: String
    var value: String?
    var valueType: AttributeType?
    /// The filter over `NEW.`, `OLD.` and the child's table's columns; `nil` without one.
    var filterNew: String?
    var filterOld: String?
    var filterRow: String?

    init<Child: PersistentRecord, Parent: PersistentRecord>(
        inverse: KeyPath<Child, ToOne<Parent>>, value: AnyKeyPath?, filter: Predicate<Child>?
    ) throws {
        let entity = Child.entity
        table = entity.name
        target = Parent.entity.name
        guard let attribute = entity.attribute(for: inverse), attribute.reference != nil else {
            throw DerivationProblem(
                "\(KeyPathName.describe(inverse, in: Child.self)) is not a to-one of '\(entity.name)'; declare it with .toOne")
        }
        reference = attribute.column
        if let value {
            guard let valueAttribute = entity.attribute(for: value), valueAttribute.reference == nil else {
                throw DerivationProblem(
                    "\(KeyPathName.describe(value, in: Child.self)) is not a stored attribute of '\(entity.name)'")
            }
            guard valueAttribute.derivation == nil else {
                throw DerivationProblem(
                    "'\(entity.name).\(valueAttribute.column)' is derived itself; a derived attribute reads stored ones")
            }
            self.value = valueAttribute.column
            valueType = valueAttribute.type
        }
        if let filter {
            func sql(_ row: String) throws -> String {
                let translator = PredicateTranslator(entity: entity, triggerRow: row)
                return try SQLBuilder.inlined(translator.translate(filter))
            }
            filterNew = try sql("NEW.")
            filterOld = try sql("OLD.")
            filterRow = try sql(SQLBuilder.quote(table) + ".")
        }
    }
}

/// Why a derivation cannot be kept, for ``FolioError/invalidSchema(entity:reason:)``.
struct DerivationProblem: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}
