import Foundation
import GRDB

/// Translates a Foundation `#Predicate` into an SQL `WHERE` fragment with bound values.
///
/// Supported: `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||`, `!`, comparisons with `nil`,
/// `??`, `+ - *`, unary minus (negative literals included), `String.contains(_:)`, `starts(with:)`, membership in a literal
/// array (`[a, b].contains($0.x)`), and Bool attributes used as conditions. Anything
/// else throws ``FolioError/unsupportedPredicate(expression:reason:)`` naming the part;
/// Folio never falls back to filtering in memory.
struct PredicateTranslator<R: PersistentRecord> {
    let entity: EntityDescription<R>

    func translate(_ predicate: Predicate<R>) throws -> SQLFragment {
        try fragment(predicate.expression)
    }

    func fragment(_ expression: Any) throws -> SQLFragment {
        try term(expression).fragment
    }

    func term(_ expression: Any) throws -> SQLTerm {
        guard let translatable = expression as? any FolioTranslatableExpression else {
            throw FolioError.unsupportedPredicate(
                expression: Self.name(of: expression), reason: "Folio has no SQL translation for it")
        }
        return try translatable.sqlTerm(self)
    }

    func column(_ keyPath: AnyKeyPath) throws -> SQLTerm {
        .column(SQLBuilder.quote(try entity.column(for: keyPath)))
    }

    /// `PredicateExpressions.OptionalFlatMap<…>` → `OptionalFlatMap`.
    static func name(of expression: Any) -> String {
        let full = String(describing: type(of: expression))
        let base = full.split(separator: "<", maxSplits: 1).first.map(String.init) ?? full
        return base.replacingOccurrences(of: "PredicateExpressions.", with: "")
    }
}

/// A translated operand.
enum SQLTerm {
    case column(String)
    case value(DatabaseValue)
    case list([DatabaseValue])
    case expression(SQLFragment)

    var isNull: Bool {
        if case .value(let v) = self { return v.isNull }
        return false
    }

    var fragment: SQLFragment {
        switch self {
        case .column(let name): SQLFragment(name)
        case .value(let v): v.isNull ? SQLFragment("NULL") : SQLBuilder.placeholder(for: v)
        case .list(let values):
            SQLFragment(
                "(" + values.map { SQLBuilder.placeholder(for: $0).sql }.joined(separator: ", ") + ")",
                values.flatMap { SQLBuilder.placeholder(for: $0).arguments })
        case .expression(let f): f
        }
    }

    static func combine(_ lhs: SQLTerm, _ op: String, _ rhs: SQLTerm) -> SQLTerm {
        let l = lhs.fragment, r = rhs.fragment
        return .expression(SQLFragment("(\(l.sql) \(op) \(r.sql))", l.arguments + r.arguments))
    }
}

protocol FolioTranslatableExpression {
    func sqlTerm<R>(_ translator: PredicateTranslator<R>) throws -> SQLTerm
}

/// Marks `PredicateExpressions.Variable`, the record a predicate is evaluated on.
protocol FolioPredicateVariable {}
extension PredicateExpressions.Variable: FolioPredicateVariable {}

extension PredicateExpressions.KeyPath: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        guard root is any FolioPredicateVariable else {
            throw FolioError.unsupportedPredicate(
                expression: "KeyPath \(keyPath)", reason: "only attributes of the record itself can be used")
        }
        return try t.column(keyPath)
    }
}

extension PredicateExpressions.Value: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        if let stored = storedValue(of: value) { return .value(stored) }
        if let sequence = value as? any Sequence {
            var values: [DatabaseValue] = []
            for element in sequence {
                guard let stored = storedValue(of: element) else {
                    throw FolioError.unsupportedPredicate(
                        expression: "Value \(type(of: value))", reason: "its elements are not storable values")
                }
                values.append(stored)
            }
            return .list(values)
        }
        throw FolioError.unsupportedPredicate(
            expression: "Value of type \(type(of: value))", reason: "it is not a storable value")
    }
}

extension PredicateExpressions.NilLiteral: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm { .value(.null) }
}

extension PredicateExpressions.Equal: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        let l = try t.term(lhs), r = try t.term(rhs)
        if l.isNull { return .expression(SQLFragment("(\(r.fragment.sql) IS NULL)", r.fragment.arguments)) }
        if r.isNull { return .expression(SQLFragment("(\(l.fragment.sql) IS NULL)", l.fragment.arguments)) }
        if case .value = r { return SQLTerm.combine(l, "=", r) }
        if case .value = l { return SQLTerm.combine(l, "=", r) }
        return SQLTerm.combine(l, "IS", r)  // NULL == NULL, as in Swift
    }
}

extension PredicateExpressions.NotEqual: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        SQLTerm.combine(try t.term(lhs), "IS NOT", try t.term(rhs))  // nil != "a" is true, as in Swift
    }
}

