import Foundation
import GRDB

/// The persistent section cache of a controller with a cache name ("The Cache" in
/// `NSFetchedResultsController`'s documentation): the identifiers in order and the
/// section runs, in one file per name.
///
/// Unlike the original, which gives incorrect results when a cache name is reused with
/// another request, a cache is used only when all of these hold (checked in this order;
/// the first that fails is the rebuild's reason):
///
/// 1. the file is a regular file that starts with Folio's magic and this cache format
///    (`FOLIOSC3`; a cache written by an older Folio is never read), and the checksum of
///    its first block (FNV-1a), which holds what the cache was written for, matches;
/// 2. its database identity equals the one stored inside the database (see
///    ``ChangeToken``): a file deleted and created again at the same path, or another
///    store sharing the cache directory, has another one;
/// 3. the entity name, the entity's version hash, the request (predicate and its values,
///    sort, window) and the section key with its SQL all equal the controller's;
/// 4. the entity's change identifier equals the one read from the database in the same
///    read transaction as the fetch: 16 random bytes renewed by SQLite triggers at every
///    row written, by any connection or process, which never come back after a rollback,
///    a restore or a WAL lost;
/// 5. the checksum of the whole file matches — a truncated or damaged file fails it. Only
///    now is the rest of the file read: turning down the cache of another request costs a
///    few hundred bytes read, not the whole file (80 MB for a list of 10,000,000 rows);
/// 6. every number is sane: a non-negative identifier count whose bytes are exactly the
///    rest of the file, and, for sections, positive run counts that add up to it without
///    overflow, each section value once.
///
/// Anything else is a rebuild, never a wrong answer, never a trap. Files are written to a
/// temporary name beside the cache and renamed, so a crash leaves the old file or the new
/// one (and at worst a temporary file that
/// ``FetchedResultsController/deleteCache(withName:in:)`` removes).
//
// It lives in Tracking, beside the load that reads it: the cache is a stored
// ``ResultsState`` whose validity is the table's change token, which the load compares in
// the read transaction of the fetch, as the trackers do at every commit. The controller
// only names the file and asks for writes.
public enum SectionCache {
    /// What a fetch did with the cache.
    public enum Outcome: Sendable, Hashable {
        /// The controller has no cache name.
        case notUsed
        /// A valid cache was used; the identifiers were not scanned.
        case reused
        /// The cache was missing or invalid (the reason says which) and was rebuilt.
        case rebuilt(String)
    }

    /// What the cache was computed for. Its texts are compared byte for byte, never with
    /// Swift's `String` equality (canonical equivalence): the query's bound values are spelled
    /// exactly (storage class, bytes, bits: see `SQLFragment.fingerprint`), so a cache for
    /// `"e\u{301}"` is not reused for `"é"`, nor one for `1` for `1.0`.
    struct Fingerprint: Codable, Equatable, Sendable {
        var entity: String
        var versionHash: String
        var query: String
        var sectionKey: String

        static func == (a: Fingerprint, b: Fingerprint) -> Bool {
            a.entity.hasSameBytes(as: b.entity) && a.versionHash.hasSameBytes(as: b.versionHash)
                && a.query.hasSameBytes(as: b.query) && a.sectionKey.hasSameBytes(as: b.sectionKey)
        }
    }

    /// What a cache was written for: the first block of the file, read and checked before
    /// anything else, so a cache of another request or an older commit is turned down after
    /// reading a few hundred bytes, not a file of millions of identifiers.
    private struct Key: Codable {
        var fingerprint: Fingerprint
        /// The database identity and the entity's change identifier, in hexadecimal.
        var database: String
        var change: String
    }

    /// The second block: the identifier count and the section runs.
    private struct Header: Codable {
        var count: Int
        var sectioned: Bool
        var runs: [StoredRun]
    }

    private struct StoredRun: Codable {
        var kind: String
        var integer: Int64?
        var real: Double?
        var text: String?
        var blob: Data?
        var count: Int

        /// Text is kept as its exact bytes (in `blob`): a section's identity is its bytes,
        /// NULs and invalid UTF-8 included, which a JSON string would not keep.
        init(_ run: SectionRun) {
            count = run.count
            switch run.value {
            case .null: kind = "null"
            case .integer(let v): kind = "int"; integer = v
            case .real(let v): kind = "real"; real = v
            case .text(let bytes): kind = "text"; blob = Data(bytes)
            case .blob(let bytes): kind = "blob"; blob = Data(bytes)
            }
        }

