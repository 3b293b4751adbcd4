import Folio
import Foundation
import GRDB

/// A row with a unique attribute: the entity whose writes pay for the conflict triggers.
@PersistentRecord("keyed")
struct KeyedRow {
    var id: RecordID?
    @Stored(.unique) var key = ""
    var title = ""
    @Stored(.indexed) var published = Date(timeIntervalSince1970: 0)

    init() {}
}

extension Bench {
    /// The local one-row insert into a table with a unique attribute (`rows / 10` rows), with
    /// the triggers that note the rows a `REPLACE` may delete and log those it did, against
    /// the same insert without them (another connection drops and makes them again),
    /// alternated; the ratio is their cost. An entity without unique attributes has none
    /// (the `commit.withLog` row).
    func localWriteWithAndWithoutConflictTriggers() throws {
        log("local one-row insert into a table with a unique attribute, with and without the conflict triggers")
        let keyed = try Store.temporary(records: [KeyedRow.self])
        let count = Swift.max(1_000, options.rows / 10)
        try keyed.write { tx in
            for i in 0..<count {
                var row = KeyedRow()
                row.key = "key-\(i)"
                row.title = "row \(i)"
                row.published = Date(timeIntervalSince1970: Double(i))
                try tx.insert(&row)
            }
        }
        let queue = try DatabaseQueue(path: keyed.path!)
        let triggers = try queue.read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND (name GLOB 'folio_keyed_conflict_*' OR name GLOB 'folio_keyed_replaced_*')"
            ).map { ($0[0] as String, $0[1] as String) }
        }
        guard triggers.count == 4 else {
            throw BenchError.wrongResults("the keyed table has \(triggers.count) conflict triggers, not 4")
        }
        func install(_ on: Bool) throws {
            try queue.write { db in
                for (name, sql) in triggers {
                    try db.execute(sql: "DROP TRIGGER IF EXISTS \"\(name)\"")
                    if on { try db.execute(sql: sql) }
                }
            }
            try keyed.synchronize()
        }
        var with = Samples(), without = Samples()
        var next = count
        for round in 0..<6 {
            let on = round % 2 == 0
            try install(on)
            for rep in 0...50 {
                var row = KeyedRow()
                row.key = "key-\(next)"
                row.title = "row \(next)"
                next += 1
                let watch = Stopwatch()
                try keyed.write { tx in try tx.insert(&row) }
                let lap = watch.lap()
                if rep > 0 { on ? with.add(lap) : without.add(lap) }
            }
        }
        try install(true)
        try queue.close()
        try keyed.close()
        addBaseline(
            "commit.unique.withoutConflictTriggers",
            "store.write of a one-row insert into a table with a unique attribute, without the conflict triggers", without,
            withP99: true)
        report.results.append(
            ResultRow(
                id: "commit.unique.withConflictTriggers",
                what: "store.write of a one-row insert into a table with a unique attribute, with the conflict triggers",
                samples: with, withP99: true, baseline: ("commit.unique.withoutConflictTriggers", without),
                detail:
                    "\(count) rows; alternated in 6 rounds of 50 writes; the triggers that note the rows a REPLACE may delete for the unique value and log those it did, or none"
            ))
    }
}
