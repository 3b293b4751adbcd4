import Foundation
import GRDB
import GRDBSQLite

/// How one attribute's column of a stepped statement is read into a record: this runs for
/// every attribute of every record a batch loads (``RowDecoder``).
///
/// For a property stored inline in a struct (`MemoryLayout.offset(of:)`) of one of the
/// standard types (`String`, `Int`, `Int64`, `Bool`, `Double`, `Date`, and their optionals),
/// the column is read with the C API straight into the property's bytes (``slot(_:)``): no
/// `DatabaseValue` is made, and no generic `AttributeValue.decode` is called, whose
/// metadata lookups and reference counting cost about a third of the decoding of a row.
/// A column whose storage class the type does not take (an integer column holding text
/// that raw SQL wrote) is read the general way, which throws the same
/// ``FolioError/decoding(column:reason:)`` as it always did. Every other type and layout
/// is read the general way only (``general(_:column:)``): the column as an exact
/// `DatabaseValue` (`DatabaseValue.exact(sqliteStatement:index:)`), decoded by the type.
enum ColumnReader<Root> {
    typealias Read = (inout Root, OpaquePointer, Int32) throws -> Void

    /// Where the property is in the record and its direct write, when it has one.
    static func slot<Value: AttributeValue>(_ keyPath: WritableKeyPath<Root, Value>) -> DirectColumn.Slot? {
        guard let offset = MemoryLayout<Root>.offset(of: keyPath), let write = DirectColumn.writer(for: Value.self) else {
            return nil
        }
        return DirectColumn.Slot(offset: offset, write: write)
    }

    /// The general read: the column as an exact `DatabaseValue`, decoded by the type, and
    /// assigned in place at its offset when it has one, through the key path otherwise.
    static func general<Value: AttributeValue>(_ keyPath: WritableKeyPath<Root, Value>, column: String) -> Read {
        if let offset = MemoryLayout<Root>.offset(of: keyPath) {
            return { record, sqlite, index in
                let value = try Value.decode(stored: DatabaseValue.exact(sqliteStatement: sqlite, index: index), column: column)
                withUnsafeMutableBytes(of: &record) { bytes in
                    (bytes.baseAddress! + offset).assumingMemoryBound(to: Value.self).pointee = value
                }
            }
        }
        return { record, sqlite, index in
            record[keyPath: keyPath] = try Value.decode(
                stored: DatabaseValue.exact(sqliteStatement: sqlite, index: index), column: column)
        }
    }
}

extension ColumnReader {
    /// The general read of a type that `decode` decodes (a `Codable` type's
    /// ``CodableStorage``), as ``general(_:column:)`` reads an ``AttributeValue``.
    static func general<Value>(
        _ keyPath: WritableKeyPath<Root, Value>, column: String,
        decode: @escaping @Sendable (DatabaseValue, String) throws -> Value
    ) -> Read {
        if let offset = MemoryLayout<Root>.offset(of: keyPath) {
            return { record, sqlite, index in
                let value = try decode(DatabaseValue.exact(sqliteStatement: sqlite, index: index), column)
                withUnsafeMutableBytes(of: &record) { bytes in
                    (bytes.baseAddress! + offset).assumingMemoryBound(to: Value.self).pointee = value
                }
            }
        }
        return { record, sqlite, index in
            record[keyPath: keyPath] = try decode(DatabaseValue.exact(sqliteStatement: sqlite, index: index), column)
        }
    }
}

/// Decodes records from the current row of stepped statements laid out as `id, attributes…`,
/// reading each column once with the C API (text with every byte): directly where the
/// attribute has a direct read (``ColumnReader``), through its general read otherwise.
///
/// A class, so that a caller decoding row after row calls it without looking up generic
/// metadata at every row (a method of the generic ``EntityDescription`` copies the entity,
/// which does).
// @unchecked Sendable: immutable; the general reads are AttributeDescription's, which are.
final class RowDecoder<Root: PersistentRecord>: @unchecked Sendable {
    /// Each attribute's direct read, `nil` where it has none.
    private let slots: [DirectColumn.Slot?]
    /// Each attribute's general read.
    private let general: [ColumnReader<Root>.Read]

    init(_ attributes: [AttributeDescription<Root>]) {
        slots = attributes.map(\.directSlot)
        general = attributes.map(\.decode)
    }

    /// The record in the statement's current row.
    ///
    /// - Complexity: O(attributes).
    func decode(_ sqlite: OpaquePointer) throws -> Root {
        var record = Root()
        record.id = RecordID(sqlite3_column_int64(sqlite, 0))
        // Direct reads into the record's bytes, for as long as they take their columns;
        // a column they do not take (no direct read, or a storage class the type refuses)
        // the general way; then direct reads again from the next.
        var index = readDirectly(from: 0, sqlite, into: &record)
        while index < slots.count {
            try general[index](&record, sqlite, Int32(index + 1))
            index = readDirectly(from: index + 1, sqlite, into: &record)
        }
        return record
    }

    /// Reads the columns of the attributes from `start` on directly into `record`, and returns the index of
    /// the first attribute whose column was not read (`slots.count` when every one was).
    private func readDirectly(from start: Int, _ sqlite: OpaquePointer, into record: inout Root) -> Int {
        withUnsafeMutableBytes(of: &record) { bytes in
            slots.withUnsafeBufferPointer { slots in
                for index in start..<slots.count {
                    guard let slot = slots[index], slot.write(sqlite, Int32(index + 1), bytes.baseAddress! + slot.offset) else {
                        return index
                    }
                }
                return slots.count
            }
        }
    }
}

