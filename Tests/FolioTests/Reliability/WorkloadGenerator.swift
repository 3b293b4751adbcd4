import Foundation
@testable import Folio

/// What a seed stresses. Every profile mixes in the common operations; each adds its own
/// sizes and shapes.
enum WorkloadProfile: String, Codable, CaseIterable {
    /// Small tables (0–300 rows), every extreme value and text, every section key, windows,
    /// caches, raw SQL, request changes.
    case extremes
    /// A file store and everything concurrent: several writers at once, writes racing
    /// controller creation, `performFetch`, `setRequest` and release, a transaction in
    /// flight as the first controller subscribes, another connection's writes.
    case races
    /// Live lists growing and shrinking across the identifier list's chunk sizes
    /// (4,096 per chunk, split past 8,192), windows at chunk boundaries.
    case chunks
    /// Transactions touching 2,047 … 2,050 rows: both sides of the incremental-vs-rescan limit.
    case bulk
    /// Change sets past 50,000 rows (a reload) and request changes past 100,000.
    case huge

    /// The profile of a seed: most seeds are `extremes` and `races`; a few cross the
    /// engine's size thresholds.
    static func of(seed: UInt64) -> WorkloadProfile {
        switch seed % 16 {
        case 0, 3, 6, 9, 12, 14: .extremes
        case 1, 4, 7, 10, 13: .races
        case 2, 11: .chunks
        case 5, 15: .bulk
        default: seed % 32 == 8 ? .huge : .bulk
        }
    }

    /// Transactions per seed in the default run.
    var defaultSteps: Int {
        switch self {
        case .extremes: 800
        case .races: 680
        case .chunks: 100
        case .bulk: 50
        case .huge: 9
        }
    }
}

/// Draws a workload's operations from a seed, looking at the rows as they are.
struct WorkloadGenerator {
    var rng: SplitMix64
    let profile: WorkloadProfile
    let fileStore: Bool
    /// The next explicit rowid and key suffix (above every one used so far).
    var nextID: Int64 = 1
    var nextKey = 0
    var slotCount = 0
    var poisoned = 0
    var realRanks = 0
    /// The rowids of the table now, sorted.
    var currentIDs: [Int64] = []

    /// Up to `n` distinct rowids of the table.
    mutating func randomIDs(_ n: Int) -> [Int64] {
        guard !currentIDs.isEmpty else { return [] }
        var picked = Set<Int64>()
        for _ in 0..<n { picked.insert(currentIDs[Int.random(in: 0..<currentIDs.count, using: &rng)]) }
        return picked.sorted()
    }

    /// The last predicate drawn: the one with a unary minus only in
    /// seeds ≡ 6 (mod 32), so that a predicate Folio cannot translate fails those seeds alone.
    let lastPredicate: Int

    init(seed: UInt64, profile: WorkloadProfile, fileStore: Bool) {
        rng = SplitMix64(seed: seed &* 0x2545_F491_4F6C_DD1D &+ 0x1234_5678)
        self.profile = profile
        self.fileStore = fileStore
        lastPredicate = ControllerSpec.predicates.count - (seed % 32 == 6 ? 1 : 2)
    }

    mutating func chance(_ p: Double) -> Bool { rng.chance(p) }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func pick<T>(_ values: [T]) -> T { rng.pick(values) }

    // MARK: Values

    mutating func freshID() -> Int64 {
        defer { nextID += Int64(int(1...3)) }
        return nextID
    }

    mutating func freshKey() -> String {
        nextKey += 1
        return "k\(nextKey)"
    }

    mutating func text() -> String {
        let base = pick(Extremes.texts)
        return chance(0.35) ? base + pick(Extremes.texts) : base
    }

    mutating func rank() -> Int64 { chance(0.35) ? pick(Extremes.ranks) : Int64(int(-20...20)) }
    mutating func value() -> Double { chance(0.3) ? pick(Extremes.values) : Double(int(-200...200)) / 2 }
    mutating func stamp() -> Date? {
        if chance(0.08) { return nil }
        if chance(0.2) { return Date(timeIntervalSince1970: pick(Extremes.stamps)) }
        return Date(timeIntervalSince1970: Double(int(0...7) * 86_400 + pick([0, 1, 3_599, 43_200, 86_399])))
    }
    mutating func score() -> Int? {
        if chance(0.12) { return nil }
        if chance(0.04) { return pick([Int.min, Int.max, -41, 39, 40, -40]) }
        return int(-45...45)
    }

