import Foundation

/// The store files this process has open, by device and inode, with how many ``Store``
/// instances have each open (counted once their open transaction committed, until they
/// close or go away): a migration runs only when no other store has the file open.
///
/// A file is identified by device and inode, not by path: two paths to one file (a
/// symbolic or hard link, `..` segments) are the same file.
enum OpenStoreFiles {
    private static let counts = Locked<[FileIdentity: Int]>([:])

    static func register(_ file: FileIdentity) {
        counts.withLock { $0[file, default: 0] += 1 }
    }

    static func unregister(_ file: FileIdentity) {
        counts.withLock { counts in
            guard let count = counts[file] else { return }
            counts[file] = count > 1 ? count - 1 : nil
        }
    }

    /// How many stores of this process have the file open.
    static func count(_ file: FileIdentity) -> Int {
        counts.withLock { $0[file] ?? 0 }
    }
}
