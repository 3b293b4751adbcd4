import Foundation
import GRDB

/// A `RawRepresentable` type whose raw value is an attribute value — an enum with `Int` or
/// `String` raw values, an `OptionSet` — is stored as its raw value, with nothing to
/// implement: declare the conformance.
///
/// ```swift
/// enum Priority: Int, Codable, Comparable, AttributeValue {
///     case low = 1, normal = 5, high = 9
/// }
/// ```
///
/// Its storage is its raw value's (``AttributeType/integer``, ``AttributeType/string``…), so
/// predicates compare, sorts order and sections group the raw values as SQLite does:
/// integers by value, text by its UTF-8 bytes — never by the order the cases are declared
/// in. A stored raw value that is no value of the type (a case since removed, another
/// program's text) reads as ``FolioError/decoding(column:reason:)``.
///
/// A `Codable` type need not declare this conformance: ``AttributeDescription`` stores it by
/// its raw value just the same (see <doc:AttributeTypes>).
extension AttributeValue where Self: RawRepresentable, RawValue: AttributeValue {
    /// The storage of the raw value.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { RawValue.attributeType }

    /// The raw value as stored in SQLite.
    /// - Complexity: the raw value's `storedValue`: O(1) for an integer, O(*n*) for text of
    ///   *n* bytes.
    public var storedValue: DatabaseValue { rawValue.storedValue }

    /// Decodes the stored raw value; throws ``FolioError/decoding(column:reason:)`` when it
    /// does not decode as the raw value's type, or is no raw value of this type.
    /// - Complexity: the raw value's decoding, then `init?(rawValue:)`.
    public static func decode(stored: DatabaseValue, column: String) throws -> Self {
        try decodeRawValue(stored, column: column, as: Self.self, raw: RawValue.self)
    }
}

/// Decodes a stored raw value of `T`, whose raw value type is `Raw` (checked at run time
/// when the caller knows it only dynamically).
func decodeRawValue<T: RawRepresentable, Raw: AttributeValue>(
    _ stored: DatabaseValue, column: String, as type: T.Type, raw: Raw.Type
) throws -> T {
    let decoded = try Raw.decode(stored: stored, column: column)
    guard let rawValue = decoded as? T.RawValue, let value = T(rawValue: rawValue) else {
        throw FolioError.decoding(
            column: column, reason: "\(stored) is not a raw value of \(T.self) (a case removed or renamed since it was stored?)")
    }
    return value
}

/// Integer raw values in their numeric order, as SQLite orders the stored values. A type
/// declared `Comparable` gets this `<` (an enum with raw values gets none from Swift), so
/// that `#Predicate { $0.priority > low }` and `SortDescriptor(\.priority)` can be written,
/// and order as the store does.
extension AttributeValue where Self: RawRepresentable & Comparable, RawValue: BinaryInteger {
    /// Whether `lhs`'s raw value is less than `rhs`'s.
    /// - Complexity: O(1).
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Text raw values in the order of their UTF-8 bytes, as SQLite orders stored text (not
/// Swift's `String` order, which differs for canonically equivalent text). A type declared
/// `Comparable` gets this `<`.
extension AttributeValue where Self: RawRepresentable & Comparable, RawValue == String {
    /// Whether `lhs`'s raw value precedes `rhs`'s, byte by byte.
    /// - Complexity: O(*n*), where *n* is the length of the shorter raw value.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }
}
