import Foundation
import GRDB
import GRDBSQLite
@testable import Folio

/// The record of the randomized workloads: one attribute per kind of trouble. `rank` holds
/// integers at the extremes (and, written by raw SQL, reals beside them), `value` doubles at
/// the extremes, `stamp` dates near and far (or nil), `name` and `category` text with NULs,
/// NFC/NFD pairs, case pairs, emoji and (by raw SQL) invalid UTF-8, `score` optional integers.
/// `name` is searchable (so folded) and `category` folded: their keys and the full-text index
/// are kept through every kind of write, raw SQL and other connections included.
struct Item: PersistentRecord, Equatable, Codable {
    var id: RecordID?
    var rank: Int64 = 0
    var value: Double = 0
    var stamp: Date? = nil
    var name = ""
    var category: String? = nil
    var score: Int? = nil
    var key = ""
    var flag = false

    static let entity = EntityDescription<Item>(
        "item",
        [
            AttributeDescription(\.rank, indexed: true),
            AttributeDescription(\.value),
            AttributeDescription(\.stamp, indexed: true),
            AttributeDescription(\.name, searchable: true),
            AttributeDescription(\.category, folded: true),
            AttributeDescription(\.score),
            AttributeDescription(\.key, unique: true),
            AttributeDescription(\.flag),
        ])

    /// The columns in the order ``StoredRow`` reads them.
    static let columns = ["id", "rank", "value", "stamp", "name", "category", "score", "key", "flag"]

    init() {}
}

/// A value exactly as SQLite stores it: text and blobs as bytes (NULs and invalid UTF-8
/// kept), reals with their sign and bit pattern.
enum Stored: Hashable, Codable, CustomStringConvertible {
    case null
    case int(Int64)
    case real(Double)
    case text([UInt8])
    case blob([UInt8])

    static func string(_ s: String) -> Stored { .text(Array(s.utf8)) }

    // Codable as one compact string (JSON cannot hold -0.0, NaN or infinities exactly).
    init(from decoder: any Decoder) throws {
        let s = try decoder.singleValueContainer().decode(String.self)
        let payload = String(s.dropFirst(2))
        switch s.prefix(2) {
        case "n:": self = .null
        case "i:": self = .int(Int64(payload)!)
        case "r:": self = .real(Double(bitPattern: UInt64(payload, radix: 16)!))
        case "t:": self = .text(Self.bytes(hex: payload))
        case "b:": self = .blob(Self.bytes(hex: payload))
        default: throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: s))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encode("n:")
        case .int(let v): try c.encode("i:\(v)")
        case .real(let v): try c.encode("r:" + String(v.bitPattern, radix: 16))
        case .text(let b): try c.encode("t:" + Self.hex(b))
        case .blob(let b): try c.encode("b:" + Self.hex(b))
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    static func bytes(hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    var isNull: Bool { self == .null }

    /// Equality as SQLite's `IS` compares (BINARY collation): integers and reals by exact
    /// value, text and blobs by bytes.
    func sqliteEquals(_ other: Stored) -> Bool {
        switch (self, other) {
        case (.null, .null): true
        case (.int(let a), .int(let b)): a == b
        case (.real(let a), .real(let b)): a == b
        case (.int(let a), .real(let b)), (.real(let b), .int(let a)): Stored.exactlyEqual(a, b)
        case (.text(let a), .text(let b)): a == b
        case (.blob(let a), .blob(let b)): a == b
        default: false
        }
    }

    static func exactlyEqual(_ i: Int64, _ d: Double) -> Bool {
        guard d.isFinite, d.rounded(.towardZero) == d, d >= -9.223372036854775808e18, d < 9.223372036854775808e18 else {
            return false
        }
        return Int64(d) == i
    }

    /// A canonical key for dictionaries: values SQLite calls equal get the same key.
    var identityKey: Stored {
        if case .real(let d) = self, let i = Int64(exactly: d) { return .int(i) }  // -0.0 IS 0.0 IS 0
        return self
    }

    /// Text as Swift shows it (invalid UTF-8 repaired, NULs kept).
    var lossyText: String? {
        if case .text(let b) = self { return String(decoding: b, as: UTF8.self) }
        return nil
    }

    var description: String {
        switch self {
        case .null: "nil"
        case .int(let v):
            switch v {
            case .max: "Int64.max"
            case .min: "Int64.min"
            default: String(v)
            }
        case .real(let v): Stored.describe(v)
        case .text(let b): Stored.describeText(b)
        case .blob(let b): "x'\(Stored.hex(b))'"
        }
    }

    static func describe(_ v: Double) -> String {
        if v == .infinity { return "inf" }
        if v == -.infinity { return "-inf" }
        if v == 0 { return v.sign == .minus ? "-0.0" : "0.0" }
        return "\(v)"
    }

    /// Text as a Swift literal when it is valid UTF-8, as `CAST(x'…' AS TEXT)` otherwise.
    static func describeText(_ b: [UInt8]) -> String {
        guard let s = String(validating: b, as: UTF8.self) else { return "CAST(x'\(hex(b))' AS TEXT)" }
        return swiftLiteral(s)
    }

    static func swiftLiteral(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (scalar.value >= 0x80 && !scalar.properties.isAlphabetic):
                out += "\\u{\(String(scalar.value, radix: 16))}"
            case _ where scalar.value >= 0x80: out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The value to bind, and the placeholder that keeps every byte of text (GRDB binds
    /// Swift strings as C strings, which end at a NUL).
    var binding: (placeholder: String, value: DatabaseValue) {
        switch self {
        case .null: ("?", .null)
        case .int(let v): ("?", v.databaseValue)
        case .real(let v): ("?", v.databaseValue)
        case .text(let b): ("CAST(? AS TEXT)", Data(b).databaseValue)
        case .blob(let b): ("?", Data(b).databaseValue)
        }
    }

    /// Reads column `index` of the current row of a stepped statement, every byte.
    static func column(_ sqlite: OpaquePointer, _ index: Int32) -> Stored {
        switch sqlite3_column_type(sqlite, index) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .int(sqlite3_column_int64(sqlite, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(sqlite, index))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(sqlite, index))
            guard count > 0, let p = sqlite3_column_text(sqlite, index) else { return .text([]) }
            return .text(Array(UnsafeBufferPointer(start: p, count: count)))
        default:
            let count = Int(sqlite3_column_bytes(sqlite, index))
            guard count > 0, let p = sqlite3_column_blob(sqlite, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: p, count: count)))
        }
    }
}

