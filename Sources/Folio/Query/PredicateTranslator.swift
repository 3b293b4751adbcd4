import Foundation
import GRDB

/// Translates a Foundation `#Predicate` into an SQL `WHERE` fragment with bound values.
///
/// Supported: `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||`, `!`, comparisons with `nil`,
/// `??`, `+ - *`, unary minus (negative literals included), `String.contains(_:)`, `starts(with:)`, membership in a literal
/// array (`[a, b].contains($0.x)`), and Bool attributes used as conditions. Anything
/// else throws ``FolioError/unsupportedPredicate(expression:reason:)`` naming the part;
/// Folio never falls back to filtering in memory.
///
/// `$0.title.folded` reads the folded key Folio keeps for a folded attribute (see
/// ``TextFolding``); a value it is compared with, searched in or for, is folded too, as Core
/// Data's `[cd]` folds both sides. On Apple platforms `localizedStandardContains` on a folded
/// attribute is its folded `contains`.
struct PredicateTranslator<R: PersistentRecord> {
    let entity: EntityDescription<R>
    /// The tables the predicate reads through to-ones, as it is translated.
    let related = RelatedTables()
    /// What each column is qualified with, and what the predicate is for: `nil` for a
    /// query's `WHERE`, or the row a trigger reads (`NEW.`, `OLD.`, `"item".`) for the
    /// filter of a derived attribute (``Derivation``), which reads only the child's own
    /// stored attributes.
    var triggerRow: String? = nil

    init(entity: EntityDescription<R>, triggerRow: String? = nil) {
        self.entity = entity
        self.triggerRow = triggerRow
    }

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
        if let attribute = entity.attribute(for: keyPath), attribute.type == .json {
            throw Self.notQueryable(attribute.column, of: entity.name, keyPath: keyPath)
        }
        let column = try entity.column(for: keyPath)
        if let triggerRow {
            if let attribute = entity.attribute(for: keyPath), attribute.derivation != nil {
                throw FolioError.unsupportedPredicate(
                    expression: "\(entity.name).\(column)",
                    reason: "the filter of a derived attribute cannot read another derived attribute")
            }
            if ColumnSchema.isFoldedKeyColumn(column) { throw Self.notInDerivedFilter("folded text", of: entity.name) }
            return .column(triggerRow + SQLBuilder.quote(column))
        }
        return .column(SQLBuilder.quote(column))
    }

    /// The error for what a derived attribute's filter cannot read: SQLite triggers keep
    /// the value, and they read only the child's own stored attributes.
    static func notInDerivedFilter(_ what: String, of entity: String) -> FolioError {
        FolioError.unsupportedPredicate(
            expression: what,
            reason:
                "the filter of a derived attribute reads only the stored attributes of '\(entity)' itself (SQLite triggers keep its value), not \(what)"
        )
    }

    /// The target's attribute `member` through the to-one at `reference` (`$0.source.name`),
    /// or the reference column itself for the target's identifier (`$0.source.id`).
    func related(reference: AnyKeyPath, member: AnyKeyPath) throws -> SQLTerm? {
        guard let attribute = entity.attribute(for: reference), attribute.reference != nil else { return nil }
        if member.isToOneIdentifier { return .column((triggerRow ?? "") + SQLBuilder.quote(attribute.column)) }
        if triggerRow != nil { throw Self.notInDerivedFilter("an attribute of the to-one's target", of: entity.name) }
        guard let key = entity.relatedKey(reference: reference, member: member) else { return nil }
        if key.type == .json {
            throw Self.notQueryable(key.targetColumn, of: key.targetTable, keyPath: member, through: attribute.column)
        }
        related.tables.append(RelatedTable(table: key.targetTable, column: key.referenceColumn))
        return .expression(SQLFragment(SQLBuilder.relatedValue(key, table: entity.name)))
    }

    /// The folded key of the target's attribute `member` through the to-one at `reference`
    /// (`$0.source.name.folded`).
    func relatedFoldedKey(reference: AnyKeyPath, member: AnyKeyPath) throws -> SQLTerm? {
        if triggerRow != nil { throw Self.notInDerivedFilter("an attribute of the to-one's target", of: entity.name) }
        guard let base = entity.attribute(for: reference)?.keyPath as AnyKeyPath?,
            let path = base.appending(path: member)?.appending(path: \String?.folded),
            let key = try entity.relatedKey(for: path)
        else { return nil }
        related.tables.append(RelatedTable(table: key.targetTable, column: key.referenceColumn))
        return .folded(SQLFragment(SQLBuilder.relatedValue(key, table: entity.name)))
    }

    /// The folded key of the attribute at `keyPath` (`\Root.title`).
    func foldedKey(ofAttributeAt keyPath: AnyKeyPath) throws -> SQLTerm {
        if triggerRow != nil { throw Self.notInDerivedFilter("folded text", of: entity.name) }
        return .folded(SQLFragment(SQLBuilder.quote(try entity.foldedKeyColumn(forAttributeAt: keyPath))))
    }

    /// The two operands, with a value (or literal list) compared to folded text folded too.
    static func foldingValues(_ lhs: SQLTerm, _ rhs: SQLTerm) -> (SQLTerm, SQLTerm) {
        switch (lhs, rhs) {
        case (.folded, _): (lhs, rhs.foldedValue)
        case (_, .folded): (lhs.foldedValue, rhs)
        default: (lhs, rhs)
        }
    }

    /// `PredicateExpressions.OptionalFlatMap<…>` → `OptionalFlatMap`.
    static func name(of expression: Any) -> String {
        let full = String(describing: type(of: expression))
        let base = full.split(separator: "<", maxSplits: 1).first.map(String.init) ?? full
        return base.replacingOccurrences(of: "PredicateExpressions.", with: "")
    }
}

