import Foundation
import GRDB

/// Every error Folio throws. Match on the case to react; the description names the problem.
public enum FolioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's tables differ from the record types' entities. `differences` lists each one.
    case schemaMismatch(entity: String, differences: [String])
    /// An entity declaration cannot become a table (bad identifier, duplicate column…).
    case invalidSchema(entity: String, reason: String)
    /// The file exists but is not an SQLite database (or is encrypted).
    case notADatabase(path: String)
    /// A part of a `#Predicate` that Folio cannot translate to SQL, named.
    case unsupportedPredicate(expression: String, reason: String)
    /// A key path that is not an attribute of the entity.
    case unknownKeyPath(entity: String, keyPath: String)
    /// A fetch request without a sort descriptor where one is required.
    case missingSortDescriptor(entity: String)
    /// A sort descriptor Folio cannot translate (no key path).
    case unsupportedSortDescriptor(entity: String, description: String)
    /// The first sort descriptor does not order by the section key.
    case sectionKeyNotLeadingSort(sectionKey: String, firstSort: String)
    /// The section key does not follow the sort: a section would be split in two.
    case sectionsNotContiguous(String)
    /// A record that was expected in the store is not there.
    case recordNotFound(entity: String, id: RecordID?)
    /// A record type passed to a store that was not opened with it.
    case unknownEntity(String)
    /// An invalid argument, named.
    case invalidArgument(String)
    /// A persistent-cache name that is not a plain file name.
    case invalidCacheName(String, reason: String)
    /// A stored value could not be decoded into the attribute's type.
    case decoding(column: String, reason: String)
    /// The store was closed.
    case storeClosed
    /// A store method was called from inside one of the store's own `read` or `write`
    /// closures (which would deadlock or trap): use the closure's `WriteTransaction` or `Database`.
    case reentrantAccess
    /// An SQLite error: result code, message, the SQL and its arguments.
    case sqlite(code: Int32, message: String, sql: String?, arguments: String?)

    /// A sentence that names the problem.
    public var description: String {
        switch self {
        case .schemaMismatch(let entity, let differences):
            "The table '\(entity)' does not match its entity: \(differences.joined(separator: "; "))"
        case .invalidSchema(let entity, let reason):
            "The entity '\(entity)' is invalid: \(reason)"
        case .notADatabase(let path):
            "The file at \(path) is not an SQLite database"
        case .unsupportedPredicate(let expression, let reason):
            "Unsupported predicate expression \(expression): \(reason)"
        case .unknownKeyPath(let entity, let keyPath):
            "The key path \(keyPath) is not an attribute of '\(entity)'"
        case .missingSortDescriptor(let entity):
            "A fetch request on '\(entity)' needs at least one sort descriptor"
        case .unsupportedSortDescriptor(let entity, let description):
            "The sort descriptor \(description) on '\(entity)' has no key path Folio can translate"
        case .sectionKeyNotLeadingSort(let sectionKey, let firstSort):
            "The section key \(sectionKey) must be the first sort descriptor, found \(firstSort)"
        case .sectionsNotContiguous(let reason):
            "Sections are not contiguous: \(reason)"
        case .recordNotFound(let entity, let id):
            "No record \(id.map(String.init(describing:)) ?? "without id") in '\(entity)'"
        case .unknownEntity(let name):
            "The store was not opened with the record type \(name)"
        case .invalidArgument(let text):
            "Invalid argument: \(text)"
        case .invalidCacheName(let name, let reason):
            "Invalid cache name \(name.debugDescription): \(reason)"
        case .decoding(let column, let reason):
            "Cannot decode column '\(column)': \(reason)"
        case .storeClosed:
            "The store is closed"
        case .reentrantAccess:
            "A store method was called inside one of the store's own read or write closures; use the WriteTransaction or Database passed to the closure"
        case .sqlite(let code, let message, let sql, let arguments):
            "SQLite error \(code): \(message)" + (sql.map { " — \($0)" } ?? "") + (arguments.map { " \($0)" } ?? "")
        }
    }

    /// Wraps a GRDB or SQLite error; passes Folio errors and cancellation through.
    static func wrap(_ error: any Error) -> any Error {
        if error is FolioError || error is CancellationError { return error }
        if let db = error as? DatabaseError {
            if db.resultCode == .SQLITE_INTERRUPT { return CancellationError() }
            if db.resultCode == .SQLITE_MISUSE, db.message?.contains("closed") == true { return FolioError.storeClosed }
            return FolioError.sqlite(
                code: db.extendedResultCode.rawValue, message: db.message ?? "\(db.resultCode)",
                sql: db.sql, arguments: db.arguments.map { "\($0)" })
        }
        return error
    }
}

/// Runs a body and converts GRDB errors into ``FolioError``.
@inline(__always)
func folio<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch { throw FolioError.wrap(error) }
}

@inline(__always)
func folio<T>(_ body: () async throws -> T) async throws -> T {
    do { return try await body() } catch { throw FolioError.wrap(error) }
}
