import Foundation
import GRDB
import Logging

/// What a store has done, for tests and for the curious: the counterpart of Core Data's
/// `-com.apple.CoreData.SQLDebug`.
///
/// Switch the SQL log on without code with the environment variable `FOLIO_SQL_DEBUG=1`
/// (statements to standard error; `2` adds bound values), or with ``logSQL(expanded:_:)`` /
/// ``logSQL(to:expanded:)``.
public final class Diagnostics: Sendable {
    /// Counters since the store opened or since ``resetCounters()``.
    public struct Counters: Sendable, Equatable, CustomStringConvertible {
        /// SQL statements stepped, on every connection, GRDB's own included.
        public var statements = 0
        /// Queries that read the identifiers of a fetch request's results in order.
        public var identifierScans = 0
        /// Batches of records loaded by ``FetchedRecords``.
        public var batchesLoaded = 0
        /// Records decoded from rows.
        public var recordsMaterialized = 0
        /// Change sets computed for controllers.
        public var changeSets = 0

        /// The counters as one line of text.
        public var description: String {
            "statements \(statements), identifier scans \(identifierScans), batches \(batchesLoaded), records \(recordsMaterialized)"
        }
    }

    private struct State {
        var counters = Counters()
        var sink: (@Sendable (String) -> Void)?
        var expanded = false
    }

    private let state: Locked<State>

    init() {
        var initial = State()
        let level = ProcessInfo.processInfo.environment["FOLIO_SQL_DEBUG"].flatMap(Int.init) ?? 0
        if level > 0 {
            initial.sink = { line in FileHandle.standardError.write(Data("FOLIO SQL: \(line)\n".utf8)) }
            initial.expanded = level > 1
        }
        state = Locked(initial)
    }

    /// The counters now.
    public var counters: Counters { state.withLock { $0.counters } }

    /// Sets every counter to zero.
    public func resetCounters() { state.withLock { $0.counters = Counters() } }

    /// Sends each SQL statement to `sink` (nil switches the log off).
    /// - Parameters:
    ///   - expanded: include bound values in the text.
    ///   - sink: called with each statement's text, on the thread that runs it.
    public func logSQL(expanded: Bool = false, _ sink: (@Sendable (String) -> Void)?) {
        state.withLock {
            $0.sink = sink; $0.expanded = expanded
        }
    }

    /// Sends each SQL statement to a swift-log `Logger` at debug level.
    public func logSQL(to logger: Logger, expanded: Bool = false) {
        logSQL(expanded: expanded) { line in logger.debug("\(line)") }
    }

    func statement(_ event: Database.TraceEvent) {
        guard case .statement(let statement) = event else { return }
        let (sink, expanded) = state.withLock { s -> ((@Sendable (String) -> Void)?, Bool) in
            s.counters.statements += 1
            return (s.sink, s.expanded)
        }
        if let sink { sink(expanded ? statement.expandedSQL : statement.sql) }
    }

    func count(_ update: (inout Counters) -> Void) { state.withLock { update(&$0.counters) } }
}
