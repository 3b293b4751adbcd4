import Foundation
import GRDB

/// Every error Folio throws. Match on the case to react; the description names the problem.
public enum FolioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's tables differ from the record types' entities, and the file has the same
    /// model version as the store (a higher ``StoreModel/version`` migrates it instead).
    /// `differences` lists each one.
    case schemaMismatch(entity: String, differences: [String])
    /// An entity declaration cannot become a table (bad identifier, duplicate column…).
    case invalidSchema(entity: String, reason: String)
    /// Two things the model declares would get one name in the file: SQLite's names of
    /// tables and indexes share one namespace (triggers another), and ignore ASCII case, so
    /// the entity `t` with an indexed attribute `x_y` and the entity `t_x` with an indexed
    /// attribute `y` both want the index `t_x_y_index`. `first` and `second` say what
    /// (each entity and attribute); `name` is the name they both want. Thrown by
    /// ``Store/init(path:model:cacheDirectory:openingProgress:)`` before the file is opened, whether it
    /// would be created or migrated: rename one of the entities or attributes.
    ///
    /// ```swift
    /// // entity "t" indexes "x_y"; entity "t_x" indexes "y"
    /// catch FolioError.nameClash(let name, let first, let second) { … }  // "t_x_y_index"
    /// ```
    case nameClash(name: String, first: String, second: String)
    /// The file exists but is not an SQLite database (or is encrypted).
    case notADatabase(path: String)
    /// A part of a `#Predicate` that Folio cannot translate to SQL, named.
    case unsupportedPredicate(expression: String, reason: String)
    /// A key path that is not an attribute of the entity.
    case unknownKeyPath(entity: String, keyPath: String)
    /// A hand-written ``AttributeDescription`` (or to-one) gives no `column`, and its key
    /// path's text is not `\Type.property`, so the property's name cannot be the column's:
    /// a key path of several components or of a computed property, or an app built without
    /// reflection metadata (`-disable-reflection-metadata`, `-disable-reflection-names`),
    /// whose key paths have no names at run time. Thrown when a store opens the entity,
    /// before the file is touched. Declare the column name explicitly
    /// (`AttributeDescription(\.title, column: "title")`), or declare the record with
    /// `@PersistentRecord`, which writes every column name out.
    case unnamedKeyPath(entity: String, keyPath: String)
    /// A predicate, sort descriptor or section key uses the folded text of an attribute
    /// (`\.title.folded`, or `localizedStandardContains` on Apple platforms) that is not
    /// declared `folded` (``AttributeDescription/isFolded``): Folio keeps no folded keys for it.
    case attributeNotFolded(entity: String, attribute: String)
    /// A ``TextSearch`` names an attribute that is not declared `searchable`, or searches an
    /// entity that has none (``AttributeDescription/isSearchable``).
    case attributeNotSearchable(entity: String, attribute: String?)
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
    /// A stored value could not be decoded into the attribute's type: a value of another
    /// storage class, an integer outside the range of a fixed-width integer type, a raw
    /// value that is no case of an enum, JSON text of another shape (see <doc:AttributeTypes>).
    case decoding(column: String, reason: String)
    /// A write was given a value of `attribute` that cannot be stored: a `UInt64` above
    /// `Int64.max` (SQLite's integers are signed 64-bit ones), a `Codable` value that does not
    /// encode as JSON. Nothing was written. (A NaN is
    /// ``invalidArgument(_:)``, as it always was.)
    ///
    /// ```swift
    /// catch FolioError.unstorableValue(let entity, let attribute, let reason) { … }
    /// ```
    case unstorableValue(entity: String, attribute: String, reason: String)
    /// The store was closed.
    case storeClosed
    /// A store method was called from inside one of the store's own `read` or `write`
    /// closures (which would deadlock or trap): use the closure's `WriteTransaction` or `Database`.
    case reentrantAccess
    /// ``Store/close()`` was called inside one of the store's own `read` or `write`
    /// closures, where closing would trap (in a write) or wait forever (in a read). The store
    /// stays open and usable: close it after the closure returns.
    case closeInsideAccess
    /// A `write` was started inside another ``Store``'s `write` on the same database file
    /// (by device and inode), on the same thread: it would wait for the outer transaction,
    /// which waits for it, until the busy timeout. Use the outer write's transaction.
    case nestedWriteOnSameFile(path: String)
    /// The database file the store opened is no longer at its path (deleted, renamed, or
    /// replaced by another file): reads and writes would go to a file no one will open
    /// again, and the writes would be lost. Open a new ``Store`` at the file's path.
    case databaseFileMoved(path: String)
    /// The file was written by a newer version of Folio, whose internal tables this
    /// version does not know; the file is left as it was.
    case newerStoreFormat(path: String, version: Int, newestSupported: Int)
    /// Folio's own tables in the file (`folio_metadata`, `folio_entities`) are not in a
    /// shape any version of Folio wrote; the reason says what was found.
    case invalidStoreMetadata(path: String, reason: String)
    /// The file's model version is newer than the one the app declares (``StoreModel/version``):
    /// a newer app wrote it. Folio never migrates a file back (that could drop what the newer
    /// model added); the file is left unchanged.
    case newerModelVersion(path: String, version: Int, declared: Int)
    /// A migration would leave `rows` rows without a value in a non-optional attribute: it
    /// was added, or made non-optional, without a declared default
    /// (``AttributeDescription/defaultValue``) and no custom step filled it. The file is
    /// left unchanged.
    case missingDefaultValue(entity: String, attribute: String, rows: Int)
    /// A migration would drop data: an attribute (`attribute` non-nil) with `rows` non-`NULL`
    /// values, or an entity with `rows` rows, that the model no longer declares, without
    /// ``StoreModel/DiscardedData`` allowing it. The file is left unchanged.
    case migrationDiscardsData(entity: String, attribute: String?, rows: Int)
    /// The custom migration step named `step` threw; `reason` describes its error. The whole
    /// migration was rolled back: the file is unchanged.
    case migrationStepFailed(step: String, reason: String)
    /// A migration cannot make the file's table into the declared entity (a changed
    /// attribute type, duplicates under a new unique index, a broken foreign key…); the
    /// reason says what. The file is left unchanged.
    case migrationRefused(entity: String, reason: String)
    /// The file needs a migration but another ``Store`` in this process has it open (the
    /// same file by device and inode, whatever its path): close it first. Nothing was written.
    case migrationWhileOpen(path: String)
    /// The file was migrated to another model version (by another process) after this
    /// store opened it: its tables may no longer be the ones this store reads. Close the
    /// store and open one with the app's current model.
    case modelVersionChanged(path: String, found: Int, opened: Int)
    /// The ``StoreModel`` itself is invalid (a negative version, two steps with one name,
    /// a new step without a new version…); the reason says what.
    case invalidStoreModel(reason: String)
    /// A delete was refused by a ``DeleteRule/deny`` rule: a record of `entity` was to be
    /// deleted while records still point to it through `relationship`, the to-one
    /// `child.column` whose inverse to-many declares `.deny`. The rule is kept by a trigger
    /// in the file, so whoever deletes is refused (Folio, raw SQL, another process); the
    /// whole statement is undone, and Folio's write with it: nothing was changed.
    ///
    /// ```swift
    /// catch FolioError.deleteDenied(let entity, let relationship) { … }  // "source", "item.source"
    /// ```
    case deleteDenied(entity: String, relationship: String)
    /// An SQLite error: result code, message, the SQL and its arguments.
    case sqlite(code: Int32, message: String, sql: String?, arguments: String?)

    /// A sentence that names the problem.
    public var description: String {
        switch self {
        case .schemaMismatch(let entity, let differences):
            "The table '\(entity)' does not match its entity: \(differences.joined(separator: "; ")). The file was left unchanged; to migrate it, open it with a StoreModel of a higher version"
        case .invalidSchema(let entity, let reason):
            "The entity '\(entity)' is invalid: \(reason)"
        case .nameClash(let name, let first, let second):
            "\(first) and \(second) would both be named '\(name)' in the file (SQLite's names ignore ASCII case, and tables share their names with indexes): rename one of them. Nothing was written"
        case .notADatabase(let path):
            "The file at \(path) is not an SQLite database"
        case .unsupportedPredicate(let expression, let reason):
            "Unsupported predicate expression \(expression): \(reason)"
        case .unknownKeyPath(let entity, let keyPath):
            "The key path \(keyPath) is not an attribute of '\(entity)'"
        case .unnamedKeyPath(let entity, let keyPath):
            "The column name of the attribute \(keyPath) of '\(entity)' cannot be read from its key path (not \\Type.property, or the app has no reflection metadata): declare the column name explicitly (column:) or use the macro (@PersistentRecord)"
        case .attributeNotFolded(let entity, let attribute):
            "The attribute '\(attribute)' of '\(entity)' is not folded: declare it with AttributeDescription(…, folded: true) (a new model version for an existing file) to match, sort or section it case- and diacritic-insensitively"
        case .attributeNotSearchable(let entity, let attribute?):
            "The attribute '\(attribute)' of '\(entity)' is not in its full-text index: declare it with AttributeDescription(…, searchable: true) (a new model version for an existing file)"
        case .attributeNotSearchable(let entity, nil):
            "The entity '\(entity)' has no full-text index: declare its text attributes with AttributeDescription(…, searchable: true) (a new model version for an existing file)"
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
        case .unstorableValue(let entity, let attribute, let reason):
            "The value of '\(attribute)' of '\(entity)' cannot be stored: \(reason). Nothing was written"
        case .storeClosed:
            "The store is closed"
        case .reentrantAccess:
            "A store method was called inside one of the store's own read or write closures; use the WriteTransaction or Database passed to the closure"
        case .closeInsideAccess:
            "Store.close() was called inside one of the store's own read or write closures; close it after the closure returns (the store is still open)"
        case .nestedWriteOnSameFile(let path):
            "A write on \(path) was started inside another Store's write on the same file and thread; it would wait for the outer write forever (until the busy timeout). Use the outer write's WriteTransaction"
        case .databaseFileMoved(let path):
            "The database file the store opened is no longer at \(path) (deleted, moved or replaced); open a new Store"
        case .newerStoreFormat(let path, let version, let newestSupported):
            "The file at \(path) has Folio's internal schema version \(version); this version of Folio reads up to \(newestSupported). The file was left unchanged"
        case .invalidStoreMetadata(let path, let reason):
            "Folio's own tables in \(path) are damaged: \(reason)"
        case .newerModelVersion(let path, let version, let declared):
            "The file at \(path) has model version \(version), newer than the version this app declares (\(declared)); Folio does not migrate a file back. The file was left unchanged"
        case .missingDefaultValue(let entity, let attribute, let rows):
            "The non-optional attribute '\(attribute)' of '\(entity)' would have no value in \(rows) existing row\(rows == 1 ? "" : "s"): declare a defaultValue or fill it in a migration step. The file was left unchanged"
        case .migrationDiscardsData(let entity, let attribute?, let rows):
            "The migration would drop the attribute '\(attribute)' of '\(entity)', which holds \(rows) value\(rows == 1 ? "" : "s"): allow it with StoreModel.DiscardedData.attribute(\"\(attribute)\", of: \"\(entity)\") or move the data in a migration step. The file was left unchanged"
        case .migrationDiscardsData(let entity, nil, let rows):
            "The migration would drop the entity '\(entity)', which holds \(rows) row\(rows == 1 ? "" : "s"): allow it with StoreModel.DiscardedData.entity(\"\(entity)\") or declare its record type. The file was left unchanged"
        case .migrationStepFailed(let step, let reason):
            "The migration step '\(step)' failed: \(reason). The migration was rolled back; the file is unchanged"
        case .migrationRefused(let entity, let reason):
            "The table '\(entity)' cannot be migrated: \(reason). The file was left unchanged"
        case .migrationWhileOpen(let path):
            "The file at \(path) needs a migration, but another Store in this process has it open; close it first. Nothing was written"
        case .modelVersionChanged(let path, let found, let opened):
            "The file at \(path) was migrated to model version \(found) after this store opened it at version \(opened); open a new Store with the current model"
        case .invalidStoreModel(let reason):
            "Invalid store model: \(reason)"
        case .deleteDenied(let entity, let relationship):
            "A record of '\(entity)' cannot be deleted while records point to it through '\(relationship)', whose delete rule is deny: delete or change those records first. Nothing was changed"
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
            if db.resultCode == .SQLITE_CONSTRAINT, let denied = deleteDenied(message: db.message) { return denied }
            return FolioError.sqlite(
                code: db.extendedResultCode.rawValue, message: db.message ?? "\(db.resultCode)",
                sql: db.sql, arguments: db.arguments.map { "\($0)" })
        }
        return error
    }
}

