import Foundation
import GRDB
@testable import Folio

/// A controller configuration of the randomized workloads, replayable from its fields.
struct ControllerSpec: Codable, Equatable, CustomStringConvertible {
    enum Sections: String, Codable, CaseIterable {
        case none, category, rank, day, dayEast, dayWest, firstLetter, computed
        /// `.firstLetter(\.name)` under a folded sort of `name`: folded first letters.
        case foldedLetter
        /// `.attribute(\.category.folded)`: sections of the folded category.
        case foldedCategory
    }
    enum Stream: String, Codable { case none, changes, updates }

    var sections: Sections
    var sort: Int
    var predicate: Int
    var limit: Int?
    var offset: Int?
    var batchSize: Int
    var cacheName: String?
    var delegateFirst = true
    var asyncFetch = false
    var stream = Stream.none

    typealias Term = (column: String, descending: Bool)

    static let sorts: [Sections: [[Term]]] = [
        .none: [
            [("rank", false), ("value", true)], [("value", false)], [("stamp", true)], [("name", false), ("rank", false)],
            [("category", true), ("score", false)], [("score", false), ("name", true)], [("id", true)], [("key", false)],
            [("name.folded", false), ("rank", false)], [("category.folded", true)], [("score", false), ("name.folded", true)],
        ],
        .category: [[("category", false), ("rank", true)], [("category", true), ("stamp", false)], [("category", false)]],
        .rank: [[("rank", false), ("name", false)], [("rank", true)]],
        .day: [[("stamp", true)], [("stamp", false), ("name", true)]],
        .dayEast: [[("stamp", false)], [("stamp", true), ("value", false)]],
        .dayWest: [[("stamp", true)]],
        .firstLetter: [[("name", false)], [("name", true), ("value", false)]],
        .computed: [[("score", false)], [("score", true), ("stamp", false)]],
        .foldedLetter: [[("name.folded", false)], [("name.folded", true), ("value", false)]],
        .foldedCategory: [[("category.folded", false), ("rank", true)], [("category.folded", true)]],
    ]

    static func descriptor(_ term: Term) -> SortDescriptor<Item> {
        let order: SortOrder = term.descending ? .reverse : .forward
        switch term.column {
        case "rank": return SortDescriptor(\.rank, order: order)
        case "value": return SortDescriptor(\.value, order: order)
        case "stamp": return SortDescriptor(\.stamp, order: order)
        case "name": return SortDescriptor(\.name, order: order)
        case "category": return SortDescriptor(\.category, order: order)
        case "score": return SortDescriptor(\.score, order: order)
        case "key": return SortDescriptor(\.key, order: order)
        case "name.folded": return SortDescriptor(\.name.folded, order: order)
        case "category.folded": return SortDescriptor(\.category.folded, order: order)
        case "id": return SortDescriptor(\.id, order: order)
        default: fatalError("no sort on \(term.column)")
        }
    }

