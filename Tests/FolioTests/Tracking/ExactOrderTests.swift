import Foundation
import GRDB
import GRDBSQLite
import Testing
@testable import Folio

/// Folio's comparison of stored values (``SQLiteValue``) against SQLite's own, on a
/// catalogue of extremes: every pair, both ways.
@Suite("Exact order")
struct ExactOrderTests {
    /// SQL literals of values SQLite stores as they are (a column with no affinity).
    static let catalogue: [String] = [
        "NULL",
        // Integers at the edges, and around 2^53 where Double stops being exact.
        "-9223372036854775808", "-9223372036854775807", "-9007199254740993", "-9007199254740992", "-1", "0", "1",
        "9007199254740992", "9007199254740993", "9223372036854775806", "9223372036854775807",
        // Reals: infinities, huge and tiny, ±2^63, ±0, halves, 2^53 neighbours.
        "-9e999", "-1e300", "-9223372036854775808.0", "-9223372036854774784.0", "-9007199254740992.0", "-1.5",
        "-4.9e-324", "-0.0", "0.0", "4.9e-324", "0.5", "1.0", "9007199254740992.0", "9007199254740994.0",
        "9223372036854774784.0", "9223372036854775807.0", "1e300", "9e999",
        // Text by bytes: empty, NUL, prefixes, NFC/NFD, K/Kelvin, ß/SS, emoji, invalid UTF-8.
        "''", "CAST(x'00' AS TEXT)", "CAST(x'0061' AS TEXT)", "'a'", "CAST(x'610062' AS TEXT)", "'ab'", "'SS'", "'ß'",
        "'K'", "CAST(x'e284aa' AS TEXT)", "CAST(x'c3a9' AS TEXT)", "CAST(x'65cc81' AS TEXT)", "'🇫🇷'",
        "CAST(x'efbfbd' AS TEXT)", "CAST(x'c3' AS TEXT)", "CAST(x'ff' AS TEXT)", "CAST(x'ff00' AS TEXT)",
        // Blobs by bytes.
        "x''", "x'00'", "x'0000'", "x'61'", "x'ff'",
    ]

    /// The catalogue as SQLite holds it, read with ``SQLiteValue/init(sqliteStatement:index:)``.
    static func values(_ db: Database) throws -> [SQLiteValue] {
        try db.execute(sql: "CREATE TEMP TABLE v (x)")
        for literal in catalogue { try db.execute(sql: "INSERT INTO v (x) VALUES (\(literal))") }
        var values: [SQLiteValue] = []
        try db.cachedStatement(sql: "SELECT x FROM v ORDER BY rowid").forEachRow(in: db) {
            values.append(SQLiteValue(sqliteStatement: $0, index: 0))
        }
        return values
    }

    @Test func everyPairComparesAsSQLiteCompares() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            let values = try Self.values(db)
            #expect(values.count == Self.catalogue.count)
            var pairs = 0
            let statement = try db.cachedStatement(
                sql:
                    "SELECT a.rowid, b.rowid, a.x < b.x, a.x = b.x, a.x > b.x FROM v a, v b WHERE a.x IS NOT NULL AND b.x IS NOT NULL"
            )
            try statement.forEachRow(in: db) { row in
                let i = Int(sqlite3_column_int64(row, 0)) - 1, j = Int(sqlite3_column_int64(row, 1)) - 1
                let sqlite = sqlite3_column_int64(row, 2) == 1 ? -1 : (sqlite3_column_int64(row, 3) == 1 ? 0 : 1)
                #expect(sqlite3_column_int64(row, 4) == (sqlite == 1 ? 1 : 0))
                let folio = SQLiteValue.compare(values[i], values[j])
                #expect(folio == sqlite, "\(Self.catalogue[i]) vs \(Self.catalogue[j]): SQLite \(sqlite), Folio \(folio)")
                #expect((values[i] == values[j]) == (sqlite == 0))
                if sqlite == 0 { #expect(values[i].hashValue == values[j].hashValue, "equal values hash alike") }
                pairs += 1
            }
            #expect(pairs == (values.count - 1) * (values.count - 1))
            // NULL first, and ORDER BY agrees with a Swift sort of the values.
            var order: [Int] = []
            try db.cachedStatement(sql: "SELECT rowid FROM v ORDER BY x, rowid").forEachRow(in: db) {
                order.append(Int(sqlite3_column_int64($0, 0)) - 1)
            }
            let swift = values.indices.sorted { values[$0] != values[$1] ? values[$0] < values[$1] : $0 < $1 }
            #expect(order == swift)
        }
    }

    /// SQLite's integer/real comparison, exhaustively around the places a `Double` rounds.
    @Test(
        arguments: [.max, .max - 1, .max - 512, .max - 1_024, .min, .min + 1, 1 << 53, (1 << 53) + 1, -(1 << 53) - 1, 0]
            as [Int64])
    func integersAgainstNearbyReals(_ integer: Int64) throws {
        let queue = try DatabaseQueue()
        try queue.read { db in
            let base = Double(integer)
            for real in [base, base.nextUp, base.nextDown, -base, 0.0, -0.0, .infinity, -.infinity, base + 0.5, base - 0.5] {
                let sqlite = try Int.fetchOne(
                    db, sql: "SELECT (CAST(? AS INTEGER) > ?) - (CAST(? AS INTEGER) < ?)",
                    arguments: [integer, real, integer, real])!
                #expect(SQLiteValue.compare(integer: integer, real: real) == sqlite, "\(integer) vs \(real)")
                #expect(SQLiteValue.compare(.integer(integer), .real(real)) == sqlite)
                #expect(SQLiteValue.compare(.real(real), .integer(integer)) == -sqlite)
            }
        }
    }

    /// Values that cross between Swift and SQLite keep their bytes.
    @Test func textKeepsItsBytesThroughGRDBValues() {
        for text in ["a\0b", "\u{E9}", "e\u{301}", "\u{212A}", "🇫🇷", ""] {
            let value = SQLiteValue(text.databaseValue)
            #expect(value == .text(Array(text.utf8)))
            #expect(SQLiteValue(value.databaseValue) == value)
        }
        #expect(SQLiteValue("\u{E9}".databaseValue) != SQLiteValue("e\u{301}".databaseValue), "Swift's == would merge them")
        #expect(SQLiteValue(Double.nan.databaseValue) == .null, "SQLite stores NaN as NULL")
        #expect(SectionKey<Article>.name(of: .text([0x61, 0x00, 0x62])) == "a\0b")
        #expect(SectionKey<Article>.name(of: .text([0xFF])) == "\u{FFFD}", "a name is for display: repaired")
    }
}
