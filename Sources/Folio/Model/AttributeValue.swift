import Foundation
import GRDB

/// How an attribute is stored in SQLite.
///
/// Each Swift type maps onto one storage (see <doc:AttributeTypes>); types that store the
/// same way share one (an `Int32` is ``integer``, a `Float` is ``double``, a `URL` is
/// ``string``, an enum is its raw value's), so the version hash of an entity depends on
/// the storage alone.
public enum AttributeType: String, Sendable, Hashable, Codable {
    /// An integer (`Int`, `Int64`, the fixed-width integers), stored as SQLite `INTEGER`.
    case integer
    /// A `Double` or a `Float`, stored as SQLite `REAL`.
    case double
    /// A `Bool`, stored as the `INTEGER` 0 or 1.
    case bool
    /// A `String` (or a `URL`, by its absolute string), stored as `TEXT` with every UTF-8
    /// byte (NULs included).
    case string
    /// A `Date`, stored as seconds since 1970 in a `REAL`, so it sorts and compares in SQL.
    case date
    /// `Data`, stored as a `BLOB`.
    case data
    /// A `UUID`, stored as its 16 bytes in a `BLOB`.
    case uuid
    /// Any other `Codable` value, stored as JSON `TEXT` with sorted keys; predicates can
    /// only test it for equality (see <doc:AttributeTypes>).
    case json

    /// The SQLite column type.
    var sqlType: String {
        switch self {
        case .integer, .bool: "INTEGER"
        case .double, .date: "REAL"
        case .string, .json: "TEXT"
        case .data, .uuid: "BLOB"
        }
    }
}

/// A Swift value that can be stored in an attribute: `Int`, `Int64`, the fixed-width
/// integers (`Int8` … `UInt64`), `Double`, `Float`, `Bool`, `String`, `URL`, `Date`, `Data`,
/// `UUID`, and optionals of those.
///
/// Dates are stored as seconds since 1970 (a `REAL`), so they sort and compare in SQL;
/// UUIDs as their 16 bytes. A `RawRepresentable` type whose raw value is an attribute value
/// (an enum with `Int` or `String` raw values) conforms by declaring it, with nothing to
/// implement: it is stored as its raw value. A `Codable` type need not conform at all:
/// ``AttributeDescription`` stores it by its raw value or as JSON text. See <doc:AttributeTypes>.
public protocol AttributeValue: Sendable {
    /// The storage of the attribute.
    static var attributeType: AttributeType { get }
    /// Whether `nil` is a valid value.
    static var isOptional: Bool { get }
    /// The value as stored in SQLite.
    var storedValue: DatabaseValue { get }
    /// Decodes a stored value; throws ``FolioError/decoding(column:reason:)`` on a mismatch.
    static func decode(stored: DatabaseValue, column: String) throws -> Self
}

extension AttributeValue {
    /// `false`: only `Optional` accepts `nil`.
    public static var isOptional: Bool { false }
}

func decodingMismatch(_ stored: DatabaseValue, _ column: String, _ expected: String) -> FolioError {
    FolioError.decoding(column: column, reason: "expected \(expected), found \(stored)")
}

extension Int: AttributeValue {
    /// The storage of the attribute: ``AttributeType/integer``.
    public static var attributeType: AttributeType { .integer }
    /// The value as stored in SQLite.
    public var storedValue: DatabaseValue { Int64(self).databaseValue }
    /// Decodes a stored value; throws ``FolioError/decoding(column:reason:)`` on a mismatch.
    public static func decode(stored: DatabaseValue, column: String) throws -> Int {
        guard case .int64(let v) = stored.storage else { throw decodingMismatch(stored, column, "an integer") }
        return Int(v)
    }
}

extension Int64: AttributeValue {
    /// The storage of the attribute: ``AttributeType/integer``.
    public static var attributeType: AttributeType { .integer }
    /// The value as stored in SQLite.
    public var storedValue: DatabaseValue { databaseValue }
    /// Decodes a stored value; throws ``FolioError/decoding(column:reason:)`` on a mismatch.
    public static func decode(stored: DatabaseValue, column: String) throws -> Int64 {
        guard case .int64(let v) = stored.storage else { throw decodingMismatch(stored, column, "an integer") }
        return v
    }
}

extension Double: AttributeValue {
    /// The storage of the attribute: ``AttributeType/double``.
    public static var attributeType: AttributeType { .double }
    /// The value as stored in SQLite.
    public var storedValue: DatabaseValue { databaseValue }
    /// Decodes a stored value; throws ``FolioError/decoding(column:reason:)`` on a mismatch.
    public static func decode(stored: DatabaseValue, column: String) throws -> Double {
        switch stored.storage {
        case .double(let v): return v
        case .int64(let v): return Double(v)
        case .null: return .nan  // SQLite stores NaN as NULL
        default: throw decodingMismatch(stored, column, "a number")
        }
    }
}

