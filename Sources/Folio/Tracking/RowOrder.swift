import Foundation
import GRDB
import GRDBSQLite

/// The sort-key values of one row, as SQLite orders them.
struct RowKey {
    var id: Int64
    /// One value per ``OrderTerm`` of the query, the rowid included.
    var values: [DatabaseValue]
    /// The section value, when the controller has sections.
    var section: DatabaseValue?
}

/// Reads `id, key…, section` rows (``SQLBuilder/sortKeyColumns(_:section:)``) and
/// compares them exactly as the query's `ORDER BY` does.
struct RowOrder {
    let terms: [OrderTerm]
    let section: SectionExpression?
    /// For each term, the column of the row that holds it.
    private let sources: [Int]

    init(query: CompiledQuery, section: SectionExpression?) {
        self.terms = query.order
        self.section = section
        var sources: [Int] = []
        var next = 1
        for term in query.order {
            if term.column == "id" { sources.append(0) } else { sources.append(next); next += 1 }
        }
        self.sources = sources
    }

    /// The keys of the current row of a stepped statement, read with the C API.
    func key(statement sqlite: OpaquePointer) -> RowKey {
        let id = sqlite3_column_int64(sqlite, 0)
        var values: [DatabaseValue] = []
        values.reserveCapacity(sources.count)
        for source in sources { values.append(DatabaseValue.exact(sqliteStatement: sqlite, index: Int32(source))) }
        let value: DatabaseValue? = section.map {
            $0.value(DatabaseValue(sqliteStatement: sqlite, index: sqlite3_column_count(sqlite) - 1))
        }
        return RowKey(id: id, values: values, section: value)
    }

    /// Whether `a` comes before `b` in the results.
    func precedes(_ a: RowKey, _ b: RowKey) -> Bool {
        for (i, term) in terms.enumerated() {
            let c = Self.compare(a.values[i], b.values[i])
            if c != 0 { return term.descending ? c > 0 : c < 0 }
        }
        return false
    }

    /// Where `key` falls between `low` and `high` by their first sort value, from 0 to 1,
    /// when all three are numbers and the two bounds differ; `nil` otherwise.
    func fraction(of key: RowKey, between low: RowKey, and high: RowKey) -> Double? {
        func number(_ value: DatabaseValue) -> Double? {
            switch value.storage {
            case .int64(let v): Double(v)
            case .double(let v): v.isFinite ? v : nil
            default: nil
            }
        }
        guard let x = number(key.values[0]), let a = number(low.values[0]), let b = number(high.values[0]), a != b else {
            return nil
        }
        let f = (x - a) / (b - a)
        return f.isFinite ? Swift.min(1, Swift.max(0, f)) : nil
    }

    /// SQLite's order for the BINARY collation: NULL < numbers < text (bytes) < blobs (bytes).
    static func compare(_ a: DatabaseValue, _ b: DatabaseValue) -> Int {
        func rank(_ v: DatabaseValue) -> Int {
            switch v.storage {
            case .null: 0
            case .int64, .double: 1
            case .string: 2
            case .blob: 3
            }
        }
        let ra = rank(a), rb = rank(b)
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a.storage, b.storage) {
        case (.int64(let x), .int64(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.int64(let x), .double(let y)): return compareNumbers(Double(x), y, exactInt: x)
        case (.double(let x), .int64(let y)): return -compareNumbers(Double(y), x, exactInt: y)
        case (.double(let x), .double(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.string(let x), .string(let y)): return compareBytes(Array(x.utf8), Array(y.utf8))
        case (.blob(let x), .blob(let y)): return compareBytes(Array(x), Array(y))
        default: return 0
        }
    }

    private static func compareNumbers(_ x: Double, _ y: Double, exactInt: Int64) -> Int {
        x < y ? -1 : (x > y ? 1 : 0)
    }

    private static func compareBytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        let n = Swift.min(x.count, y.count)
        for i in 0..<n where x[i] != y[i] { return x[i] < y[i] ? -1 : 1 }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }
}
