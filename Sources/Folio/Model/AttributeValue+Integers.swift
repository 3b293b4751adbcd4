import Foundation
import GRDB

// The fixed-width integers, stored as SQLite `INTEGER` (a signed 64-bit integer). A stored
// value outside the Swift type's range — another program's `300` in an `Int8` column, a
// negative number in a `UInt8` one — reads as ``FolioError/decoding(column:reason:)``, never
// truncated. A `UInt64` (or `UInt`) above `Int64.max` has no `INTEGER`: a write refuses it
// with ``FolioError/unstorableValue(entity:attribute:reason:)``.

/// A stored integer as a `T`: an error for any other storage class, or for a value outside
/// `T`'s range.
func decodeInteger<T: FixedWidthInteger>(_ stored: DatabaseValue, column: String, as type: T.Type = T.self) throws -> T {
    guard case .int64(let value) = stored.storage else { throw decodingMismatch(stored, column, "an integer") }
    guard let exact = T(exactly: value) else {
        throw FolioError.decoding(column: column, reason: "\(value) is outside the range of \(T.self) (\(T.min)...\(T.max))")
    }
    return exact
}

/// An unsigned integer as stored: an `INTEGER` when it is at most `Int64.max`; above it, the
/// `REAL` nearest to it, which a write refuses (``EntityDescription/checkWritable(_:column:type:)``)
/// and a predicate compares as SQLite does: above every stored integer.
func storedUnsigned<T: UnsignedInteger & FixedWidthInteger>(_ value: T) -> DatabaseValue {
    Int64(exactly: value).map(\.databaseValue) ?? Double(value).databaseValue
}

extension Int8: AttributeValue {
    /// The storage of the attribute: ``AttributeType/integer``.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { .integer }
    /// The value as stored in SQLite: an `INTEGER`.
    /// - Complexity: O(1).
    public var storedValue: DatabaseValue { Int64(self).databaseValue }
    /// Decodes a stored integer; throws ``FolioError/decoding(column:reason:)`` for any
    /// other value, or an integer outside `-128...127`.
    /// - Complexity: O(1).
    public static func decode(stored: DatabaseValue, column: String) throws -> Int8 {
        try decodeInteger(stored, column: column)
    }
}

extension Int16: AttributeValue {
    /// The storage of the attribute: ``AttributeType/integer``.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { .integer }
    /// The value as stored in SQLite: an `INTEGER`.
    /// - Complexity: O(1).
    public var storedValue: DatabaseValue { Int64(self).databaseValue }
    /// Decodes a stored integer; throws ``FolioError/decoding(column:reason:)`` for any
    /// other value, or an integer outside `-32768...32767`.
    /// - Complexity: O(1).
    public static func decode(stored: DatabaseValue, column: String) throws -> Int16 {
        try decodeInteger(stored, column: column)
    }
}

extension Int32: AttributeValue {
    /// The storage of the attribute: ``AttributeType/integer``.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { .integer }
    /// The value as stored in SQLite: an `INTEGER`.
    /// - Complexity: O(1).
    public var storedValue: DatabaseValue { Int64(self).databaseValue }
    /// Decodes a stored integer; throws ``FolioError/decoding(column:reason:)`` for any
    /// other value, or an integer outside `Int32`'s range.
    /// - Complexity: O(1).
    public static func decode(stored: DatabaseValue, column: String) throws -> Int32 {
        try decodeInteger(stored, column: column)
    }
}

extension UInt8: AttributeValue {
    /// The storage of the attribute: ``AttributeType/integer``.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { .integer }
    /// The value as stored in SQLite: an `INTEGER`.
    /// - Complexity: O(1).
    public var storedValue: DatabaseValue { Int64(self).databaseValue }
    /// Decodes a stored integer; throws ``FolioError/decoding(column:reason:)`` for any
    /// other value, or an integer outside `0...255`.
    /// - Complexity: O(1).
    public static func decode(stored: DatabaseValue, column: String) throws -> UInt8 {
        try decodeInteger(stored, column: column)
    }
}

extension UInt16: AttributeValue {
    /// The storage of the attribute: ``AttributeType/integer``.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { .integer }
    /// The value as stored in SQLite: an `INTEGER`.
    /// - Complexity: O(1).
    public var storedValue: DatabaseValue { Int64(self).databaseValue }
    /// Decodes a stored integer; throws ``FolioError/decoding(column:reason:)`` for any
    /// other value, or an integer outside `0...65535`.
    /// - Complexity: O(1).
    public static func decode(stored: DatabaseValue, column: String) throws -> UInt16 {
        try decodeInteger(stored, column: column)
    }
}

extension UInt32: AttributeValue {
    /// The storage of the attribute: ``AttributeType/integer``.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { .integer }
    /// The value as stored in SQLite: an `INTEGER`.
    /// - Complexity: O(1).
    public var storedValue: DatabaseValue { Int64(self).databaseValue }
    /// Decodes a stored integer; throws ``FolioError/decoding(column:reason:)`` for any
    /// other value, or an integer outside `UInt32`'s range.
    /// - Complexity: O(1).
    public static func decode(stored: DatabaseValue, column: String) throws -> UInt32 {
        try decodeInteger(stored, column: column)
    }
}

extension UInt64: AttributeValue {
    /// The storage of the attribute: ``AttributeType/integer``.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { .integer }
    /// The value as stored in SQLite: an `INTEGER` up to `Int64.max`, the largest SQLite
    /// holds. A larger value cannot be stored: a write refuses it with
    /// ``FolioError/unstorableValue(entity:attribute:reason:)``; in a predicate it is compared
    /// as the `REAL` nearest to it, above every stored integer, so `$0.size < UInt64.max`
    /// matches every row and `$0.size == UInt64.max` none.
    /// - Complexity: O(1).
    public var storedValue: DatabaseValue { storedUnsigned(self) }
    /// Decodes a stored integer; throws ``FolioError/decoding(column:reason:)`` for any
    /// other value, or a negative integer.
    /// - Complexity: O(1).
    public static func decode(stored: DatabaseValue, column: String) throws -> UInt64 {
        try decodeInteger(stored, column: column)
    }
}

extension UInt: AttributeValue {
    /// The storage of the attribute: ``AttributeType/integer``.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { .integer }
    /// The value as stored in SQLite: an `INTEGER` up to `Int64.max`; a larger value is
    /// refused by a write, as a `UInt64`'s is.
    /// - Complexity: O(1).
    public var storedValue: DatabaseValue { storedUnsigned(self) }
    /// Decodes a stored integer; throws ``FolioError/decoding(column:reason:)`` for any
    /// other value, or an integer outside `UInt`'s range (a negative one).
    /// - Complexity: O(1).
    public static func decode(stored: DatabaseValue, column: String) throws -> UInt {
        try decodeInteger(stored, column: column)
    }
}
