import Foundation
import GRDB
@testable import Folio

/// An `Item`'s values, exactly (doubles by bit pattern, text by bytes), for replay files.
struct ItemData: Codable, Equatable, Sendable {
    var values: [Stored]

    init(_ item: Item) {
        values = [
            item.id.map { .int($0.rawValue) } ?? .null, .int(item.rank), .real(item.value),
            item.stamp.map { .real($0.timeIntervalSince1970) } ?? .null, .string(item.name),
            item.category.map(Stored.string) ?? .null, item.score.map { .int(Int64($0)) } ?? .null, .string(item.key),
            .int(item.flag ? 1 : 0),
        ]
    }

    var item: Item {
        var item = Item()
        if case .int(let id) = values[0] { item.id = RecordID(id) }
        if case .int(let v) = values[1] { item.rank = v }
        if case .real(let v) = values[2] { item.value = v }
        if case .real(let v) = values[3] { item.stamp = Date(timeIntervalSince1970: v) }
        item.name = values[4].lossyText ?? ""
        item.category = values[5].lossyText
        if case .int(let v) = values[6] { item.score = Int(v) }
        item.key = values[7].lossyText ?? ""
        if case .int(let v) = values[8] { item.flag = v != 0 }
        return item
    }

    var description: String { item.summary }
}

/// `column = value` for `updateAll`.
struct Assign: Codable, Equatable, Sendable {
    var column: String
    var value: Stored

    var assignment: Assignment<Item> {
        switch (column, value) {
        case ("category", _): .set(\.category, to: value.lossyText)
        case ("score", .int(let v)): .set(\.score, to: Int(v))
        case ("score", _): .set(\.score, to: nil)
        case ("flag", .int(let v)): .set(\.flag, to: v != 0)
        case ("rank", .int(let v)): .set(\.rank, to: v)
        case ("stamp", .real(let v)): .set(\.stamp, to: Date(timeIntervalSince1970: v))
        case ("stamp", _): .set(\.stamp, to: nil)
        case ("value", .real(let v)): .set(\.value, to: v)
        default: .set(\.name, to: value.lossyText ?? "")
        }
    }
}

/// One write inside a transaction. Each is tolerant of rows that are not there (so that
/// any subset of a failing run can be replayed), and does the same thing every time.
enum Write: Codable, Equatable, Sendable, CustomStringConvertible {
    /// `tx.insert` (skipped when the id or key is taken).
    case insert(ItemData)
    /// `tx.update` (skipped when the row is gone or its key is taken by another row).
    case update(ItemData)
    /// `tx.delete(Item.self, id:)`.
    case delete(Int64)
    /// `tx.upsert(onConflict: \.key)`.
    case upsert(ItemData)
    /// Raw SQL on `tx.database`; text arguments are bound as blobs cast back to text.
    case sql(String, [Stored])
    /// `tx.updateAll(where: predicates[p], set:)`.
    case updateAll(Int, [Assign])
    /// `tx.deleteAll(where: predicates[p])` (`0`: every row).
    case deleteAll(Int)

    var description: String {
        switch self {
        case .insert(let d): "insert \(d.description)"
        case .update(let d): "update \(d.description)"
        case .delete(let id): "delete id=\(id)"
        case .upsert(let d): "upsert on key \(d.description)"
        case .sql(let sql, let args): "SQL \(sql)" + (args.isEmpty ? "" : " ← \(args)")
        case .updateAll(let p, let a):
            "updateAll where [\(ControllerSpec.predicates[p].name)] set \(a.map { "\($0.column)=\($0.value)" }.joined(separator: ", "))"
        case .deleteAll(let p): "deleteAll where [\(ControllerSpec.predicates[p].name)]"
        }
    }

