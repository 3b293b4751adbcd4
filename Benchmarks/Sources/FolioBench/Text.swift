import Foundation
import Folio
import GRDB

/// The record of the text measurements: an article whose title is searchable (so folded,
/// with an index on its folded key) and also indexed as it is, for a fair comparison of a
/// folded sort with a byte sort.
@PersistentRecord
struct TextArticle {
    var id: RecordID?
    @Stored(.indexed, .searchable) var title = ""
    @Stored(.indexed) var published = Date(timeIntervalSince1970: 0)
    var score = 0

    init() {}
}

extension Bench {
    /// Titles are six words of a 200-word vocabulary with accented, capitalised and plain
    /// forms (`Café`, `CAFE`, `cafe`…); one row in 100 also says "iPad", the word searched.
    static let textVocabulary: [String] = {
        let stems = [
            "café", "crème", "brûlée", "naïve", "façade", "über", "straße", "zoë", "émile", "ångström", "résumé", "piñata",
            "jalapeño", "smörgåsbord", "déjà", "vu", "coöperate", "fiancé", "soirée", "protégé", "apple", "watch", "music",
            "store", "review", "deal", "price", "launch", "update", "leak", "rumor", "chip", "camera", "screen", "battery",
            "design", "feature", "privacy", "health", "games", "maps", "news", "photos", "notes", "mail", "safari",
            "keyboard", "widget",
        ]
        return stems.flatMap { [$0, $0.capitalized, $0.uppercased(), $0.folded] }
    }()

    /// A second store with `rows` text articles, generated in SQL from the vocabulary with
    /// its folded keys (each word folded in Swift; a title's key is its words' keys).
    func makeTextStore() throws -> Store {
        let store = try Store.temporary(records: [TextArticle.self])
        try fillTextStore(store)
        return store
    }

