import Foundation
import Testing
@testable import Folio

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A section cache whose writer was killed mid-write leaves a temporary file; the next write
/// of that cache name, or opening the store, removes it — and never a file a live writer is
/// writing, nor anything that is not Folio's.
@Suite("Temporary cache files a killed writer left")
@MainActor
struct StaleTemporaryFileTests {
    /// The id of a process that has ended.
    func deadProcessID() throws -> Int32 {
        let child = try ChildProcess("/bin/true", [])
        _ = child.wait()
        return child.pid
    }

    func touch(_ url: URL, age: TimeInterval = 0) throws {
        try Data("FOLIOSC3 cut short".utf8).write(to: url)
        if age > 0 {
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: url.path)
        }
    }

    func names(_ directory: URL) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
    }

    @Test func onlyTheTemporaryFilesOfGoneWritersAreRemoved() throws {
        let directory = try ScratchDirectory()
        let caches = URL(fileURLWithPath: directory.path("caches"))
        try FileManager.default.createDirectory(at: caches, withIntermediateDirectories: true)
        let ext = TemporaryFiles.sectionCacheExtension
        let dead = try deadProcessID()
        let me = getpid()
        let uuid = UUID().uuidString
        // Removed: a dead writer's; this process's that nobody here writes; an old one of a
        // live process (its id used again); a name without a process id older than a minute.
        let gone = [
            ".feed.\(dead).\(uuid).\(ext)", ".feed.\(me).\(UUID().uuidString).\(ext)",
            ".feed.with.dots.\(dead).\(UUID().uuidString).\(ext)",
        ]
        for name in gone { try touch(caches.appendingPathComponent(name)) }
        try touch(caches.appendingPathComponent(".feed.1.\(UUID().uuidString).\(ext)"), age: 7_200)
        try touch(caches.appendingPathComponent(".feed.\(UUID().uuidString).\(ext)"), age: 120)
        // Kept: a live process's (pid 1), a recent name without a process id, one this
        // process is writing, and what is not a regular file or not Folio's.
        let live = ".feed.1.\(UUID().uuidString).\(ext)"
        try touch(caches.appendingPathComponent(live))
        let recentUnowned = ".feed.\(UUID().uuidString).\(ext)"
        try touch(caches.appendingPathComponent(recentUnowned))
        let writing = TemporaryFiles.begin("feed", in: caches, extension: ext)
        try touch(writing)
        let folder = ".folder.\(dead).\(UUID().uuidString).\(ext)"
        try FileManager.default.createDirectory(
            at: caches.appendingPathComponent(folder), withIntermediateDirectories: true)
        let link = ".link.\(dead).\(UUID().uuidString).\(ext)"
        try FileManager.default.createSymbolicLink(
            at: caches.appendingPathComponent(link), withDestinationURL: URL(fileURLWithPath: directory.path("x")))
        let other = "notes.\(dead).txt"
        try touch(caches.appendingPathComponent(other))

        TemporaryFiles.removeStale(in: caches, extension: ext)
        #expect(try names(caches) == [live, recentUnowned, writing.lastPathComponent, folder, link, other])
        TemporaryFiles.finished(writing)
        TemporaryFiles.removeStale(in: caches, extension: ext)
        #expect(try names(caches) == [live, recentUnowned, folder, link, other], "a write ended: its file is stale")
    }

    @Test func theNextWriteOfACacheNameAndOpeningTheStoreRemoveWhatAKilledWriterLeft() async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("store.sqlite")
        var store: Store? = try Store(path: path, records: [Article.self])
        try seed(store!, count: 30)
        let caches = store!.cacheDirectory
        try FileManager.default.createDirectory(at: caches, withIntermediateDirectories: true)
        let ext = TemporaryFiles.sectionCacheExtension
        let dead = try deadProcessID()
        let ofFeed = ".feed.\(dead).\(UUID().uuidString).\(ext)"
        let ofOther = ".other.\(dead).\(UUID().uuidString).\(ext)"
        try touch(caches.appendingPathComponent(ofFeed))
        try touch(caches.appendingPathComponent(ofOther))
        // The next write of "feed" removes feed's, not other's.
        let request = RecordRequest<Article>(sortBy: [SortDescriptor(\.score)])
        let controller = FetchedResultsController(request, store: store!, cacheName: "feed")
        try fetchNow(controller)
        await controller.flushCache()
        #expect(try names(caches) == ["feed.folio-cache", ofOther])
        // Opening the store removes every stale one.
        try store!.close()
        store = nil
        let again = try Store(path: path, records: [Article.self])
        #expect(try names(caches) == ["feed.folio-cache"])
        try again.close()
    }
}
