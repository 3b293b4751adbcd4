import Foundation
import GRDB

// Attributes stored as JSON text (a `Codable` value, `AttributeType.json`) in predicates.
// Equal values of a type store equal text, so `==`, `!=` and membership in a literal array
// compare the text; nothing else can (JSON text orders as text, not as the values). Only
// the operators that test equality look for them here; every other operator meets the
// attribute through `PredicateTranslator.column(_:)`, which refuses it by name.

extension PredicateTranslator {
    /// The attribute stored as JSON that `expression` names (`$0.size`), if it names one of
    /// the record's own.
    func encodedAttribute(_ expression: Any) -> AttributeDescription<R>? {
        guard let keyPath = (expression as? any FolioKeyPathExpression)?.attributeKeyPath,
            let attribute = entity.attribute(for: keyPath), attribute.type == .json
        else { return nil }
        return attribute
    }

    /// The operands of `==` or `!=` when one of them is an attribute stored as JSON: its
    /// column, and the other's column, JSON text or `NULL`; `nil` when neither is one.
    func encodedOperands(_ lhs: Any, _ rhs: Any) throws -> (SQLTerm, SQLTerm)? {
        guard encodedAttribute(lhs) != nil || encodedAttribute(rhs) != nil else { return nil }
        return (try encodedOperand(lhs), try encodedOperand(rhs))
    }

    /// The values of `[a, b].contains($0.size)` as JSON text, when `element` is an attribute
    /// stored as JSON; `nil` otherwise.
    func encodedList(_ sequence: Any, element: Any) throws -> SQLTerm? {
        guard encodedAttribute(element) != nil else { return nil }
        guard let value = (sequence as? any FolioValueExpression)?.anyValue, let elements = value as? any Sequence else {
            throw FolioError.unsupportedPredicate(
                expression: "SequenceContains",
                reason: "only membership in a literal array, like [a, b].contains($0.x), is supported")
        }
        var values: [DatabaseValue] = []
        for element in elements { values.append(try json(element)) }
        return .list(values)
    }

    /// The element of `[a, b].contains($0.size)`: the column when it is an attribute stored
    /// as JSON, its ordinary term otherwise.
    func containedElement(_ element: Any) throws -> SQLTerm {
        if let attribute = encodedAttribute(element) { return .column((triggerRow ?? "") + SQLBuilder.quote(attribute.column)) }
        return try term(element)
    }

    /// The operands of an ordering (`<`, `>`…), folded as ``foldingValues(_:_:)`` folds them.
    /// An attribute stored as JSON is refused by name before either is translated: the other
    /// operand, a value of the attribute's type, has no stored form of its own to report.
    func orderedOperands(_ lhs: Any, _ rhs: Any) throws -> (SQLTerm, SQLTerm) {
        for operand in [lhs, rhs] {
            if let attribute = encodedAttribute(operand) {
                throw Self.notQueryable(attribute.column, of: entity.name, keyPath: attribute.keyPath)
            }
        }
        return Self.foldingValues(try term(lhs), try term(rhs))
    }

    private func encodedOperand(_ expression: Any) throws -> SQLTerm {
        if let attribute = encodedAttribute(expression) {
            return .column((triggerRow ?? "") + SQLBuilder.quote(attribute.column))
        }
        if expression is any FolioNilLiteral { return .value(.null) }
        if let value = (expression as? any FolioValueExpression)?.anyValue { return .value(try json(value)) }
        throw FolioError.unsupportedPredicate(
            expression: Self.name(of: expression),
            reason:
                "an attribute stored as JSON (a Codable value) can be compared only with a value, nil, or another such attribute")
    }

    private func json(_ value: Any) throws -> DatabaseValue {
        do {
            return try JSONText.predicateValue(value)
        } catch let unstorable as UnstorableValue {
            throw FolioError.unsupportedPredicate(expression: "Value of type \(type(of: value))", reason: unstorable.reason)
        }
    }

    /// The error for an attribute stored as JSON met anywhere but in an equality: in an
    /// ordering, arithmetic or text operator, as a condition, or through a to-one.
    static func notQueryable(_ column: String, of entity: String, keyPath: AnyKeyPath, through reference: String? = nil)
        -> FolioError
    {
        let what =
            reference.map { "'\(column)' of '\(entity)', read through the to-one '\($0)'," } ?? "'\(column)' of '\(entity)'"
        return .unsupportedPredicate(
            expression: "KeyPath \(keyPath)",
            reason:
                "\(what) is a Codable value stored as JSON text: a predicate can only test the record's own such attribute with == or != (against a value, nil or another such attribute) or membership in a literal array; JSON text does not order, add or search as the values do"
        )
    }
}

/// A `PredicateExpressions.Value`, seen without its type.
protocol FolioValueExpression {
    var anyValue: Any { get }
}

extension PredicateExpressions.Value: FolioValueExpression {
    var anyValue: Any { value }
}

/// `PredicateExpressions.NilLiteral`, seen without its type.
protocol FolioNilLiteral {}
extension PredicateExpressions.NilLiteral: FolioNilLiteral {}
