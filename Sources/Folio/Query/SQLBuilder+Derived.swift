import Foundation
import GRDB

// Derived attributes (``Derivation``): the triggers that keep a parent's column equal to an
// aggregate of its children, whoever writes them, and the statement that computes it anew.
//
// A count is kept by deltas — one more when a matching child points to the parent, one
// less when it stops (deleted, re-pointed, no longer matching) — so that a child's write
// costs one indexed update of its parent. A sum, minimum or maximum is computed anew for
// the parents a child's write touched, through the reference index (SQLite's own `sum`,
// `total`, `min` and `max`, so the value is what `SELECT` over the children gives, and
// reals never drift as a running sum would). A parent's insert (and a change of its rowid)
// computes its value from the children already pointing to its rowid (dangling references
// another program wrote).
//
// Rows SQLite's `REPLACE` deletes (a child's unique value taken by another row, or its rowid
// by an `INSERT OR REPLACE`) run no delete trigger for a connection without
// `PRAGMA recursive_triggers`. So a `BEFORE` trigger notes in ``derivedNotesTable`` the
// matching rows the statement would replace, with their parents, and an `AFTER` trigger of
// the same event acts on those it did replace (gone, or now another row under the same
// rowid): one less for a count, computed anew for the others. Each `BEFORE` clears what an
// earlier statement noted (with `OR IGNORE`, the `AFTER` trigger never runs), and each
// `AFTER` reads only what the `BEFORE` of its own event noted.
extension SQLBuilder {
    /// The prefix of every derived attribute's trigger.
    static let derivedAttributeTriggerPrefix = "folio_derived_"

    /// The rows a `REPLACE` is about to delete, with their parents, by derived attribute
    /// (`"parent.column"`). A rowid table without constraints, so a trigger's insert never fails.
    static let derivedNotesTable = "folio_derived_notes"
    static let createDerivedNotes =
        "CREATE TABLE IF NOT EXISTS \(derivedNotesTable) (derived TEXT NOT NULL, row INTEGER NOT NULL, parent INTEGER NOT NULL)"

    /// The names of a derived attribute's triggers.
    static func derivedAttributeTriggerNames(parent: String, column: String) -> [String] {
        ["ins", "del", "upd", "note_ins", "note_upd", "gone_ins", "gone_upd", "parent_ins", "parent_id"].map {
            "\(derivedAttributeTriggerPrefix)\(parent)_\(column)_\($0)"
        }
    }