        var run: SectionRun? {
            let value: SQLiteValue
            switch kind {
            case "null": value = .null
            case "int": guard let integer else { return nil }; value = .integer(integer)
            case "real": guard let real, !real.isNaN else { return nil }; value = .real(real)
            case "text": guard let blob else { return nil }; value = .text(Array(blob))
            case "blob": guard let blob else { return nil }; value = .blob(Array(blob))
            default: return nil
            }
            return SectionRun(value: value, count: count)
        }
    }

    enum CacheRead {
        case success(ResultsState)
        case failure(String)
    }

    /// Every cache file Folio has written starts with these 7 bytes, then a format byte.
    private static let magicPrefix = Data("FOLIOSC".utf8)
    /// This format: `FOLIOSC3`, a 32-bit little-endian key length, the JSON key, the 64-bit
    /// checksum of everything so far; a 32-bit header length, the JSON header, the
    /// identifiers as 64-bit little-endian integers, and the 64-bit checksum of the whole
    /// file before it. (Format 2 had no key block: its header held the key and the runs.)
    private static let magic = magicPrefix + Data("3".utf8)
    /// The most bytes a key block may take: a fingerprint is a request's SQL and its values.
    private static let maximumKeyLength = 1 << 24
    static let fileExtension = "folio-cache"
    /// The extension of a cache file being written (renamed to ``fileExtension`` when complete).
    static let temporaryExtension = TemporaryFiles.sectionCacheExtension