    mutating func randomItem(explicitID: Bool) -> Item {
        var item = Item()
        if explicitID { item.id = RecordID(freshID()) }
        item.rank = rank()
        item.value = value()
        item.stamp = stamp()
        item.name = text()
        item.category = pick(Extremes.categories)
        item.score = score()
        item.key = freshKey()
        item.flag = chance(0.4)
        return item
    }

    /// A random edit of some attributes: sort keys, section keys, predicate inputs, or none.
    mutating func mutate(_ row: StoredRow) -> Item? {
        guard var item = row.decoded else { return nil }
        switch int(0...8) {
        case 0: item.rank = rank()
        case 1: item.category = pick(Extremes.categories)
        case 2: item.stamp = stamp()
        case 3: item.name = text()
        case 4: item.flag.toggle()
        case 5: item.score = score()
        case 6: item.value = value()
        case 7: break  // written back unchanged: touched, not changed
        default:
            item.rank = rank()
            item.category = pick(Extremes.categories)
            item.name = text()
            item.score = score()
            item.flag = chance(0.5)
        }
        return item
    }

    /// `tx.update` of random edits of these rows.
    mutating func updates(_ ids: [Int64], _ rows: [Int64: StoredRow]) -> [Write] {
        var writes: [Write] = []
        for id in ids {
            if let row = rows[id], let item = mutate(row) { writes.append(.update(ItemData(item))) }
        }
        return writes
    }

    // MARK: Controllers

    mutating func spec(sections: ControllerSpec.Sections? = nil, slot: Int) -> ControllerSpec {
        let sections = sections ?? pick(ControllerSpec.Sections.allCases)
        var spec = ControllerSpec(
            sections: sections, sort: int(0...(ControllerSpec.sorts[sections]!.count - 1)),
            predicate: chance(0.35) ? 0 : int(0...lastPredicate), limit: nil, offset: nil,
            batchSize: pick([0, 1, 2, 3, 7, 16, 50, 1_000]))
        if chance(0.35) {
            let window = pick(ControllerSpec.windows)
            spec.limit = window.limit
            spec.offset = window.offset
        }
        if chance(0.3) { spec.cacheName = "cache\(slot)\(chance(0.5) ? "" : "b")" }
        spec.delegateFirst = chance(0.6)
        spec.asyncFetch = chance(0.5)
        return spec
    }

    /// A new request for a live controller (same section key).
    mutating func respec(_ spec: ControllerSpec, slot: Int) -> ControllerSpec {
        var new = self.spec(sections: spec.sections, slot: slot)
        new.cacheName = spec.cacheName
        new.stream = spec.stream
        if chance(0.4) { new.predicate = spec.predicate }
        return new
    }

    // MARK: The start

    /// Rows and controllers to begin with.
    mutating func start() -> [Operation] {
        var ops: [Operation] = []
        switch profile {
        case .extremes, .races:
            let n = pick([0, 5, 40, 120, 200])
            var batch: [Write] = []
            for _ in 0..<n {
                batch.append(.insert(ItemData(randomItem(explicitID: chance(0.8)))))
                if batch.count == 20 {
                    ops.append(.write(batch))
                    batch = []
                }
            }
            if !batch.isEmpty { ops.append(.write(batch)) }
        case .chunks:
            ops.append(.write([grow(pick([4_090, 4_095, 4_096, 4_097, 8_190, 8_192, 8_193, 12_290]))]))
        case .bulk:
            ops.append(.write([grow(int(2_100...4_200))]))
        case .huge:
            ops.append(.write([grow(1_000)]))
        }
        let count: Int
        switch profile {
        case .extremes, .races: count = int(3...5)
        case .chunks, .bulk: count = 3
        case .huge: count = 2
        }
        for slot in 0..<count {
            var s: ControllerSpec
            switch profile {
            case .extremes, .races:
                s = spec(sections: slot == 0 ? pick([.category, .day, .firstLetter, .computed, .rank]) : nil, slot: slot)
                if slot == 1 && s.limit == nil && s.offset == nil { (s.limit, s.offset) = pick(ControllerSpec.windows) }
            case .chunks, .bulk, .huge:
                s = spec(sections: [ControllerSpec.Sections.none, .category, .day][slot], slot: slot)
                s.predicate = slot == 2 ? 3 : 0
                s.batchSize = pick([0, 50, 1_000])
                s.limit = nil
                s.offset = nil
                if profile == .chunks && slot == 0 {
                    (s.limit, s.offset) = pick([(nil, nil), (5, 4_094), (10, 8_188), (nil, 4_095)])
                }
            }
            if slot == 0 { s.stream = .changes }
            if slot == 1 { s.stream = .updates }
            ops.append(.create(slot: slot, spec: s))
        }
        slotCount = count
        return ops
    }

