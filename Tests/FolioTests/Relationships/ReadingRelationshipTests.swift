import Foundation
import GRDB
import Testing
@testable import Folio

/// A tag of ``Photo``s, through the join entity ``PhotoTag`` (the many-to-many of the
/// Relationships article).
struct Tag: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    var hidden = false

    static let entity = EntityDescription<Tag>(
        "tag",
        [
            AttributeDescription(\.name, indexed: true),
            AttributeDescription(\.hidden),
        ],
        relationships: [.toMany(\PhotoTag.tag, deleteRule: .cascade)])
}

/// The join of ``Photo`` and ``Tag``: two to-ones.
struct PhotoTag: PersistentRecord, Equatable {
    var id: RecordID?
    var added = 0
    var photo = ToOne<Photo>()
    var tag = ToOne<Tag>()

    static let entity = EntityDescription<PhotoTag>(
        "photo_tag", [AttributeDescription(\.added)], relationships: [.toOne(\.photo), .toOne(\.tag)])
}

/// What the Relationships article says about reading relationships: a to-many is a lazy
/// request, a to-one's members are names for requests, a many-to-many goes through a join
/// entity, and a request reads through one to-one only.
@Suite("Reading relationships")
struct ReadingRelationshipTests {
    /// Albums "Beach" (3 photos), "City" (2); photos tagged: p0 beach+sea, p1 sea, p3 beach+zoo.
    static func populated() throws -> (Store, albums: [RecordID], photos: [RecordID], tags: [String: RecordID]) {
        let store = try Store.temporary(records: [Album.self, Photo.self, Tag.self, PhotoTag.self])
        let (albums, photos, tags) = try store.write { tx -> ([RecordID], [RecordID], [String: RecordID]) in
            var albums: [RecordID] = [], photos: [RecordID] = [], tags: [String: RecordID] = [:]
            for (name, count) in [("Beach", 3), ("City", 2)] {
                var album = Album(name: name)
                try tx.insert(&album)
                albums.append(album.id!)
                for i in 0..<count {
                    var photo = Photo(title: "\(name) \(i)", taken: photos.count, album: ToOne(album))
                    try tx.insert(&photo)
                    photos.append(photo.id!)
                }
            }
            for name in ["zoo", "sea", "beach"] {
                var tag = Tag(name: name, hidden: name == "zoo")
                try tx.insert(&tag)
                tags[name] = tag.id!
            }
            for (photo, tag) in [(0, "beach"), (0, "sea"), (1, "sea"), (3, "zoo"), (3, "beach")] {
                var link = PhotoTag(added: photo, photo: ToOne(photos[photo]), tag: ToOne(tags[tag]))
                try tx.insert(&link)
            }
            return (albums, photos, tags)
        }
        return (store, albums, photos, tags)
    }

    @Test func aToOnesMembersAreNilWhenReadOnARecord() throws {
        let (store, albums, _, _) = try Self.populated()
        let photo = try #require(try store.fetch(RecordRequest<Photo>(sortBy: [SortDescriptor(\.taken)])).first ?? nil)
        #expect(photo.album.id == albums[0])
        #expect(photo.album.name == nil && photo.album.hidden == nil && photo.album.created == nil)
    }

    @Test func aToManyIsCountedAndFetchedLazilyThroughTheIndex() throws {
        let (store, albums, photos, _) = try Self.populated()
        let request = RecordRequest<Photo>(
            relatedTo: albums[0], through: \.album, sortBy: [SortDescriptor(\.taken, order: .reverse)], batchSize: 2)
        let before = store.diagnostics.counters
        #expect(try store.count(request) == 3)
        let items = try store.fetch(request)
        #expect(items.count == 3)
        let afterFetch = store.diagnostics.counters
        // Counting and fetching read identifiers only: no record, no batch.
        #expect(afterFetch.recordsMaterialized == before.recordsMaterialized)
        #expect(afterFetch.batchesLoaded == before.batchesLoaded)
        #expect(items.first??.id == photos[2])
        #expect(store.diagnostics.counters.batchesLoaded == before.batchesLoaded + 1)
        // The reference column's index is what SQLite reads.
        let plan = try Self.plan(store, "SELECT id FROM photo WHERE album = 1 ORDER BY taken DESC, id DESC")
        #expect(plan.contains("INDEX photo_album_index"))
    }

    @Test func aManyToManyGoesThroughAJoinEntity() throws {
        let (store, _, photos, tags) = try Self.populated()
        // A photo's tags: its links, sorted through the link's to-one to the tag.
        let links = try store.fetch(
            RecordRequest<PhotoTag>(relatedTo: photos[0], through: \.photo, sortBy: [SortDescriptor(\PhotoTag.tag.name)]))
        #expect(links.map { $0?.tag.id } == [tags["beach"], tags["sea"]])
        // Filtered through the same to-one.
        let shown = try store.fetch(
            RecordRequest<PhotoTag>(
                relatedTo: photos[3], through: \.photo, predicate: #Predicate { $0.tag.hidden == false }))
        #expect(shown.map { $0?.tag.id } == [tags["beach"]])
        // The photos tagged "beach", through the link's to-one to the tag.
        let beach = try store.fetch(
            RecordRequest<PhotoTag>(predicate: #Predicate { $0.tag.name == "beach" }, sortBy: [SortDescriptor(\.added)]))
        #expect(beach.map { $0?.photo.id } == [photos[0], photos[3]])
    }

    @Test func aRequestReadsThroughOneToOneOnly() throws {
        let (store, _, _, _) = try Self.populated()
        let twoLevels = RecordRequest<PhotoTag>(predicate: #Predicate { $0.photo.album?.name == "Beach" })
        let error = #expect(throws: FolioError.self) { try store.fetch(twoLevels) }
        switch error {
        case .unsupportedPredicate?, .unknownKeyPath?: break
        default: Issue.record("a predicate through two to-ones: \(String(describing: error))")
        }
    }

    @Test func aSortThroughAToOneIsSortedBySQLiteNotAnIndex() throws {
        let (store, _, _, _) = try Self.populated()
        // The SQL of a fetch sorted by the album's name, as Folio runs it.
        let statements = Locked<[String]>([])
        store.diagnostics.logSQL(expanded: true) { sql in statements.withLock { $0.append(sql) } }
        _ = try store.fetch(RecordRequest<Photo>(sortBy: [SortDescriptor(\Photo.album.name)]))
        store.diagnostics.logSQL(nil)
        let scan = try #require(statements.withLock { $0 }.first { $0.contains("ORDER BY") })
        let plan = try Self.plan(store, scan)
        #expect(plan.contains("USE TEMP B-TREE FOR ORDER BY"))
    }

    /// SQLite's plan for `sql`, its steps joined with "; ".
    static func plan(_ store: Store, _ sql: String) throws -> String {
        try store.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
        }
    }
}
