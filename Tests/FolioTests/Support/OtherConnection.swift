import GRDB

/// A connection the store does not own (as another process would have).
enum DatabaseQueueFactory {
    static func open(_ path: String) throws -> DatabaseQueue { try DatabaseQueue(path: path) }
}