    // MARK: Big writes

    /// `n` new rows in one statement, spread over the whole sort range of every column.
    mutating func grow(_ n: Int) -> Write {
        let base = nextID
        nextID += Int64(n) + 10
        let salt = int(0...999_983)
        nextKey += 1
        return .sql(
            """
            WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ?1 - 1) \
            INSERT OR IGNORE INTO item (id, rank, value, stamp, name, category, score, key, flag) \
            SELECT ?2 + i, (i * 7919 + ?3) % 1000 - 500, ((i * 31 + ?3) % 2000) / 4.0, \
            86400.0 * ((i * 13 + ?3) % 9) + (i * 37 % 86400), char(65 + (i * 5 + ?3) % 26) || 'x', \
            CASE (i + ?3) % 4 WHEN 0 THEN NULL WHEN 1 THEN 'a' WHEN 2 THEN 'b' ELSE 'é' END, \
            (i * 3 + ?3) % 90 - 45, 'g' || ?4 || '-' || i, (i + ?3) % 2 FROM s
            """, [.int(Int64(n)), .int(base), .int(Int64(salt)), .int(Int64(nextKey))])
    }

    /// Deletes `n` rows picked by a hash of their rowid.
    mutating func shrink(_ n: Int) -> Write {
        .sql(
            "DELETE FROM item WHERE id IN (SELECT id FROM item ORDER BY (id * 2654435761 + ?1) % 1000003 LIMIT ?2)",
            [.int(Int64(int(0...999_983))), .int(Int64(n))])
    }

    /// Changes sort and section keys of exactly `n` rows (when there are that many).
    mutating func churn(_ n: Int) -> Write {
        .sql(
            """
            UPDATE item SET rank = (rank * 31 + ?1) % 1000 - 500, stamp = stamp + 86400 * ((id + ?1) % 3 - 1), \
            category = CASE (id + ?1) % 5 WHEN 0 THEN NULL WHEN 1 THEN 'a' WHEN 2 THEN 'b' WHEN 3 THEN 'é' ELSE category END \
            WHERE id IN (SELECT id FROM item ORDER BY (id * 2654435761 + ?1) % 1000003 LIMIT ?2)
            """, [.int(Int64(int(0...999_983))), .int(Int64(n))])
    }

    // MARK: Steps