extension Bool: AttributeValue {
    /// The storage of the attribute: ``AttributeType/bool``.
    public static var attributeType: AttributeType { .bool }
    /// The value as stored in SQLite.
    public var storedValue: DatabaseValue { (self ? 1 : 0 as Int64).databaseValue }
    /// Decodes a stored value; throws ``FolioError/decoding(column:reason:)`` on a mismatch.
    public static func decode(stored: DatabaseValue, column: String) throws -> Bool {
        guard case .int64(let v) = stored.storage else { throw decodingMismatch(stored, column, "a boolean") }
        return v != 0
    }
}

extension String: AttributeValue {
    /// The storage of the attribute: ``AttributeType/string``.
    public static var attributeType: AttributeType { .string }
    /// The value as stored in SQLite.
    public var storedValue: DatabaseValue { databaseValue }
    /// Decodes a stored value; throws ``FolioError/decoding(column:reason:)`` on a mismatch.
    public static func decode(stored: DatabaseValue, column: String) throws -> String {
        guard case .string(let v) = stored.storage else { throw decodingMismatch(stored, column, "text") }
        return v
    }
}

extension Date: AttributeValue {
    /// The storage of the attribute: ``AttributeType/date``.
    public static var attributeType: AttributeType { .date }
    /// The value as stored in SQLite.
    public var storedValue: DatabaseValue { timeIntervalSince1970.databaseValue }
    /// Decodes a stored value; throws ``FolioError/decoding(column:reason:)`` on a mismatch.
    public static func decode(stored: DatabaseValue, column: String) throws -> Date {
        switch stored.storage {
        case .double(let v): return Date(timeIntervalSince1970: v)
        case .int64(let v): return Date(timeIntervalSince1970: Double(v))
        case .null: return Date(timeIntervalSince1970: .nan)
        default: throw decodingMismatch(stored, column, "a date (seconds since 1970)")
        }
    }
}

extension Data: AttributeValue {
    /// The storage of the attribute: ``AttributeType/data``.
    public static var attributeType: AttributeType { .data }
    /// The value as stored in SQLite.
    public var storedValue: DatabaseValue { databaseValue }
    /// Decodes a stored value; throws ``FolioError/decoding(column:reason:)`` on a mismatch.
    public static func decode(stored: DatabaseValue, column: String) throws -> Data {
        guard case .blob(let v) = stored.storage else { throw decodingMismatch(stored, column, "a blob") }
        return v
    }
}

extension UUID: AttributeValue {
    /// The storage of the attribute: ``AttributeType/uuid``.
    public static var attributeType: AttributeType { .uuid }
    /// The value as stored in SQLite.
    public var storedValue: DatabaseValue {
        withUnsafeBytes(of: uuid) { Data($0) }.databaseValue
    }
    /// Decodes a stored value; throws ``FolioError/decoding(column:reason:)`` on a mismatch.
    public static func decode(stored: DatabaseValue, column: String) throws -> UUID {
        guard case .blob(let v) = stored.storage, v.count == 16 else {
            throw decodingMismatch(stored, column, "a 16-byte UUID")
        }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { $0.copyBytes(from: v) }
        return UUID(uuid: bytes)
    }
}

extension Optional: AttributeValue where Wrapped: AttributeValue {
    /// The storage of the wrapped type.
    public static var attributeType: AttributeType { Wrapped.attributeType }
    /// `true`: `nil` is stored as `NULL`.
    public static var isOptional: Bool { true }
    /// The value as stored in SQLite.
    public var storedValue: DatabaseValue { self?.storedValue ?? .null }
    /// Decodes a stored value; throws ``FolioError/decoding(column:reason:)`` on a mismatch.
    public static func decode(stored: DatabaseValue, column: String) throws -> Wrapped? {
        if stored.isNull { return nil }
        return try Wrapped.decode(stored: stored, column: column)
    }
}

/// Converts any Swift value met in a predicate into its stored form.
func storedValue(of value: Any) -> DatabaseValue? {
    if let v = value as? any AttributeValue { return v.storedValue }
    if let v = value as? RecordID { return v.rawValue.databaseValue }
    // A raw-valued type that is no AttributeValue (`enum Status: String, Codable`), as
    // `AttributeDescription` stores it (`CodableStorage`): by its raw value.
    if let raw = value as? any RawRepresentable, let stored = storedRawValue(raw) { return stored }
    // Optional<T> where T is not AttributeValue-conditional at runtime
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .optional {
        guard let child = mirror.children.first else { return .null }
        return storedValue(of: child.value)
    }
    return nil
}

/// The stored raw value of `value`, when its raw value is an attribute value.
private func storedRawValue<T: RawRepresentable>(_ value: T) -> DatabaseValue? {
    (value.rawValue as? any AttributeValue)?.storedValue
}
