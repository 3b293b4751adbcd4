import Foundation
import GRDB
import GRDBSQLite

/// A value exactly as SQLite holds it — its storage class and its content, text and blobs
/// as raw bytes — compared exactly as SQLite compares values under the `BINARY` collation.
///
/// Sort keys and section values are held in this form, never as Swift `String`s or through
/// `Double`:
/// - GRDB's `DatabaseValue(sqliteStatement:index:)` reads text as a C string, so `"a\0b"`
///   would become `"a"`;
/// - a Swift `String` repairs invalid UTF-8 (which raw SQL can store) and compares by
///   Unicode canonical equivalence, so `"é"` and `"e\u{301}"`, or `"K"` and the Kelvin sign,
///   would be equal where SQLite keeps them apart;
/// - a `Double` cannot hold every 64-bit integer, so integers above 2⁵³ would tie with
///   their neighbours or with reals.
///
/// Equality is SQLite's: `1` and `1.0` are equal, and so are `0.0` and `-0.0`; hashing
/// agrees with it. SQLite never stores NaN (it stores NULL instead), and neither does this
/// type: a NaN read from a statement becomes ``null``.
enum SQLiteValue: Sendable {
    case null
    case integer(Int64)
    case real(Double)
    /// The UTF-8 bytes SQLite holds, NULs and invalid sequences included.
    case text([UInt8])
    case blob([UInt8])

    /// The value of column `index` of a stepped statement, read with the C API.
    init(sqliteStatement sqlite: OpaquePointer, index: Int32) {
        switch sqlite3_column_type(sqlite, index) {
        case SQLITE_INTEGER:
            self = .integer(sqlite3_column_int64(sqlite, index))
        case SQLITE_FLOAT:
            let value = sqlite3_column_double(sqlite, index)
            self = value.isNaN ? .null : .real(value)
        case SQLITE_TEXT:
            // sqlite3_column_text first, then sqlite3_column_bytes (SQLite's documented order).
            let text = sqlite3_column_text(sqlite, index)
            let count = Int(sqlite3_column_bytes(sqlite, index))
            self = .text(text.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? [])
        case SQLITE_BLOB:
            let blob = sqlite3_column_blob(sqlite, index)
            let count = Int(sqlite3_column_bytes(sqlite, index))
            self = .blob(
                blob.map { Array(UnsafeRawBufferPointer(start: $0, count: count).bindMemory(to: UInt8.self)) } ?? [])
        default:
            self = .null
        }
    }

    /// The value of a GRDB value: text as its UTF-8 bytes.
    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let v): self = .integer(v)
        case .double(let v): self = v.isNaN ? .null : .real(v)
        case .string(let v): self = .text(Array(v.utf8))
        case .blob(let v): self = .blob(Array(v))
        }
    }

    /// The value as GRDB holds it; text that is not valid UTF-8 is repaired (for display and
    /// for decoding into Swift types, never for comparison).
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let v): v.databaseValue
        case .real(let v): v.databaseValue
        case .text(let bytes): String(decoding: bytes, as: UTF8.self).databaseValue
        case .blob(let bytes): Data(bytes).databaseValue
        }
    }

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

// MARK: SQLite's order

extension SQLiteValue {
    /// SQLite's order (`sqlite3MemCompare` with the `BINARY` collation): NULL before numbers,
    /// numbers by exact value, then text by bytes, then blobs by bytes. Negative, zero or
    /// positive as `a` sorts before, with, or after `b`.
    static func compare(_ a: SQLiteValue, _ b: SQLiteValue) -> Int {
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.real(let x), .real(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.integer(let x), .real(let y)): return compare(integer: x, real: y)
        case (.real(let x), .integer(let y)): return -compare(integer: y, real: x)
        case (.integer, _), (.real, _): return -1
        case (_, .integer), (_, .real): return 1
        case (.text(let x), .text(let y)): return compareBytes(x, y)
        case (.text, .blob): return -1
        case (.blob, .text): return 1
        case (.blob(let x), .blob(let y)): return compareBytes(x, y)
        }
    }

    /// An integer against a real, exactly, as SQLite's `sqlite3IntFloatCompare` does: no
    /// rounding of the integer to a `Double`, reals beyond ±2⁶³ and infinities beyond every
    /// integer, `-0.0` equal to `0`.
    static func compare(integer i: Int64, real r: Double) -> Int {
        if r.isNaN { return 1 }  // never stored: SQLite treats NaN as NULL
        if r < -9_223_372_036_854_775_808.0 { return 1 }
        if r >= 9_223_372_036_854_775_808.0 { return -1 }
        // |r| < 2⁶³ here, so its integer part is an Int64, and a Double exactly.
        let whole = r.rounded(.towardZero)
        let y = Int64(whole)
        if i < y { return -1 }
        if i > y { return 1 }
        // i is r's integer part: r's fractional part (computed exactly) decides.
        let fraction = r - whole
        return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0)
    }

    /// `memcmp` over the common length, then the shorter first (SQLite's `BINARY`).
    static func compareBytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        let n = Swift.min(x.count, y.count)
        let c = x.withUnsafeBufferPointer { a in
            y.withUnsafeBufferPointer { b in n == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, n) }
        }
        if c != 0 { return c < 0 ? -1 : 1 }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }

    /// Whether column `index` of a stepped statement holds a value SQLite compares equal
    /// to this one, without materializing it (the identifier scan's hot path).
    @inline(__always)
    func equalsColumn(_ sqlite: OpaquePointer, _ index: Int32) -> Bool {
        switch (sqlite3_column_type(sqlite, index), self) {
        case (SQLITE_NULL, .null): return true
        case (SQLITE_INTEGER, .integer(let v)): return sqlite3_column_int64(sqlite, index) == v
        case (SQLITE_FLOAT, .real(let v)): return sqlite3_column_double(sqlite, index) == v
        case (SQLITE_INTEGER, .real(let v)): return Self.compare(integer: sqlite3_column_int64(sqlite, index), real: v) == 0
        case (SQLITE_FLOAT, .integer(let v)): return Self.compare(integer: v, real: sqlite3_column_double(sqlite, index)) == 0
        case (SQLITE_TEXT, .text(let bytes)):
            let text = sqlite3_column_text(sqlite, index)
            let count = Int(sqlite3_column_bytes(sqlite, index))
            guard count == bytes.count else { return false }
            guard count > 0, let text else { return count == 0 }
            return bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, text, count) == 0 }
        case (SQLITE_BLOB, .blob(let bytes)):
            let blob = sqlite3_column_blob(sqlite, index)
            let count = Int(sqlite3_column_bytes(sqlite, index))
            guard count == bytes.count else { return false }
            guard count > 0, let blob else { return count == 0 }
            return bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, blob, count) == 0 }
        default: return false
        }
    }
}

