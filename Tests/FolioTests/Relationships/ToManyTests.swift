import Foundation
import GRDB
import Testing
@testable import Folio

/// A to-many as a request (`RecordRequest(relatedTo:through:)`): counted without loading a
/// child, read in batches with bounded memory, combined with predicates and sorts, followed
/// live.
@Suite("To-many as a request")
@MainActor
struct ToManyTests {
    static let bigCount = 100_000

    /// Album "Big" with 100,000 photos (taken = 100,000 − n, so the rowid order is not the
    /// taken order), album "Small" with 50, 30 photos without an album and 20 whose
    /// reference names no album.
    static func populated() throws -> (Store, big: RecordID, small: RecordID) {
        let store = try Store.temporary(records: [Album.self, Photo.self])
        let (big, small) = try store.write { tx -> (RecordID, RecordID) in
            var big = Album(name: "Big")
            try tx.insert(&big)
            var small = Album(name: "Small", hidden: true)
            try tx.insert(&small)
            try tx.database.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                    INSERT INTO photo (title, taken, album) SELECT 'big ' || i, ? - i, ? FROM n
                    """, arguments: [bigCount, bigCount, big.id!.rawValue])
            for i in 0..<50 {
                var photo = Photo(title: "small \(i)", taken: i % 7, album: ToOne(small))
                try tx.insert(&photo)
            }
            for i in 0..<30 {
                var photo = Photo(title: "loose \(i)", taken: i)
                try tx.insert(&photo)
            }
            try tx.database.execute(
                sql: "UPDATE photo SET album = 555555 WHERE title LIKE 'loose %' AND taken >= 10 AND taken < 30")
            return (big.id!, small.id!)
        }
        return (store, big, small)
    }

    @Test func aLargeToManyIsCountedAndReadInBatchesWithBoundedMemory() throws {
        let (store, big, _) = try Self.populated()
        var request = RecordRequest<Photo>(relatedTo: big, through: \.album, sortBy: [SortDescriptor(\.taken)], batchSize: 500)
        request.maxBatchesInMemory = 3

        // Counting loads no child.
        store.diagnostics.resetCounters()
        #expect(try store.count(request) == Self.bigCount)
        var counters = store.diagnostics.counters
        #expect(counters.batchesLoaded == 0 && counters.recordsMaterialized == 0 && counters.identifierScans == 0)

        // A fetch reads identifiers only: one scan, no batch.
        let children = try store.fetch(request)
        counters = store.diagnostics.counters
        #expect(children.count == Self.bigCount)
        #expect(counters.identifierScans == 1 && counters.batchesLoaded == 0 && counters.recordsMaterialized == 0)

        // The first child: one batch of 500.
        let first = try #require(children.first ?? nil)
        #expect(first.taken == 0 && first.album.id == big)
        counters = store.diagnostics.counters
        #expect(counters.batchesLoaded == 1 && counters.recordsMaterialized == 500)

        // Every child, in order, never more than three batches held.
        var previous = -1
        var seen = 0
        var maxHeld = 0
        for photo in children {
            let photo = try #require(photo)
            #expect(photo.taken == previous + 1)
            previous = photo.taken
            seen += 1
            maxHeld = max(maxHeld, children.loadedBatchCount)
        }
        counters = store.diagnostics.counters
        #expect(seen == Self.bigCount)
        #expect(maxHeld <= 3)
        // Each batch once (batch 0 was still held when the iteration began).
        #expect(counters.batchesLoaded == Self.bigCount / 500, "\(counters)")
        #expect(counters.recordsMaterialized == Self.bigCount, "\(counters)")
        #expect(counters.identifierScans == 1)
        #expect(children.lastError == nil)

        // Backwards, and a jump: each batch once more, still three at most.
        store.diagnostics.resetCounters()
        #expect(children[Self.bigCount - 1]?.taken == Self.bigCount - 1)
        #expect(children[250]?.taken == 250)
        #expect(store.diagnostics.counters.batchesLoaded == 1, "the last batch is still held, batch 0 is not")
        #expect(children.loadedBatchCount <= 3)
    }

    @Test func anEmptyRelationshipIsTheNilTarget() throws {
        let (store, big, small) = try Self.populated()
        let loose = RecordRequest<Photo>(relatedTo: nil, through: \.album, sortBy: [SortDescriptor(\.taken)], batchSize: 8)
        // The references that are NULL: a dangling reference is not an empty relationship.
        let fetched = try store.fetch(loose)
        #expect(fetched.count == 10)
        #expect(fetched.map { $0?.title } == (0..<10).map { "loose \($0)" })
        #expect(fetched.allSatisfy { $0?.album.id == nil })
        // The dangling ones are found by their stored identifier.
        #expect(try store.count(RecordRequest<Photo>(relatedTo: RecordID(555_555), through: \.album)) == 20)
        // Nothing points to a missing record, or to the album of another table's identifier space.
        #expect(try store.count(RecordRequest<Photo>(relatedTo: RecordID(Int64.min), through: \.album)) == 0)
        #expect(try store.count(RecordRequest<Photo>(relatedTo: small, through: \.album)) == 50)
        #expect(try store.count(RecordRequest<Photo>(relatedTo: big, through: \.album, limit: 7, offset: 99_995)) == 5)
    }

    @Test func aToManyCombinesWithAPredicateASortAndAWindow() throws {
        let (store, big, small) = try Self.populated()
        // The children of "Small" taken after 2, by taken descending: ties by rowid descending.
        let request = RecordRequest<Photo>(
            relatedTo: small, through: \.album, predicate: #Predicate { $0.taken > 2 && $0.title != "small 10" },
            sortBy: [SortDescriptor(\.taken, order: .reverse)], batchSize: 4)
        let expected = (0..<50).filter { $0 % 7 > 2 && $0 != 10 }.sorted { a, b in
            a % 7 != b % 7 ? a % 7 > b % 7 : a > b
        }.map { "small \($0)" }
        #expect(try store.fetch(request).map { $0?.title } == expected)
        #expect(try store.count(request) == expected.count)
        // A predicate through the same relationship: the album is hidden, so none.
        let hidden = RecordRequest<Photo>(
            relatedTo: small, through: \.album, predicate: #Predicate { $0.album.hidden != true })
        #expect(try store.count(hidden) == 0)
        // A predicate that contradicts the relationship.
        let other = RecordRequest<Photo>(relatedTo: big, through: \.album, predicate: #Predicate { $0.album.name == "Small" })
        #expect(try store.count(other) == 0)
        // A sort through the relationship (every child has the same album: the rowid decides).
        var window = RecordRequest<Photo>(
            relatedTo: big, through: \.album, sortBy: [SortDescriptor(\Photo.album.name), SortDescriptor(\.taken)], limit: 3,
            offset: 10)
        window.batchSize = 2
        #expect(try store.fetch(window).map { $0?.taken } == [10, 11, 12])
        // A predicate with `nil`, and the empty relationship with a predicate through it.
        let looseFiltered = RecordRequest<Photo>(
            relatedTo: nil, through: \.album, predicate: #Predicate { $0.album.name == nil && $0.taken < 5 })
        #expect(try store.count(looseFiltered) == 5)
    }

    @Test func aToManyThroughAnUndeclaredToOneIsAnError() throws {
        let store = try Store.temporary(records: [RelFolder.self, RelNote.self])
        #expect(throws: FolioError.self) {
            _ = try store.fetch(RecordRequest<RelNote>(relatedTo: nil, through: \.undeclared))
        }
        do {
            _ = try store.count(RecordRequest<RelNote>(relatedTo: nil, through: \.undeclared))
        } catch {
            #expect("\(error)".contains("undeclared"), "\(error)")
        }
    }

    @Test func aLiveToManyFollowsItsChildren() async throws {
        let store = try Store.temporary(records: [Album.self, Photo.self])
        let (a, b) = try writeSync(store) { tx -> (RecordID, RecordID) in
            var a = Album(name: "A")
            try tx.insert(&a)
            var b = Album(name: "B")
            try tx.insert(&b)
            for i in 0..<40 {
                var photo = Photo(title: "p\(i)", taken: i % 9, album: ToOne(i % 3 == 0 ? b : a))
                try tx.insert(&photo)
            }
            return (a.id!, b.id!)
        }
        let live = try await PhotoHarness(
            store, RecordRequest(relatedTo: a, through: \.album, sortBy: [SortDescriptor(\.taken)], batchSize: 5))
        let loose = try await PhotoHarness(
            store, RecordRequest(relatedTo: nil, through: \.album, sortBy: [SortDescriptor(\.taken)]))
        let window = try await PhotoHarness(
            store, RecordRequest(relatedTo: b, through: \.album, sortBy: [SortDescriptor(\.taken)], limit: 5, offset: 2))
        func settle() async throws {
            try await live.settle()
            try await loose.settle()
            try await window.settle()
        }
        #expect(live.controller.fetchedObjects?.count == 26)
        // Re-pointing children between the albums, to nil and to a missing album.
        try writeSync(store) { tx in
            try tx.database.execute(sql: "UPDATE photo SET album = ? WHERE taken = 1", arguments: [b.rawValue])
            try tx.database.execute(sql: "UPDATE photo SET album = NULL WHERE taken = 2")
            try tx.database.execute(sql: "UPDATE photo SET album = 777 WHERE taken = 3")
            try tx.database.execute(sql: "UPDATE photo SET album = ? WHERE taken = 4", arguments: [a.rawValue])
        }
        try await settle()
        // Renaming the album changes nothing in its to-many.
        #expect(try await live.step { tx in try tx.database.execute(sql: "UPDATE album SET name = 'Z'") }.isEmpty)
        try await settle()
        // Deleting it leaves its children pointing to a missing record (no rule in this
        // branch: nullify is done here as its trigger would), then they move to nil.
        try writeSync(store) { tx in
            try tx.database.execute(sql: "DELETE FROM album WHERE id = ?", arguments: [a.rawValue])
            try tx.database.execute(sql: "UPDATE photo SET album = NULL WHERE album = ?", arguments: [a.rawValue])
        }
        try await settle()
        #expect(live.controller.fetchedObjects?.count == 0)
        // A new album that reuses no identifier: the missing one comes to life with its id.
        try writeSync(store) { tx in
            try tx.database.execute(sql: "INSERT INTO album (id, name, hidden) VALUES (777, 'Back', 0)")
            try tx.database.execute(sql: "UPDATE photo SET album = ? WHERE album IS NULL AND taken > 5", arguments: [a.rawValue])
        }
        try await settle()
    }
}
