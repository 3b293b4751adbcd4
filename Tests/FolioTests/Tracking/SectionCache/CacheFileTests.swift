import Foundation
import GRDB
import Testing
@testable import Folio

extension Durability {
    /// A cache file with a valid checksum (and the right database and token) whose numbers
    /// are absurd: every number read from the file is checked before use, so each one is a
    /// rebuild, never a trap and never a wrong answer.
    @Suite("Crafted cache files")
    @MainActor
    struct CraftedCacheFileTests {
        /// A change to the JSON header (and, optionally, the identifier bytes).
        struct Damage: CustomTestStringConvertible, Sendable {
            var name: String
            /// The reason the rebuild must give: the check that caught it.
            var reason: String
            var header: @Sendable (inout [String: Any]) -> Void = { _ in }
            var identifiers: @Sendable (inout Data) -> Void = { _ in }
            var headerLength: (@Sendable (Int) -> UInt32)? = nil
            var testDescription: String { name }
        }

        nonisolated static let damages: [Damage] = [
            Damage(name: "count 2^61", reason: "identifier count differs", header: { $0["count"] = 1 << 61 }),
            Damage(name: "count Int.max", reason: "identifier count differs", header: { $0["count"] = Int.max }),
            Damage(name: "count -1", reason: "identifier count differs", header: { $0["count"] = -1 }),
            Damage(name: "count Int.min", reason: "identifier count differs", header: { $0["count"] = Int.min }),
            Damage(
                name: "count one more, no identifier more", reason: "identifier count differs",
                header: { $0["count"] = ($0["count"] as! Int) + 1 }),
            Damage(
                name: "count one more, one identifier more (runs do not add up)", reason: "section counts differ",
                header: { $0["count"] = ($0["count"] as! Int) + 1 },
                identifiers: { $0.append(contentsOf: [UInt8](repeating: 1, count: 8)) }),
            Damage(
                name: "a run count negative, the sum kept", reason: "section counts differ",
                header: {
                    runs(&$0) {
                        $0[0] -= 100; $0[1] += 100
                    }
                }),
            Damage(
                name: "run counts overflow", reason: "section counts differ",
                header: {
                    runs(&$0) {
                        $0[0] = Int.max; $0[1] = Int.max
                    }
                }),
            Damage(name: "a run count 2^62", reason: "section counts differ", header: { runs(&$0) { $0[0] = 1 << 62 } }),
            Damage(
                name: "an empty run, the sum kept", reason: "section counts differ",
                header: {
                    runs(&$0) {
                        $0[1] += $0[0]; $0[0] = 0
                    }
                }),
            Damage(
                name: "a section value twice", reason: "a section value appears twice",
                header: {
                    var runs = $0["runs"] as! [[String: Any]]
                    runs[1]["integer"] = runs[0]["integer"]
                    $0["runs"] = runs
                }),
            Damage(
                name: "a run of an unknown kind", reason: "unreadable section value",
                header: {
                    var runs = $0["runs"] as! [[String: Any]]
                    runs[0]["kind"] = "float"
                    $0["runs"] = runs
                }),
            Damage(
                name: "an int run without its value", reason: "unreadable section value",
                header: {
                    var runs = $0["runs"] as! [[String: Any]]
                    runs[0]["integer"] = nil
                    $0["runs"] = runs
                }),
            Damage(name: "no sections, with runs", reason: "section counts differ", header: { $0["sectioned"] = false }),
            Damage(name: "count as a huge real", reason: "unreadable header", header: { $0["count"] = 1e300 }),
            Damage(name: "header length 2^32 - 1", reason: "unreadable header", headerLength: { _ in UInt32.max }),
            Damage(name: "header length 0", reason: "unreadable header", headerLength: { _ in 0 }),
            Damage(
                name: "header length one past the identifiers", reason: "unreadable header",
                headerLength: { UInt32($0 + 8 * 200) }),
            Damage(name: "identifiers cut by 4 bytes", reason: "identifier count differs", identifiers: { $0.removeLast(4) }),
        ]

        /// Applies `change` to the integer `count` of each stored run.
        nonisolated static func runs(_ header: inout [String: Any], _ change: (inout [Int]) -> Void) {
            var runs = header["runs"] as! [[String: Any]]
            var counts = runs.map { $0["count"] as! Int }
            change(&counts)
            for index in runs.indices { runs[index]["count"] = counts[index] }
            header["runs"] = runs
        }

        @Test(arguments: damages)
        func absurdNumbersAreARebuildNotATrap(_ damage: Damage) async throws {
            let store = try Store.temporary(records: [Article.self])
            try seedHours(store, 0..<100)
            #expect(try await cachedFetch(store) == .rebuilt("no cache file"))
            let url = try SectionCache.url(forName: "feed", in: store)
            try Self.rewrite(url, damage)
            let outcome = try await cachedFetch(store)
            #expect(outcome == .rebuilt(damage.reason), "a crafted cache was used: \(outcome)")
            #expect(try await cachedFetch(store) == .reused, "the rebuilt cache is good again")
        }