    mutating func next(rows: [Int64: StoredRow], slots: [ControllerSpec?]) -> Operation {
        let ids = rows.keys.sorted()
        currentIDs = ids
        let live = slots.indices.filter { slots[$0] != nil }
        let roll = Double.random(in: 0..<1, using: &rng)

        switch profile {
        case .chunks:
            let target = pick([4_096, 8_192, 12_288])
            let delta = target - rows.count
            switch roll {
            case ..<0.35:
                // Toward a chunk boundary and past it, by up to 300 rows (the incremental path).
                let n = max(1, min(300, abs(delta) + int(0...6)))
                return .write([delta >= 0 || rows.count < 200 ? grow(n) : shrink(n)])
            case ..<0.45: return .write([churn(int(1...400))])
            case ..<0.5: return .write([delta > 0 ? grow(int(2_049...2_600)) : shrink(min(rows.count, int(2_049...2_600)))])
            default: break
            }
        case .bulk:
            switch roll {
            case ..<0.5: return .write([churn(pick([2_046, 2_047, 2_048, 2_049, 2_050, 1, 100]))])
            case ..<0.6: return .write([grow(pick([2_047, 2_048, 2_049]))])
            case ..<0.7: return .write([shrink(pick([2_047, 2_048, 2_049]))])
            default: break
            }
        case .huge:
            switch roll {
            case ..<0.3 where rows.count < 60_000: return .write([grow(50_001)])
            case ..<0.45 where rows.count > 20_000: return .write([shrink(50_001)])
            case ..<0.6 where rows.count > 20_000: return .write([churn(pick([25_000, 50_001]))])
            case ..<0.75 where !live.isEmpty:
                let slot = pick(live)
                return .setRequest(slot: slot, spec: respec(slots[slot]!, slot: slot), writers: [])
            default: break
            }
        case .extremes, .races: break
        }
        return common(rows: rows, ids: ids, live: live, slots: slots)
    }

