// A child process for Folio's crash-safety tests: it imports into a store in
// transactions, forever, and is killed with SIGKILL at random points by the test.
//
//     FolioCrashImporter <store path>
//     FolioCrashImporter migrate <store path>
//
// `migrate` opens the importer's store with model version 2 (``CrashItemV2``), which
// migrates it in one transaction: `title` renamed `label`, `category` made required
// (default "none"), `sequence` removed, `weight` added and filled by a custom step from
// `batch`. It prints `migrating`, `step` when the step starts (the transaction is open
// then), and `migrated <rows>` after the commit; then it exits.
//
// Each transaction `b` inserts `CrashBatch.size(b)` items tagged with batch `b` and
// sequence 0..<size, with category "new", and marks every item of batch `b - 1` "seen".
// After each commit it prints `committed <b>`. Every fourth batch it refetches a
// controller with the persistent section cache "crash" (rebuilt and rewritten, since
// the store changed), waits for the cache file, prints `cache <b>` and pauses briefly,
// so that some kills land while the cache is valid. Lines are flushed one by one.
//
// Two `Store` instances are open on the file, as an app with two stores would have: odd
// batches are written through the second, so the controller (on the first) sees them as
// another connection's commits, and no descriptor Folio opens or closes may drop the
// locks of either (sqlite.org/howtocorrupt.html §2.2).
import Foundation
import Folio

/// The record the crash tests import (the tests declare the same entity).
struct CrashItem: PersistentRecord {
    var id: RecordID?
    var batch = 0
    var sequence = 0
    var title = ""
    var category: String? = nil

    static let entity = EntityDescription<CrashItem>(
        "item",
        [
            AttributeDescription(\.batch, indexed: true),
            AttributeDescription(\.sequence),
            AttributeDescription(\.title),
            AttributeDescription(\.category),
        ])
}

/// The item of model version 2 (see `migrate` above; the tests declare the same entity).
struct CrashItemV2: PersistentRecord {
    var id: RecordID?
    var batch = 0
    var label = ""
    var category = ""
    var weight = 0

    static let entity = EntityDescription<CrashItemV2>(
        "item",
        [
            AttributeDescription(\.batch, indexed: true),
            AttributeDescription(\.label, renamedFrom: "title"),
            AttributeDescription(\.category, defaultValue: "none"),
            AttributeDescription(\.weight, indexed: true),
        ])

    static let model = StoreModel(
        version: 2, records: [CrashItemV2.self], discarding: [.attribute("sequence", of: "item")],
        steps: [
            MigrationStep("weight from batch") { db in
                say("step")
                try db.execute(sql: "UPDATE item SET weight = batch * 2")
            }
        ])
}

/// Batch sizes: mostly small, every tenth large enough to spill the WAL and checkpoint.
enum CrashBatch {
    static func size(_ batch: Int) -> Int { batch % 10 == 0 ? 1_500 : 40 + batch % 11 }
}

/// One line to standard output, unbuffered: once printed, the parent sees it.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

if CommandLine.arguments.count == 3 && CommandLine.arguments[1] == "migrate" {
    do {
        say("migrating")
        let store = try Store(path: CommandLine.arguments[2], model: CrashItemV2.model)
        say("migrated \(try store.count(RecordRequest<CrashItemV2>()))")
        try store.close()
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("FolioCrashImporter: \(error)\n".utf8))
        exit(1)
    }
}
guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: FolioCrashImporter [migrate] <store path>\n".utf8))
    exit(2)
}
let path = CommandLine.arguments[1]
do {
    let store = try Store(path: path, records: [CrashItem.self])
    let second = try Store(path: path, records: [CrashItem.self])
    var next = (try store.read { db in try Int.fetchOne(db, sql: "SELECT MAX(batch) FROM item") } ?? 0) + 1
    let request = RecordRequest<CrashItem>(sortBy: [SortDescriptor(\.batch, order: .reverse), SortDescriptor(\.sequence)])
    let controller = FetchedResultsController(request, store: store, sectionBy: .attribute(\.batch), cacheName: "crash")
    try controller.performFetch()
    await controller.flushCache()
    say("ready \(next - 1) \(controller.lastCacheOutcome)")
    while next <= 100_000 {
        let batch = next
        let writer = batch % 2 == 0 ? store : second
        if batch % 3 == 0 {
            // Raw SQL on the escape hatch, one statement for the whole batch.
            try writer.write { tx in
                try tx.database.execute(
                    sql: """
                        WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
                        INSERT INTO item (batch, sequence, title, category) SELECT ?, i, 'item ' || i, 'new' FROM n
                        """, arguments: [CrashBatch.size(batch), batch])
                try tx.database.execute(sql: "UPDATE item SET category = 'seen' WHERE batch = ?", arguments: [batch - 1])
            }
        } else {
            try writer.write { tx in
                for sequence in 0..<CrashBatch.size(batch) {
                    var item = CrashItem()
                    item.batch = batch
                    item.sequence = sequence
                    item.title = "item \(sequence)"
                    item.category = "new"
                    try tx.insert(&item)
                }
                try tx.database.execute(sql: "UPDATE item SET category = 'seen' WHERE batch = ?", arguments: [batch - 1])
            }
        }
        say("committed \(batch)")
        if batch % 4 == 0 {
            try controller.performFetch()
            await controller.flushCache()
            say("cache \(batch) \(controller.lastCacheOutcome)")
            try await Task.sleep(for: .milliseconds(15))
        }
        next += 1
    }
} catch {
    FileHandle.standardError.write(Data("FolioCrashImporter: \(error)\n".utf8))
    exit(1)
}