        /// Rewrites a cache file: same magic and key block, the header changed, the checksum
        /// recomputed. (The layout of format 3: magic, 32-bit key length, JSON key, its 64-bit
        /// checksum, 32-bit header length, JSON header, identifiers, 64-bit checksum.)
        static func rewrite(_ url: URL, _ damage: Damage) throws {
            let data = try Data(contentsOf: url)
            #expect(data.prefix(8) == Data("FOLIOSC3".utf8))
            let keyLength = Int(data[8..<12].withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) })
            let keyBlockEnd = 12 + keyLength + 8
            let length = Int(
                data[keyBlockEnd..<(keyBlockEnd + 4)].withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) })
            let headerStart = keyBlockEnd + 4
            var header = try #require(
                try JSONSerialization.jsonObject(with: data[headerStart..<(headerStart + length)]) as? [String: Any])
            var identifiers = Data(data[(headerStart + length)..<(data.count - 8)])
            damage.header(&header)
            damage.identifiers(&identifiers)
            let headerData = try JSONSerialization.data(withJSONObject: header)
            var rewritten = Data(data.prefix(keyBlockEnd))
            withUnsafeBytes(of: (damage.headerLength?(headerData.count) ?? UInt32(headerData.count)).littleEndian) {
                rewritten.append(contentsOf: $0)
            }
            rewritten.append(headerData)
            rewritten.append(identifiers)
            let sum = rewritten.withUnsafeBytes { SectionCache.checksum($0) }
            withUnsafeBytes(of: sum.littleEndian) { rewritten.append(contentsOf: $0) }
            try rewritten.write(to: url)
        }
    }

    /// `deleteCache(withName:in:)` deletes only files Folio wrote.
    @Suite("Deleting caches")
    @MainActor
    struct DeleteCacheTests {
        @Test func onlyFilesFolioWroteAreDeleted() async throws {
            let store = try Store.temporary(records: [Article.self])
            try seedHours(store, 0..<50)
            let files = FileManager.default
            let caches = store.cacheDirectory
            #expect(try await cachedFetch(store, name: "one") == .rebuilt("no cache file"))
            #expect(try await cachedFetch(store, name: "two") == .rebuilt("no cache file"))
            // A user's folder named like a cache, with a file in it.
            let folder = caches.appendingPathComponent("feed.folio-cache")
            try files.createDirectory(at: folder, withIntermediateDirectories: true)
            let precious = folder.appendingPathComponent("precious.txt")
            try Data("keep me".utf8).write(to: precious)
            // A user's file with the extension, and a link with it to a file elsewhere.
            let notes = caches.appendingPathComponent("notes.folio-cache")
            try Data("my notes".utf8).write(to: notes)
            let outside = store.cacheDirectory.deletingLastPathComponent().appendingPathComponent("outside.folio-cache")
            try files.copyItem(at: caches.appendingPathComponent("two.folio-cache"), to: outside)
            let link = caches.appendingPathComponent("link.folio-cache")
            try files.createSymbolicLink(at: link, withDestinationURL: outside)
            // A write a crash interrupted: Folio's temporary name, cut inside the magic.
            let interrupted = caches.appendingPathComponent(".one.1234.folio-cache-tmp")
            try Data("FOLI".utf8).write(to: interrupted)

            // By name: a folder (or anything Folio did not write) is refused and left in place.
            #expect(throws: FolioError.self) { try FetchedResultsController<Article>.deleteCache(withName: "feed", in: store) }
            #expect(throws: FolioError.self) { try FetchedResultsController<Article>.deleteCache(withName: "notes", in: store) }
            #expect(throws: FolioError.self) { try FetchedResultsController<Article>.deleteCache(withName: "link", in: store) }
            #expect(files.fileExists(atPath: precious.path) && files.fileExists(atPath: notes.path))
            #expect(files.fileExists(atPath: outside.path))
            try FetchedResultsController<Article>.deleteCache(withName: "one", in: store)
            #expect(!files.fileExists(atPath: caches.appendingPathComponent("one.folio-cache").path))
            try FetchedResultsController<Article>.deleteCache(withName: "never written", in: store)

            // All: Folio's caches and temporary files go; everything else stays.
            try FetchedResultsController<Article>.deleteCache(withName: nil, in: store)
            let left = try files.contentsOfDirectory(atPath: caches.path).sorted()
            #expect(left == ["feed.folio-cache", "link.folio-cache", "notes.folio-cache"])
            #expect(try String(contentsOf: precious, encoding: .utf8) == "keep me")
            #expect(try String(contentsOf: notes, encoding: .utf8) == "my notes")
            #expect(files.fileExists(atPath: outside.path))
            #expect(try await cachedFetch(store, name: "two") == .rebuilt("no cache file"))
            // A cache cannot be written over the user's folder either: the controller works
            // without it.
            #expect(try await cachedFetch(store, name: "feed") == .rebuilt("not a cache file"))
            #expect(files.fileExists(atPath: precious.path))
        }
    }
}
