import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files written under a temporary name, then renamed into place (a section cache): the
/// name says which process wrote it and what it will become, so that one left behind by a
/// process killed while writing can be told from one being written now, and removed.
///
/// A temporary name is `.<final name>.<pid>.<random>.<extension>`. It is *stale* when the
/// process that wrote it is gone (or is this one, and is not writing it), or when it is
/// older than ``staleAge`` (a process id used again since). A name without a process id
/// (written before the process id was part of the name) is stale after ``unownedAge``.
enum TemporaryFiles {
    /// The extension of a section cache being written.
    static let sectionCacheExtension = "folio-cache-tmp"
    /// Past this age a temporary file is stale whoever wrote it: no write takes this long.
    static let staleAge: TimeInterval = 3_600
    /// The age after which a temporary file whose name has no process id is stale.
    static let unownedAge: TimeInterval = 60

    /// The temporary files this process is writing now.
    private static let writing = Locked<Set<String>>([])

    /// A new temporary name for `name` (the final file's name without its extension) in
    /// `directory`, marked as being written by this process until ``finished(_:)``.
    static func begin(_ name: String, in directory: URL, extension: String) -> URL {
        let file = directory.appendingPathComponent(".\(name).\(getpid()).\(UUID().uuidString).\(`extension`)")
        _ = writing.withLock { $0.insert(file.lastPathComponent) }
        return file
    }

    /// The write of `file` ended (renamed into place, or given up).
    static func finished(_ file: URL) {
        _ = writing.withLock { $0.remove(file.lastPathComponent) }
    }

    /// Removes the stale temporary files with `extension` in `directory` — of the final
    /// name `name` only, when given. Errors are ignored: a file another process removed
    /// first, or one that cannot be removed, is left.
    /// - Complexity: one listing of `directory`, and a `stat` per temporary file.
    static func removeStale(in directory: URL, extension: String, name: String? = nil, now: Date = Date()) {
        let manager = FileManager.default
        guard let files = try? manager.contentsOfDirectory(atPath: directory.path) else { return }
        let suffix = "." + `extension`
        let prefix = name.map { ".\($0)." }
        for file in files where file.hasPrefix(".") && file.hasSuffix(suffix) {
            if let prefix, !file.hasPrefix(prefix) { continue }
            let path = directory.appendingPathComponent(file).path
            var info = stat()
            // A link or a directory is not Folio's: left alone.
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            #if canImport(Darwin)
            let modified = TimeInterval(info.st_mtimespec.tv_sec)
            #else
            let modified = TimeInterval(info.st_mtim.tv_sec)
            #endif
            let age = now.timeIntervalSince1970 - modified
            guard isStale(file, extension: `extension`, age: age) else { continue }
            try? manager.removeItem(atPath: path)
        }
    }

    /// Whether the temporary file named `file` (aged `age` seconds) is stale.
    static func isStale(_ file: String, extension: String, age: TimeInterval) -> Bool {
        if age > staleAge { return true }
        // `.<name>.<pid>.<uuid>.<extension>`: the pid is the third field from the end.
        let fields = file.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
        guard fields.count >= 4, let pid = Int32(fields[fields.count - 3]), pid > 0,
            UUID(uuidString: String(fields[fields.count - 2])) != nil
        else { return age > unownedAge }
        if pid == getpid() { return !writing.withLock { $0.contains(file) } }
        // `kill(pid, 0)`: ESRCH when no such process exists (EPERM: it exists, another user's).
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