    /// The text store of `--data-file` (the file's name with `-text` before its extension:
    /// `bench-10m.sqlite` → `bench-10m-text.sqlite`): opened when it holds `rows` rows, generated
    /// into otherwise. Measurements read it and never write it.
    func reusedTextStore(_ dataPath: String) throws -> Store {
        let path = (dataPath as NSString).deletingPathExtension + "-text.sqlite"
        if FileManager.default.fileExists(atPath: path) {
            let start = now()
            let store = try Store(path: path, records: [TextArticle.self])
            log(String(format: "opened %@ in %.2f s", path, Double(now() - start) / 1e9))
            let count = try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM text_article") ?? 0 }
            if count == rows {
                log("reusing \(path): \(Report.count(count)) rows")
                return store
            }
            log("\(path) holds \(Report.count(count)) rows, not \(Report.count(rows)): generating it again")
            try store.close()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        log("generating \(Report.count(rows)) text rows into \(path)")
        let store = try Store(path: path, records: [TextArticle.self])
        try fillTextStore(store)
        return store
    }

    /// Fills the empty text table of `store` with `rows` generated rows, in one transaction.
    ///
    /// Bulk, not row by row: the table's indexes and its triggers (Folio's change log,
    /// folded-key and full-text triggers) are read from `sqlite_master` and dropped, the rows
    /// inserted in rowid order, then what each insert trigger would have written is written
    /// in one statement each (the change log's rows and the change token, the stale-key notes
    /// — none, every key is set — and the full-text index, filled in rowid order), the indexes
    /// made again (`CREATE INDEX` sorts) and the triggers made again exactly as they were, in
    /// their order. The file is the same as the triggers' row by row: the same rows, keys,
    /// log, full-text content and schema text, so that the next opening trusts it (Folio
    /// compares the triggers' text and counts the index's rows). About 16 times faster at
    /// 1,000,000 rows; at 10,000,000, minutes instead of hours (the indexes were kept in
    /// random order, a page read and written for almost every row).
    private func fillTextStore(_ store: Store) throws {
        let words = Self.textVocabulary
        let table = "text_article"
        let start = now()
        var phases: [String] = []
        func phase(_ name: String, since: inout UInt64) {
            let at = now()
            phases.append(String(format: "%@ %.1f s", name, Double(at - since) / 1e9))
            log("text rows: " + phases[phases.count - 1])
            since = at
        }
        let schemaSQL =
            "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') "
            + "AND sql IS NOT NULL ORDER BY type, name"
        var schemaBefore: [Row] = []
        try store.write { tx in
            let db = tx.database
            var since = now()
            schemaBefore = try Row.fetchAll(db, sql: schemaSQL, arguments: [table])
            guard try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") == 0 else {
                throw BenchError.wrongResults("the text table to fill is not empty")
            }
            // A page cache large enough for the table, its indexes and the full-text index's
            // writes (about 3 GB at 10,000,000 rows), for this transaction only.
            let cacheSize = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
            try db.execute(sql: "PRAGMA cache_size = -4000000")
            defer { try? db.execute(sql: "PRAGMA cache_size = \(cacheSize)") }

            let objects = try Row.fetchAll(
                db,
                sql: "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') "
                    + "AND sql IS NOT NULL ORDER BY rowid",
                arguments: [table])
            let indexes = objects.filter { $0["type"] == "index" }.map { (name: $0["name"] as String, sql: $0["sql"] as String) }
            let triggers = objects.filter { $0["type"] == "trigger" }.map {
                (name: $0["name"] as String, sql: $0["sql"] as String)
            }
            // The insert triggers written in bulk below, as Folio makes them: any other (a
            // change of Folio's schema) stops the fill rather than leave rows it did not see.
            let bulk: [String: String] = [
                "folio_\(table)_ins":
                    "CREATE TRIGGER \"folio_\(table)_ins\" AFTER INSERT ON \"\(table)\" BEGIN UPDATE folio_entities SET change_token = change_token + 1, change_id = randomblob(16) WHERE name = '\(table)'; INSERT INTO folio_changes (entity, row) VALUES ('\(table)', NEW.\"id\"); END",
                "folio_\(table)_fold_ins":
                    "CREATE TRIGGER \"folio_\(table)_fold_ins\" AFTER INSERT ON \"\(table)\" WHEN (typeof(NEW.\"folio_title_folded\") IS NOT typeof(NEW.\"title\")) BEGIN INSERT INTO folio_stale_keys (entity, row) VALUES ('\(table)', NEW.\"id\"); END",
                "folio_\(table)_fts_ins":
                    "CREATE TRIGGER \"folio_\(table)_fts_ins\" AFTER INSERT ON \"\(table)\" BEGIN DELETE FROM \"folio_\(table)_fts\" WHERE rowid = NEW.\"id\"; INSERT INTO \"folio_\(table)_fts\" (rowid, \"folio_title_folded\") VALUES (NEW.\"id\", NEW.\"folio_title_folded\"); END",
            ]
            for trigger in triggers where trigger.sql.range(of: " INSERT ON ", options: .caseInsensitive) != nil {
                guard bulk[trigger.name] == trigger.sql else {
                    throw BenchError.wrongResults(
                        "the text table's insert trigger \(trigger.name) is not the one the fill writes for: \(trigger.sql)")
                }
            }
            guard Set(triggers.map(\.name)).isSuperset(of: bulk.keys) else {
                throw BenchError.wrongResults("the text table lacks insert triggers: \(triggers.map(\.name))")
            }
            for trigger in triggers { try db.execute(sql: "DROP TRIGGER \"\(trigger.name)\"") }
            for index in indexes { try db.execute(sql: "DROP INDEX \"\(index.name)\"") }
            phase("dropped \(indexes.count) indexes and \(triggers.count) triggers", since: &since)

            try db.execute(sql: "CREATE TEMP TABLE words (n INTEGER PRIMARY KEY, word TEXT NOT NULL, folded TEXT NOT NULL)")
            for (n, word) in words.enumerated() {
                try db.execute(sql: "INSERT INTO temp.words VALUES (?, ?, ?)", arguments: [n, word, word.folded])
            }
            try db.execute(
                sql: """
                    WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
                    INSERT INTO text_article (title, published, score, folio_title_folded)
                    SELECT CASE WHEN i % 100 = 0 THEN 'iPad ' ELSE '' END
                               || w1.word || ' ' || w2.word || ' ' || w3.word || ' ' || w4.word || ' ' || w5.word || ' ' || w6.word,
                           ? + ((i * ?) % ?) * ?,
                           (i * 7919) % 1000,
                           CASE WHEN i % 100 = 0 THEN 'ipad ' ELSE '' END
                               || w1.folded || ' ' || w2.folded || ' ' || w3.folded || ' ' || w4.folded || ' ' || w5.folded || ' ' || w6.folded
                    FROM seq
                    JOIN temp.words w1 ON w1.n = (i * 31 + 7) % ?1
                    JOIN temp.words w2 ON w2.n = (i * 17 / 3 + 11) % ?1
                    JOIN temp.words w3 ON w3.n = (i * 7 / 11 + 5) % ?1
                    JOIN temp.words w4 ON w4.n = (i / 13 + 3) % ?1
                    JOIN temp.words w5 ON w5.n = (i * 3 / 7 + 1) % ?1
                    JOIN temp.words w6 ON w6.n = (i / 101) % ?1
                    """.replacingOccurrences(of: "?1", with: "\(words.count)"),
                arguments: [rows - 1, dataset.base, dataset.stride, rows, dataset.spacing])
            try db.execute(sql: "DROP TABLE temp.words")
            phase("inserted", since: &since)

            // What the insert triggers would have written, row after row in rowid order.
            let inserted = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            try db.execute(
                sql: "UPDATE folio_entities SET change_token = change_token + ?, change_id = randomblob(16) WHERE name = ?",
                arguments: [inserted, table])
            try db.execute(
                sql: "INSERT INTO folio_changes (entity, row) SELECT ?, id FROM \(table) ORDER BY id", arguments: [table])
            try db.execute(
                sql: "INSERT INTO folio_stale_keys (entity, row) SELECT ?, id FROM \(table) "
                    + "WHERE typeof(folio_title_folded) IS NOT typeof(title) ORDER BY id",
                arguments: [table])
            phase("change log", since: &since)
            try db.execute(
                sql: "INSERT INTO folio_\(table)_fts (rowid, folio_title_folded) "
                    + "SELECT id, folio_title_folded FROM \(table) ORDER BY id")
            phase("full-text index", since: &since)
            for index in indexes { try db.execute(sql: index.sql) }
            phase("indexes", since: &since)
            for trigger in triggers { try db.execute(sql: trigger.sql) }
        }
        phases.append(String(format: "committed %.1f s", Double(now() - start) / 1e9))
        log("text rows filled in bulk: " + phases.joined(separator: ", "))
        // The indexes and triggers are the table's again, and the full-text index has its rows.
        let (schemaAfter, indexed) = try store.read { db in
            (
                try Row.fetchAll(db, sql: schemaSQL, arguments: [table]),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM folio_\(table)_fts_docsize") ?? -1
            )
        }
        guard schemaAfter == schemaBefore, indexed == rows else {
            throw BenchError.wrongResults(
                "the text table filled in bulk has \(schemaAfter.count) indexes and triggers (\(schemaBefore.count) before; "
                    + "the same: \(schemaAfter == schemaBefore)) and \(indexed) rows in its full-text index, not \(rows)")
        }
    }