    /// Swift that performs the write inside `store.write { tx in … }`.
    var swiftCode: String {
        func item(_ d: ItemData) -> String {
            let i = d.item
            var parts: [String] = []
            if let id = i.id { parts.append("id: RecordID(\(id.rawValue))") }
            parts.append("rank: \(Stored.int(i.rank))")
            parts.append("value: \(Stored.describe(i.value).replacingOccurrences(of: "inf", with: ".infinity"))")
            parts.append(
                "stamp: \(i.stamp.map { "Date(timeIntervalSince1970: \(Stored.describe($0.timeIntervalSince1970).replacingOccurrences(of: "inf", with: ".infinity")))" } ?? "nil")"
            )
            parts.append("name: \(Stored.swiftLiteral(i.name))")
            parts.append("category: \(i.category.map(Stored.swiftLiteral) ?? "nil")")
            parts.append("score: \(i.score.map(String.init) ?? "nil")")
            parts.append("key: \"\(i.key)\"")
            parts.append("flag: \(i.flag)")
            return "Item(\(parts.joined(separator: ", ")))"
        }
        switch self {
        case .insert(let d): return "var r = \(item(d)); try tx.insert(&r)"
        case .update(let d): return "try tx.update(\(item(d)))"
        case .delete(let id): return "try tx.delete(Item.self, id: RecordID(\(id)))"
        case .upsert(let d): return "var r = \(item(d)); r.id = nil; try tx.upsert(&r, onConflict: \\.key)"
        case .sql(let sql, let args):
            return "try tx.database.execute(sql: \"\(sql)\", arguments: [\(args.map { "\($0)" }.joined(separator: ", "))])"
        case .updateAll(let p, let assignments):
            let set = assignments.map { a -> String in
                let value: String =
                    switch a.value {
                    case .null: "nil"
                    case .int(let v): a.column == "flag" ? (v != 0 ? "true" : "false") : "\(Stored.int(v))"
                    case .real(let v):
                        a.column == "stamp" ? "Date(timeIntervalSince1970: \(Stored.describe(v)))" : Stored.describe(v)
                    default: "\(a.value)"
                    }
                return ".set(\\.\(a.column), to: \(value))"
            }
            return
                "try tx.updateAll(Item.self, where: #Predicate { \(ControllerSpec.predicates[p].name.components(separatedBy: ", search").first!) }, set: [\(set.joined(separator: ", "))])"
        case .deleteAll(let p):
            return p == 0
                ? "try tx.deleteAll(Item.self)"
                : "try tx.deleteAll(Item.self, where: #Predicate { \(ControllerSpec.predicates[p].name) })"
        }
    }

    static func exists(_ db: Database, _ id: Int64) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM item WHERE id = ?)", arguments: [id]) ?? false
    }

    static func keyOwner(_ db: Database, _ key: String) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT id FROM item WHERE key = CAST(? AS TEXT)", arguments: [Data(key.utf8)])
    }

    /// Performs `writes` in the transaction.
    static func apply(_ writes: [Write], _ tx: WriteTransaction) throws {
        let db = tx.database
        for write in writes {
            switch write {
            case .insert(let data):
                var item = data.item
                if let id = item.id, try exists(db, id.rawValue) { continue }
                if try keyOwner(db, item.key) != nil { continue }
                try tx.insert(&item)
            case .update(let data):
                let item = data.item
                guard let id = item.id, try exists(db, id.rawValue) else { continue }
                if let owner = try keyOwner(db, item.key), owner != id.rawValue { continue }
                try tx.update(item)
            case .delete(let id):
                _ = try tx.delete(Item.self, id: RecordID(id))
            case .upsert(let data):
                var item = data.item
                item.id = nil
                try tx.upsert(&item, onConflict: \.key)
            case .sql(let sql, let args):
                try db.execute(sql: sql, arguments: StatementArguments(args.map(\.binding.value)))
            case .updateAll(let p, let assignments):
                try tx.updateAll(Item.self, where: ControllerSpec.predicates[p].predicate, set: assignments.map(\.assignment))
            case .deleteAll(let p):
                try tx.deleteAll(Item.self, where: ControllerSpec.predicates[p].predicate)
            }
        }
    }

    /// Rows whose stored values may become undecodable through this write.
    var isRaw: Bool { if case .sql = self { true } else { false } }

    /// A second, small table beside `item`, written by raw SQL only: no controller lists it.
    static let otherTable = "side_note"

    /// Whether the write is to ``otherTable``.
    var writesOtherTable: Bool {
        if case .sql(let sql, _) = self { sql.contains(Self.otherTable) } else { false }
    }

    /// Rowids that `writes` delete and insert again: a row replaced with the same values is
    /// touched, and may be reported as updated.
    static func replacedIDs(_ writes: [Write]) -> Set<Int64> {
        let deleted = Set(writes.compactMap { if case .delete(let id) = $0 { id } else { nil } })
        return Set(writes.compactMap { if case .insert(let d) = $0 { d.item.id?.rawValue } else { nil } }).intersection(deleted)
    }
}