extension PredicateExpressions.Comparison: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        let op: String
        switch self.op {
        case .lessThan: op = "<"
        case .lessThanOrEqual: op = "<="
        case .greaterThan: op = ">"
        case .greaterThanOrEqual: op = ">="
        @unknown default:
            throw FolioError.unsupportedPredicate(expression: "Comparison \(self.op)", reason: "unknown operator")
        }
        return SQLTerm.combine(try t.term(lhs), op, try t.term(rhs))
    }
}

extension PredicateExpressions.Conjunction: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        SQLTerm.combine(try t.term(lhs), "AND", try t.term(rhs))
    }
}

extension PredicateExpressions.Disjunction: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        SQLTerm.combine(try t.term(lhs), "OR", try t.term(rhs))
    }
}

extension PredicateExpressions.Negation: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        // A comparison with NULL (a nil optional, or NaN, which SQLite stores as NULL) is
        // NULL in SQL and false in Swift; NOT NULL would stay NULL, so count it as false first.
        let inner = try t.term(wrapped).fragment
        return .expression(SQLFragment("(NOT coalesce(\(inner.sql), 0))", inner.arguments))
    }
}

extension PredicateExpressions.NilCoalesce: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        let l = try t.term(lhs).fragment, r = try t.term(rhs).fragment
        return .expression(SQLFragment("coalesce(\(l.sql), \(r.sql))", l.arguments + r.arguments))
    }
}

extension PredicateExpressions.ForcedUnwrap: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm { try t.term(inner) }
}

extension PredicateExpressions.Arithmetic: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        let op: String
        switch self.op {
        case .add: op = "+"
        case .subtract: op = "-"
        case .multiply: op = "*"
        @unknown default:
            throw FolioError.unsupportedPredicate(expression: "Arithmetic \(self.op)", reason: "unknown operator")
        }
        return SQLTerm.combine(try t.term(lhs), op, try t.term(rhs))
    }
}

extension PredicateExpressions.UnaryMinus: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        let inner = try t.term(wrapped)
        // A negative literal (`-1` is unary minus on 1) becomes a negative bound value.
        if case .value(let value) = inner {
            switch value.storage {
            case .int64(let v) where v != .min: return .value((-v).databaseValue)
            case .double(let v): return .value((-v).databaseValue)
            default: break
            }
        }
        // The space keeps `- -x` from reading as an SQL comment (`--`).
        let f = inner.fragment
        return .expression(SQLFragment("(- \(f.sql))", f.arguments))
    }
}

extension PredicateExpressions.CollectionContainsCollection: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        guard Base.Output.self == String.self || Base.Output.self == Substring.self else {
            throw FolioError.unsupportedPredicate(
                expression: "CollectionContainsCollection on \(Base.Output.self)", reason: "only String.contains(_:) is supported"
            )
        }
        let base = try t.term(self.base).fragment, other = try t.term(self.other).fragment
        // instr is exact and case-sensitive, like Swift's contains; LIKE would not be.
        return .expression(SQLFragment("(instr(\(base.sql), \(other.sql)) > 0)", base.arguments + other.arguments))
    }
}

extension PredicateExpressions.SequenceStartsWith: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        guard Base.Output.self == String.self else {
            throw FolioError.unsupportedPredicate(
                expression: "SequenceStartsWith on \(Base.Output.self)", reason: "only String.starts(with:) is supported")
        }
        // The first occurrence is at 1 exactly when base starts with prefix. Unlike
        // substr/length, instr compares every byte (length stops at a NUL).
        let base = try t.term(self.base).fragment, prefix = try t.term(self.prefix).fragment
        return .expression(SQLFragment("(instr(\(base.sql), \(prefix.sql)) = 1)", base.arguments + prefix.arguments))
    }
}

extension PredicateExpressions.SequenceContains: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        let sequence = try t.term(self.sequence)
        guard case .list(let values) = sequence else {
            throw FolioError.unsupportedPredicate(
                expression: "SequenceContains",
                reason: "only membership in a literal array, like [a, b].contains($0.x), is supported")
        }
        let element = try t.term(self.element).fragment
        // `x IN (…, NULL)` is never true for a NULL x, while Swift finds nil in [a, nil].
        let nonNull = values.filter { !$0.isNull }
        let isNull = SQLFragment("(\(element.sql) IS NULL)", element.arguments)
        if values.isEmpty { return .expression(SQLFragment("(0)")) }
        if nonNull.isEmpty { return .expression(isNull) }
        let list = SQLTerm.list(nonNull).fragment
        let membership = SQLFragment("(\(element.sql) IN \(list.sql))", element.arguments + list.arguments)
        if nonNull.count == values.count { return .expression(membership) }
        return .expression(SQLFragment("(\(membership.sql) OR \(isNull.sql))", membership.arguments + isNull.arguments))
    }
}
