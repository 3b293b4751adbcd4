import Foundation
import GRDB

/// The persistent section cache of a controller with a cache name ("The Cache" in
/// `NSFetchedResultsController`'s documentation): the identifiers in order and the
/// section runs, in one file per name.
///
/// Unlike the original, which gives incorrect results when a cache name is reused with
/// another request, a cache is only used when everything that decides the results is
/// the same: entity name, entity version hash, predicate and its values, sort, window,
/// section key, and the store's change token (which grows with every write to the
/// table, by any connection or process). A truncated or corrupt file fails its
/// checksum. Anything else is a rebuild, never a wrong answer. Files are written to a
/// temporary name and renamed, so a crash leaves the old file or the new one.
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

    struct Fingerprint: Codable, Equatable, Sendable {
        var entity: String
        var versionHash: String
        var query: String
        var sectionKey: String
    }

    private struct Header: Codable {
        var fingerprint: Fingerprint
        var token: Int64
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

    private static let magic = Data("FOLIOSC1".utf8)
    static let fileExtension = "folio-cache"

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

    static func read(_ url: URL, expecting fingerprint: Fingerprint, token: Int64) -> CacheRead {
        guard let data = try? Data(contentsOf: url, options: .alwaysMapped) else { return .failure("no cache file") }
        return data.withUnsafeBytes { raw -> CacheRead in
            guard raw.count >= magic.count + 4 + 8, Data(raw[0..<magic.count]) == magic else {
                return .failure("not a cache file")
            }
            let body = raw.count - 8
            guard
                checksum(UnsafeRawBufferPointer(rebasing: raw[0..<body]))
                    == raw.loadUnaligned(fromByteOffset: body, as: UInt64.self)
            else {
                return .failure("checksum mismatch (truncated or corrupt)")
            }
            let headerLength = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: magic.count, as: UInt32.self)))
            let headerStart = magic.count + 4
            guard headerStart + headerLength <= body,
                let header = try? JSONDecoder().decode(Header.self, from: Data(raw[headerStart..<(headerStart + headerLength)]))
            else { return .failure("unreadable header") }
            if header.fingerprint.entity != fingerprint.entity { return .failure("entity differs") }
            if header.fingerprint.versionHash != fingerprint.versionHash { return .failure("entity version hash differs") }
            if header.fingerprint.query != fingerprint.query { return .failure("fetch request differs") }
            if header.fingerprint.sectionKey != fingerprint.sectionKey { return .failure("section key differs") }
            if header.token != token { return .failure("the store changed since the cache was written") }
            let idsStart = headerStart + headerLength
            guard header.count >= 0, idsStart + header.count * 8 == body else { return .failure("identifier count differs") }
            let runs = header.runs.compactMap(\.run)
            guard runs.count == header.runs.count else { return .failure("unreadable section") }
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

    static func write(_ state: ResultsState, fingerprint: Fingerprint, token: Int64, to url: URL) throws {
        let header = Header(
            fingerprint: fingerprint, token: token, count: state.ids.count, sectioned: state.sectioned,
            runs: state.sectioned ? state.runs.map(StoredRun.init) : [])
        let headerData = try JSONEncoder().encode(header)
        var data = Data(capacity: magic.count + 4 + headerData.count + state.ids.count * 8 + 8)
        data.append(magic)
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
        withUnsafeBytes(of: sum) { data.append(contentsOf: $0) }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
    }

    static func delete(name: String?, in store: Store) throws {
        if let name {
            let url = try url(forName: name, in: store)
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
            return
        }
        let directory = store.cacheDirectory
        guard let files = try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil) else {
            return
        }
        for file in files where file.pathExtension == fileExtension {
            try FileManager.default.removeItem(at: file)
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
