import Foundation
import GRDB

/// A piece of SQL and the values bound to its `?` placeholders, in order.
struct SQLFragment: Sendable, Hashable {
    var sql: String
    var arguments: [DatabaseValue]

    init(_ sql: String, _ arguments: [DatabaseValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    var statementArguments: StatementArguments { StatementArguments(arguments) }

    /// A stable text for the fragment and its values (cache fingerprints).
    var fingerprint: String {
        sql + " <- [" + arguments.map { "\($0)" }.joined(separator: ", ") + "]"
    }
}
