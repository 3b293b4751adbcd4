import Foundation
import GRDB
import Testing
@testable import Folio

/// Section caches across a migration: trusted only when neither the rows nor the entity
/// changed.
@Suite("Section caches across a migration")
@MainActor
struct SectionCacheMigrationTests: NotesFileSuite {
    let directory: ScratchDirectory
    let path: String

    init() throws {
        directory = try ScratchDirectory()
        path = directory.path("notes.sqlite")
    }

    /// A cached controller's fetch beside an uncached one: the outcome, and whether both agree.
    func cachedFetch<R: PersistentRecord>(_ request: RecordRequest<R>, _ key: SectionKey<R>, _ store: Store) throws -> (
        SectionCache.Outcome, Snapshot
    ) {
        let cached = FetchedResultsController(request, store: store, sectionBy: key, cacheName: "notes")
        try cached.performFetch()
        let fresh = FetchedResultsController(request, store: store, sectionBy: key)
        try fresh.performFetch()
        #expect(cached.snapshot == fresh.snapshot, "a cached answer is never a wrong answer")
        #expect(cached.sections.map(\.name) == fresh.sections.map(\.name))
        #expect(cached.sections.map(\.numberOfObjects) == fresh.sections.map(\.numberOfObjects))
        return (cached.lastCacheOutcome, cached.snapshot)
    }

    func notes(_ store: Store) throws -> (SectionCache.Outcome, Snapshot) {
        try cachedFetch(
            RecordRequest<NoteV1>(sortBy: [SortDescriptor(\.title), SortDescriptor(\.score)]), .firstLetter(\.title), store)
    }

    func writeCache(_ store: Store) async throws {
        let request = RecordRequest<NoteV1>(sortBy: [SortDescriptor(\.title), SortDescriptor(\.score)])
        let controller = FetchedResultsController(request, store: store, sectionBy: .firstLetter(\.title), cacheName: "notes")
        try await controller.performFetch()
        await controller.flushCache()
        #expect(try notes(store).0 == .reused)
    }

    @Test func aCacheWrittenBeforeAStepRewroteRowsIsNotTrusted() async throws {
        try makeLetteredNotes(count: 60)
        var store = try Store(path: path, model: StoreModel(version: 1, records: [NoteV1.self]))
        try await writeCache(store)
        try store.close()
        // Same entity, same version hash: only the rows change, in a step. Their change
        // token moves with them (the triggers fire inside the migration).
        let step = MigrationStep("every even note to Z") { db in
            try db.execute(sql: "UPDATE note SET title = 'Z ' || score WHERE score % 2 = 0")
        }
        store = try Store(path: path, model: StoreModel(version: 2, records: [NoteV1.self], steps: [step]))
        let (outcome, snapshot) = try notes(store)
        #expect(outcome == .rebuilt("the store changed since the cache was written"))
        #expect(snapshot.numberOfSections == 6)
    }

    @Test func aCacheOfAChangedEntityIsNotTrustedEvenWithoutARowWritten() async throws {
        try makeLetteredNotes(count: 60)
        var store = try Store(path: path, model: StoreModel(version: 1, records: [NoteV1.self]))
        try await writeCache(store)
        let token = try store.changeToken(for: NoteV1.self)
        try store.close()
        // An index removed and a unique one added: no row is written, the table changed.
        store = try Store(path: path, model: StoreModel(version: 2, records: [NoteTitleUnique.self]))
        #expect(try store.changeToken(for: NoteTitleUnique.self) != token, "the migration renews a changed entity's token")
        let (outcome, _) = try cachedFetch(
            RecordRequest<NoteTitleUnique>(sortBy: [SortDescriptor(\.title), SortDescriptor(\.score)]), .firstLetter(\.title),
            store)
        #expect(outcome == .rebuilt("entity version hash differs"))
    }

    @Test func aCacheOfAnEntityTheMigrationLeftAloneIsStillTrusted() async throws {
        try makeLetteredNotes(count: 60)
        var store = try Store(path: path, model: StoreModel(version: 1, records: [NoteV1.self]))
        try await writeCache(store)
        try store.close()
        store = try Store(path: path, model: StoreModel(version: 2, records: [NoteV1.self, NoteTag.self]))
        let (outcome, _) = try notes(store)
        #expect(outcome == .reused)
    }
}
