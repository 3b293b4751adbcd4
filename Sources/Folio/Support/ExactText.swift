import Foundation
import GRDB
import GRDBSQLite

// GRDB hands strings to SQLite, and reads them back, as C strings, which end at the
// first NUL: "a\0b" would be stored as "a" and two different unique keys would collide.
// Folio keeps every byte: writes bind text with its length (``Statement/setExactArguments(_:)``),
// predicate values travel as blobs cast back to text (``SQLBuilder/placeholder(for:)``),
// and reads take the column's bytes (``DatabaseValue/exact(sqliteStatement:index:)``).

extension String {
    /// Whether GRDB would cut the string short.
    var containsNUL: Bool { utf8.contains(0) }

    /// Whether the two texts are the same bytes, as SQLite's `BINARY` compares them — not
    /// Swift's `==`, which is canonical equivalence (`"é"` equals `"e\u{301}"` there).
    func hasSameBytes(as other: String) -> Bool { utf8.elementsEqual(other.utf8) }
}

extension DatabaseValue {
    /// The value of a column of a stepped statement, read once with the C API; text keeps
    /// every byte, NULs included.
    static func exact(sqliteStatement sqlite: OpaquePointer, index: Int32) -> DatabaseValue {
        guard sqlite3_column_type(sqlite, index) == SQLITE_TEXT else {
            return DatabaseValue(sqliteStatement: sqlite, index: index)
        }
        guard let text = sqlite3_column_text(sqlite, index) else { return "".databaseValue }
        let count = Int(sqlite3_column_bytes(sqlite, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self).databaseValue
    }
}

/// SQLite's "copy the bytes now" destructor.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

extension Statement {
    /// Binds `values` as `setArguments` does, except that text containing a NUL keeps
    /// every byte. Run the statement afterwards with no arguments (`execute()`,
    /// `fetchOne(statement)`), which keeps these bindings.
    func setExactArguments(_ values: [DatabaseValue]) throws {
        try setArguments(StatementArguments(values))
        for (offset, value) in values.enumerated() {
            guard case .string(var text) = value.storage, text.containsNUL else { continue }
            let code = text.withUTF8 { bytes in
                sqlite3_bind_text64(
                    sqliteStatement, Int32(offset + 1),
                    UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self),
                    sqlite3_uint64(bytes.count), transient, UInt8(SQLITE_UTF8))
            }
            if code != SQLITE_OK {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind text", sql: sql)
            }
        }
    }
}