    mutating func common(
        rows: [Int64: StoredRow], ids: [Int64], live: [Int], slots: [ControllerSpec?]
    ) -> Operation {
        let races = profile == .races && fileStore
        let roll = Double.random(in: 0..<1, using: &rng)
        if poisoned > 0 {
            poisoned -= 1
            if poisoned == 0 { return .write([.sql("UPDATE item SET score = NULL WHERE typeof(score) = 'text'", [])]) }
        }
        if realRanks > 0 {
            realRanks -= 1
            if realRanks == 0 { return .write([.sql("UPDATE item SET rank = 7 WHERE typeof(rank) = 'real'", [])]) }
        }
        if races {
            switch roll {
            case ..<0.08: return .writers(racingWriters(rows, count: int(2...4)))
            case ..<0.12 where !live.isEmpty:
                let slot = pick(live)
                return .setRequest(slot: slot, spec: respec(slots[slot]!, slot: slot), writers: racingWriters(rows))
            case ..<0.15 where !live.isEmpty: return .refetch(slot: pick(live), writers: racingWriters(rows))
            case ..<0.18:
                let slot = int(0...(slotCount - 1))
                var s = spec(slot: slot)
                if let old = slots[slot], chance(0.5) { s = old }  // the same request again: the cache, if any, is reused
                return .replace(slot: slot, spec: s, writers: racingWriters(rows))
            case ..<0.2:
                let count = int(1...2)
                return .firstListener(
                    specs: (0..<count).map { _ in
                        var s = spec(slot: 9); s.delegateFirst = true; s.asyncFetch = true; return s
                    },
                    write: updates(randomIDs(int(1...3)), rows)
                        + [.insert(ItemData(randomItem(explicitID: true)))])
            case ..<0.22:
                return .external(externalWrites(rows))
            case ..<0.24 where !live.isEmpty:
                let slot = pick(live)
                return .readInsideWrite(slot: slot, write: updates(randomIDs(1), rows))
            default: break
            }
        }
        let roll2 = Double.random(in: 0..<1, using: &rng)
        let insertBias = rows.count < 60 ? 0.2 : (rows.count > 300 ? -0.15 : 0)
        switch roll2 {
        case ..<(0.18 + insertBias):
            return .write((0..<int(1...4)).map { _ in .insert(ItemData(randomItem(explicitID: chance(0.75)))) })
        case ..<0.40:
            return .write(updates(randomIDs(int(1...4)), rows))
        case ..<0.48:
            return .write(randomIDs(int(1...3)).map { .delete($0) })
        case ..<0.56:
            var writes: [Write] = []
            let updated = randomIDs(int(0...4))
            writes += updates(updated, rows)
            writes += randomIDs(int(0...3)).filter { !updated.contains($0) }.map { .delete($0) }
            writes += (0..<int(0...4)).map { _ in .insert(ItemData(randomItem(explicitID: chance(0.75)))) }
            writes.shuffle(using: &rng)
            return .write(writes)
        case ..<0.66:
            return .write([rawSQL(rows, ids)])
        case ..<0.70:
            let p = int(1...lastPredicate)
            var assigns: [Assign] = []
            if chance(0.5) {
                assigns.append(Assign(column: "category", value: pick(Extremes.categories).map(Stored.string) ?? .null))
            }
            if chance(0.4) { assigns.append(Assign(column: "score", value: score().map { .int(Int64($0)) } ?? .null)) }
            if chance(0.3) { assigns.append(Assign(column: "rank", value: .int(rank()))) }
            if chance(0.3) {
                assigns.append(Assign(column: "stamp", value: stamp().map { .real($0.timeIntervalSince1970) } ?? .null))
            }
            if assigns.isEmpty || chance(0.3) { assigns.append(Assign(column: "flag", value: .int(chance(0.5) ? 1 : 0))) }
            return .write([.updateAll(p, assigns)])
        case ..<0.72:
            return .write([.deleteAll(int(1...lastPredicate))])
        case ..<0.75:
            // Ties: several rows with the same keys.
            let template = randomItem(explicitID: false)
            return .write(
                (0..<int(2...5)).map { _ in
                    var item = template
                    item.id = RecordID(freshID())
                    item.key = freshKey()
                    return .insert(ItemData(item))
                })
        case ..<0.78:
            if let id = randomIDs(1).first, let row = rows[id], chance(0.6), var item = mutate(row) {
                item.id = nil
                return .write([.upsert(ItemData(item))])
            }
            return .write([.upsert(ItemData(randomItem(explicitID: false)))])
        case ..<0.80:
            if let id = randomIDs(1).first {
                var item = randomItem(explicitID: false)
                item.id = RecordID(id)
                return .write([.delete(id), .insert(ItemData(item))])
            }
        case ..<0.82:
            return .rollback([.insert(ItemData(randomItem(explicitID: true))), .deleteAll(pick([1, 3, 4]))])
        case ..<0.86 where !live.isEmpty:
            let slot = pick(live)
            return .setRequest(slot: slot, spec: respec(slots[slot]!, slot: slot), writers: [])
        case ..<0.875:
            let slot = int(0...(slotCount - 1))
            if let old = slots[slot], chance(0.6) { return .replace(slot: slot, spec: old, writers: []) }
            return .replace(slot: slot, spec: spec(slot: slot), writers: [])
        case ..<0.885 where !live.isEmpty:
            return .refetch(slot: pick(live), writers: [])
        case ..<0.90:
            return .write((0..<int(10...60)).map { _ in .insert(ItemData(randomItem(explicitID: chance(0.9)))) })
        case ..<0.905:
            return .write([.deleteAll(0)] + (0..<int(20...120)).map { _ in .insert(ItemData(randomItem(explicitID: true))) })
        case ..<0.925:
            return .write(unchangedWrites(rows))
        case ..<0.935:
            return .write(changeBesideUnchanged())
        case ..<0.95:
            return otherTableWrite()
        default:
            break
        }
        // In place for every controller: no sort key, section key or predicate input changes.
        return .write(
            randomIDs(int(1...5)).map {
                .sql("UPDATE item SET key = key || '+' WHERE id = ?", [.int($0)])
            })
    }

    /// Transactions for several writers at once. Each edits rows no other one touches, so
    /// the final state does not depend on which commits first.
    mutating func racingWriters(_ rows: [Int64: StoredRow], count: Int? = nil) -> [[Write]] {
        guard fileStore else { return [] }
        let count = count ?? int(1...3)
        var taken = Set<Int64>()
        var result: [[Write]] = []
        for _ in 0..<count {
            var writes: [Write] = [.insert(ItemData(randomItem(explicitID: true)))]
            for id in randomIDs(2) where taken.insert(id).inserted {
                writes += updates([id], rows)
            }
            result.append(writes)
        }
        return result
    }

    // MARK: Writes that change nothing, and other tables

