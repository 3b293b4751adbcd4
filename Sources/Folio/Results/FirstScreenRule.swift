import Foundation
import GRDBSQLite

/// When an identifier scan may stop and show what it has read as a first screen, while the
/// rest of the results is read in the background.
///
/// A scan stops only once it has read more than ``rows`` rows (so a list of exactly that
/// many is read to its end) **and** run ``steps`` SQLite virtual
/// machine steps **and** ``nanoseconds`` of time. The steps make small lists complete
/// deterministically, whatever the load on the machine: a scan that ends within them is
/// never cut, so lists of a few thousand rows behave as if there were no first screen. The
/// time keeps the first screen within its budget on any plan: a filtered scan that looks up
/// every row in the table costs ten times the time per step of a scan of an index alone.
struct FirstScreenRule: Sendable, Equatable {
    /// The rows a first screen has at least (a screen, or the request's batch).
    var rows: Int
    /// SQLite virtual-machine steps (`SQLITE_STMTSTATUS_VM_STEP`) before any stop.
    var steps: Int32
    /// Time since the scan started before any stop.
    var nanoseconds: UInt64

    /// The rule a controller fetches with: at least `rows` rows (and 50), 20,000 steps (about
    /// 3,000 rows looked at) and 4 ms.
    static func automatic(rows: Int) -> FirstScreenRule {
        FirstScreenRule(rows: Swift.max(rows, 50), steps: 20_000, nanoseconds: 4_000_000)
    }

    /// Stops as soon as more than `rows` rows are read (tests: a list is incomplete whatever
    /// its size).
    static func immediately(rows: Int) -> FirstScreenRule {
        FirstScreenRule(rows: Swift.max(rows, 1), steps: 0, nanoseconds: 0)
    }

    /// Checks the rule as rows are stepped: the step count first (one field read), the
    /// clock only past it.
    struct Clock {
        let rule: FirstScreenRule
        let start = DispatchTime.now().uptimeNanoseconds

        init(_ rule: FirstScreenRule) { self.rule = rule }

        @inline(__always)
        func isDue(rows: Int, _ sqlite: OpaquePointer) -> Bool {
            guard rows > rule.rows, sqlite3_stmt_status(sqlite, SQLITE_STMTSTATUS_VM_STEP, 0) >= rule.steps else {
                return false
            }
            return rule.nanoseconds == 0 || DispatchTime.now().uptimeNanoseconds - start >= rule.nanoseconds
        }
    }
}