/// Runs `sql` and hands each row's columns, read exactly, to `body` (C API: fast in debug builds).
func forEachExactRow(_ db: Database, _ sql: String, _ arguments: [DatabaseValue] = [], _ body: ([Stored]) throws -> Void)
    throws
{
    let statement = try db.makeStatement(sql: sql)
    try statement.setArguments(StatementArguments(arguments))
    let sqlite = statement.sqliteStatement
    let columns = sqlite3_column_count(sqlite)
    while true {
        let code = sqlite3_step(sqlite)
        if code == SQLITE_DONE { break }
        guard code == SQLITE_ROW else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: sql)
        }
        var row: [Stored] = []
        row.reserveCapacity(Int(columns))
        for i in 0..<columns { row.append(Stored.column(sqlite, i)) }
        try body(row)
    }
}

/// One row of `item` exactly as stored.
struct StoredRow: Equatable, Codable {
    /// One value per ``Item/columns``, `id` first.
    var values: [Stored]

    var id: Int64 { if case .int(let v) = values[0] { return v } else { return 0 } }
    subscript(column: String) -> Stored { values[Item.columns.firstIndex(of: column)!] }

    static let select = "SELECT " + Item.columns.map { "\"\($0)\"" }.joined(separator: ", ") + " FROM item"

    static func readAll(_ db: Database) throws -> [Int64: StoredRow] {
        var rows: [Int64: StoredRow] = [:]
        try forEachExactRow(db, select) {
            let r = StoredRow(values: $0); rows[r.id] = r
        }
        return rows
    }

    static func read(_ db: Database, ids: Set<Int64>) throws -> [Int64: StoredRow] {
        guard !ids.isEmpty else { return [:] }
        var rows: [Int64: StoredRow] = [:]
        let json = "[" + ids.map(String.init).joined(separator: ",") + "]"
        try forEachExactRow(db, select + " WHERE id IN (SELECT value FROM json_each(?))", [json.databaseValue]) {
            let r = StoredRow(values: $0)
            rows[r.id] = r
        }
        return rows
    }

    /// The record Folio must decode from this row (each attribute by its documented
    /// rules), or `nil` when a value does not fit its attribute's type.
    var decoded: Item? {
        var item = Item()
        item.id = RecordID(id)
        guard case .int(let rank) = self["rank"] else { return nil }
        item.rank = rank
        switch self["value"] {
        case .real(let v): item.value = v
        case .int(let v): item.value = Double(v)
        case .null: item.value = .nan
        default: return nil
        }
        switch self["stamp"] {
        case .null: item.stamp = nil
        case .real(let v): item.stamp = Date(timeIntervalSince1970: v)
        case .int(let v): item.stamp = Date(timeIntervalSince1970: Double(v))
        default: return nil
        }
        guard let name = self["name"].lossyText else { return nil }
        item.name = name
        switch self["category"] {
        case .null: item.category = nil
        case .text: item.category = self["category"].lossyText
        default: return nil
        }
        switch self["score"] {
        case .null: item.score = nil
        case .int(let v): item.score = Int(v)
        default: return nil
        }
        guard let key = self["key"].lossyText else { return nil }
        item.key = key
        guard case .int(let flag) = self["flag"] else { return nil }
        item.flag = flag != 0
        return item
    }

    var description: String {
        zip(Item.columns, values).map { "\($0)=\($1)" }.joined(separator: " ")
    }
}