    /// Writes that set rows to the values they have: no stored value changes, so no
    /// controller may deliver anything (the oracle checks that no unchanged row is
    /// reported as updated, and that such a commit delivers nothing at all).
    mutating func unchangedWrites(_ rows: [Int64: StoredRow]) -> [Write] {
        let every =
            "rank = rank, value = value, stamp = stamp, name = name, category = category, score = score, key = key, flag = flag"
        switch int(0...4) {
        case 0:
            // Folio's update with each row's current values.
            return randomIDs(int(1...6)).compactMap { rows[$0]?.decoded }.map { .update(ItemData($0)) }
        case 1:
            // Folio's upsert (`ON CONFLICT(key) DO UPDATE`) of current values, "everything we downloaded".
            return randomIDs(int(1...6)).compactMap { rows[$0]?.decoded }.map {
                var item = $0
                item.id = nil
                return .upsert(ItemData(item))
            }
        case 2:
            // A rewrite of every row.
            return [.sql("UPDATE item SET \(every)", [])]
        case 3:
            // An SQL upsert of every row onto itself.
            return [
                .sql(
                    """
                    INSERT INTO item (id, rank, value, stamp, name, category, score, key, flag) \
                    SELECT id, rank, value, stamp, name, category, score, key, flag FROM item WHERE true \
                    ON CONFLICT(id) DO UPDATE SET rank = excluded.rank, value = excluded.value, stamp = excluded.stamp, \
                    name = excluded.name, category = excluded.category, score = excluded.score, key = excluded.key, \
                    flag = excluded.flag
                    """, [])
            ]
        default:
            // Values SQLite stores back as they are: an integral real in the integer column
            // (typeof checked, so a real stays what it is), a text copy of a text.
            return [
                .sql(
                    "UPDATE item SET rank = CASE WHEN typeof(rank) = 'integer' AND rank BETWEEN -4503599627370496 AND 4503599627370496 THEN CAST(rank AS REAL) ELSE rank END, category = category || '' WHERE id % 2 = ?",
                    [.int(Int64(int(0...1)))])
            ]
        }
    }

    /// One real change of sort keys in a statement that sets every other row to its values:
    /// only that row is reported, with the moves it makes.
    mutating func changeBesideUnchanged() -> [Write] {
        guard let id = randomIDs(1).first else { return [] }
        return [
            .sql(
                "UPDATE item SET rank = CASE WHEN id = ? THEN ? ELSE rank END, name = name, flag = flag",
                [.int(id), .int(rank())])
        ]
    }

    /// A write to a second, small table (not an entity any controller lists), by another
    /// connection followed by `store.synchronize()`, or through the store: no controller
    /// may deliver anything.
    mutating func otherTableWrite() -> Operation {
        nextKey += 1
        let writes: [Write] = [
            .sql("CREATE TABLE IF NOT EXISTS \(Write.otherTable) (id INTEGER PRIMARY KEY, note TEXT)", []),
            .sql("INSERT INTO \(Write.otherTable) (note) VALUES (?)", [.string("n\(nextKey)")]),
            .sql("UPDATE \(Write.otherTable) SET note = note || '+' WHERE id % 3 = ?", [.int(Int64(int(0...2)))]),
        ]
        return fileStore && chance(0.7) ? .external(writes) : .write(writes)
    }

    mutating func externalWrites(_ rows: [Int64: StoredRow]) -> [Write] {
        var writes: [Write] = []
        for id in randomIDs(int(1...3)) {
            writes.append(
                .sql(
                    "UPDATE item SET rank = ?, category = CAST(? AS TEXT) WHERE id = ?",
                    [.int(rank()), .text(Array((pick(Extremes.categories) ?? "x").utf8)), .int(id)]))
        }
        if chance(0.5) {
            let id = freshID()
            writes.append(
                .sql(
                    "INSERT OR IGNORE INTO item (id, rank, value, stamp, name, category, score, key, flag) VALUES (?, ?, ?, ?, CAST(? AS TEXT), NULL, ?, ?, 0)",
                    [
                        .int(id), .int(rank()), .real(value()), .real(Double(int(0...7) * 86_400)), .text(Array(text().utf8)),
                        .int(Int64(int(-45...45))), .string("ext\(id)"),
                    ]))
        }
        if chance(0.3), let id = randomIDs(1).first { writes.append(.sql("DELETE FROM item WHERE id = ?", [.int(id)])) }
        return writes
    }

