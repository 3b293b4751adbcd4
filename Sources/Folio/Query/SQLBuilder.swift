import Foundation
import GRDB

/// The one place where Folio writes SQL text: identifiers and quoting here; the
/// statements by facet in `SQLBuilder+Schema`, `+Reads`, `+Writes`, `+Search` and
/// `+Migration`.
///
/// Identifiers come only from entities that ``Store`` validated (``validateIdentifier(_:entity:)``),
/// and are always quoted; every value is a bound argument.
enum SQLBuilder {
    static let metadataTable = "folio_entities"

    /// `name` → `"name"`. Callers pass validated identifiers only.
    static func quote(_ identifier: String) -> String { "\"\(identifier)\"" }

    /// Letters, digits and `_`, starting with a letter or `_`, at most 64 bytes: a name
    /// that ``quote(_:)`` makes a safe identifier.
    static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 64,
            first == "_" || (first.isASCII && first.properties.isAlphabetic)
        else { return false }
        return name.unicodeScalars.allSatisfy {
            $0 == "_" || ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0)
        }
    }

    static func validateIdentifier(_ name: String, entity: String) throws {
        guard isPlainIdentifier(name) else {
            throw FolioError.invalidSchema(
                entity: entity,
                reason:
                    "'\(name)' is not a valid identifier (letters, digits and _, starting with a letter or _, at most 64 bytes)")
        }
        let lower = name.lowercased()
        if lower.hasPrefix("sqlite_") || lower.hasPrefix("folio_") {
            throw FolioError.invalidSchema(entity: entity, reason: "'\(name)' uses a reserved prefix (sqlite_ or folio_)")
        }
    }

    /// The placeholder of one bound value: `?`, or `CAST(? AS TEXT)` with the UTF-8 bytes
    /// bound as a blob for text that contains a NUL, which GRDB would bind cut short.
    static func placeholder(for value: DatabaseValue) -> SQLFragment {
        if case .string(let text) = value.storage, text.containsNUL {
            return SQLFragment("CAST(? AS TEXT)", [Data(text.utf8).databaseValue])
        }
        return SQLFragment("?", [value])
    }
}