    func textRequest(search: String?, sortBy: [SortDescriptor<TextArticle>]) -> RecordRequest<TextArticle> {
        var request = RecordRequest<TextArticle>(sortBy: sortBy, batchSize: 50)
        if let search { request.search = TextSearch(search, matchingPrefixes: true) }
        return request
    }

    /// A live controller filtered by a full-text search against the same list without
    /// it (performFetch and one-row change latency), and a folded sort against a byte sort.
    func text() async throws {
        log("text: generating \(Report.count(rows)) searchable rows (a second store)")
        let start = now()
        let store = try makeTextStore()
        let seconds = Double(now() - start) / 1e9
        log(String(format: "generated in %.1f s", seconds))
        let newest = [SortDescriptor(\TextArticle.published, order: .reverse)]
        func write(_ body: (WriteTransaction) throws -> Void) throws { try store.write(body) }
        func fetched(_ request: RecordRequest<TextArticle>) throws -> FetchedResultsController<TextArticle> {
            let controller = FetchedResultsController(request, store: store)
            controller.completesInBackground = false
            try controller.performFetch()
            return controller
        }

        // performFetch: searched, unfiltered, sorted folded, sorted by bytes.
        let variants: [(id: String, request: RecordRequest<TextArticle>)] = [
            ("unfiltered", textRequest(search: nil, sortBy: newest)),
            ("search", textRequest(search: "ipad", sortBy: newest)),
            ("titleSort", textRequest(search: nil, sortBy: [SortDescriptor(\.title)])),
            ("foldedSort", textRequest(search: nil, sortBy: [SortDescriptor(\.title.folded)])),
        ]
        var fetches: [String: Samples] = [:]
        var counts: [String: Int] = [:]
        for rep in 0...repetitions {
            for variant in variants {
                let watch = Stopwatch()
                let controller = try fetched(variant.request)
                let lap = watch.lap()
                counts[variant.id] = controller.fetchedObjects?.count ?? 0
                if rep > 0 { fetches[variant.id, default: Samples()].add(lap) }
            }
        }
        let matches = counts["search"] ?? 0
        addBaseline(
            "text.unfiltered", "performFetch of the same list (\(Report.count(rows)) rows, newest first) without a search",
            fetches["unfiltered"]!)
        report.results.append(
            ResultRow(
                id: "text.search.performFetch",
                what: "performFetch, live controller filtered by a search (“ipad”, \(Report.count(matches)) matches)",
                samples: fetches["search"]!, baseline: ("text.unfiltered", fetches["unfiltered"]!),
                detail: "the same list without the search: \(Report.count(counts["unfiltered"] ?? 0)) rows"))
        addBaseline(
            "text.titleSort", "performFetch sorted by the title's bytes (indexed), \(Report.count(rows)) rows",
            fetches["titleSort"]!)
        report.results.append(
            ResultRow(
                id: "text.foldedSort.performFetch",
                what: "performFetch sorted by the folded title (SortDescriptor(\\.title.folded))",
                samples: fetches["foldedSort"]!, baseline: ("text.titleSort", fetches["titleSort"]!)))

        // One-row changes: a live controller with the search, and one without.
        var random = SeededGenerator(seed: 0x7E47)
        var nextTitle = 0
        func article(matching: Bool) -> TextArticle {
            nextTitle += 1
            var article = TextArticle()
            let words = (0..<5).map { _ in Self.textVocabulary[Int.random(in: 0..<Self.textVocabulary.count, using: &random)] }
            article.title = (matching ? "IPAD " : "") + words.joined(separator: " ") + " \(nextTitle)"
            article.published = dataset.randomDate(using: &random)
            article.score = nextTitle
            return article
        }
        let changes = max(50, options.changes / 2)
        // The floor of the changes below: the write itself (keys, full-text index), no controller.
        var commit = Samples()
        for _ in 0..<changes {
            var new = article(matching: true)
            try commit.time { try write { tx in try tx.insert(&new) } }
            try write { tx in try tx.delete(new) }
        }
        addBaseline(
            "text.commit", "store.write of a one-row insert into the searchable table, no controller tracking", commit,
            withP99: true)
        for (id, search) in [("search", "ipad"), ("unfiltered", nil)] as [(String, String?)] {
            let recorder = DeliveryRecorder<TextArticle>()
            let controller = FetchedResultsController(textRequest(search: search, sortBy: newest), store: store)
            controller.completesInBackground = false
            controller.delegate = recorder
            try performFetch(controller)
            var samples: [String: Samples] = [:]
            var inserted: [TextArticle] = []
            for _ in 0..<changes {
                for kind in ["insert", "update", "delete"] {
                    let watch: Stopwatch
                    switch kind {
                    case "insert":
                        var new = article(matching: true)
                        watch = Stopwatch()
                        try write { tx in try tx.insert(&new) }
                        inserted.append(new)
                    case "update":
                        var edited = inserted[inserted.count - 1]
                        edited.title = "iPad " + article(matching: false).title
                        edited.published = dataset.randomDate(using: &random)
                        inserted[inserted.count - 1] = edited
                        watch = Stopwatch()
                        try write { tx in try tx.update(edited) }
                    default:
                        let gone = inserted.removeFirst()
                        watch = Stopwatch()
                        try write { tx in try tx.delete(gone) }
                    }
                    guard let delivered = await recorder.next() else {
                        throw BenchError.noDelivery("text \(id) \(kind): no change set within 30 s")
                    }
                    samples[kind, default: Samples()].add(watch.lap(until: delivered.at))
                }
            }
            let fresh = try fetched(controller.fetchRequest)
            guard fresh.snapshot == controller.snapshot else {
                throw BenchError.wrongResults("text \(id): the live controller's snapshot differs from a fresh fetch's")
            }
            for kind in ["insert", "update", "delete"] {
                if id == "unfiltered" {
                    addBaseline(
                        "text.unfiltered.\(kind)", "one-row \(kind) → change set delivered, the same list without a search",
                        samples[kind]!, withP99: true)
                } else {
                    report.results.append(
                        ResultRow(
                            id: "text.search.\(kind)",
                            what:
                                "one-row \(kind) of a matching row → change set delivered, live controller filtered by a search",
                            samples: samples[kind]!, withP99: true))
                }
            }
            controller.delegate = nil
        }
        for kind in ["insert", "update", "delete"] {
            guard let baseline = baselineSamples["text.unfiltered.\(kind)"] else { continue }
            report.update("text.search.\(kind)") { row in
                row.baseline = "text.unfiltered.\(kind)"
                row.baselineMedian = baseline.median
                row.baselineCPUMedian = baseline.cpuMedian
                row.ratio = row.median.map { $0 / baseline.median }
                row.cpuRatio = row.cpuMedian.map { $0 / baseline.cpuMedian }
            }
        }
        report.notes.append(
            "Text: a second table of \(Report.count(rows)) rows (title searchable and indexed, published indexed), generated in "
                + String(format: "%.1f s", seconds)
                + "; titles are six words of a 200-word vocabulary of accented, capitalised and plain forms, and one row in 100 "
                + "starts with \"iPad\". The search is TextSearch(\"ipad\", matchingPrefixes: true); each one-row change is an insert "
                + "of a matching row, an update of it that keeps it matching and moves it, and a delete of a matching row, "
                + "against the same changes to the list without the search. Live snapshots were compared with a fresh fetch after each run."
        )
    }
}
