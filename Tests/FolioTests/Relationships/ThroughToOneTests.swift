import Foundation
import GRDB
import Testing
@testable import Folio

/// Predicates, sorts and sections through a to-one, each compared with what Swift computes
/// from every stored row: NULL and dangling references read as no target; text compares by
/// bytes (NFC and NFD, "K" and the Kelvin sign, NUL inside a name are distinct); numbers by
/// exact value; a relationship of an entity to itself reads the outer row's reference.
@Suite("Through a to-one")
@MainActor
struct ThroughToOneTests {
    /// Every album and photo as stored.
    struct World {
        var albums: [RecordID: Album]
        var photos: [Photo]

        func album(of photo: Photo) -> Album? { photo.album.id.flatMap { albums[$0] } }

        /// The photos that satisfy `filter`, in the order `precedes` gives (the rowid breaks ties).
        func ids(where filter: (Photo) -> Bool = { _ in true }, _ compare: (Photo, Photo) -> Int) -> [RecordID] {
            photos.filter(filter).sorted {
                let c = compare($0, $1)
                return c != 0 ? c < 0 : $0.id!.rawValue < $1.id!.rawValue
            }.map { $0.id! }
        }
    }

    static let dangling: Int64 = 987_654_321

    /// Twelve albums with names chosen to break text handling, two photos each, two photos
    /// without an album and two whose reference names no album (written by raw SQL).
    static let names = [
        "Beach", "beach", "\u{E9}t\u{E9}", "e\u{301}te\u{301}", "K", "\u{212A}", "a\u{0}b", "a\u{0}c", "a", "", "Zoo",
        "Beach",
    ]

    static func world() throws -> (Store, World) {
        let store = try Store.temporary(records: [Album.self, Photo.self])
        try store.write { tx in
            for (i, name) in names.enumerated() {
                var album = Album(
                    name: name, hidden: i % 3 == 0,
                    created: i % 4 == 3 ? nil : Date(timeIntervalSince1970: Double(i) * 43_200 + 7))
                try tx.insert(&album)
                for j in 0..<2 {
                    var photo = Photo(title: "\(i)-\(j)", taken: (i * 7 + j * 3) % 5, album: ToOne(album.id))
                    try tx.insert(&photo)
                }
            }
            for j in 0..<4 {
                var photo = Photo(title: "loose \(j)", taken: j % 3)
                try tx.insert(&photo)
            }
            try tx.database.execute(
                sql: "UPDATE photo SET album = ? WHERE title IN ('loose 2', 'loose 3')", arguments: [dangling])
        }
        return (store, try read(store))
    }

    static func read(_ store: Store) throws -> World {
        let albums = try store.fetch(RecordRequest<Album>()).compactMap { $0 }
        let photos = try store.fetch(RecordRequest<Photo>()).compactMap { $0 }
        return World(albums: Dictionary(uniqueKeysWithValues: albums.map { ($0.id!, $0) }), photos: photos)
    }

    static func ids(_ store: Store, _ request: RecordRequest<Photo>) throws -> [RecordID] {
        Array(try store.fetchIdentifiers(request))
    }

    // MARK: Predicates