extension Item {
    /// Field by field, doubles and dates by bit pattern, text by bytes.
    func sameStoredValues(as other: Item) -> Bool {
        func bits(_ d: Date?) -> UInt64? { d.map { $0.timeIntervalSince1970.bitPattern } }
        return id == other.id && rank == other.rank && value.bitPattern == other.value.bitPattern
            && bits(stamp) == bits(other.stamp) && Array(name.utf8) == Array(other.name.utf8)
            && category.map { Array($0.utf8) } == other.category.map { Array($0.utf8) } && score == other.score
            && Array(key.utf8) == Array(other.key.utf8) && flag == other.flag
    }

    var summary: String {
        "id=\(id.map { String($0.rawValue) } ?? "nil") rank=\(Stored.int(rank)) value=\(Stored.describe(value)) stamp=\(stamp.map { Stored.describe($0.timeIntervalSince1970) } ?? "nil") name=\(Stored.swiftLiteral(name)) category=\(category.map(Stored.swiftLiteral) ?? "nil") score=\(score.map(String.init) ?? "nil") key=\(key) flag=\(flag)"
    }
}

/// The values the generators draw from: every extreme the rules name.
enum Extremes {
    static let ranks: [Int64] = [
        .min, .min + 1, -(1 << 53) - 1, -(1 << 53), -1, 0, 1, 2, 3, 1 << 53, (1 << 53) + 1, (1 << 62), .max - 1, .max,
    ]
    /// Reals a raw SQL write may put in the integer column `rank`: SQLite keeps them real
    /// (not integral, or beyond Int64), and compares them with integers exactly.
    static let realRanks: [Double] = [
        9.223372036854775807e18, -9.3e18, 0.5, -0.5, 9007199254740992.5e0, 4503599627370495.5, .infinity, -.infinity,
        1e300, 2.5,
    ]
    static let values: [Double] = [
        -.infinity, -.greatestFiniteMagnitude, -1e300, -1, -0.0, 0.0, .leastNonzeroMagnitude, 1e-300, 0.5, 1,
        9_007_199_254_740_994, 1e300, .greatestFiniteMagnitude, .infinity, -.leastNonzeroMagnitude, .leastNormalMagnitude,
    ]
    static let stamps: [Double] = [
        -1e15, -62_135_596_800, -86_400.5, -0.5, -0.0, 0, 0.5, 86_399.999, 86_400, 86_401, 1_000_000_000, 253_402_300_799,
        1e15, .infinity, -.infinity, 4_102_444_800,
    ]
    static let texts: [String] = [
        "", "a", "A", "b", "a\0b", "a\0", "\0", "\0a", "é", "e\u{301}", "K", "\u{212A}", "k", "ß", "SS", "ss", "😀", "🇫🇷",
        "🇫", "ǅ", "Z", "zz", "\u{FFFD}", "Ω", "\u{2126}", "ﬁ", "fi", "Ä", "A\u{308}", "mix\0é", "É", "Émile", "emile",
        "İ", "ı", "I", "\u{1E9E}", "Straße", "kelvin K", "ς",
        // Leading NULs (a C-string `substr` put them in the "" section), combining marks
        // first, skin tones and ZWJ families, 4-byte UTF-8.
        "\0b", "\0\0", "\0é", "\u{301}a", "👍🏽", "👨‍👩‍👧", "𝄞", "\u{10FFFF}",
    ]
    /// Byte strings that are not valid UTF-8, written with `CAST(x'…' AS TEXT)`.
    static let invalidTexts: [[UInt8]] = [
        [0xFF, 0x41], [0xFE, 0x41], [0xC3], [0xC3, 0x41], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0x41, 0xFF], [0x80],
        [0xF4, 0x90, 0x80, 0x80], [0x4B, 0xFF, 0x00, 0x42],
        // Around "é" (C3 A9): sections by a lead byte's whole sequence stay contiguous, a
        // C3 section of C3 41 and C3 C3 would surround it. Truncated 3- and 4-byte
        // sequences, a lone continuation byte after a NUL, invalid lead bytes.
        [0xC3, 0xC3], [0xC3, 0xC3, 0x41], [0xC3, 0xA9, 0xFF], [0xE2, 0x82], [0xF0, 0x9F], [0xF0, 0x9F, 0x98],
        [0x00, 0x80], [0x00], [0xC1, 0x81], [0xF5, 0x80], [0xBF],
    ]
    static let categories: [String?] = [
        nil, "", "a", "a\0b", "a\0", "é", "e\u{301}", "K", "\u{212A}", "ß", "SS", "🇫🇷", "b", "É", "A", "ss",
    ]
}

/// The synchronous `read`, callable from async code (where the async overload wins).
func readSync<T>(_ store: Store, _ body: (Database) throws -> T) throws -> T {
    try store.read(body)
}

/// The synchronous `write` of a GRDB writer, callable from async code.
func writeSync<T>(_ writer: some DatabaseWriter, _ body: (Database) throws -> T) throws -> T {
    try writer.write(body)
}