/// The tables a translation reads through to-ones (a reference: the translator is a value).
final class RelatedTables {
    var tables: [RelatedTable] = []
}

extension AnyKeyPath {
    /// Whether this is `\ToOne<Target>.id`, for any target.
    var isToOneIdentifier: Bool { (self as? any ToOneIdentifierKeyPath) != nil }
}

/// `\ToOne<Target>.id`, seen without its target type.
protocol ToOneIdentifierKeyPath {}
extension KeyPath: ToOneIdentifierKeyPath where Root: ToOneProtocol, Value == RecordID? {}

/// A translated operand.
enum SQLTerm {
    case column(String)
    case value(DatabaseValue)
    case list([DatabaseValue])
    case expression(SQLFragment)
    /// Folded text: a folded key (`$0.title.folded`), or an expression of one (`?? ""`).
    case folded(SQLFragment)

    var isNull: Bool {
        if case .value(let v) = self { return v.isNull }
        return false
    }

    /// The values of a list, none otherwise.
    var listValues: [DatabaseValue] {
        if case .list(let values) = self { return values }
        return []
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
        case .folded(let f): f
        }
    }

    /// A value, or every value of a list, folded (``TextFolding``); anything else as it is.
    var foldedValue: SQLTerm {
        func fold(_ value: DatabaseValue) -> DatabaseValue {
            if case .string(let text) = value.storage { return TextFolding.fold(text).databaseValue }
            return value
        }
        switch self {
        case .value(let value): return .value(fold(value))
        case .list(let values): return .list(values.map(fold))
        default: return self
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

/// A key path expression, seen without its generic types.
protocol FolioKeyPathExpression {
    /// The key path when it is applied to the record itself (`$0.title`), `nil` otherwise.
    var attributeKeyPath: AnyKeyPath? { get }
    /// A member of an attribute of the record (`$0.source.name`): the attribute's key path
    /// and the member's; `nil` otherwise.
    var memberPath: (reference: AnyKeyPath, member: AnyKeyPath)? { get }
}

extension PredicateExpressions.KeyPath: FolioKeyPathExpression {
    var attributeKeyPath: AnyKeyPath? { root is any FolioPredicateVariable ? keyPath : nil }
    var memberPath: (reference: AnyKeyPath, member: AnyKeyPath)? {
        guard let reference = (root as? any FolioKeyPathExpression)?.attributeKeyPath else { return nil }
        return (reference, keyPath)
    }
}

extension PredicateExpressions.KeyPath: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        if root is any FolioPredicateVariable { return try t.column(keyPath) }
        let isFolded = keyPath == \String.folded || keyPath == \String?.folded
        if let attribute = (root as? any FolioKeyPathExpression)?.attributeKeyPath {
            // `$0.title.folded`: the folded key of a folded attribute, kept in its own column.
            if isFolded { return try t.foldedKey(ofAttributeAt: attribute) }
            // `$0.source.name`, `$0.source.id`: through a to-one.
            if let term = try t.related(reference: attribute, member: keyPath) { return term }
        }
        // `$0.source.name.folded`: the folded key of the target's attribute.
        if isFolded, let path = (root as? any FolioKeyPathExpression)?.memberPath,
            let term = try t.relatedFoldedKey(reference: path.reference, member: path.member)
        {
            return term
        }
        // `$0.source.scratch`, `$0.source.scratch.folded`: no attribute of the target.
        let expression = root as? any FolioKeyPathExpression
        if let reference = expression?.attributeKeyPath,
            let error = t.entity.unknownTargetMember(keyPath, through: reference)
        {
            throw error
        }
        if isFolded, let path = expression?.memberPath,
            let error = t.entity.unknownTargetMember(path.member, through: path.reference)
        {
            throw error
        }
        throw FolioError.unsupportedPredicate(
            expression: "KeyPath \(keyPath)",
            reason:
                "only attributes of the record itself, their folded text (.folded), and attributes of a to-one's target (declared with .toOne) can be used"
        )
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
        let (l, r) = try t.encodedOperands(lhs, rhs) ?? PredicateTranslator<R>.foldingValues(try t.term(lhs), try t.term(rhs))
        if l.isNull { return .expression(SQLFragment("(\(r.fragment.sql) IS NULL)", r.fragment.arguments)) }
        if r.isNull { return .expression(SQLFragment("(\(l.fragment.sql) IS NULL)", l.fragment.arguments)) }
        if case .value = r { return SQLTerm.combine(l, "=", r) }
        if case .value = l { return SQLTerm.combine(l, "=", r) }
        return SQLTerm.combine(l, "IS", r)  // NULL == NULL, as in Swift
    }
}