    /// The file of a cache name, after checking the name is a plain file name.
    static func url(forName name: String, in store: Store) throws -> URL {
        if name.isEmpty { throw FolioError.invalidCacheName(name, reason: "it is empty") }
        if name.utf8.count > 200 { throw FolioError.invalidCacheName(name, reason: "it is longer than 200 bytes") }
        if name == "." || name == ".." || name.contains("..") {
            throw FolioError.invalidCacheName(name, reason: "it contains '..'")
        }
        if name.contains("/") || name.contains("\\") {
            throw FolioError.invalidCacheName(name, reason: "it contains a path separator")
        }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\0" }) {
            throw FolioError.invalidCacheName(name, reason: "it contains a control character")
        }
        return store.cacheDirectory.appendingPathComponent(name + "." + fileExtension)
    }

    /// A cache file whose key block is the one wanted, open after that block.
    private enum Opened {
        case failure(String)
        case matching(FileHandle, head: Data, keyLength: Int)
    }

    /// Opens the cache at `url` and checks its key block (checks 1 to 4): a failure, or the
    /// open file (the caller closes it) and the bytes read so far.
    private static func open(_ url: URL, expecting fingerprint: Fingerprint, token: ChangeToken) -> Opened {
        guard token.isKnown else { return .failure("the store has no change token") }
        switch kind(of: url) {
        case .missing: return .failure("no cache file")
        case .cutShort, .foreign: return .failure("not a cache file")
        case .regularFile: break
        }
        // Read, not mapped: a file truncated by someone else while mapped would crash the
        // process (SIGBUS) instead of failing its checksum.
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return .failure("no cache file") }
        func failure(_ reason: String) -> Opened {
            try? handle.close()
            return .failure(reason)
        }
        guard let start = try? handle.read(upToCount: magic.count + 4), start.count == magic.count + 4,
            start.prefix(magicPrefix.count) == magicPrefix
        else { return failure("not a cache file") }
        guard start[start.startIndex + magicPrefix.count] == magic.last else {
            let format = Character(Unicode.Scalar(start[start.startIndex + magicPrefix.count]))
            return failure("written by another version of Folio (cache format \(format))")
        }
        // The key block, checked by its own checksum, then compared.
        let keyLength = Int(
            start.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: magic.count, as: UInt32.self)) })
        guard keyLength <= maximumKeyLength, let keyBlock = try? handle.read(upToCount: keyLength + 8),
            keyBlock.count == keyLength + 8
        else { return failure("checksum mismatch (truncated or corrupt)") }
        let keyData = keyBlock.prefix(keyLength)
        let keySum = keyBlock.suffix(8).withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        guard (start + keyData).withUnsafeBytes({ checksum($0) }) == keySum else {
            return failure("checksum mismatch (truncated or corrupt)")
        }
        guard let key = try? JSONDecoder().decode(Key.self, from: Data(keyData)),
            let written = ChangeToken(databaseHex: key.database, changeHex: key.change)
        else { return failure("unreadable header") }
        if written.database != token.database { return failure("the cache belongs to another database") }
        let stored = key.fingerprint
        if !stored.entity.hasSameBytes(as: fingerprint.entity) { return failure("entity differs") }
        if !stored.versionHash.hasSameBytes(as: fingerprint.versionHash) { return failure("entity version hash differs") }
        if !stored.query.hasSameBytes(as: fingerprint.query) { return failure("fetch request differs") }
        if !stored.sectionKey.hasSameBytes(as: fingerprint.sectionKey) {
            return failure(sectionKeyDifference(stored.sectionKey, fingerprint.sectionKey))
        }
        if written.change != token.change { return failure("the store changed since the cache was written") }
        return .matching(handle, head: start + keyBlock, keyLength: keyLength)
    }

    /// The size in bytes of the cache at `url` when its key block is the one wanted (the
    /// rest of the file unread and unchecked), `nil` otherwise.
    static func sizeIfWanted(_ url: URL, expecting fingerprint: Fingerprint, token: ChangeToken) -> UInt64? {
        guard case .matching(let handle, _, _) = open(url, expecting: fingerprint, token: token) else { return nil }
        defer { try? handle.close() }
        return try? handle.seekToEnd()
    }

    static func read(_ url: URL, expecting fingerprint: Fingerprint, token: ChangeToken) -> CacheRead {
        let (handle, head, keyLength): (FileHandle, Data, Int)
        switch open(url, expecting: fingerprint, token: token) {
        case .failure(let reason): return .failure(reason)
        case .matching(let file, let bytes, let length): (handle, head, keyLength) = (file, bytes, length)
        }
        defer { try? handle.close() }

        // 2. The cache is the one wanted: the rest of the file, under the whole file's checksum.
        guard let rest = try? handle.readToEnd() else { return .failure("checksum mismatch (truncated or corrupt)") }
        let data = head + rest
        return data.withUnsafeBytes { raw -> CacheRead in
            let body = raw.count - 8
            let headerLengthAt = magic.count + 4 + keyLength + 8
            guard body >= headerLengthAt + 4,
                checksum(UnsafeRawBufferPointer(rebasing: raw[0..<body]))
                    == UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: body, as: UInt64.self))
            else {
                return .failure("checksum mismatch (truncated or corrupt)")
            }
            let headerLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: headerLengthAt, as: UInt32.self)))
            let headerStart = headerLengthAt + 4
            guard headerLength <= body - headerStart,
                let header = try? JSONDecoder().decode(Header.self, from: Data(raw[headerStart..<(headerStart + headerLength)]))
            else { return .failure("unreadable header") }
            // Every number from the file is checked before it is used.
            let idsStart = headerStart + headerLength
            let (idBytes, overflow) = header.count.multipliedReportingOverflow(by: 8)
            guard header.count >= 0, !overflow, idBytes == body - idsStart else { return .failure("identifier count differs") }
            let runs = header.runs.compactMap(\.run)
            guard runs.count == header.runs.count else { return .failure("unreadable section value") }
            if let problem = checkRuns(runs, count: header.count, sectioned: header.sectioned) { return .failure(problem) }
            var builder = IdentifierList.Builder()
            for i in 0..<header.count {
                builder.append(Int64(littleEndian: raw.loadUnaligned(fromByteOffset: idsStart + i * 8, as: Int64.self)))
            }
            guard let state = ResultsState(validating: builder.finish(), runs: runs, sectioned: header.sectioned) else {
                return .failure("section counts differ")
            }
            return .success(state)
        }
    }

    /// Why stored section runs cannot describe `count` identifiers, or `nil` when they can:
    /// sections are non-empty runs, each value once, that add up to the count; results
    /// without sections store none.
    private static func checkRuns(_ runs: [SectionRun], count: Int, sectioned: Bool) -> String? {
        guard sectioned else { return runs.isEmpty ? nil : "section counts differ" }
        var total = 0
        for run in runs {
            guard run.count > 0 else { return "section counts differ" }
            let (sum, overflow) = total.addingReportingOverflow(run.count)
            guard !overflow else { return "section counts differ" }
            total = sum
        }
        guard total == count else { return "section counts differ" }
        guard Set(runs.map(\.value)).count == runs.count else { return "a section value appears twice" }
        return nil
    }

    /// Writes the cache for `token`; does nothing for an unknown token (see ``ChangeToken``).
    static func write(_ state: ResultsState, fingerprint: Fingerprint, token: ChangeToken, to url: URL) throws {
        guard token.isKnown else { return }
        let keyData = try JSONEncoder().encode(
            Key(fingerprint: fingerprint, database: token.database.hex, change: token.change.hex))
        guard keyData.count <= maximumKeyLength else { return }
        let header = Header(
            count: state.ids.count, sectioned: state.sectioned, runs: state.sectioned ? state.runs.map(StoredRun.init) : [])
        let headerData = try JSONEncoder().encode(header)
        var data = Data(capacity: magic.count + 4 + keyData.count + 8 + 4 + headerData.count + state.ids.count * 8 + 8)
        data.append(magic)
        withUnsafeBytes(of: UInt32(keyData.count).littleEndian) { data.append(contentsOf: $0) }
        data.append(keyData)
        let keySum = data.withUnsafeBytes { checksum($0) }
        withUnsafeBytes(of: keySum.littleEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(headerData.count).littleEndian) { data.append(contentsOf: $0) }
        data.append(headerData)
        for chunk in state.ids.chunks {
            chunk.withUnsafeBufferPointer { buffer in
                if 1.littleEndian == 1 {
                    data.append(
                        UnsafeBufferPointer(
                            start: UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: UInt8.self),
                            count: buffer.count * 8))
                } else {
                    for id in buffer { withUnsafeBytes(of: id.littleEndian) { data.append(contentsOf: $0) } }
                }
            }
        }
        let sum = data.withUnsafeBytes { checksum($0) }
        withUnsafeBytes(of: sum.littleEndian) { data.append(contentsOf: $0) }
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A name of its own, which says which process writes it (Foundation's atomic write
        // would leave its temporary file under a name Folio could not recognise after a
        // crash), then an atomic rename, which fails rather than replace a directory. The
        // temporary files of this name that a process killed while writing left are removed
        // first.
        let stem = url.deletingPathExtension().lastPathComponent
        TemporaryFiles.removeStale(in: directory, extension: temporaryExtension, name: stem)
        let temporary = TemporaryFiles.begin(stem, in: directory, extension: temporaryExtension)
        defer { TemporaryFiles.finished(temporary) }
        do {
            try data.write(to: temporary)
            guard rename(temporary.path, url.path) == 0 else {
                throw FolioError.invalidArgument(
                    "cannot rename the cache file to \(url.path): \(String(cString: strerror(errno)))")
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    enum FileKind: Equatable {
        case missing
        /// A regular file (not a link) that starts with `FOLIOSC`: one Folio wrote.
        case regularFile
        /// A regular file that is a prefix of one Folio writes (empty, or cut inside the magic).
        case cutShort
        /// Anything else: a directory, a link, someone else's file.
        case foreign
    }

    /// What is at `url`, looked at without following a link.
    static func kind(of url: URL) -> FileKind {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return errno == ENOENT ? .missing : .foreign }
        guard info.st_mode & S_IFMT == S_IFREG else { return .foreign }
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return .foreign }
        defer { try? handle.close() }
        let start = (try? handle.read(upToCount: magicPrefix.count)) ?? Data()
        if start == magicPrefix { return .regularFile }
        return magicPrefix.starts(with: start) ? .cutShort : .foreign
    }

    /// Deletes the cache `name`, or every cache in the store's cache directory when `nil`,
    /// and the temporary files of writes a crash interrupted. Only files Folio wrote are
    /// deleted: regular files with Folio's extension that start with its magic; never a
    /// directory, a link, or a file of someone else's.
    ///
    /// - Throws: ``FolioError/invalidCacheName(_:reason:)`` for a bad name, or when
    ///   something Folio did not write is at the cache's path (it is left in place).
    static func delete(name: String?, in store: Store) throws {
        if let name {
            let url = try url(forName: name, in: store)
            switch kind(of: url) {
            case .missing: return
            case .regularFile: try FileManager.default.removeItem(at: url)
            case .cutShort, .foreign:
                throw FolioError.invalidCacheName(
                    name, reason: "\(url.path) is not a cache file Folio wrote; it was left in place")
            }
            return
        }
        let directory = store.cacheDirectory
        guard let files = try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil) else {
            return
        }
        for file in files {
            let kind = kind(of: file)
            if file.pathExtension == fileExtension && kind == .regularFile
                || file.pathExtension == temporaryExtension && (kind == .regularFile || kind == .cutShort)
            {
                try FileManager.default.removeItem(at: file)
            }
        }
    }

    /// FNV-1a over 8-byte words (then the tail bytes): fast enough for millions of identifiers.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let words = bytes.count / 8
        for i in 0..<words {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) &* 0x100_0000_01b3
        }
        for i in (words * 8)..<bytes.count {
            hash = (hash ^ UInt64(bytes[i])) &* 0x100_0000_01b3
        }
        return hash
    }
}
