import Foundation
import GRDB
import Testing
@testable import Folio

/// Lists that read through a to-one follow the related row: a commit that changes only an
/// album moves, re-sections, inserts or deletes its photos — and reads only its photos.
@Suite("Lists follow the related row")
@MainActor
struct LiveRelationshipTests {
    /// Three albums of `perAlbum` photos each, and `loose` photos without an album.
    static func populated(perAlbum: Int = 5, loose: Int = 2) throws -> (Store, [RecordID]) {
        let store = try Store.temporary(records: [Album.self, Photo.self])
        let albums = try store.write { tx -> [RecordID] in
            var ids: [RecordID] = []
            for name in ["Beach", "City", "Forest"] {
                var album = Album(name: name)
                try tx.insert(&album)
                ids.append(album.id!)
                for i in 0..<perAlbum {
                    var photo = Photo(title: "\(name) \(i)", taken: i * 3 + ids.count, album: ToOne(album.id))
                    try tx.insert(&photo)
                }
            }
            for i in 0..<loose {
                var photo = Photo(title: "loose \(i)", taken: 100 + i)
                try tx.insert(&photo)
            }
            return ids
        }
        return (store, albums)
    }

    static var byAlbumName: RecordRequest<Photo> {
        RecordRequest<Photo>(sortBy: [SortDescriptor(\Photo.album.name), SortDescriptor(\.taken)], batchSize: 10)
    }

    @Test func renamingAnAlbumMovesItsSectionAndNothingElse() async throws {
        let (store, albums) = try Self.populated()
        let live = try await PhotoHarness(store, Self.byAlbumName, sectionBy: .attribute(\Photo.album.name))
        #expect(live.controller.sections.map(\.name) == ["", "Beach", "City", "Forest"])
        let changes = try await live.step { tx in
            try tx.database.execute(sql: "UPDATE album SET name = 'Zoo' WHERE id = ?", arguments: [albums[0].rawValue])
        }
        #expect(changes.count == 1)
        #expect(live.controller.sections.map(\.name) == ["", "City", "Forest", "Zoo"])
        // The section moves whole: deleted at its old index, inserted at its new one.
        let change = try #require(changes.first)
        #expect(change.deletedSections == [1] && change.insertedSections == [3])
    }