    /// Predicates (named by their Swift source), each with the SQL that must select the same
    /// rows (written by hand, comparing text by bytes as SQLite's BINARY collation does, and
    /// folding text with the test's own folding, ``Oracle/folded(_:)``), and an optional
    /// full-text search the controllers add (writes use the predicate alone).
    static let predicates: [(name: String, predicate: Predicate<Item>?, sql: String?, search: String?)] = {
        let nfc: String? = "é", kelvin = "\u{212A}", zero = 0.0, e = "e", upperE: String? = "É", ss = "SS"
        return [
            ("all", nil, nil, nil),
            ("$0.rank > 0", #Predicate<Item> { $0.rank > 0 }, "rank > 0", nil),
            ("$0.value >= 0.0", #Predicate<Item> { $0.value >= zero }, "value >= 0.0", nil),
            ("$0.flag == false", #Predicate<Item> { $0.flag == false }, "flag = 0", nil),
            ("$0.category != nil", #Predicate<Item> { $0.category != nil }, "category IS NOT NULL", nil),
            ("$0.category == \"\\u{E9}\"", #Predicate<Item> { $0.category == nfc }, "category = CAST(x'c3a9' AS TEXT)", nil),
            (
                "$0.name.starts(with: \"K\")", #Predicate<Item> { $0.name.starts(with: "K") },
                "substr(CAST(name AS BLOB), 1, 1) = x'4b'", nil
            ),
            ("($0.score ?? 0) > 5", #Predicate<Item> { ($0.score ?? 0) > 5 }, "coalesce(score, 0) > 5", nil),
            ("!$0.flag && $0.rank != 3", #Predicate<Item> { !$0.flag && $0.rank != 3 }, "flag = 0 AND rank IS NOT 3", nil),
            (
                "$0.score == nil || $0.score! < 20", #Predicate<Item> { $0.score == nil || $0.score! < 20 },
                "score IS NULL OR score < 20", nil
            ),
            (
                "$0.name.folded.contains(\"e\")", #Predicate<Item> { $0.name.folded.contains(e) },
                "instr(\(Oracle.folded("name")), 'e') > 0", nil
            ),
            (
                "$0.category.folded == \"É\"", #Predicate<Item> { $0.category.folded == upperE },
                "\(Oracle.folded("category")) = 'e'", nil
            ),
            (
                "$0.name.folded.starts(with: \"SS\")", #Predicate<Item> { $0.name.folded.starts(with: ss) },
                "substr(CAST(\(Oracle.folded("name")) AS BLOB), 1, 2) = x'7373'", nil
            ),
            (
                "$0.flag == false, search \"k\" (prefixes)", #Predicate<Item> { $0.flag == false },
                "flag = 0 AND id IN (SELECT rowid FROM folio_item_fts WHERE folio_item_fts MATCH '\"k\" *')", "k"
            ),
            ("$0.name == \"\\u{212A}\"", #Predicate<Item> { $0.name == kelvin }, "name = CAST(x'e284aa' AS TEXT)", nil),
            ("$0.rank < -1", #Predicate<Item> { $0.rank < -1 }, "rank < -1", nil),
        ]
    }()

    static let windows: [(limit: Int?, offset: Int?)] = [
        (1, 3), (10, nil), (nil, 5), (25, 5), (1, 0), (3, 200), (0, nil), (nil, 0), (2, 4094), (5, 4095), (3, 8190),
        (Int.max, 1), (Int.max - 5, 10), (7, Int.max), (Int.max, nil), (Int.max / 2, Int.max / 2 + 3),
    ]

    var request: RecordRequest<Item> {
        var r = RecordRequest<Item>(
            predicate: Self.predicates[predicate].predicate,
            search: Self.predicates[predicate].search.map { TextSearch($0, matchingPrefixes: true) },
            sortBy: Self.sorts[sections]![sort].map(Self.descriptor), limit: limit, offset: offset)
        r.batchSize = batchSize
        return r
    }

    static let eastOffset = 5 * 3600 + 1800
    static let westOffset = -8 * 3600

    var sectionKey: SectionKey<Item>? {
        switch sections {
        case .none: nil
        case .category: .attribute(\.category)
        case .rank: .attribute(\.rank)
        case .day: .day(\.stamp, timeZone: .gmt)
        case .dayEast: .day(\.stamp, timeZone: TimeZone(secondsFromGMT: Self.eastOffset)!)
        case .dayWest: .day(\.stamp, timeZone: TimeZone(secondsFromGMT: Self.westOffset)!)
        case .firstLetter: .firstLetter(\.name)
        case .computed: .computed(\.score, name: "bucket", Self.bucketLabel)
        case .foldedLetter: .firstLetter(\.name)
        case .foldedCategory: .attribute(\.category.folded)
        }
    }

    /// Labels of the computed sections, in score order: neighbours that Swift calls equal
    /// (NFC/NFD, "K"/Kelvin sign) or that a C string would cut to the same ("a\0b"/"a").
    static let bucketLabels = ["é", "e\u{301}", "K", "\u{212A}", "a\0b", "a", "ß", "SS"]

    @Sendable static func bucketLabel(_ score: Int?) -> String? {
        guard let score else { return nil }
        let bucket = Swift.min(3, Swift.max(-4, score / 10))
        return bucketLabels[bucket + 4]
    }

    var description: String {
        var text =
            "sections=\(sections) sort=[\(Self.sorts[sections]![sort].map { "\($0.column)\($0.descending ? " desc" : "")" }.joined(separator: ", "))] where=[\(Self.predicates[predicate].name)]"
        if limit != nil || offset != nil {
            text += " limit=\(limit.map(String.init) ?? "-") offset=\(offset.map(String.init) ?? "-")"
        }
        text += " batch=\(batchSize)"
        if let cacheName { text += " cache=\(cacheName)" }
        text += delegateFirst ? " delegate-first" : " delegate-after"
        if asyncFetch { text += " async" }
        if stream != .none { text += " stream=\(stream)" }
        return text
    }

    /// Swift code that makes the controller.
    var swiftCode: String {
        let sortCode = Self.sorts[sections]![sort].map {
            "SortDescriptor(\\.\($0.column)\($0.descending ? ", order: .reverse" : ""))"
        }
        var code = "var request = RecordRequest<Item>("
        if predicate != 0 {
            code += "predicate: #Predicate { \(Self.predicates[predicate].name.components(separatedBy: ", search").first!) }, "
        }
        if let search = Self.predicates[predicate].search {
            code += "search: TextSearch(\(search.debugDescription), matchingPrefixes: true), "
        }
        code += "sortBy: [\(sortCode.joined(separator: ", "))]"
        if let limit { code += ", limit: \(limit)" }
        if let offset { code += ", offset: \(offset)" }
        code += "); request.batchSize = \(batchSize)\n"
        let key: String =
            switch sections {
            case .none: "nil"
            case .category: ".attribute(\\.category)"
            case .rank: ".attribute(\\.rank)"
            case .day: ".day(\\.stamp, timeZone: .gmt)"
            case .dayEast: ".day(\\.stamp, timeZone: TimeZone(secondsFromGMT: \(Self.eastOffset))!)"
            case .dayWest: ".day(\\.stamp, timeZone: TimeZone(secondsFromGMT: \(Self.westOffset))!)"
            case .firstLetter, .foldedLetter: ".firstLetter(\\.name)"
            case .computed: ".computed(\\.score, name: \"bucket\", ControllerSpec.bucketLabel)"
            case .foldedCategory: ".attribute(\\.category.folded)"
            }
        code += "let controller = FetchedResultsController(request, store: store, sectionBy: \(key)"
        if let cacheName { code += ", cacheName: \"\(cacheName)\"" }
        return code + ")"
    }
}

/// What a fresh fetch must give, computed from SQL written here and sections computed in
/// Swift from the stored bytes — sharing no code with Folio's engine.
struct OracleResult: Equatable {
    struct Section: Equatable {
        var value: Stored
        var ids: [Int64]
    }
    var sections: [Section]
    /// Set when the full ordered results hold one section value in two separate runs: a
    /// fetch must then fail with an error, not show them.
    var notContiguous: String?

    var ids: [Int64] { sections.flatMap(\.ids) }

    /// Section value of every shown row.
    var sectionOf: [Int64: Stored] {
        var result: [Int64: Stored] = [:]
        for s in sections { for id in s.ids { result[id] = s.value } }
        return result
    }

    var description: String { Self.describe(sections.map { ($0.value.description, $0.ids) }) }

    /// Sections as `value:[ids]`, long ones cut in the middle.
    static func describe(_ sections: [(String, [Int64])]) -> String {
        func ids(_ list: [Int64]) -> String {
            list.count <= 24
                ? "\(list)"
                : "[\(list.prefix(10).map(String.init).joined(separator: ", ")), …\(list.count - 20) more…, \(list.suffix(10).map(String.init).joined(separator: ", "))]"
        }
        let parts = sections.map { "\($0.0):\(ids($0.1))" }
        if parts.count <= 30 { return parts.joined(separator: " | ") }
        return (parts.prefix(12) + ["…\(parts.count - 24) more sections…"] + parts.suffix(12)).joined(separator: " | ")
    }

    /// Where two lists of sections first differ.
    static func difference(_ shown: [[Int64]], _ expected: [[Int64]]) -> String {
        let a = shown.flatMap { $0 }, b = expected.flatMap { $0 }
        var text =
            "\(shown.count) sections of \(shown.map(\.count).prefix(12)) vs \(expected.count) of \(expected.map(\.count).prefix(12)); \(a.count) vs \(b.count) rows"
        if let i = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset
            ?? (a.count != b.count ? min(a.count, b.count) : nil)
        {
            let lo = max(0, i - 4)
            text += "; first difference at row \(i): shown \(a[lo..<min(a.count, i + 5)]) expected \(b[lo..<min(b.count, i + 5)])"
        }
        return text
    }
}

enum Oracle {
    /// `column` folded by the test's own folding (``ReferenceFolding``, through the SQL
    /// function ``foldFunction``, which the oracle's connection gets): text folded with
    /// every byte, anything else as it is — Folio's definition of a folded key.
    static func folded(_ column: String) -> String {
        "CASE typeof(\(column)) WHEN 'text' THEN CAST(folio_test_fold(CAST(\(column) AS BLOB)) AS TEXT) ELSE \(column) END"
    }

    /// ``ReferenceFolding`` as an SQL function of bytes (blobs in and out: GRDB passes text
    /// as C strings, which end at a NUL).
    static let foldFunction = DatabaseFunction("folio_test_fold", argumentCount: 1, pure: true) { values in
        guard case .blob(let data) = values[0].storage else { return values[0] }
        return Data(ReferenceFolding.fold(String(decoding: data, as: UTF8.self)).utf8)
    }

    static func sql(_ spec: ControllerSpec) -> String {
        let terms = ControllerSpec.sorts[spec.sections]!
        let order = terms[spec.sort]
        var parts = order.flatMap { term -> [String] in
            let direction = term.descending ? " DESC" : ""
            guard term.column.hasSuffix(".folded") else { return ["\"\(term.column)\"\(direction)"] }
            // A folded sort: the folded text, then the text's bytes.
            let column = String(term.column.dropLast(".folded".count))
            return [folded(column) + direction, "\"\(column)\"\(direction)"]
        }
        if order.last?.column != "id" { parts.append("id\(order.last!.descending ? " DESC" : "")") }
        let column: String =
            switch spec.sections {
            case .none: "NULL"
            case .category: "category"
            case .rank: "rank"
            case .day, .dayEast, .dayWest: "stamp"
            case .firstLetter: "name"
            case .computed: "score"
            case .foldedLetter: folded("name")
            case .foldedCategory: folded("category")
            }
        var sql = "SELECT id, \(column) FROM item"
        if let filter = ControllerSpec.predicates[spec.predicate].sql { sql += " WHERE \(filter)" }
        return sql + " ORDER BY " + parts.joined(separator: ", ")
    }

    /// The section value of a row, from the raw value the query read.
    static func sectionValue(_ raw: Stored, _ sections: ControllerSpec.Sections) -> Stored {
        switch sections {
        case .none: return .null
        case .category, .rank, .foldedCategory: return raw
        case .firstLetter, .foldedLetter: return firstLetter(raw)
        case .day: return day(raw, offset: 0)
        case .dayEast: return day(raw, offset: ControllerSpec.eastOffset)
        case .dayWest: return day(raw, offset: ControllerSpec.westOffset)
        case .computed:
            let score: Int?
            switch raw {
            case .null: score = nil
            case .int(let v): score = Int(v)
            default: return .null  // does not decode as Int?: the transform sees no value
            }
            return ControllerSpec.bucketLabel(score).map(Stored.string) ?? .null
        }
    }

    /// The first letter as `.firstLetter` documents it, on the stored bytes: the first byte's
    /// whole UTF-8 sequence length (one byte for a byte that cannot lead one), clipped to the
    /// text; a number is its own section, a blob's is its first byte.
    static func firstLetter(_ raw: Stored) -> Stored {
        switch raw {
        case .text(let bytes):
            guard let lead = bytes.first else { return raw }
            let length =
                switch lead {
                case 0xC2...0xDF: 2
                case 0xE0...0xEF: 3
                case 0xF0...0xF4: 4
                default: 1
                }
            return .text(Array(bytes.prefix(length)))
        case .blob(let bytes): return .blob(Array(bytes.prefix(1)))
        default: return raw
        }
    }

    /// Days since 1970 of a date in seconds (clamped to ±10⁹ days), as the section key documents.
    static func day(_ raw: Stored, offset: Int) -> Stored {
        let seconds: Double
        switch raw {
        case .real(let v): seconds = v
        case .int(let v): seconds = Double(v)
        default: return .null
        }
        // Whole seconds first: exact, where the sum and the quotient could round across midnight.
        let days = ((seconds.rounded(.down) + Double(offset)) / 86_400).rounded(.down)
        if days.isNaN { return .int(0) }
        if days >= 1e9 { return .int(1_000_000_000) }
        if days <= -1e9 { return .int(-1_000_000_000) }
        return .int(Int64(days))
    }

    /// `YYYY-MM-DD`, proleptic Gregorian, by whole 400-year cycles then years.
    static func dayName(_ day: Int64) -> String {
        // 146,097 days per 400 years; count from 0000-03-01 so leap days fall last.
        var d = day + 719_468
        let era = (d >= 0 ? d : d - 146_096) / 146_097
        d -= era * 146_097
        var year = era * 400
        // Walk the years of the era (at most 400 steps, only for tests).
        var month: Int64 = 3
        while true {
            let next = year + 1
            let by4: Bool = next % 4 == 0, by100: Bool = next % 100 == 0, by400: Bool = next % 400 == 0
            let leap = (by4 && !by100) || by400
            let length: Int64 = leap ? 366 : 365
            if d < length { break }
            d -= length
            year += 1
        }
        let lengths: [Int64] = [31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31]  // March … January
        var i = 0
        while i < lengths.count && d >= lengths[i] {
            d -= lengths[i]
            month += 1
            i += 1
        }
        if month > 12 {
            month -= 12
            year += 1
        }
        func pad(_ v: Int64, _ width: Int) -> String {
            let text = String(abs(v))
            return (v < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(d + 1, 2))"
    }

    /// The section name Folio must show for a section value.
    static func name(_ value: Stored, _ sections: ControllerSpec.Sections) -> String {
        switch value {
        case .null: return ""
        case .int(let v):
            switch sections {
            case .day, .dayEast, .dayWest: return dayName(v)
            default: return String(v)
            }
        case .real(let v): return String(v)
        case .text: return value.lossyText!
        case .blob(let b): return Stored.hex(b)
        }
    }

    static func results(_ spec: ControllerSpec, _ db: Database) throws -> OracleResult {
        db.add(function: foldFunction)
        var full: [(id: Int64, section: Stored)] = []
        try forEachExactRow(db, sql(spec)) { row in
            guard case .int(let id) = row[0] else { return }
            full.append((id, sectionValue(row[1], spec.sections)))
        }
        var notContiguous: String?
        if spec.sections != .none {
            var seen = Set<Stored>()
            var previous: Stored?
            for row in full {
                if let previous, previous.sqliteEquals(row.section) { continue }
                if !seen.insert(row.section.identityKey).inserted {
                    notContiguous = "section \(row.section) appears in two separate runs"
                    break
                }
                previous = row.section
            }
        }
        let lower = min(spec.offset ?? 0, full.count)
        let upper = spec.limit.map { lower + min($0, full.count - lower) } ?? full.count
        var sections: [OracleResult.Section] = []
        var current: (value: Stored, ids: [Int64])?
        for row in full[lower..<upper] {
            if current != nil && current!.value.sqliteEquals(row.section) {
                current!.ids.append(row.id)
            } else {
                if let current { sections.append(.init(value: current.value, ids: current.ids)) }
                current = (row.section, [row.id])
            }
        }
        if let current { sections.append(.init(value: current.value, ids: current.ids)) }
        if spec.sections == .none { sections = [.init(value: .null, ids: sections.first?.ids ?? [])] }
        return OracleResult(sections: sections, notContiguous: notContiguous)
    }
}

/// The move rule: which rows a change set may and must report as moves.
enum MoveRules {
    struct Verdict {
        var problems: [String] = []
        /// Moves within kept sections, checked for minimality.
        var movesChecked = 0
        var sectionPairs = 0
    }

    /// - Parameters:
    ///   - old, new: the results before and after (each row with its section value).
    ///   - touched: the rows the commit touched (the update hook's rowids).
    ///   - changed: touched rows whose stored values changed.
    static func check(
        change: ChangeSet, old: OracleResult, new: OracleResult, touched: Set<Int64>, changed: Set<Int64>,
        sectioned: Bool
    ) -> Verdict {
        var verdict = Verdict()
        func problem(_ text: String) { verdict.problems.append(text) }
        let oldSection = old.sectionOf, newSection = new.sectionOf
        var oldPlace: [Int64: (section: Int, item: Int)] = [:]
        for (s, section) in old.sections.enumerated() { for (i, id) in section.ids.enumerated() { oldPlace[id] = (s, i) } }
        var newPlace: [Int64: (section: Int, item: Int)] = [:]
        for (s, section) in new.sections.enumerated() { for (i, id) in section.ids.enumerated() { newPlace[id] = (s, i) } }

        let deletedSections = Set(change.deletedSections), insertedSections = Set(change.insertedSections)
        // Sections shown before and after are kept (neither deleted nor inserted) unless
        // their order changed: the kept ones must be a largest set whose order is kept.
        if sectioned {
            var newIndexOfValue: [Stored: Int] = [:]
            for (s, section) in new.sections.enumerated() { newIndexOfValue[section.value.identityKey] = s }
            var both: [(old: Int, new: Int)] = []
            for (s, section) in old.sections.enumerated() {
                if let n = newIndexOfValue[section.value.identityKey] { both.append((s, n)) }
            }
            let largest = maximumIncreasing(both.map { (key: $0.new, weight: 1) }).count
            let kept = both.filter { !deletedSections.contains($0.old) && !insertedSections.contains($0.new) }.count
            if kept != largest {
                problem("\(kept) of the \(both.count) sections shown before and after were kept; \(largest) could be")
            }
        }
        var moved: [Int64: ChangeSet.Move] = [:]
        for (move, id) in zip(change.movedItems, change.movedIdentifiers) { moved[id.rawValue] = move }
        let updated = Set(change.updatedIdentifiers.map(\.rawValue))
        let deleted = Set(change.deletedIdentifiers.map(\.rawValue))
        let inserted = Set(change.insertedIdentifiers.map(\.rawValue))

        for (id, move) in moved {
            if !touched.contains(id) { problem("row \(id) was not touched but moved \(move.from)→\(move.to)") }
            if changed.contains(id) && !move.isUpdated { problem("row \(id) changed and moved without isUpdated") }
        }
        for id in updated where !touched.contains(id) { problem("row \(id) was not touched but updated") }
        // An update is a changed stored value: a row set to the values it has is not one.
        for id in updated where !changed.contains(id) { problem("row \(id) is reported updated but no stored value changed") }
        for (id, move) in moved where move.isUpdated && !changed.contains(id) {
            problem("row \(id) moved as updated but no stored value changed")
        }
        for id in deleted.intersection(inserted) {
            guard let from = oldPlace[id], let to = newPlace[id] else { continue }
            if !deletedSections.contains(from.section) && !insertedSections.contains(to.section) {
                problem("row \(id) deleted and inserted between kept sections \(from.section) → \(to.section)")
            }
        }
        // Kept sections: same value before and after, neither deleted nor inserted.
        var pairs: [Int: Int] = [:]  // old section → new section, same value
        if sectioned {
            var newIndexOfValue: [Stored: Int] = [:]
            for (s, section) in new.sections.enumerated() { newIndexOfValue[section.value.identityKey] = s }
            for (s, section) in old.sections.enumerated() {
                if let n = newIndexOfValue[section.value.identityKey], !deletedSections.contains(s), !insertedSections.contains(n)
                {
                    pairs[s] = n
                }
            }
        } else {
            pairs[0] = 0
        }
        // Every row shown before and after.
        for (id, from) in oldPlace {
            guard let to = newPlace[id] else { continue }
            let sectionChanged =
                sectioned && (!(oldSection[id]!.sqliteEquals(newSection[id]!)) || pairs[from.section] != to.section)
            let oldDeleted = deletedSections.contains(from.section), newInserted = insertedSections.contains(to.section)
            if sectionChanged && !oldDeleted && !newInserted && moved[id] == nil {
                problem("row \(id) changed section \(oldSection[id]!) → \(newSection[id]!) but is not a move")
            }
            if changed.contains(id) && !oldDeleted && !newInserted && moved[id] == nil && !updated.contains(id)
                && !(deleted.contains(id) && inserted.contains(id))
            {
                problem("row \(id) changed but is neither updated nor moved")
            }
        }
        // Minimality within each kept section: the rows that stayed in it, in old order,
        // keep the longest subsequence whose new order is increasing, untouched rows forced.
        for (o, n) in pairs.sorted(by: { $0.key < $1.key }) {
            guard o < old.sections.count, n < new.sections.count else { continue }
            let stayed = old.sections[o].ids.filter { newPlace[$0]?.section == n }
            guard !stayed.isEmpty else { continue }
            verdict.sectionPairs += 1
            let items = stayed.map { (key: newPlace[$0]!.item, weight: touched.contains($0) ? 1 : stayed.count + 1) }
            let keep = maximumIncreasing(items)
            let forcedOK = stayed.indices.allSatisfy { touched.contains(stayed[$0]) || keep.contains($0) }
            if !forcedOK {
                problem("untouched rows of section \(o) changed their relative order: the oracle or the workload is wrong")
            }
            let minimum = stayed.count - keep.count
            let reported = stayed.filter { id in
                guard let m = moved[id] else { return false }
                return m.from.section == o && m.to.section == n
            }.count
            verdict.movesChecked += reported
            if reported != minimum {
                problem(
                    "section \(o)→\(n): \(reported) moves reported, the minimum is \(minimum) (rows that stayed: \(stayed.prefix(20)), touched: \(stayed.filter(touched.contains).prefix(20)))"
                )
            }
        }
        return verdict
    }

    /// Indexes of a maximum-weight strictly increasing subsequence (O(n²), for tests: n is
    /// one section's rows that stayed; large sections use the O(n log n) path).
    static func maximumIncreasing(_ items: [(key: Int, weight: Int)]) -> Set<Int> {
        guard !items.isEmpty else { return [] }
        if items.count > 300 { return maximumIncreasingFast(items) }
        var best = items.map(\.weight)
        var previous = [Int](repeating: -1, count: items.count)
        for i in items.indices {
            for j in 0..<i where items[j].key < items[i].key && best[j] + items[i].weight > best[i] {
                best[i] = best[j] + items[i].weight
                previous[i] = j
            }
        }
        var end = 0
        for i in items.indices where best[i] > best[end] { end = i }
        var result = Set<Int>()
        var i = end
        while i >= 0 {
            result.insert(i)
            i = previous[i]
        }
        return result
    }

    /// The same with a segment tree of prefix maxima over the keys (keys are distinct).
    static func maximumIncreasingFast(_ items: [(key: Int, weight: Int)]) -> Set<Int> {
        let keys = items.map(\.key).sorted()
        var rank: [Int: Int] = [:]
        for (i, k) in keys.enumerated() { rank[k] = i }
        var size = 1
        while size < keys.count { size *= 2 }
        var tree = [(weight: Int, item: Int)](repeating: (0, -1), count: 2 * size)
        func query(_ upTo: Int) -> (weight: Int, item: Int) {  // max over ranks [0, upTo)
            var result = (weight: 0, item: -1)
            var l = size, r = size + upTo
            while l < r {
                if l & 1 == 1 { if tree[l].weight > result.weight { result = tree[l] }; l += 1 }
                if r & 1 == 1 { r -= 1; if tree[r].weight > result.weight { result = tree[r] } }
                l /= 2
                r /= 2
            }
            return result
        }
        var best = [Int](repeating: 0, count: items.count)
        var previous = [Int](repeating: -1, count: items.count)
        for (i, item) in items.enumerated() {
            let r = rank[item.key]!
            let q = query(r)
            best[i] = q.weight + item.weight
            previous[i] = q.item
            var p = size + r
            if best[i] > tree[p].weight {
                tree[p] = (best[i], i)
                p /= 2
                while p >= 1 {
                    let a = tree[2 * p], b = tree[2 * p + 1]
                    tree[p] = a.weight >= b.weight ? a : b
                    p /= 2
                }
            }
        }
        var end = 0
        for i in items.indices where best[i] > best[end] { end = i }
        var result = Set<Int>()
        var i = end
        while i >= 0 {
            result.insert(i)
            i = previous[i]
        }
        return result
    }
}
