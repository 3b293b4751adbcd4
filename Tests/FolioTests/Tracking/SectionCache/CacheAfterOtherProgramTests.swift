import Foundation
import GRDB
import Testing
@testable import Folio

/// Another program that writes an entity's rows without Folio's change triggers — it dropped
/// them, or the table, and made it again — between two opens: no section cache of the old
/// rows is trusted at the next open (the change token is renewed when the triggers have to
/// be made again).
@Suite("Section caches after another program remade a table")
@MainActor
struct CacheAfterOtherProgramTests {
    let directory: ScratchDirectory
    let path: String
    let request = RecordRequest<NoteV1>(sortBy: [SortDescriptor(\.title), SortDescriptor(\.score)])

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("notes.sqlite")
    }

    /// Opens the store, fetches with the cache beside a fresh fetch; returns the outcome and
    /// the cached controller's sections (which must be the fresh ones).
    func openAndFetch(sourceLocation: SourceLocation = #_sourceLocation) async throws -> (SectionCache.Outcome, [String]) {
        let store = try Store(path: path, model: StoreModel(version: 1, records: [NoteV1.self]))
        defer { try? store.close() }
        let cached = FetchedResultsController(request, store: store, sectionBy: .firstLetter(\.title), cacheName: "notes")
        try await cached.performFetch()
        await cached.flushCache()
        let fresh = FetchedResultsController(request, store: store, sectionBy: .firstLetter(\.title))
        try await fresh.performFetch()
        #expect(cached.snapshot == fresh.snapshot, "a cached answer is never a wrong answer", sourceLocation: sourceLocation)
        #expect(
            cached.sections.map(\.numberOfObjects) == fresh.sections.map(\.numberOfObjects), sourceLocation: sourceLocation)
        return (cached.lastCacheOutcome, cached.sections.map(\.name))
    }

    @Test func aTableRemadeTriggersDroppedOrTableDroppedIsNoCacheHit() async throws {
        try makeNotes(path, count: 30)
        try sqlite3Shell(path, "UPDATE note SET title = char(65 + score % 5) || ' ' || score;")
        _ = try await openAndFetch()
        #expect(try await openAndFetch() == (.reused, ["A", "B", "C", "D", "E"]))

        // The table made again, same shape, other rows. Before: .reused, showing A…E.
        let table: String = try #require(try fileValue(path, "SELECT sql FROM sqlite_master WHERE name = 'note'"))
        try sqlite3Shell(
            path,
            """
            DROP TABLE note; \(table); CREATE INDEX note_score_index ON note (score);
            INSERT INTO note (id, title, body, score) SELECT value, 'Z' || value, NULL, value FROM generate_series(1, 30);
            """)
        #expect(try await openAndFetch() == (.rebuilt("the store changed since the cache was written"), ["Z"]))
        #expect(try await openAndFetch() == (.reused, ["Z"]), "then trusted again: the token is renewed once")

        // A trigger dropped, rows rewritten.
        try sqlite3Shell(path, "DROP TRIGGER folio_note_upd; UPDATE note SET title = 'Q' || id;")
        #expect(try await openAndFetch() == (.rebuilt("the store changed since the cache was written"), ["Q"]))

        // The table dropped: Folio makes it again, empty.
        try sqlite3Shell(path, "DROP TABLE note;")
        let (outcome, sections) = try await openAndFetch()
        #expect(outcome != .reused)
        #expect(sections.count <= 1)
        #expect(try fileValue(path, "SELECT count(*) FROM note") == 0)
    }
}