    @Test func hidingAnAlbumRemovesItsPhotosFromAFilteredList() async throws {
        let (store, albums) = try Self.populated()
        var request = RecordRequest<Photo>(
            predicate: #Predicate { $0.album.hidden != true }, sortBy: [SortDescriptor(\.taken)], batchSize: 10)
        request.batchSize = 10
        let live = try await PhotoHarness(store, request)
        #expect(live.controller.fetchedObjects?.count == 17)
        let hidden = try await live.step { tx in
            _ = try tx.updateAll(Album.self, where: #Predicate { $0.name == "City" }, set: [.set(\.hidden, to: true)])
        }
        #expect(hidden.first?.deletedItems.count == 5)
        #expect(live.controller.fetchedObjects?.count == 12)
        let shown = try await live.step { tx in
            try tx.database.execute(sql: "UPDATE album SET hidden = 0 WHERE id = ?", arguments: [albums[1].rawValue])
        }
        #expect(shown.first?.insertedItems.count == 5)
    }

    @Test func repointingAPhotoAndDeletingAnAlbumFollow() async throws {
        let (store, albums) = try Self.populated()
        let live = try await PhotoHarness(store, Self.byAlbumName, sectionBy: .attribute(\Photo.album.name))
        try await live.step { tx in
            try tx.database.execute(
                sql: "UPDATE photo SET album = ? WHERE title = 'Beach 0'", arguments: [albums[2].rawValue])
        }
        // Nullify: the album's photos move to the section of photos without an album.
        try await live.step { tx in _ = try tx.delete(Album.self, id: albums[1]) }
        #expect(live.controller.sections.map(\.name) == ["", "Beach", "Forest"])
        #expect(live.controller.sections.first?.numberOfObjects == 7)
        // A dangling reference (written by raw SQL) reads as no album.
        try await live.step { tx in
            try tx.database.execute(sql: "UPDATE photo SET album = 999999 WHERE title = 'Beach 1'")
        }
        #expect(live.controller.sections.first?.numberOfObjects == 8)
    }

    @Test func aCommitToAnAlbumReadsOnlyItsPhotos() async throws {
        let (store, albums) = try Self.populated(perAlbum: 300, loose: 0)
        let live = try await PhotoHarness(store, Self.byAlbumName, sectionBy: .attribute(\Photo.album.name))
        let before = store.diagnostics.counters
        try writeSync(store) { tx in
            try tx.database.execute(sql: "UPDATE album SET name = 'Aa' WHERE id = ?", arguments: [albums[2].rawValue])
        }
        await live.controller.waitForChanges()
        let after = store.diagnostics.counters
        try await live.settle()
        // No full identifier scan: the 300 photos of the album are placed by binary search.
        #expect(after.identifierScans == before.identifierScans)
        #expect(live.controller.sections.map(\.name) == ["Aa", "Beach", "City"])
    }

    @Test func anotherConnectionsAlbumWriteIsSeen() async throws {
        let (store, albums) = try Self.populated()
        let live = try await PhotoHarness(store, Self.byAlbumName, sectionBy: .attribute(\Photo.album.name))
        let other = try DatabaseQueue(path: store.path!)
        try await other.write { db in
            try db.execute(sql: "UPDATE album SET name = 'Aardvark' WHERE id = ?", arguments: [albums[1].rawValue])
        }
        try store.synchronize()
        try await live.settle()
        #expect(live.controller.sections.map(\.name) == ["", "Aardvark", "Beach", "Forest"])
        // A write to a table the list does not read delivers nothing.
        try await other.write { db in try db.execute(sql: "UPDATE photo SET title = title || '' WHERE 0") }
        try store.synchronize()
        #expect(try await live.settle().isEmpty)
    }

    /// Past the incremental path's plain bound (2,048 rows here), the children of a renamed
    /// album — 3,000 of 40,000 photos — are still placed without a scan: they move as a
    /// block, which costs few probes. 3,000 rows changed at random exceed the probe budget
    /// and fall back to a scan; both change sets are exact.
    @Test func aLargeBlockOfChildrenMovesWithoutAScan() async throws {
        let store = try Store.temporary(records: [Album.self, Photo.self])
        let albums = try writeSync(store) { tx -> [RecordID] in
            var ids: [RecordID] = []
            for a in 0..<13 {
                var album = Album(name: String(format: "album %02d", a))
                try tx.insert(&album)
                ids.append(album.id!)
                for i in 0..<(a == 5 ? 3_000 : 3_000 + (a < 5 ? 1 : 0)) {
                    var photo = Photo(title: "p", taken: (i * 7_919 + a) % 100_000, album: ToOne(album.id))
                    try tx.insert(&photo)
                }
            }
            return ids
        }
        let live = try await PhotoHarness(store, Self.byAlbumName, sectionBy: .attribute(\Photo.album.name))
        let total = live.controller.fetchedObjects?.count ?? 0
        #expect(total > 30_000 && ReloadPolicy.incrementalProbes(changed: 3_000, total: total) != .max)
        var before = store.diagnostics.counters
        try writeSync(store) { tx in
            try tx.database.execute(sql: "UPDATE album SET name = 'zzz' WHERE id = ?", arguments: [albums[5].rawValue])
        }
        await live.controller.waitForChanges()
        #expect(store.diagnostics.counters.identifierScans == before.identifierScans, "the block was placed without a scan")
        try await live.settle()
        #expect(live.controller.sections.last?.name == "zzz")
        before = store.diagnostics.counters
        try writeSync(store) { tx in
            try tx.database.execute(sql: "UPDATE photo SET taken = (id * 48271) % 100003 WHERE id % 13 = 0")
        }
        await live.controller.waitForChanges()
        #expect(store.diagnostics.counters.identifierScans == before.identifierScans + 1, "spread rows: a scan")
        try await live.settle()
    }

    /// A section key and a sort through a to-one are described by their columns: Swift
    /// describes the member by its accessor's address, which a persistent cache's
    /// fingerprint must not contain; a section key that is not the first sort names both.
    @Test func keysThroughAToOneAreDescribedByTheirColumns() throws {
        let key = SectionKey<Photo>.attribute(\Photo.album.name)
        #expect(key.description == "\\Photo.album.name")
        #expect(SectionKey<Photo>.firstLetter(\Photo.album.name).description == "firstLetter(\\Photo.album.name)")
        let store = try Store.inMemory(records: [Album.self, Photo.self])
        let controller = FetchedResultsController(
            RecordRequest<Photo>(sortBy: [SortDescriptor(\.taken)]), store: store, sectionBy: key)
        #expect {
            try controller.performFetch()
        } throws: { error in
            guard case FolioError.sectionKeyNotLeadingSort(let section, let first) = error else { return false }
            return section == "\\Photo.album.name" && first == "\\Photo.taken"
        }
    }
}