    /// The triggers that keep `derived` (see the top of this file). SQLite built-ins only;
    /// every name a validated identifier, every value of the filter a literal.
    static func derivedAttributeTriggers(_ derived: DeclaredDerived) -> [(name: String, sql: String)] {
        let child = derived.child
        let (p, d, c, r, id) = (
            quote(derived.parent), quote(derived.column), quote(child.table), quote(child.reference), quote("id")
        )
        let names = derivedAttributeTriggerNames(parent: derived.parent, column: derived.column)
        func trigger(_ index: Int, _ event: String, when: String?, _ body: String) -> (name: String, sql: String) {
            let condition = when.map { " WHEN \($0)" } ?? ""
            return (names[index], "CREATE TRIGGER \(quote(names[index])) \(event)\(condition) BEGIN \(body) END")
        }
        let matchNew = match(child.filterNew), matchOld = match(child.filterOld), matchRow = match(child.filterRow)
        let recompute = "UPDATE \(p) SET \(d) = \(derivedValue(derived, forParent: "\(p).\(id)"))"
        // A child inserted, deleted, or updated: the same events and conditions for every kind;
        // a count moves by one, the others are computed anew.
        let (onInsert, onDelete, updateWhen, onUpdate): (String, String, String, String)
        if derived.kind == .count {
            onInsert = "UPDATE \(p) SET \(d) = \(d) + 1 WHERE \(p).\(id) = NEW.\(r);"
            onDelete = "UPDATE \(p) SET \(d) = \(d) - 1 WHERE \(p).\(id) = OLD.\(r);"
            updateWhen = "NOT (OLD.\(r) IS NEW.\(r) AND \(matchOld) = \(matchNew))"
            onUpdate = "\(onDelete.dropLast()) AND \(matchOld); \(onInsert.dropLast()) AND \(matchNew);"
        } else {
            // A rowid change reorders the parent's children in the reference index, and SQLite's
            // `sum`, `total`, `min` and `max` depend on the order in corner cases (reals summed;
            // an integer sum past Int64 after a non-integer; `1` and `1.0` tied): computed anew.
            var unchanged = "OLD.\(id) IS NEW.\(id) AND OLD.\(r) IS NEW.\(r) AND \(matchOld) = \(matchNew)"
            if let value = child.value { unchanged += " AND " + identical("OLD.\(quote(value))", "NEW.\(quote(value))") }
            onInsert = "\(recompute) WHERE \(p).\(id) = NEW.\(r);"
            onDelete = "\(recompute) WHERE \(p).\(id) = OLD.\(r);"
            updateWhen = "(\(matchOld) OR \(matchNew)) AND NOT (\(unchanged))"
            onUpdate = "\(recompute) WHERE \(p).\(id) IN (OLD.\(r), NEW.\(r));"
        }
        var triggers = [
            trigger(0, "AFTER INSERT ON \(c)", when: "NEW.\(r) IS NOT NULL AND \(matchNew)", onInsert),
            trigger(1, "AFTER DELETE ON \(c)", when: "OLD.\(r) IS NOT NULL AND \(matchOld)", onDelete),
            trigger(2, "AFTER UPDATE ON \(c)", when: updateWhen, onUpdate),
        ]
        // The rows a REPLACE deletes: noted before, acted on after.
        let key = "'\(derived.parent).\(derived.column)'"
        let notes = derivedNotesTable
        let noted = "EXISTS (SELECT 1 FROM \(notes) WHERE derived = \(key))"
        let uniqueKeys = derived.childUniqueKeys
        func conflicting(excludingOld: Bool) -> String {
            let holders =
                ["\(c).\(id) = NEW.\(id)"]
                + uniqueKeys.map { key in
                    "(" + key.map { "\(c).\(quote($0)) = NEW.\(quote($0))" }.joined(separator: " AND ") + ")"
                }
            let other = excludingOld ? " AND \(c).\(id) IS NOT OLD.\(id)" : ""
            return "(\(holders.joined(separator: " OR ")))\(other)"
        }
        func note(excludingOld: Bool) -> String {
            let rows = conflicting(excludingOld: excludingOld)
            return
                "DELETE FROM \(notes) WHERE derived = \(key); INSERT INTO \(notes) (derived, row, parent) SELECT \(key), \(c).\(id), \(c).\(r) FROM \(c) WHERE \(rows) AND \(c).\(r) IS NOT NULL AND \(matchRow);"
        }
        // Replaced: gone, or another row now under its rowid.
        let gone =
            "folio_n.derived = \(key) AND (folio_n.row = NEW.\(id) OR NOT EXISTS (SELECT 1 FROM \(c) WHERE \(c).\(id) = folio_n.row))"
        let act: String
        if derived.kind == .count {
            act =
                "UPDATE \(p) SET \(d) = \(d) - (SELECT count(*) FROM \(notes) AS folio_n WHERE \(gone) AND folio_n.parent = \(p).\(id)) WHERE \(p).\(id) IN (SELECT folio_n.parent FROM \(notes) AS folio_n WHERE \(gone));"
        } else {
            act = "\(recompute) WHERE \(p).\(id) IN (SELECT folio_n.parent FROM \(notes) AS folio_n WHERE \(gone));"
        }
        let clear = "DELETE FROM \(notes) WHERE derived = \(key);"
        let keyColumns = ([id] + Set(uniqueKeys.flatMap { $0 }).sorted().map(quote)).joined(separator: ", ")
        triggers += [
            trigger(
                3, "BEFORE INSERT ON \(c)",
                when: "\(noted) OR EXISTS (SELECT 1 FROM \(c) WHERE \(conflicting(excludingOld: false)))",
                note(excludingOld: false)),
            trigger(
                4, "BEFORE UPDATE OF \(keyColumns) ON \(c)",
                when: "\(noted) OR EXISTS (SELECT 1 FROM \(c) WHERE \(conflicting(excludingOld: true)))",
                note(excludingOld: true)),
            trigger(5, "AFTER INSERT ON \(c)", when: noted, act + " " + clear),
            trigger(6, "AFTER UPDATE OF \(keyColumns) ON \(c)", when: noted, act + " " + clear),
        ]
        // The parent's own rows: a new row (or rowid) takes the children already pointing to it.
        let fresh = derivedValue(derived, forParent: "NEW.\(id)")
        let stale = "NOT (\(identical("NEW.\(d)", fresh)))"
        triggers += [
            trigger(7, "AFTER INSERT ON \(p)", when: stale, "\(recompute) WHERE \(p).\(id) = NEW.\(id);"),
            trigger(
                8, "AFTER UPDATE OF \(id) ON \(p)", when: "OLD.\(id) IS NOT NEW.\(id) AND \(stale)",
                "\(recompute) WHERE \(p).\(id) = NEW.\(id);"),
        ]
        return triggers
    }

    /// Computes `derived` anew for every row of its table whose value differs (as stored:
    /// `1` is not `1.0`): when its triggers are made, or made again.
    /// With `rowIDsBetween`, only the rows whose rowid is between the two bound values.
    static func recomputeDerived(_ derived: DeclaredDerived, rowIDsBetween: Bool = false) -> String {
        let (p, d, id) = (quote(derived.parent), quote(derived.column), quote("id"))
        let value = derivedValue(derived, forParent: "\(p).\(id)")
        let window = rowIDsBetween ? "\(p).\(id) BETWEEN ? AND ? AND " : ""
        return "UPDATE \(p) SET \(d) = \(value) WHERE \(window)NOT (\(identical(d, value)))"
    }

