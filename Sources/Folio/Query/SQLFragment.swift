import Foundation
import GRDB

/// A piece of SQL and the values bound to its `?` placeholders, in order.
///
/// Two fragments are equal only when they are the same statement text byte for byte and
/// bind the same values exactly: the same storage class (`1` is not `1.0`, text is not a
/// blob with the same bytes), text and blobs by their bytes (`"é"` is not `"e\u{301}"`,
/// `"K"` is not the Kelvin sign), reals by their bits (`0.0` is not `-0.0`). GRDB's
/// `DatabaseValue` equality — Swift `String` equality, which is canonical equivalence, and
/// `1 == 1.0` — would make two queries that SQLite answers differently look the same (a
/// `TEXT` column compares `'1'` with `1` but not with `1.0`; `"é"` and `"e\u{301}"` match
/// different rows). Being stricter than SQLite's own equality costs at most a scan that
/// could have been skipped; being looser shows the wrong rows.
struct SQLFragment: Sendable {
    var sql: String
    var arguments: [DatabaseValue]

    init(_ sql: String, _ arguments: [DatabaseValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    var statementArguments: StatementArguments { StatementArguments(arguments) }

    /// A stable text for the fragment and its values (cache fingerprints), exact as equality
    /// is: each value with its storage class, text and blobs in hexadecimal, reals with their
    /// bits — so that the text is ASCII wherever the values are not.
    var fingerprint: String {
        sql + " <- [" + arguments.map(Self.exactDescription).joined(separator: ", ") + "]"
    }

    /// A value as the fingerprint spells it: distinct for values that are not identical.
    static func exactDescription(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: "NULL"
        case .int64(let v): "integer \(v)"
        case .double(let v): "real \(v) 0x\(String(v.bitPattern, radix: 16))"
        case .string(let v): "text x'\(hex(v.utf8))'"
        case .blob(let v): "blob x'\(hex(v))'"
        }
    }

    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            text.append(Character(Unicode.Scalar(hexDigits[Int(byte >> 4)])))
            text.append(Character(Unicode.Scalar(hexDigits[Int(byte & 0x0F)])))
        }
        return text
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}

extension SQLFragment: Hashable {
    static func == (a: SQLFragment, b: SQLFragment) -> Bool {
        a.sql.hasSameBytes(as: b.sql) && a.arguments.count == b.arguments.count
            && zip(a.arguments, b.arguments).allSatisfy { isIdentical($0, $1) }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(sql.utf8.count)
        for byte in sql.utf8 { hasher.combine(byte) }
        hasher.combine(arguments.count)
        for argument in arguments { Self.hashIdentity(of: argument, into: &hasher) }
    }

    /// Whether two bound values are the same value of the same storage class, text and
    /// blobs byte for byte and reals bit for bit.
    static func isIdentical(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
        switch (a.storage, b.storage) {
        case (.null, .null): true
        case (.int64(let x), .int64(let y)): x == y
        case (.double(let x), .double(let y)): x.bitPattern == y.bitPattern
        case (.string(let x), .string(let y)): x.hasSameBytes(as: y)
        case (.blob(let x), .blob(let y)): x == y
        default: false
        }
    }

    /// Hashing that agrees with ``isIdentical(_:_:)``.
    static func hashIdentity(of value: DatabaseValue, into hasher: inout Hasher) {
        switch value.storage {
        case .null:
            hasher.combine(0 as UInt8)
        case .int64(let v):
            hasher.combine(1 as UInt8)
            hasher.combine(v)
        case .double(let v):
            hasher.combine(2 as UInt8)
            hasher.combine(v.bitPattern)
        case .string(let v):
            hasher.combine(3 as UInt8)
            hasher.combine(v.utf8.count)
            for byte in v.utf8 { hasher.combine(byte) }
        case .blob(let v):
            hasher.combine(4 as UInt8)
            hasher.combine(v)
        }
    }
}
