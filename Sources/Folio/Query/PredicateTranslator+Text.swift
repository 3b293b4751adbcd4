import Foundation
import GRDB

// The text operators of `#Predicate`, one extension each: `contains`, `starts(with:)`, and
// on Apple platforms `localizedStandardContains`.

extension PredicateExpressions.CollectionContainsCollection: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        guard Base.Output.self == String.self || Base.Output.self == Substring.self else {
            throw FolioError.unsupportedPredicate(
                expression: "CollectionContainsCollection on \(Base.Output.self)", reason: "only String.contains(_:) is supported"
            )
        }
        let (baseTerm, otherTerm) = PredicateTranslator<R>.foldingValues(try t.term(self.base), try t.term(self.other))
        return .expression(SQLTerm.contains(baseTerm, otherTerm))
    }
}

extension SQLTerm {
    /// `base` contains `other`: instr is exact and case-sensitive, like Swift's contains
    /// (LIKE would not be); on folded text both sides are folded, which makes it `[cd]`.
    static func contains(_ base: SQLTerm, _ other: SQLTerm) -> SQLFragment {
        let base = base.fragment, other = other.fragment
        return SQLFragment("(instr(\(base.sql), \(other.sql)) > 0)", base.arguments + other.arguments)
    }

    /// Folded text that starts with `prefix`, as a range of the folded key — `key >= prefix
    /// AND key < next`, where `next` is the prefix with its last byte raised, the first
    /// text of bytes after every text that starts with it — so that the key's index serves.
    static func foldedStartsWith(_ key: SQLFragment, prefix: String) -> SQLFragment {
        var upper = Array(prefix.utf8)
        while upper.last == 0xFF { upper.removeLast() }
        let low = SQLBuilder.textPlaceholder(bytes: Array(prefix.utf8))
        guard let last = upper.popLast() else {
            // The empty prefix: every text (and no NULL).
            return SQLFragment("(\(key.sql) >= \(low.sql))", key.arguments + low.arguments)
        }
        let high = SQLBuilder.textPlaceholder(bytes: upper + [last + 1])
        return SQLFragment(
            "(\(key.sql) >= \(low.sql) AND \(key.sql) < \(high.sql))",
            key.arguments + low.arguments + key.arguments + high.arguments)
    }
}

extension PredicateExpressions.SequenceStartsWith: FolioTranslatableExpression {
    func sqlTerm<R>(_ t: PredicateTranslator<R>) throws -> SQLTerm {
        guard Base.Output.self == String.self else {
            throw FolioError.unsupportedPredicate(
                expression: "SequenceStartsWith on \(Base.Output.self)", reason: "only String.starts(with:) is supported")
        }
        let (baseTerm, prefixTerm) = PredicateTranslator<R>.foldingValues(try t.term(self.base), try t.term(self.prefix))
        if case .folded(let key) = baseTerm, case .value(let value) = prefixTerm, case .string(let text) = value.storage {
            return .expression(SQLTerm.foldedStartsWith(key, prefix: text))
        }
        // The first occurrence is at 1 exactly when base starts with prefix. Unlike
        // substr/length, instr compares every byte (length stops at a NUL).
        let base = baseTerm.fragment, prefix = prefixTerm.fragment
        return .expression(SQLFragment("(instr(\(base.sql), \(prefix.sql)) = 1)", base.arguments + prefix.arguments))
    }
}

#if canImport(Darwin)
/// `localizedStandardContains` (SwiftData's search predicate) on a folded attribute is its
/// folded `contains`, Core Data's `CONTAINS[cd]`. Untested: Apple's Foundation has this
/// expression and Linux's does not, so this is compiled on Apple platforms only.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.StringLocalizedStandardContains: FolioTranslatableExpression {
    func sqlTerm<T>(_ t: PredicateTranslator<T>) throws -> SQLTerm {
        guard let keyPath = (root as? any FolioKeyPathExpression)?.attributeKeyPath else {
            throw FolioError.unsupportedPredicate(
                expression: "StringLocalizedStandardContains", reason: "only on an attribute of the record itself")
        }
        let key = try t.foldedKey(ofAttributeAt: keyPath)
        return .expression(SQLTerm.contains(key, try t.term(other).foldedValue))
    }
}
#endif