    /// Raw SQL of every kind the rules name.
    mutating func rawSQL(_ rows: [Int64: StoredRow], _ ids: [Int64]) -> Write {
        let id = randomIDs(1).first ?? 1
        switch int(0...13) {
        case 0:
            // A real beside the integers of `rank` (SQLite keeps it real and compares exactly).
            realRanks = int(3...15)
            return .sql("UPDATE item SET rank = ? WHERE id = ?", [.real(pick(Extremes.realRanks)), .int(id)])
        case 1:
            return .sql("UPDATE item SET name = CAST(? AS TEXT) WHERE id = ?", [.text(pick(Extremes.invalidTexts)), .int(id)])
        case 2:
            return .sql(
                "UPDATE item SET category = CAST(? AS TEXT) WHERE id = ?", [.text(pick(Extremes.invalidTexts)), .int(id)])
        case 3:
            // INSERT … SELECT: copies of some rows under new rowids and keys.
            let minID = ids.first ?? 0, maxID = ids.last ?? 0
            let offset = nextID - minID
            nextID = maxID + offset + 1
            nextKey += 1
            let k = int(2...7)
            return .sql(
                "INSERT OR IGNORE INTO item (id, rank, value, stamp, name, category, score, key, flag) SELECT id + ?, rank, -value, stamp + 3600, name, category, score, key || '~' || ?, NOT flag FROM item WHERE id % ? = ?",
                [.int(offset), .int(Int64(nextKey)), .int(Int64(k)), .int(Int64(int(0...(k - 1))))])
        case 4:
            // The rowid itself changes: the old identity leaves, a new one arrives.
            return .sql("UPDATE OR IGNORE item SET id = ? WHERE id = ?", [.int(freshID()), .int(id)])
        case 5:
            let n = int(1...4)
            let offset = nextID
            nextID += (ids.last ?? 0) + 10
            return .sql(
                "UPDATE OR IGNORE item SET id = id + ? WHERE id IN (SELECT id FROM item WHERE flag ORDER BY rank, id LIMIT ?)",
                [.int(offset), .int(Int64(n))])
        case 6:
            return .sql(
                "DELETE FROM item WHERE id IN (SELECT id FROM item ORDER BY stamp DESC, id LIMIT ?)", [.int(Int64(int(1...3)))])
        case 7:
            return .sql(
                "DELETE FROM item WHERE category IS (SELECT category FROM item WHERE id = ?) AND id % 2 = 0", [.int(id)])
        case 8:
            let k = int(2...6)
            return .sql(
                "UPDATE item SET score = coalesce(score, 0) + ? WHERE id % ? = ? AND typeof(score) IS NOT 'text'",
                [.int(Int64(int(-15...15))), .int(Int64(k)), .int(Int64(int(0...(k - 1))))])
        case 9:
            let k = int(2...5)
            return .sql(
                "UPDATE item SET stamp = stamp + ?, flag = NOT flag WHERE id % ? = ?",
                [.real(pick([86_400, -86_400, 0.5, 43_200])), .int(Int64(k)), .int(Int64(int(0...(k - 1))))])
        case 10:
            // Text in an integer column: the computed section key cannot decode it; while
            // it is there, a computed-section fetch must fail with an error, not show wrong sections.
            poisoned = int(2...8)
            return .sql("UPDATE item SET score = 'x' WHERE id = ?", [.int(id)])
        case 11:
            return .sql(
                "UPDATE item SET value = ? WHERE id IN (SELECT id FROM item WHERE rank > (SELECT avg(rank) FROM item) LIMIT 3)",
                [.real(pick(Extremes.values))])
        case 12:
            let k = int(2...5)
            return .sql(
                "UPDATE item SET category = CAST(? AS TEXT) WHERE id % ? = ?",
                [.string(pick(Extremes.categories.compactMap { $0 })), .int(Int64(k)), .int(Int64(int(0...(k - 1))))])
        default:
            return .sql("UPDATE item SET name = CAST(? AS TEXT) WHERE id = ?", [.string(text()), .int(id)])
        }
    }
}