extension FolioError {
    /// The message of a deny rule's trigger (`RAISE(ABORT, …)`), which SQLite returns as the
    /// error's message, whoever deleted: the shell prints it as it is. `entity` and
    /// `relationship` are plain identifiers (no quote), so the message reads back exactly;
    /// the names are in double quotes, which an SQL text literal holds as they are.
    static func deleteDeniedMessage(entity: String, relationship: String) -> String {
        "\(deniedPrefix)\(entity)\" is referenced through \"\(relationship)\" (delete rule deny)"
    }

    private static let deniedPrefix = "Folio: delete denied: a record of \""

    /// The ``deleteDenied(entity:relationship:)`` a deny trigger's message names; `nil` for
    /// any other message.
    static func deleteDenied(message: String?) -> FolioError? {
        guard let message, message.hasPrefix(deniedPrefix) else { return nil }
        let rest = message.dropFirst(deniedPrefix.count)
        let parts = rest.split(separator: "\"", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[1] == " is referenced through ", parts[3] == " (delete rule deny)",
            !parts[0].isEmpty, !parts[2].isEmpty
        else { return nil }
        return .deleteDenied(entity: String(parts[0]), relationship: String(parts[2]))
    }

    /// Any error as a ``FolioError``, for the places that keep one (`lastError`): GRDB's and
    /// SQLite's by their code, Folio's as they are, any other by its description.
    static func converting(_ error: any Error) -> FolioError {
        if let folio = FolioError.wrap(error) as? FolioError { return folio }
        return .sqlite(code: 0, message: "\(error)", sql: nil, arguments: nil)
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