/// One step of a workload: a transaction, a controller's life event, or both at once.
enum Operation: Codable, Equatable, Sendable, CustomStringConvertible {
    /// Makes a controller in `slot` and fetches.
    case create(slot: Int, spec: ControllerSpec)
    /// One transaction.
    case write([Write])
    /// One transaction that throws at its end: nothing may change.
    case rollback([Write])
    /// Several transactions at once, from several tasks.
    case writers([[Write]])
    /// Raw SQL by another connection (as another process would write), then `store.synchronize()`.
    case external([Write])
    /// `setRequest` on a live controller, with transactions racing it.
    case setRequest(slot: Int, spec: ControllerSpec, writers: [[Write]])
    /// `performFetch` again on a live controller, with transactions racing it.
    case refetch(slot: Int, writers: [[Write]])
    /// Releases the controller in `slot` and makes a new one, with transactions racing both.
    case replace(slot: Int, spec: ControllerSpec, writers: [[Write]])
    /// Releases every controller; starts a transaction; while it is in flight, the first
    /// new controllers subscribe and fetch; then it commits.
    case firstListener(specs: [ControllerSpec], write: [Write])
    /// Reads records through a controller inside a `store.write` closure, then writes.
    case readInsideWrite(slot: Int, write: [Write])

    var description: String {
        func list(_ w: [Write]) -> String { w.map { "\n      \($0)" }.joined() }
        func writers(_ ws: [[Write]]) -> String {
            ws.enumerated().map { "\n    writer \($0.offset):" + list($0.element) }.joined()
        }
        switch self {
        case .create(let slot, let spec): return "create controller \(slot): \(spec)"
        case .write(let w): return "write transaction:" + list(w)
        case .rollback(let w): return "rolled-back transaction:" + list(w)
        case .writers(let ws): return "\(ws.count) writers at once:" + writers(ws)
        case .external(let w): return "another connection writes, then store.synchronize():" + list(w)
        case .setRequest(let slot, let spec, let ws): return "setRequest on controller \(slot): \(spec)" + writers(ws)
        case .refetch(let slot, let ws): return "performFetch again on controller \(slot)" + writers(ws)
        case .replace(let slot, let spec, let ws): return "release controller \(slot), create \(spec)" + writers(ws)
        case .firstListener(let specs, let w):
            return "release all controllers; a transaction in flight while \(specs.count) new ones fetch:"
                + specs.map { "\n    controller: \($0)" }.joined() + list(w)
        case .readInsideWrite(let slot, let w): return "object(at:) of controller \(slot) inside store.write, then:" + list(w)
        }
    }

    /// The writes inside, for shrinking.
    var writeLists: [[Write]] {
        switch self {
        case .create: []
        case .write(let w), .rollback(let w), .external(let w), .firstListener(_, let w), .readInsideWrite(_, let w): [w]
        case .writers(let ws), .setRequest(_, _, let ws), .refetch(_, let ws), .replace(_, _, let ws): ws
        }
    }

    /// The same operation with other write lists (same shape as ``writeLists``).
    func with(writeLists lists: [[Write]]) -> Operation {
        switch self {
        case .create: self
        case .write: .write(lists[0])
        case .rollback: .rollback(lists[0])
        case .external: .external(lists[0])
        case .firstListener(let specs, _): .firstListener(specs: specs, write: lists[0])
        case .readInsideWrite(let slot, _): .readInsideWrite(slot: slot, write: lists[0])
        case .writers: .writers(lists)
        case .setRequest(let slot, let spec, _): .setRequest(slot: slot, spec: spec, writers: lists)
        case .refetch(let slot, _): .refetch(slot: slot, writers: lists)
        case .replace(let slot, let spec, _): .replace(slot: slot, spec: spec, writers: lists)
        }
    }

    var needsFileStore: Bool {
        switch self {
        case .writers, .external, .firstListener, .readInsideWrite: true
        case .setRequest(_, _, let ws), .refetch(_, let ws), .replace(_, _, let ws): !ws.isEmpty
        default: false
        }
    }
}