extension SQLiteValue {
    /// Whether column `index` of a stepped statement holds exactly this value: the same
    /// storage class and the same integer, bits of a real, or bytes. Stricter than
    /// ``equalsColumn(_:_:)`` (where `1` equals `1.0`): what a `.computed` section key's
    /// closure is given differs between those, so a run may only be extended without calling
    /// it again when the stored value is identical.
    @inline(__always)
    func isIdenticalToColumn(_ sqlite: OpaquePointer, _ index: Int32) -> Bool {
        switch (sqlite3_column_type(sqlite, index), self) {
        case (SQLITE_INTEGER, .integer), (SQLITE_TEXT, .text), (SQLITE_BLOB, .blob), (SQLITE_NULL, .null):
            return equalsColumn(sqlite, index)
        case (SQLITE_FLOAT, .real(let v)):
            return sqlite3_column_double(sqlite, index).bitPattern == v.bitPattern
        default: return false
        }
    }
}

extension SQLiteValue: Comparable, Hashable {
    static func == (a: SQLiteValue, b: SQLiteValue) -> Bool { compare(a, b) == 0 }
    static func < (a: SQLiteValue, b: SQLiteValue) -> Bool { compare(a, b) < 0 }

    /// Numbers that SQLite finds equal hash alike: a real with an integer value in the
    /// Int64 range hashes as that integer (so `1.0` as `1`, `-0.0` as `0`).
    func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .integer(let v):
            hasher.combine(1 as UInt8)
            hasher.combine(v)
        case .real(let v):
            let whole = v.rounded(.towardZero)
            if whole == v, v >= -9_223_372_036_854_775_808.0, v < 9_223_372_036_854_775_808.0 {
                hasher.combine(1 as UInt8)
                hasher.combine(Int64(v))
            } else {
                hasher.combine(2 as UInt8)
                hasher.combine(v.bitPattern)
            }
        case .text(let bytes):
            hasher.combine(3 as UInt8)
            hasher.combine(bytes)
        case .blob(let bytes):
            hasher.combine(4 as UInt8)
            hasher.combine(bytes)
        }
    }
}

extension SQLiteValue: CustomStringConvertible {
    var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let v): String(v)
        case .real(let v): "\(v)"
        case .text(let bytes): String(decoding: bytes, as: UTF8.self).debugDescription
        case .blob(let bytes): "x'" + bytes.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }
}

extension SQLiteValue {
    /// A value by its storage class and bytes, not by SQLite's comparison: the integer and
    /// the real −2⁶³ are equal values but two keys (a section's name is its first row's
    /// value as stored, so names are cached by this).
    struct Exact: Hashable {
        let value: SQLiteValue

        init(_ value: SQLiteValue) { self.value = value }

        static func == (a: Exact, b: Exact) -> Bool {
            switch (a.value, b.value) {
            case (.null, .null): true
            case (.integer(let x), .integer(let y)): x == y
            case (.real(let x), .real(let y)): x.bitPattern == y.bitPattern
            case (.text(let x), .text(let y)): x == y
            case (.blob(let x), .blob(let y)): x == y
            default: false
            }
        }

        func hash(into hasher: inout Hasher) {
            switch value {
            case .null: hasher.combine(0 as UInt8)
            case .integer(let v):
                hasher.combine(1 as UInt8)
                hasher.combine(v)
            case .real(let v):
                hasher.combine(2 as UInt8)
                hasher.combine(v.bitPattern)
            case .text(let bytes):
                hasher.combine(3 as UInt8)
                hasher.combine(bytes)
            case .blob(let bytes):
                hasher.combine(4 as UInt8)
                hasher.combine(bytes)
            }
        }
    }
}