    /// Every rowid of a table, in order (a derived column computed with progress).
    static func allRowIDs(table: String) -> String { "SELECT \(quote("id")) FROM \(quote(table)) ORDER BY \(quote("id"))" }

    /// The derived value of the parent whose rowid is `parent`, from its children: SQLite's
    /// own aggregate over the rows the reference index finds.
    static func derivedValue(_ derived: DeclaredDerived, forParent parent: String) -> String {
        let child = derived.child
        let c = quote(child.table)
        let filter = child.filterRow.map { " AND (\($0))" } ?? ""
        let value = child.value.map { "\(c).\(quote($0))" } ?? "NULL"
        let aggregate: String
        switch derived.kind {
        case .count: aggregate = "count(*)"
        case .sum:
            if derived.isOptional {
                aggregate = "sum(\(value))"
            } else {
                aggregate = derived.type == .double ? "total(\(value))" : "coalesce(sum(\(value)), 0)"
            }
        case .minimum: aggregate = "min(\(value))"
        case .maximum: aggregate = "max(\(value))"
        }
        return "(SELECT \(aggregate) FROM \(c) WHERE \(c).\(quote(child.reference)) = \(parent)\(filter))"
    }

    /// 1 when the filter holds (as a `WHERE` reads it: `NULL` and false alike), else 0; `1`
    /// without a filter.
    private static func match(_ filter: String?) -> String {
        filter.map { "(CASE WHEN \($0) THEN 1 ELSE 0 END)" } ?? "1"
    }

    /// Whether two values are the same as stored: the same storage class and the same bytes
    /// under `BINARY` (as the change log compares them).
    private static func identical(_ a: String, _ b: String) -> String {
        "((\(a) COLLATE BINARY) IS \(b) AND typeof(\(a)) = typeof(\(b)))"
    }

    /// A fragment's SQL with each bound value written as a literal, for a trigger, which
    /// binds none: integers in decimal, reals exactly (``realLiteral(_:)``), text quoted (or, with a NUL, its bytes cast
    /// as `TEXT`, as ``placeholder(for:)`` binds it), blobs in hexadecimal.
    static func inlined(_ fragment: SQLFragment) throws -> String {
        var values = fragment.arguments[...]
        var text = ""
        var quoting: Character?
        for character in fragment.sql {
            if let open = quoting {
                if character == open { quoting = nil }
                text.append(character)
            } else if character == "'" || character == "\"" {
                quoting = character
                text.append(character)
            } else if character == "?" {
                guard let value = values.popFirst() else {
                    throw FolioError.invalidArgument("a filter's SQL has more placeholders than values")
                }
                text += literal(value)
            } else {
                text.append(character)
            }
        }
        guard values.isEmpty else { throw FolioError.invalidArgument("a filter's SQL has more values than placeholders") }
        return text
    }

    /// A value as an SQL literal (see ``inlined(_:)``).
    static func literal(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "NULL"
        case .int64(let number):
            return number == .min ? "(-9223372036854775807 - 1)" : number < 0 ? "(\(number))" : "\(number)"
        case .double(let number):
            return realLiteral(number)
        case .string(let string):
            if string.containsNUL { return "CAST(x'\(hex(Array(string.utf8)))' AS TEXT)" }
            return "'" + string.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data):
            return "x'\(hex(Array(data)))'"
        }
    }

    /// A real as SQL that yields its exact bits: SQLite's reading of decimal text is not
    /// always correctly rounded (3.40 reads some shortest round-trip texts one unit off), so
    /// an integer-valued real below 2^53 is written `n.0`, and any other as its integer
    /// significand times or divided by powers of two of at most 2^62 (each step exact), and
    /// ±infinity as `±9e999`.
    static func realLiteral(_ number: Double) -> String {
        if number.isInfinite { return number < 0 ? "(-9e999)" : "9e999" }
        if number == number.rounded(), abs(number) < 9_007_199_254_740_992, number != 0 || number.sign == .plus {
            return number < 0 ? "(\(Int64(number)).0)" : "\(Int64(number)).0"
        }
        var significand = number.significandBitPattern
        var exponent: Int
        if number.exponentBitPattern == 0 {
            exponent = -1074
        } else {
            significand |= 1 << 52
            exponent = Int(number.exponentBitPattern) - 1075
        }
        while significand != 0, significand & 1 == 0, exponent < 0 {
            significand >>= 1
            exponent += 1
        }
        var text = "CAST(\(significand) AS REAL)"
        while exponent != 0 {
            let step = min(abs(exponent), 62)
            text += (exponent > 0 ? " * " : " / ") + "\(Int64(1) << step)"
            exponent += exponent > 0 ? -step : step
        }
        return number.sign == .minus ? "(-(\(text)))" : "(\(text))"
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }
}