    @Test func predicatesThroughAToOneMatchWhatSwiftComputes() throws {
        let (store, world) = try Self.world()
        let beachID = try #require(world.albums.values.first { $0.name == "beach" }?.id)
        let target: RecordID? = beachID
        let none: RecordID? = nil
        let byID: (Photo, Photo) -> Int = { a, b in a.id!.rawValue < b.id!.rawValue ? -1 : 1 }
        let cases: [(String, Predicate<Photo>, (Photo) -> Bool)] = [
            ("hidden != true", #Predicate { $0.album.hidden != true }, { world.album(of: $0)?.hidden != true }),
            ("hidden == true", #Predicate { $0.album.hidden == true }, { world.album(of: $0)?.hidden == true }),
            ("hidden == false", #Predicate { $0.album.hidden == false }, { world.album(of: $0)?.hidden == false }),
            ("!(hidden == true)", #Predicate { !($0.album.hidden == true) }, { !(world.album(of: $0)?.hidden == true) }),
            ("name == Beach", #Predicate { $0.album.name == "Beach" }, { sameBytes(world.album(of: $0)?.name, "Beach") }),
            (
                "name == NFC", #Predicate { $0.album.name == "\u{E9}t\u{E9}" },
                { sameBytes(world.album(of: $0)?.name, "\u{E9}t\u{E9}") }
            ),
            (
                "name == NFD", #Predicate { $0.album.name == "e\u{301}te\u{301}" },
                { sameBytes(world.album(of: $0)?.name, "e\u{301}te\u{301}") }
            ),
            ("name == Kelvin", #Predicate { $0.album.name == "\u{212A}" }, { sameBytes(world.album(of: $0)?.name, "\u{212A}") }),
            ("name == a NUL b", #Predicate { $0.album.name == "a\u{0}b" }, { sameBytes(world.album(of: $0)?.name, "a\u{0}b") }),
            ("name == empty", #Predicate { $0.album.name == "" }, { sameBytes(world.album(of: $0)?.name, "") }),
            ("name == nil", #Predicate { $0.album.name == nil }, { world.album(of: $0) == nil }),
            ("name != nil", #Predicate { $0.album.name != nil }, { world.album(of: $0) != nil }),
            ("folded == beach", #Predicate { $0.album.name.folded == "BEACH" }, { world.album(of: $0)?.name.folded == "beach" }),
            ("folded == k", #Predicate { $0.album.name.folded == "k" }, { world.album(of: $0)?.name.folded == "k" }),
            ("id == target", #Predicate { $0.album.id == target }, { $0.album.id == beachID }),
            ("id == nil", #Predicate { $0.album.id == none }, { $0.album.id == nil }),
            ("id != nil", #Predicate { $0.album.id != nil }, { $0.album.id != nil }),
            (
                "taken > 1 && name != Zoo", #Predicate { $0.taken > 1 && $0.album.name != "Zoo" },
                { $0.taken > 1 && !sameBytes(world.album(of: $0)?.name, "Zoo") }
            ),
            (
                "(name ?? x) contains ea", #Predicate { ($0.album.name ?? "x").contains("ea") },
                { (world.album(of: $0)?.name ?? "x").utf8.elementsEqualSubsequence("ea") }
            ),
            ("created == nil", #Predicate { $0.album.created == nil }, { world.album(of: $0)?.created == nil }),
        ]
        for (name, predicate, expected) in cases {
            let request = RecordRequest<Photo>(predicate: predicate, sortBy: [SortDescriptor(\.id)])
            #expect(try Self.ids(store, request) == world.ids(where: expected, byID), "\(name)")
            #expect(try store.count(request) == world.photos.filter(expected).count, "\(name): count")
        }
    }

    @Test func aReferenceEqualToAToOneValueMatchesTheStoredReference() throws {
        let (store, world) = try Self.world()
        let beach = ToOne<Album>(try #require(world.albums.values.first { $0.name == "beach" }?.id))
        let empty = ToOne<Album>()
        let byID: (Photo, Photo) -> Int = { a, b in a.id!.rawValue < b.id!.rawValue ? -1 : 1 }
        #expect(
            try Self.ids(store, RecordRequest(predicate: #Predicate { $0.album == beach }))
                == world.ids(where: { $0.album == beach }, byID))
        #expect(
            try Self.ids(store, RecordRequest(predicate: #Predicate { $0.album == empty }))
                == world.ids(where: { $0.album.id == nil }, byID))
    }

    @Test func writesSelectRowsThroughAToOne() throws {
        let (store, world) = try Self.world()
        let hiddenCount = world.photos.filter { world.album(of: $0)?.hidden == true }.count
        let updated = try store.write { tx in
            try tx.updateAll(Photo.self, where: #Predicate { $0.album.hidden == true }, set: [.set(\.taken, to: 99)])
        }
        #expect(updated == hiddenCount)
        let deleted = try store.write { tx in try tx.deleteAll(Photo.self, where: #Predicate { $0.album.name == nil }) }
        #expect(deleted == world.photos.filter { world.album(of: $0) == nil }.count)
        let after = try Self.read(store)
        #expect(after.photos.filter { $0.taken == 99 }.count == hiddenCount)
        #expect(after.photos.allSatisfy { after.album(of: $0) != nil })
    }

    // MARK: Sorts

    @Test func sortsThroughAToOneMatchWhatSwiftComputes() throws {
        let (store, world) = try Self.world()
        func byTaken(_ a: Photo, _ b: Photo) -> Int { a.taken == b.taken ? 0 : (a.taken < b.taken ? -1 : 1) }
        func name(_ p: Photo) -> String? { world.album(of: p)?.name }
        // Ascending name, then taken: NULL (no album, a dangling one) first, text by bytes.
        let ascending = RecordRequest<Photo>(sortBy: [SortDescriptor(\Photo.album.name), SortDescriptor(\.taken)])
        #expect(
            try Self.ids(store, ascending)
                == world.ids { a, b in
                    let c = compareText(name(a), name(b))
                    return c != 0 ? c : byTaken(a, b)
                })
        // Descending name, then ascending taken: ties by rowid ascending (the last key's direction).
        let descending = RecordRequest<Photo>(
            sortBy: [SortDescriptor(\Photo.album.name, order: .reverse), SortDescriptor(\.taken)])
        #expect(
            try Self.ids(store, descending)
                == world.ids { a, b in
                    let c = -compareText(name(a), name(b))
                    return c != 0 ? c : byTaken(a, b)
                })
        // The folded key of the target's name: "Beach" and "beach" tie, "K" and Kelvin tie.
        let folded = RecordRequest<Photo>(sortBy: [SortDescriptor(\Photo.album.name.folded)])
        #expect(
            try Self.ids(store, folded)
                == world.ids { a, b in compareText(name(a)?.folded, name(b)?.folded) })
        // Only the last key descending: rowid ties descending.
        let created = RecordRequest<Photo>(sortBy: [SortDescriptor(\Photo.album.created, order: .reverse)])
        let expected = world.photos.sorted { a, b in
            let x = world.album(of: a)?.created?.timeIntervalSince1970, y = world.album(of: b)?.created?.timeIntervalSince1970
            if x != y { return (x ?? -.infinity) > (y ?? -.infinity) }
            return a.id!.rawValue > b.id!.rawValue
        }.map { $0.id! }
        #expect(try Self.ids(store, created) == expected)
        // The same through batches and a window.
        var windowed = ascending
        windowed.limit = 7
        windowed.offset = 5
        windowed.batchSize = 3
        let all = try Self.ids(store, ascending)
        #expect(try store.fetch(windowed).compactMap { $0?.id } == Array(all[5..<12]))
    }

    // MARK: Sections

    /// The photos' sections as (name, count, isNil).
    static func sections(_ controller: FetchedResultsController<Photo>) -> [[String]] {
        controller.sections.map {
            [$0.isNil ? "nil" : "", Array($0.name.utf8).map(String.init).joined(separator: ","), "\($0.numberOfObjects)"]
        }
    }

    @Test func attributeSectionsThroughAToOneAreTheTargetsDistinctBytes() async throws {
        let (store, world) = try Self.world()
        let request = RecordRequest<Photo>(sortBy: [SortDescriptor(\Photo.album.name), SortDescriptor(\.taken)], batchSize: 4)
        let live = try await PhotoHarness(store, request, sectionBy: .attribute(\Photo.album.name))
        // Expected: runs of equal bytes, NULL first.
        var expected: [[String]] = []
        var previous: String?? = .none
        for id in try Self.ids(store, request) {
            let photo = try #require(world.photos.first { $0.id == id })
            let name = world.album(of: photo)?.name
            if let last = previous, compareText(last, name) == 0 {
                expected[expected.count - 1][2] = String(Int(expected[expected.count - 1][2])! + 1)
            } else {
                expected.append([name == nil ? "nil" : "", Array((name ?? "").utf8).map(String.init).joined(separator: ","), "1"])
            }
            previous = .some(name)
        }
        #expect(Self.sections(live.controller) == expected)
        // NFC, NFD, "K", Kelvin, "a\0b", "a\0c", "a", "" and NULL: all distinct; the two "Beach" one.
        #expect(live.controller.sections.count == Set(world.albums.values.map { Array($0.name.utf8) }).count + 1)
        // Renaming the NFC album to its NFD twin merges their sections, and back.
        let nfc = try #require(world.albums.values.first { sameBytes($0.name, "\u{E9}t\u{E9}") }?.id)
        try await live.step { tx in
            try tx.database.execute(
                sql: "UPDATE album SET name = ? WHERE id = ?", arguments: ["e\u{301}te\u{301}", nfc.rawValue])
        }
        #expect(live.controller.sections.count == expected.count - 1)
        try await live.step { tx in
            try tx.database.execute(sql: "UPDATE album SET name = ? WHERE id = ?", arguments: ["\u{E9}t\u{E9}", nfc.rawValue])
        }
        #expect(live.controller.sections.count == expected.count)
        // A NUL in the middle: "a\0c" renamed to "a\0b" merges; to "a\0" it stays apart from "a".
        let ac = try #require(world.albums.values.first { sameBytes($0.name, "a\u{0}c") }?.id)
        try await live.step { tx in
            try tx.database.execute(
                sql: "UPDATE album SET name = \(textLiteral(Array("a\u{0}b".utf8))) WHERE id = ?", arguments: [ac.rawValue])
        }
        #expect(live.controller.sections.count == expected.count - 1)
        try await live.step { tx in
            try tx.database.execute(
                sql: "UPDATE album SET name = \(textLiteral(Array("a\u{0}".utf8))) WHERE id = ?", arguments: [ac.rawValue])
        }
        #expect(live.controller.sections.count == expected.count)
        // The Kelvin sign renamed to "K": one section.
        let kelvin = try #require(world.albums.values.first { sameBytes($0.name, "\u{212A}") }?.id)
        try await live.step { tx in
            _ = try tx.updateAll(Album.self, where: #Predicate { $0.id == kelvin }, set: [.set(\.name, to: "K")])
        }
        #expect(live.controller.sections.count == expected.count - 1)
    }

    /// Sections of photos through their album are the sections of the albums themselves
    /// (every album has two photos; the photos without one make the nil section).
    func expectSectionsFollowAlbums(
        _ store: Store, photos: RecordRequest<Photo>, _ photoKey: SectionKey<Photo>, albums: RecordRequest<Album>,
        _ albumKey: SectionKey<Album>, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let photoController = FetchedResultsController(photos, store: store, sectionBy: photoKey)
        try photoController.performFetch()
        let albumController = FetchedResultsController(albums, store: store, sectionBy: albumKey)
        try albumController.performFetch()
        let photoSections = photoController.sections.filter { !$0.isNil }
        #expect(
            photoSections.map { Array($0.name.utf8) } == albumController.sections.map { Array($0.name.utf8) },
            sourceLocation: sourceLocation)
        #expect(
            photoSections.map(\.numberOfObjects) == albumController.sections.map { $0.numberOfObjects * 2 },
            sourceLocation: sourceLocation)
        #expect(photoController.sections.filter(\.isNil).count == 1, sourceLocation: sourceLocation)
    }

    @Test func firstLetterAndDaySectionsThroughAToOneAreTheTargetsSections() throws {
        let (store, _) = try Self.world()
        try expectSectionsFollowAlbums(
            store, photos: RecordRequest(sortBy: [SortDescriptor(\Photo.album.name)]), .firstLetter(\Photo.album.name),
            albums: RecordRequest(sortBy: [SortDescriptor(\Album.name)]), .firstLetter(\Album.name))
        try expectSectionsFollowAlbums(
            store, photos: RecordRequest(sortBy: [SortDescriptor(\Photo.album.name.folded)]), .firstLetter(\Photo.album.name),
            albums: RecordRequest(sortBy: [SortDescriptor(\Album.name.folded)]), .firstLetter(\Album.name))
        // Day sections: albums without a date join the photos without an album in the nil section.
        try store.write { tx in _ = try tx.deleteAll(Album.self, where: #Predicate { $0.created == nil }) }
        try store.write { tx in
            try tx.database.execute(sql: "UPDATE photo SET album = NULL WHERE album NOT IN (SELECT id FROM album)")
            try tx.database.execute(
                sql: "UPDATE photo SET album = ? WHERE title IN ('loose 2', 'loose 3')", arguments: [Self.dangling])
        }
        try expectSectionsFollowAlbums(
            store, photos: RecordRequest(sortBy: [SortDescriptor(\Photo.album.created)]),
            .day(\Photo.album.created, timeZone: .gmt),
            albums: RecordRequest(sortBy: [SortDescriptor(\Album.created)]), .day(\Album.created, timeZone: .gmt))
        let west = TimeZone(secondsFromGMT: -5 * 3600)!
        try expectSectionsFollowAlbums(
            store, photos: RecordRequest(sortBy: [SortDescriptor(\Photo.album.created, order: .reverse)]),
            .day(\Photo.album.created, timeZone: west),
            albums: RecordRequest(sortBy: [SortDescriptor(\Album.created, order: .reverse)]), .day(\Album.created, timeZone: west)
        )
    }

    @Test func liveFirstLetterAndDaySectionsFollowTheTarget() async throws {
        let (store, world) = try Self.world()
        let letters = try await PhotoHarness(
            store, RecordRequest(sortBy: [SortDescriptor(\Photo.album.name.folded), SortDescriptor(\.taken)], batchSize: 3),
            sectionBy: .firstLetter(\Photo.album.name))
        let days = try await PhotoHarness(
            store, RecordRequest(sortBy: [SortDescriptor(\Photo.album.created), SortDescriptor(\.taken)], batchSize: 3),
            sectionBy: .day(\Photo.album.created, timeZone: .gmt))
        let ids = world.albums.keys.sorted { $0.rawValue < $1.rawValue }
        let renames = ["\u{212A}elvin", "\u{C5}ngstr\u{F6}m", "A\u{30A}ngstro\u{308}m", "", "\u{0}", "zz", "Beach"]
        for (i, name) in renames.enumerated() {
            try writeSync(store) { tx in
                try tx.database.execute(
                    sql: "UPDATE album SET name = \(textLiteral(Array(name.utf8))), created = ? WHERE id = ?",
                    arguments: [Double(i) * 86_400 * 0.75, ids[(i * 5) % ids.count].rawValue])
            }
            try await letters.settle()
            try await days.settle()
        }
    }

    /// Another connection renames an album (its folded key left stale, noted by the
    /// trigger): a fetch of photos through the album's folded name must see the new name,
    /// as a fetch of albums does (the store fixes stale keys before it reads them).
    @Test
    func aFetchThroughAToOneSeesTheTargetsFoldedKeysCurrent() throws {
        let (store, world) = try Self.world()
        let zoo = try #require(world.albums.values.first { $0.name == "Zoo" }?.id)
        let other = try DatabaseQueue(path: store.path!)
        try other.write { db in
            try db.execute(sql: "UPDATE album SET name = 'Aquarium' WHERE id = ?", arguments: [zoo.rawValue])
        }
        // The albums' own fetch fixes the stale key first.
        let albums = RecordRequest<Album>(predicate: #Predicate { $0.name.folded == "aquarium" })
        #expect(try store.count(albums) == 1)
        try other.write { db in
            try db.execute(sql: "UPDATE album SET name = 'Zoo' WHERE id = ?", arguments: [zoo.rawValue])
        }
        let photos = RecordRequest<Photo>(predicate: #Predicate { $0.album.name.folded == "zoo" })
        #expect(try store.count(photos) == 2)
        #expect(try store.fetchIdentifiers(photos).count == 2)
    }

    // MARK: Writes SQLite reports unusually

    @Test func anAlbumWhoseIdChangesLeavesItsPhotosDangling() async throws {
        let (store, world) = try Self.world()
        let request = RecordRequest<Photo>(sortBy: [SortDescriptor(\Photo.album.name), SortDescriptor(\.taken)], batchSize: 4)
        let live = try await PhotoHarness(store, request, sectionBy: .attribute(\Photo.album.name))
        let filtered = try await PhotoHarness(
            store, RecordRequest(predicate: #Predicate { $0.album.hidden == false }, sortBy: [SortDescriptor(\.taken)]))
        let zoo = try #require(world.albums.values.first { $0.name == "Zoo" }?.id)
        // The album moves to the id the dangling photos point to: they follow it; its own
        // photos now point to nothing.
        try writeSync(store) { tx in
            try tx.database.execute(sql: "UPDATE album SET id = ? WHERE id = ?", arguments: [Self.dangling, zoo.rawValue])
        }
        try await live.settle()
        try await filtered.settle()
        // And back, by rowid.
        try writeSync(store) { tx in
            try tx.database.execute(sql: "UPDATE album SET rowid = ? WHERE id = ?", arguments: [zoo.rawValue, Self.dangling])
        }
        try await live.settle()
        try await filtered.settle()
    }

    @Test func deletingEveryAlbumAndReplacingOne() async throws {
        let (store, world) = try Self.world()
        let request = RecordRequest<Photo>(sortBy: [SortDescriptor(\Photo.album.name), SortDescriptor(\.taken)], batchSize: 4)
        let live = try await PhotoHarness(store, request, sectionBy: .attribute(\Photo.album.name))
        let filtered = try await PhotoHarness(
            store, RecordRequest(predicate: #Predicate { $0.album.hidden == false }, sortBy: [SortDescriptor(\.taken)]))
        let beach = try #require(world.albums.values.first { $0.name == "beach" }?.id)
        // REPLACE removes the row it conflicts with.
        try writeSync(store) { tx in
            try tx.database.execute(
                sql: "INSERT OR REPLACE INTO album (id, name, hidden) VALUES (?, 'Replaced', 0)", arguments: [beach.rawValue])
        }
        try await live.settle()
        try await filtered.settle()
        // A DELETE without WHERE (SQLite's truncate optimization reports no row).
        try writeSync(store) { tx in try tx.database.execute(sql: "DELETE FROM album") }
        try await live.settle()
        try await filtered.settle()
        #expect(live.controller.sections.count == 1)
        // Albums back through a second connection, with the ids the photos point to.
        let other = try DatabaseQueue(path: store.path!)
        try writeSync(other) { db in
            try db.execute(
                sql:
                    "INSERT INTO album (id, name, hidden) SELECT DISTINCT album, 'Back ' || album, 0 FROM photo WHERE album IS NOT NULL"
            )
        }
        try store.synchronize()
        try await live.settle()
        try await filtered.settle()
        // The album delete nullified the photos of the albums that existed (the fixture's
        // rule); photos that pointed to missing albums kept their references, and match now.
        let matching = try readNow(store) { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM photo JOIN album ON album.id = photo.album WHERE album.hidden = 0")
        }
        #expect(filtered.controller.fetchedObjects?.count == matching)
        #expect(matching == 2)
        // A rolled-back savepoint changes nothing; the rest of its transaction does.
        try writeSync(store) { tx in
            try tx.database.execute(sql: "SAVEPOINT s; UPDATE album SET hidden = 1; ROLLBACK TO s; RELEASE s")
            try tx.database.execute(sql: "UPDATE album SET name = 'Dangling' WHERE id = ?", arguments: [Self.dangling])
        }
        try await live.settle()
        try await filtered.settle()
    }

    // MARK: Extreme identifiers and numbers

    @Test func identifiersAtTheEdgesOfInt64() async throws {
        let store = try Store.temporary(records: [Album.self, Photo.self])
        try writeSync(store) { tx in
            var plain = Album(name: "Plain")
            try tx.insert(&plain)
            try tx.database.execute(
                sql: "INSERT INTO album (id, name, hidden) VALUES (?, 'Max', 0), (?, 'Min', 1)",
                arguments: [Int64.max, Int64.min])
            for (i, target) in [Int64.max, Int64.min, plain.id!.rawValue, Int64.max, -1].enumerated() {
                var photo = Photo(title: "p\(i)", taken: i)
                try tx.insert(&photo)
                try tx.database.execute(sql: "UPDATE photo SET album = ? WHERE id = ?", arguments: [target, photo.id!.rawValue])
            }
        }
        let minID: RecordID? = RecordID(Int64.min)
        #expect(try store.count(RecordRequest<Photo>(predicate: #Predicate { $0.album.id == minID })) == 1)
        #expect(try store.count(RecordRequest<Photo>(relatedTo: RecordID(Int64.max), through: \.album)) == 2)
        #expect(try store.count(RecordRequest<Photo>(relatedTo: RecordID(Int64.min), through: \.album)) == 1)
        #expect(try store.count(RecordRequest<Photo>(predicate: #Predicate { $0.album.hidden == true })) == 1)
        let request = RecordRequest<Photo>(sortBy: [SortDescriptor(\Photo.album.name), SortDescriptor(\.taken)])
        #expect(try fetchSync(store, request).map { $0?.title } == ["p4", "p0", "p3", "p1", "p2"])
        let live = try await PhotoHarness(store, request, sectionBy: .attribute(\Photo.album.name))
        #expect(live.controller.sections.map(\.name) == ["", "Max", "Min", "Plain"])
        try await live.step { tx in
            try tx.database.execute(sql: "UPDATE album SET name = 'AAA' WHERE id = ?", arguments: [Int64.min])
        }
        #expect(live.controller.sections.map(\.name) == ["", "AAA", "Max", "Plain"])
        try await live.step { tx in try tx.database.execute(sql: "DELETE FROM album WHERE id = ?", arguments: [Int64.max]) }
        #expect(live.controller.sections.map(\.name) == ["", "AAA", "Plain"])
        #expect(live.controller.sections.first?.numberOfObjects == 3)
        // The dangling reference -1 comes to life.
        try await live.step { tx in
            try tx.database.execute(sql: "INSERT INTO album (id, name, hidden) VALUES (-1, 'Back', 0)")
        }
        #expect(live.controller.sections.map(\.name) == ["", "AAA", "Back", "Plain"])
    }

    /// Labels written by raw SQL with values of every storage class in `rank` (an INTEGER
    /// column keeps a real it cannot hold exactly, and text) and ±0 in `weight`.
    static func labels() throws -> Store {
        let store = try Store.temporary(records: [RelLabel.self, RelItem.self])
        let ranks: [any DatabaseValueConvertible] = [
            9_007_199_254_740_993, 9_007_199_254_740_992.0, 9_007_199_254_740_992, Int64.max, 9_223_372_036_854_775_808.0,
            Int64.min, -9_223_372_036_854_775_808.0, -9_223_372_036_854_777_856.0, 1.5, 1, 2, "text", 1e300, -0.0, 0,
        ]
        try store.write { tx in
            var labels: [Int64] = []
            for (i, rank) in ranks.enumerated() {
                try tx.database.execute(
                    sql: "INSERT INTO rel_label (rank, weight, name) VALUES (?, ?, ?)",
                    arguments: [rank, i % 2 == 0 ? 0.0 : -0.0, "L\(i)"])
                labels.append(tx.database.lastInsertedRowID)
            }
            // Two items per label, in an order unlike the labels'.
            for i in 0..<(2 * labels.count) {
                try tx.database.execute(
                    sql: "INSERT INTO rel_item (title, label) VALUES (?, ?)", arguments: ["\(i)", labels[(i * 7) % labels.count]])
            }
            try tx.database.execute(sql: "INSERT INTO rel_item (title, label) VALUES ('none', NULL), ('dangling', 123456)")
        }
        return store
    }

    /// Each item's id and its label's rank, as stored.
    static func itemRanks(_ store: Store) throws -> [(id: Int64, rank: RelStored)] {
        try readNow(store) { db in
            try Row.fetchAll(
                db, sql: "SELECT rel_item.id, rel_label.rank FROM rel_item LEFT JOIN rel_label ON rel_label.id = rel_item.label"
            ).map { row in
                let value: DatabaseValue = row[1]
                let rank: RelStored =
                    switch value.storage {
                    case .null: .null
                    case .int64(let v): .integer(v)
                    case .double(let v): .real(v)
                    case .string(let v): .text(v)
                    case .blob: .text("blob")
                    }
                return (row[0], rank)
            }
        }
    }

    static func expectedOrder(_ store: Store, descending: Bool) throws -> [RecordID] {
        try itemRanks(store).sorted { a, b in
            let c = RelStored.compare(a.rank, b.rank)
            if c != 0 { return descending ? c > 0 : c < 0 }
            return descending ? a.id > b.id : a.id < b.id
        }.map { RecordID($0.id) }
    }

    @Test func integersAbove2To53BesideRealsSortExactlyThroughAToOne() async throws {
        let store = try Self.labels()
        let stored = try readNow(store) { db in try String.fetchAll(db, sql: "SELECT typeof(rank) FROM rel_label") }
        #expect(Set(stored) == ["integer", "real", "text"])
        for descending in [false, true] {
            let request = RecordRequest<RelItem>(sortBy: [
                SortDescriptor(\RelItem.label.rank, order: descending ? .reverse : .forward)
            ])
            #expect(Array(try store.fetchIdentifiers(request)) == (try Self.expectedOrder(store, descending: descending)))
        }
        // ±0 tie: ordered by rowid alone.
        let byWeight = RecordRequest<RelItem>(sortBy: [SortDescriptor(\RelItem.label.weight)])
        let ids = Array(try store.fetchIdentifiers(byWeight))
        let nulls = try readNow(store) { db in
            try Int64.fetchAll(
                db, sql: "SELECT id FROM rel_item WHERE label IS NULL OR label NOT IN (SELECT id FROM rel_label) ORDER BY id")
        }
        let rest = try readNow(store) { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM rel_item WHERE label IN (SELECT id FROM rel_label) ORDER BY id")
        }
        #expect(ids.map(\.rawValue) == nulls + rest)

        // Live: the ranks change, among values of every class; the list is placed in Swift.
        let live = try await RelLive(
            store, RecordRequest<RelItem>(sortBy: [SortDescriptor(\RelItem.label.rank)], batchSize: 5))
        // (Sectioned by rank, the section of −2^63 keeps a stale name: RelMixedClassSectionTests.)
        let moves: [(Int64, any DatabaseValueConvertible)] = [
            (1, 9_223_372_036_854_775_807), (2, 9_223_372_036_854_775_808.0), (3, 9_007_199_254_740_993), (4, Int64.min),
            (5, -9_223_372_036_854_777_856.0), (6, "9007199254740993"), (7, 9_007_199_254_740_994.0), (8, 0.5), (9, -0.0),
            (10, 1e300), (11, 2), (1, 1.5),
        ]
        var rng = SeededRandom(seed: 7)
        for (label, rank) in moves {
            try await live.step { tx in
                try tx.database.execute(sql: "UPDATE rel_label SET rank = ? WHERE id = ?", arguments: [rank, label])
                let other = Int64.random(in: 1...15, using: &rng)
                try tx.database.execute(
                    sql: "UPDATE rel_label SET rank = (SELECT rank FROM rel_label WHERE id = ?) WHERE id = ?",
                    arguments: [label, other])
            }
            #expect(Array(live.controller.snapshot.identifiers) == (try Self.expectedOrder(store, descending: false)))
        }
    }

    // MARK: A relationship of an entity to itself

    @Test func aNodeSortsAndSectionsByItsParentsName() async throws {
        let store = try Store.temporary(records: [RelNode.self])
        let ids = try writeSync(store) { tx -> [String: RecordID] in
            var ids: [String: RecordID] = [:]
            func add(_ name: String, _ rank: Int, parent: String?) throws {
                var node = RelNode(name: name, rank: rank, parent: ToOne(parent.flatMap { ids[$0] }))
                try tx.insert(&node)
                ids[name] = node.id
            }
            try add("root", 5, parent: nil)
            try add("b", 3, parent: "root")
            try add("a", 4, parent: "root")
            try add("b1", 1, parent: "b")
            try add("a1", 2, parent: "a")
            try add("a2", 0, parent: "a")
            try add("loop", 9, parent: nil)
            try tx.database.execute(sql: "UPDATE rel_node SET parent = id WHERE name = 'loop'")
            try add("orphan", 6, parent: nil)
            try tx.database.execute(sql: "UPDATE rel_node SET parent = 424242 WHERE name = 'orphan'")
            return ids
        }
        func expected() throws -> [[String]] {
            let nodes = try store.fetch(RecordRequest<RelNode>()).compactMap { $0 }
            let byID = Dictionary(uniqueKeysWithValues: nodes.map { ($0.id!, $0) })
            func parentName(_ n: RelNode) -> String? { n.parent.id.flatMap { byID[$0]?.name } }
            let sorted = nodes.sorted { a, b in
                let c = compareText(parentName(a), parentName(b))
                if c != 0 { return c < 0 }
                return a.rank != b.rank ? a.rank < b.rank : a.id!.rawValue < b.id!.rawValue
            }
            var sections: [[String]] = []
            var last: String?? = .none
            for node in sorted {
                if let l = last, compareText(l, parentName(node)) == 0 {
                    sections[sections.count - 1].append(node.name)
                } else {
                    sections.append([node.name])
                }
                last = .some(parentName(node))
            }
            return sections
        }
        func names(_ controller: FetchedResultsController<RelNode>) -> [[String]] {
            controller.sections.indices.map { s in
                controller.snapshot.identifiers(inSection: s).map { id in
                    (try? store.fetchOne(RelNode.self, id: id))??.name ?? "?"
                }
            }
        }
        let request = RecordRequest<RelNode>(
            sortBy: [SortDescriptor(\RelNode.parent.name), SortDescriptor(\.rank)], batchSize: 2)
        let live = try await RelLive(store, request, sectionBy: .attribute(\RelNode.parent.name))
        #expect(names(live.controller) == [["root", "orphan"], ["a2", "a1"], ["b1"], ["loop"], ["b", "a"]])
        #expect(try names(live.controller) == expected())
        let children = RecordRequest<RelNode>(
            predicate: #Predicate { $0.parent.name == "root" }, sortBy: [SortDescriptor(\.rank)])
        #expect(try fetchSync(store, children).map { $0?.name } == ["b", "a"])
        let filtered = try await RelLive(store, children)
        // Renaming a node moves its children (and itself, when it is its own parent).
        let steps: [(String, String)] = [("root", "zroot"), ("a", "c"), ("loop", "_loop"), ("a", "root"), ("b", "a1")]
        for (node, name) in steps {
            try await live.step { tx in
                try tx.database.execute(sql: "UPDATE rel_node SET name = ? WHERE id = ?", arguments: [name, ids[node]!.rawValue])
            }
            try await filtered.settle()
            #expect(try names(live.controller) == expected(), "after renaming \(node) to \(name)")
        }
        // Re-parenting and deleting a parent (its children keep a dangling reference).
        try await live.step { tx in
            try tx.database.execute(sql: "UPDATE rel_node SET parent = ? WHERE name = 'b1'", arguments: [ids["loop"]!.rawValue])
            try tx.database.execute(sql: "DELETE FROM rel_node WHERE id = ?", arguments: [ids["a"]!.rawValue])
        }
        try await filtered.settle()
        #expect(try names(live.controller) == expected())
    }

    // MARK: With a full-text search

    @Test func aPredicateThroughAToOneWithAFullTextSearch() async throws {
        let store = try Store.temporary(records: [RelFolder.self, RelNote.self])
        let folders = try writeSync(store) { tx -> [RecordID] in
            var ids: [RecordID] = []
            for (i, name) in ["Work", "Home", "Old"].enumerated() {
                var folder = RelFolder(name: name, archived: i == 2)
                try tx.insert(&folder)
                ids.append(folder.id!)
            }
            let texts = ["café au lait", "cafe noir", "tea", "CAFÉ crème", "water", "café"]
            for (i, text) in texts.enumerated() {
                for folder in [ids[i % 3], nil] {
                    var note = RelNote(text: text, position: i, folder: ToOne(folder))
                    try tx.insert(&note)
                }
            }
            return ids
        }
        var request = RecordRequest<RelNote>(
            predicate: #Predicate { $0.folder.archived != true },
            sortBy: [SortDescriptor(\RelNote.folder.name), SortDescriptor(\.position)])
        request.search = TextSearch("cafe")
        func expected() throws -> [RecordID] {
            let notes = try store.fetch(RecordRequest<RelNote>(sortBy: [SortDescriptor(\.id)])).compactMap { $0 }
            let byID = Dictionary(
                uniqueKeysWithValues: try store.fetch(RecordRequest<RelFolder>()).compactMap { $0 }.map { ($0.id!, $0) })
            return notes.filter { note in
                note.text.folded.split(separator: " ").contains("cafe") && note.folder.id.flatMap { byID[$0] }?.archived != true
            }.sorted { a, b in
                let c = compareText(a.folder.id.flatMap { byID[$0] }?.name, b.folder.id.flatMap { byID[$0] }?.name)
                if c != 0 { return c < 0 }
                return a.position != b.position ? a.position < b.position : a.id!.rawValue < b.id!.rawValue
            }.map { $0.id! }
        }
        #expect(Array(try store.fetchIdentifiers(request)) == (try expected()))
        var ranked = request
        ranked.search = TextSearch("cafe", rankedByRelevance: true)
        #expect(Set(try store.fetchIdentifiers(ranked)) == Set(try expected()))
        let live = try await RelLive(store, request, sectionBy: .attribute(\RelNote.folder.name))
        try await live.step { tx in
            try tx.database.execute(sql: "UPDATE rel_folder SET archived = 1 WHERE id = ?", arguments: [folders[0].rawValue])
            try tx.database.execute(
                sql: "UPDATE rel_folder SET archived = 0, name = 'Attic' WHERE id = ?", arguments: [folders[2].rawValue])
        }
        #expect(Array(live.controller.snapshot.identifiers) == (try expected()))
        try await live.step { tx in
            try tx.database.execute(sql: "UPDATE rel_note SET text = 'tea or cafe' WHERE text = 'tea'")
            try tx.database.execute(sql: "DELETE FROM rel_folder WHERE id = ?", arguments: [folders[1].rawValue])
        }
        #expect(Array(live.controller.snapshot.identifiers) == (try expected()))
    }

    // MARK: What cannot be translated

    @Test func aMemberTheTargetDoesNotDeclareIsAnErrorNamingIt() throws {
        let store = try Store.temporary(records: [RelFolder.self, RelNote.self])
        func message(_ body: () throws -> Void) -> String {
            do {
                try body()
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        // A stored property that is not an attribute, and a computed one.
        let scratch = message { _ = try store.fetch(RecordRequest<RelNote>(predicate: #Predicate { $0.folder.scratch == 0 })) }
        #expect(Self.namesTheToOne(scratch), "\(scratch)")
        let shout = message { _ = try store.fetch(RecordRequest<RelNote>(predicate: #Predicate { $0.folder.shout == "W" })) }
        #expect(Self.namesTheToOne(shout), "\(shout)")
        let sort = message { _ = try store.fetch(RecordRequest<RelNote>(sortBy: [SortDescriptor(\RelNote.folder.scratch)])) }
        #expect(Self.namesTheToOne(sort), "\(sort)")
        let section = message {
            let controller = FetchedResultsController(
                RecordRequest<RelNote>(sortBy: [SortDescriptor(\RelNote.folder.shout)]), store: store,
                sectionBy: .attribute(\RelNote.folder.shout))
            try controller.performFetch()
        }
        #expect(Self.namesTheToOne(section), "\(section)")
        let foldedMember = message {
            _ = try store.fetch(RecordRequest<RelNote>(predicate: #Predicate { $0.folder.shout.folded == "w" }))
        }
        #expect(Self.namesTheToOne(foldedMember), "\(foldedMember)")
        // The folded text of a target attribute that is not folded.
        let folded = message {
            _ = try store.fetch(RecordRequest<RelNote>(predicate: #Predicate { $0.folder.name.folded == "w" }))
        }
        #expect(folded.contains("name") && folded.contains("rel_folder"), "\(folded)")
        let foldedSort = message {
            _ = try store.fetch(RecordRequest<RelNote>(sortBy: [SortDescriptor(\RelNote.folder.name.folded)]))
        }
        #expect(foldedSort.contains("name") && foldedSort.contains("rel_folder"), "\(foldedSort)")
        // A section key not led by its sort: named.
        let unsorted = message {
            let controller = FetchedResultsController(
                RecordRequest<RelNote>(sortBy: [SortDescriptor(\.position)]), store: store,
                sectionBy: .attribute(\RelNote.folder.name))
            try controller.performFetch()
        }
        #expect(unsorted.contains("folder") || unsorted.contains("name"), "\(unsorted)")
    }

    /// Whether an error names the to-one, its target and what the target declares.
    static func namesTheToOne(_ message: String) -> Bool {
        message.contains("'folder'") && message.contains("'rel_folder'") && message.contains("id, name, archived")
    }

    @Test func aTargetTheStoreDoesNotHoldIsAnErrorNamingIt() throws {
        let message: String
        do {
            let store = try Store.temporary(records: [RelNote.self])
            _ = try store.fetch(RecordRequest<RelNote>(predicate: #Predicate { $0.folder.archived == true }))
            message = "no error"
        } catch {
            message = "\(error)"
        }
        #expect(message.contains("rel_folder"), "\(message)")
    }
}

extension String.UTF8View {
    /// Whether the bytes contain `other`'s bytes contiguously.
    func elementsEqualSubsequence(_ other: String) -> Bool {
        let bytes = Array(self), needle = Array(other.utf8)
        guard needle.count <= bytes.count else { return needle.isEmpty }
        return (0...(bytes.count - needle.count)).contains { Array(bytes[$0..<($0 + needle.count)]) == needle }
    }
}

/// A section groups values SQLite finds equal across storage classes (the integer −2^63 and
/// the real −2^63): its name is the value of its first row, which a fresh fetch reads.
@Suite("Section names of equal values of two storage classes")
@MainActor
struct RelMixedClassSectionTests {
    static func store() throws -> Store {
        let store = try Store.temporary(records: [RelLabel.self, RelItem.self])
        try store.write { tx in
            try tx.database.execute(
                sql: "INSERT INTO rel_label (id, rank, weight) VALUES (1, ?, 0), (2, ?, 0)",
                arguments: [Int64.min, -9_223_372_036_854_775_808.0])
            try tx.database.execute(sql: "INSERT INTO rel_item (id, title, label) VALUES (1, 'a', 1), (2, 'b', 2)")
        }
        return store
    }

    /// When the first row of a section leaves it, or its value changes to an equal value of
    /// another storage class, the live section takes the new first row's value as its name,
    /// as a fresh fetch does (it kept the old row's).
    @Test func ownColumn() async throws {
        let store = try Self.store()
        let live = try await RelLive(
            store, RecordRequest<RelLabel>(sortBy: [SortDescriptor(\.rank)]), sectionBy: .attribute(\RelLabel.rank))
        try await live.step { tx in try tx.database.execute(sql: "UPDATE rel_label SET rank = 5 WHERE id = 1") }
    }

    /// The first row of a section leaves for another section that is kept too: the change
    /// set inserts and deletes no section, yet the section's value (and name) is now the
    /// next row's, an equal value of the other storage class. The controller, which keeps
    /// its sections across such change sets, must name the section as a fresh fetch does.
    @Test func aSectionKeptWhoseFirstRowLeftIsNamedByTheNext() async throws {
        let store = try Self.store()
        try writeSync(store) { tx in try tx.database.execute(sql: "INSERT INTO rel_label (id, rank, weight) VALUES (3, 7, 0)") }
        let live = try await RelLive(
            store, RecordRequest<RelLabel>(sortBy: [SortDescriptor(\.rank)]), sectionBy: .attribute(\RelLabel.rank))
        let before = live.controller.sections.map(\.name)
        let changes = try await live.step { tx in
            try tx.database.execute(sql: "UPDATE rel_label SET rank = 7 WHERE id = 1")
        }
        #expect(changes.allSatisfy { $0.insertedSections.isEmpty && $0.deletedSections.isEmpty }, "\(changes)")
        let fresh = FetchedResultsController(live.controller.fetchRequest, store: store, sectionBy: live.controller.sectionKey)
        try RelLive<RelLabel>.fetchNow(fresh)
        #expect(live.controller.sections == fresh.sections)
        #expect(live.controller.sections.map(\.name) != before, "the section takes the real's name: \(before)")
    }

    /// As ``ownColumn()``, through a to-one.
    @Test func throughAToOne() async throws {
        let store = try Self.store()
        let live = try await RelLive(
            store, RecordRequest<RelItem>(sortBy: [SortDescriptor(\RelItem.label.rank)]),
            sectionBy: .attribute(\RelItem.label.rank))
        try await live.step { tx in try tx.database.execute(sql: "UPDATE rel_label SET rank = 5 WHERE id = 1") }
    }
}