/// The direct reads of ``ColumnReader``: plain functions of concrete types (a generic one
/// would look up its types' metadata at run time, on every call, as the general decode
/// does), each writing the column into an initialized property of its type at `slot`, or
/// returning `false`, writing nothing, for a storage class the type does not take.
enum DirectColumn {
    /// A C function, so that calling it retains nothing.
    typealias Write = @convention(c) (OpaquePointer, Int32, UnsafeMutableRawPointer) -> Bool

    /// A property's offset in its record and its direct write.
    struct Slot: Sendable {
        let offset: Int
        let write: Write
    }

    /// The direct write for `type`, if it has one.
    static func writer(for type: Any.Type) -> Write? {
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(String.self): { DirectColumn.write($0, $1, $2, DirectColumn.readText) }
        case ObjectIdentifier(String?.self): { DirectColumn.writeOptional($0, $1, $2, DirectColumn.readText) }
        case ObjectIdentifier(Int.self): { DirectColumn.write($0, $1, $2, DirectColumn.readInt) }
        case ObjectIdentifier(Int?.self): { DirectColumn.writeOptional($0, $1, $2, DirectColumn.readInt) }
        case ObjectIdentifier(Int64.self): { DirectColumn.write($0, $1, $2, DirectColumn.readInt64) }
        case ObjectIdentifier(Int64?.self): { DirectColumn.writeOptional($0, $1, $2, DirectColumn.readInt64) }
        case ObjectIdentifier(Bool.self): { DirectColumn.write($0, $1, $2, DirectColumn.readBool) }
        case ObjectIdentifier(Bool?.self): { DirectColumn.writeOptional($0, $1, $2, DirectColumn.readBool) }
        case ObjectIdentifier(Double.self): { DirectColumn.write($0, $1, $2, DirectColumn.readDouble) }
        case ObjectIdentifier(Double?.self): { DirectColumn.writeOptional($0, $1, $2, DirectColumn.readNumber) }
        case ObjectIdentifier(Date.self): { DirectColumn.write($0, $1, $2, DirectColumn.readNaNDate) }
        case ObjectIdentifier(Date?.self): { DirectColumn.writeOptional($0, $1, $2, DirectColumn.readDate) }
        default: nil
        }
    }

    private static func isNull(_ sqlite: OpaquePointer, _ index: Int32) -> Bool {
        sqlite3_column_type(sqlite, index) == SQLITE_NULL
    }

    /// Text with every byte (NULs included), as `DatabaseValue.exact` reads it.
    private static func readText(_ sqlite: OpaquePointer, _ index: Int32) -> String? {
        guard sqlite3_column_type(sqlite, index) == SQLITE_TEXT else { return nil }
        guard let text = sqlite3_column_text(sqlite, index) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(sqlite, index))), as: UTF8.self)
    }

    private static func readInt64(_ sqlite: OpaquePointer, _ index: Int32) -> Int64? {
        sqlite3_column_type(sqlite, index) == SQLITE_INTEGER ? sqlite3_column_int64(sqlite, index) : nil
    }

    /// Where `Int` is narrower than 64 bits, a value it cannot hold is left to the general
    /// decode.
    private static func readInt(_ sqlite: OpaquePointer, _ index: Int32) -> Int? {
        readInt64(sqlite, index).flatMap { Int(exactly: $0) }
    }

    private static func readBool(_ sqlite: OpaquePointer, _ index: Int32) -> Bool? {
        readInt64(sqlite, index).map { $0 != 0 }
    }

    /// A real, or an integer converted, as `Double` and `Date` decode them; `nil` for
    /// anything else (`NULL` included).
    private static func readNumber(_ sqlite: OpaquePointer, _ index: Int32) -> Double? {
        switch sqlite3_column_type(sqlite, index) {
        case SQLITE_FLOAT: sqlite3_column_double(sqlite, index)
        case SQLITE_INTEGER: Double(sqlite3_column_int64(sqlite, index))
        default: nil
        }
    }

    /// A number as `Double` decodes one: `NULL` is NaN (SQLite stores NaN as `NULL`).
    private static func readDouble(_ sqlite: OpaquePointer, _ index: Int32) -> Double? {
        isNull(sqlite, index) ? .nan : readNumber(sqlite, index)
    }

    private static func readDate(_ sqlite: OpaquePointer, _ index: Int32) -> Date? {
        readNumber(sqlite, index).map { Date(timeIntervalSince1970: $0) }
    }

    /// A number as `Date` decodes one: `NULL` is a NaN date.
    private static func readNaNDate(_ sqlite: OpaquePointer, _ index: Int32) -> Date? {
        readDouble(sqlite, index).map { Date(timeIntervalSince1970: $0) }
    }

    /// Writes what `read` reads at `slot`, a `T`. Called with concrete types only (in
    /// ``writer(for:)``), and inlined, so that no metadata is looked up.
    @inline(__always)
    private static func write<T>(
        _ sqlite: OpaquePointer, _ index: Int32, _ slot: UnsafeMutableRawPointer, _ read: (OpaquePointer, Int32) -> T?
    ) -> Bool {
        guard let value = read(sqlite, index) else { return false }
        slot.assumingMemoryBound(to: T.self).pointee = value
        return true
    }

    /// Writes `nil` for `NULL`, otherwise what `read` reads, at `slot`, a `T?`.
    @inline(__always)
    private static func writeOptional<T>(
        _ sqlite: OpaquePointer, _ index: Int32, _ slot: UnsafeMutableRawPointer, _ read: (OpaquePointer, Int32) -> T?
    ) -> Bool {
        if isNull(sqlite, index) {
            slot.assumingMemoryBound(to: T?.self).pointee = nil
            return true
        }
        guard let value = read(sqlite, index) else { return false }
        slot.assumingMemoryBound(to: T?.self).pointee = value
        return true
    }
}
