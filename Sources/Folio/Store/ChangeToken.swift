import Foundation
import GRDB

/// Which database, and which state of one entity's table in it: what a persistent section
/// cache is checked against before it is trusted.
///
/// It is two values read from the database itself, in the same read transaction as the
/// rows they describe:
///
/// - the **database identity**: 16 random bytes created with the database and stored in
///   it (`folio_metadata`), so a file deleted and created again at the same path, or
///   another file sharing a cache directory, has another one;
/// - the entity's **change identifier**: 16 random bytes that SQLite triggers renew at
///   every row inserted, updated or deleted in the entity's table, by any connection or
///   process (the `sqlite3` shell included). It never comes back: after the file is
///   rolled back (a restore from a backup, a file copied without its WAL, a WAL lost to
///   power failure), the next write makes a new value, not an old one again.
///
/// Two tokens are equal when both values are. A token is *unknown* when the file lacks
/// either value (Folio's tables damaged by hand): no cache is used or written for an
/// unknown token.
public struct ChangeToken: Hashable, Sendable, CustomStringConvertible {
    /// The database identity, 16 bytes (empty when unknown).
    let database: Data
    /// The entity's change identifier, 16 bytes (empty when unknown).
    let change: Data

    init(database: Data?, change: Data?) {
        if let database, let change, database.count == 16, change.count == 16 {
            self.database = database
            self.change = change
        } else {
            self.database = Data()
            self.change = Data()
        }
    }

    init?(databaseHex: String, changeHex: String) {
        guard let database = Data(hex: databaseHex), let change = Data(hex: changeHex) else { return nil }
        self.init(database: database, change: change)
        if !isKnown { return nil }
    }

    static let unknown = ChangeToken(database: nil, change: nil)

    /// One token for several tables (a list and the tables it reads through to-ones): it
    /// changes when any of theirs does. Its change identifier is 16 bytes hashed from the
    /// tables' (two FNV-1a hashes of their concatenation, with different seeds); unknown
    /// when any token is unknown or the tokens are of different databases.
    static func combining(_ tokens: [ChangeToken]) -> ChangeToken {
        guard let first = tokens.first, tokens.allSatisfy({ $0.isKnown && $0.database == first.database }) else {
            return .unknown
        }
        if tokens.count == 1 { return first }
        let bytes = tokens.reduce(into: Data()) { $0.append($1.change) }
        var change = Data()
        for seed: UInt64 in [0xcbf2_9ce4_8422_2325, 0x6c62_272e_07bb_0142] {
            withUnsafeBytes(of: fnv1a64(bytes, seed: seed).bigEndian) { change.append(contentsOf: $0) }
        }
        return ChangeToken(database: first.database, change: change)
    }

    /// Whether both values were found in the database.
    var isKnown: Bool { database.count == 16 }

    /// `database/change` in hexadecimal, or `unknown`.
    /// - Complexity: O(1).
    public var description: String { isKnown ? "\(database.hex)/\(change.hex)" : "unknown" }

    /// The token of `table`, read on `db` (in the caller's transaction): one indexed lookup
    /// through a cached statement (trackers read it at every commit they follow).
    static func read(table: String, _ db: Database) throws -> ChangeToken {
        let statement = try db.cachedStatement(sql: SQLBuilder.changeToken)
        guard let row = try Row.fetchOne(statement, arguments: [table]) else { return .unknown }
        return ChangeToken(database: blob(row[0]), change: blob(row[1]))
    }

    private static func blob(_ value: DatabaseValue) -> Data? {
        if case .blob(let data) = value.storage { return data }
        return nil
    }
}

extension Data {
    /// Lowercase hexadecimal.
    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * 2)
        for byte in self {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses lowercase or uppercase hexadecimal; `nil` for anything else.
    init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
            i += 2
        }
        self.init(bytes)
    }
}
