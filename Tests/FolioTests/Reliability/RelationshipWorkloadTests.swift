import Foundation
import GRDB
import Testing
@testable import Folio

/// Randomized workloads of albums and photos that try to break lists that read through a
/// to-one: after every transaction — renames (to another album's name, to Unicode
/// look-alikes, to text with a NUL), hiding, re-pointing photos (to nil, to a missing
/// album), inserts and deletes of both, deleting albums with their photos nullified in the
/// same transaction, some of it by a second connection — every controller's change sets,
/// applied to a strict table-view model, must give exactly what a fresh fetch gives.
///
/// Default: 20 seeds of 30 transactions. `FOLIO_SEED=n` runs one seed (replay), `FOLIO_FIRST_SEED=n
/// FOLIO_SEEDS=k` a range, `FOLIO_TRANSACTIONS=n` sets the transactions per seed:
/// `FOLIO_SEED=5 swift test --filter RelationshipWorkloadTests`.
@Suite("Relationship workloads", .tags(Testing.Tag.longTier))
@MainActor
struct RelationshipWorkloadTests {
    nonisolated static var seeds: [UInt64] { workloadSeeds(defaultCount: 20) }

    nonisolated static var transactions: Int { environmentInt("FOLIO_TRANSACTIONS") ?? 30 }

    /// Album names: equal to one another, look-alikes (NFC/NFD, "K" and the Kelvin sign,
    /// case), empty, with a NUL inside.
    static let names = [
        "Beach", "beach", "Beach", "\u{E9}t\u{E9}", "e\u{301}te\u{301}", "K", "\u{212A}", "k", "", "a\u{0}b", "a", "Zoo",
        "\u{C5}", "A\u{30A}", "z",
    ]

    /// The ids a step chooses from, read at its start.
    struct State {
        var albums: [Int64]
        var photos: [Int64]
        /// Album ids that were used and deleted, and some never used: dangling references.
        var missing: [Int64]
    }

    static func state(_ db: Database) throws -> State {
        let albums = try Int64.fetchAll(db, sql: "SELECT id FROM album ORDER BY id")
        let photos = try Int64.fetchAll(db, sql: "SELECT id FROM photo ORDER BY id")
        let referenced = try Int64.fetchAll(
            db,
            sql: "SELECT DISTINCT album FROM photo WHERE album IS NOT NULL AND album NOT IN (SELECT id FROM album) ORDER BY album"
        )
        let spare = [900_001, 900_002].filter { !albums.contains($0) && !referenced.contains($0) }
        return State(albums: albums, photos: photos, missing: referenced + spare)
    }