extension PredicateExpressions.NotEqual: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        let (l, r) = try t.encodedOperands(lhs, rhs) ?? PredicateTranslator<R>.foldingValues(try t.term(lhs), try t.term(rhs))
        return SQLTerm.combine(l, "IS NOT", r)  // nil != "a" is true, as in Swift
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
        let (l, r) = try t.orderedOperands(lhs, rhs)
        return SQLTerm.combine(l, op, r)
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
        let (lhs, rhs) = PredicateTranslator<R>.foldingValues(try t.term(lhs), try t.term(rhs))
        let l = lhs.fragment, r = rhs.fragment
        let coalesced = SQLFragment("coalesce(\(l.sql), \(r.sql))", l.arguments + r.arguments)
        // `$0.subtitle.folded ?? ""` is folded text still: what it is compared with is folded.
        if case .folded = lhs { return .folded(coalesced) }
        return .expression(coalesced)
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

extension PredicateExpressions.SequenceContains: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        let sequence = try t.encodedList(self.sequence, element: self.element) ?? t.term(self.sequence)
        guard case .list(let listed) = sequence else {
            throw FolioError.unsupportedPredicate(
                expression: "SequenceContains",
                reason: "only membership in a literal array, like [a, b].contains($0.x), is supported")
        }
        let elementTerm = try t.containedElement(self.element)
        let values = if case .folded = elementTerm { sequence.foldedValue.listValues } else { listed }
        let element = elementTerm.fragment
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
