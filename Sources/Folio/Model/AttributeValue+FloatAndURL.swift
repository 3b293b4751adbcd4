import Foundation
import GRDB

extension Float: AttributeValue {
    /// The storage of the attribute: ``AttributeType/double``, a `REAL`.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { .double }
    /// The value as stored in SQLite: the `REAL` equal to it (every `Float` is a `Double`
    /// exactly, infinities and subnormals included), so it sorts and compares in SQL as in
    /// Swift. As for a `Double`, NaN is refused by a write (SQLite has none), and `-0.0`
    /// reads back as `0.0` (SQLite keeps no sign of zero; the two are equal).
    /// - Complexity: O(1).
    public var storedValue: DatabaseValue { Double(self).databaseValue }
    /// Decodes a stored number, as a `Double` does: a `REAL` or an `INTEGER` becomes the
    /// nearest `Float`, and `NULL` is NaN (SQLite stores NaN as `NULL`). A finite number
    /// beyond `Float`'s range throws ``FolioError/decoding(column:reason:)`` rather than
    /// reading as an infinity, as does text or a blob.
    /// - Complexity: O(1).
    public static func decode(stored: DatabaseValue, column: String) throws -> Float {
        switch stored.storage {
        case .double(let v):
            let value = Float(v)
            if value.isInfinite && v.isFinite {
                throw FolioError.decoding(
                    column: column, reason: "\(v) is outside the range of Float (±\(Float.greatestFiniteMagnitude))")
            }
            return value
        case .int64(let v): return Float(v)
        case .null: return .nan
        default: throw decodingMismatch(stored, column, "a number")
        }
    }
}

extension URL: AttributeValue {
    /// The storage of the attribute: ``AttributeType/string``, its text.
    /// - Complexity: O(1).
    public static var attributeType: AttributeType { .string }
    /// The value as stored in SQLite: its `absoluteString`, as `TEXT`. A URL relative to a
    /// base (`URL(string: "a.html", relativeTo: base)`) is stored resolved, and reads back
    /// as its `absoluteURL`; a relative URL without a base (`URL(string: "docs/a.html")`)
    /// is stored and read back as it is. Predicates compare the absolute strings.
    /// - Complexity: O(*n*), where *n* is the length of the URL.
    public var storedValue: DatabaseValue { absoluteString.databaseValue }
    /// Decodes stored text with `URL(string:)`; throws ``FolioError/decoding(column:reason:)``
    /// for text that is no URL (the empty text included), or for any other value.
    /// - Complexity: O(*n*), where *n* is the length of the text.
    public static func decode(stored: DatabaseValue, column: String) throws -> URL {
        guard case .string(let text) = stored.storage else { throw decodingMismatch(stored, column, "a URL's text") }
        guard let url = URL(string: text) else {
            throw FolioError.decoding(column: column, reason: "\(text.debugDescription) is not a URL")
        }
        return url
    }
}