    /// One random change, as raw SQL (so that a second connection can make it too).
    static func change(_ db: Database, _ state: State, _ rng: inout SeededRandom, log: inout [String]) throws {
        func anyAlbum() -> Int64? { state.albums.randomElement(using: &rng) }
        func anyPhoto() -> Int64? { state.photos.randomElement(using: &rng) }
        func reference() -> Int64? {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6: anyAlbum()
            case 6..<8: nil
            default: state.missing.randomElement(using: &rng)
            }
        }
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<22:
            guard let album = anyAlbum() else { return }
            let name = names.randomElement(using: &rng)!
            log.append("rename album \(album) to \(name.unicodeScalars.map { String($0.value, radix: 16) })")
            try db.execute(
                sql: "UPDATE album SET name = \(textLiteral(Array(name.utf8))) WHERE id = ?", arguments: [album])
        case 22..<34:
            guard let album = anyAlbum() else { return }
            log.append("toggle hidden of album \(album)")
            try db.execute(sql: "UPDATE album SET hidden = NOT hidden WHERE id = ?", arguments: [album])
        case 34..<56:
            guard let photo = anyPhoto() else { return }
            let target = reference()
            log.append("point photo \(photo) to \(target.map(String.init) ?? "nil")")
            try db.execute(sql: "UPDATE photo SET album = ? WHERE id = ?", arguments: [target, photo])
        case 56..<66:
            let target = reference()
            let taken = Int.random(in: 0..<12, using: &rng)
            log.append("insert photo taken \(taken) in \(target.map(String.init) ?? "nil")")
            try db.execute(sql: "INSERT INTO photo (title, taken, album) VALUES ('new', ?, ?)", arguments: [taken, target])
        case 66..<74:
            guard let photo = anyPhoto() else { return }
            log.append("delete photo \(photo)")
            try db.execute(sql: "DELETE FROM photo WHERE id = ?", arguments: [photo])
        case 74..<80:
            guard let album = anyAlbum() else { return }
            log.append("delete album \(album), nullify its photos")
            try db.execute(sql: "DELETE FROM album WHERE id = ?", arguments: [album])
            try db.execute(sql: "UPDATE photo SET album = NULL WHERE album = ?", arguments: [album])
        case 80..<84:
            guard let album = anyAlbum() else { return }
            log.append("delete album \(album), photos left dangling")
            try db.execute(sql: "DELETE FROM album WHERE id = ?", arguments: [album])
        case 84..<92:
            let name = names.randomElement(using: &rng)!
            // Sometimes with the id of a missing album: its dangling photos come back.
            let id = Bool.random(using: &rng) ? state.missing.randomElement(using: &rng) : nil
            log.append(
                "insert album \(id.map(String.init) ?? "new") named \(name.unicodeScalars.map { String($0.value, radix: 16) })")
            try db.execute(
                sql: "INSERT OR IGNORE INTO album (id, name, hidden) VALUES (?, \(textLiteral(Array(name.utf8))), ?)",
                arguments: [id, Bool.random(using: &rng)])
        case 92..<96:
            let taken = Int.random(in: 0..<12, using: &rng)
            log.append("photos taken \(taken) become taken \(taken + 1)")
            try db.execute(sql: "UPDATE photo SET taken = taken + 1 WHERE taken = ?", arguments: [taken])
        default:
            guard let album = anyAlbum(), let other = anyAlbum() else { return }
            log.append("move the photos of \(album) to \(other), rename \(other) as \(album)")
            try db.execute(sql: "UPDATE photo SET album = ? WHERE album = ?", arguments: [other, album])
            try db.execute(
                sql: "UPDATE album SET name = coalesce((SELECT name FROM album WHERE id = ?), name) WHERE id = ?",
                arguments: [album, other])
        }
    }

    static func populate(_ store: Store, _ rng: inout SeededRandom) throws {
        var random = rng
        try store.write { tx in
            var albums: [RecordID] = []
            for _ in 0..<Int.random(in: 3...7, using: &random) {
                var album = Album(name: names.randomElement(using: &random)!, hidden: Int.random(in: 0..<4, using: &random) == 0)
                try tx.insert(&album)
                albums.append(album.id!)
            }
            for i in 0..<Int.random(in: 10...40, using: &random) {
                let target = Int.random(in: 0..<6, using: &random) == 0 ? nil : albums.randomElement(using: &random)
                var photo = Photo(title: "p\(i)", taken: Int.random(in: 0..<12, using: &random), album: ToOne(target))
                try tx.insert(&photo)
            }
        }
        rng = random
    }

    @Test(arguments: seeds)
    func workload(seed: UInt64) async throws {
        var rng = SeededRandom(seed: seed &* 0x9E37_79B9 &+ 0x5EED)
        let store = try Store.temporary(records: [Album.self, Photo.self])
        try Self.populate(store, &rng)
        let byTaken = [SortDescriptor(\Photo.taken)]
        let byAlbum = [SortDescriptor(\Photo.album.name), SortDescriptor(\.taken)]
        let lists: [(String, RelLive<Photo>)] = [
            (
                "filtered",
                try await RelLive(
                    store, RecordRequest(predicate: #Predicate { $0.album.hidden != true }, sortBy: byTaken, batchSize: 7))
            ),
            ("by album", try await RelLive(store, RecordRequest(sortBy: byAlbum, batchSize: 5))),
            (
                "sectioned",
                try await RelLive(store, RecordRequest(sortBy: byAlbum, batchSize: 5), sectionBy: .attribute(\Photo.album.name))
            ),
            ("plain", try await RelLive(store, RecordRequest(sortBy: byTaken))),
            (
                "letters",
                try await RelLive(
                    store, RecordRequest(sortBy: [SortDescriptor(\Photo.album.name.folded, order: .reverse)], batchSize: 4),
                    sectionBy: .firstLetter(\Photo.album.name))
            ),
            (
                "named",
                try await RelLive(
                    store,
                    RecordRequest(
                        predicate: #Predicate { $0.album.name.folded == "beach" || $0.album.name == nil }, sortBy: byAlbum,
                        limit: 6, offset: 1))
            ),
        ]
        let other = try DatabaseQueue(path: store.path!)
        var log: [String] = []
        for step in 0..<Self.transactions {
            let state = try readNow(store) { db in try Self.state(db) }
            let count = Int.random(in: 1...4, using: &rng)
            let external = Int.random(in: 0..<5, using: &rng) == 0
            log.append("step \(step)\(external ? " (second connection)" : ""):")
            var random = rng
            var lines: [String] = []
            if external {
                try writeSync(other) { db in
                    for _ in 0..<count { try Self.change(db, state, &random, log: &lines) }
                }
                try store.synchronize()
            } else {
                try writeSync(store) { tx in
                    for _ in 0..<count { try Self.change(tx.database, state, &random, log: &lines) }
                }
            }
            rng = random
            log += lines.map { "  " + $0 }
            for (name, live) in lists {
                try await live.settle(
                    "seed \(seed), step \(step), list \(name); replay: FOLIO_SEED=\(seed) swift test --filter RelationshipWorkloadTests"
                )
            }
            if lists.contains(where: { $0.1.failed }) {
                Issue.record(Comment(rawValue: "seed \(seed) failed at step \(step); the steps:\n" + log.joined(separator: "\n")))
                return
            }
        }
    }
}
