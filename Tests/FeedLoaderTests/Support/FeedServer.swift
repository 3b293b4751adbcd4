import FlyingFox
import FlyingSocks
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A feed server on 127.0.0.1, on a port the system picks, for one test: it serves the
/// resources a test puts at paths, answers conditional requests as a real server does,
/// and records every request. Nothing leaves the machine.
final class FeedServer: Sendable {
    /// What the server answers at one path.
    struct Resource: Sendable {
        var status = 200
        var contentType: String?
        var body = Data()
        /// Sent as `ETag`; a request whose `If-None-Match` names it is answered 304.
        var entityTag: String?
        /// Sent as `Last-Modified`; a request whose `If-Modified-Since` repeats it (and that
        /// has no `If-None-Match`) is answered 304.
        var lastModified: String?
        /// Sent as `Location` (for redirects).
        var location: String?
        /// How long to wait before answering (cancelled when the server stops).
        var delay: Duration?
        /// Answer 304 even to a request that is not conditional (a broken server).
        var alwaysNotModified = false

        init(
            status: Int = 200, contentType: String? = nil, body: String = "", entityTag: String? = nil,
            lastModified: String? = nil, location: String? = nil, delay: Duration? = nil
        ) {
            self.status = status
            self.contentType = contentType
            self.body = Data(body.utf8)
            self.entityTag = entityTag
            self.lastModified = lastModified
            self.location = location
            self.delay = delay
        }

        static func redirect(_ status: Int = 301, to location: String) -> Resource {
            Resource(status: status, location: location)
        }
    }

    /// A request as the server saw it.
    struct Request: Sendable {
        var path: String
        var headers: [String: String]
        var status: Int

        /// A header, by name in any case.
        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    private final class Storage: @unchecked Sendable {
        // @unchecked Sendable: `resources`, `log` and `failure` are only touched with `lock` held.
        let lock = NSLock()
        var resources: [String: Resource] = [:]
        var log: [Request] = []
        /// Why the server's run ended before it listened.
        var failure: (any Error)?
    }

    private struct Handler: HTTPHandler {
        let storage: Storage

        func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
            let resource = storage.lock.withLock { storage.resources[request.path] }
            guard let resource else { return record(request, HTTPResponse(statusCode: .notFound)) }
            if let delay = resource.delay { try await Task.sleep(for: delay) }
            var headers = HTTPHeaders()
            if let tag = resource.entityTag { headers[.eTag] = tag }
            if let date = resource.lastModified { headers[.lastModified] = date }
            if let location = resource.location { headers[.location] = location }
            let ifNoneMatch = request.headers[.ifNoneMatch]
            let ifModifiedSince = request.headers[.ifModifiedSince]
            let unchanged =
                if let ifNoneMatch {
                    resource.entityTag.map { tag in
                        ifNoneMatch.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == tag }
                    } ?? false
                } else if let ifModifiedSince {
                    resource.lastModified == ifModifiedSince
                } else {
                    false
                }
            if (unchanged && resource.status == 200) || resource.alwaysNotModified {
                return record(request, HTTPResponse(statusCode: .notModified, headers: headers))
            }
            if let type = resource.contentType { headers[.contentType] = type }
            let status = HTTPStatusCode(resource.status, phrase: "Status \(resource.status)")
            return record(request, HTTPResponse(statusCode: status, headers: headers, body: resource.body))
        }

        private func record(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse {
            var headers: [String: String] = [:]
            for (name, value) in request.headers { headers[name.rawValue] = value }
            let logged = Request(path: request.path, headers: headers, status: response.statusCode.code)
            storage.lock.withLock { storage.log.append(logged) }
            return response
        }
    }

    private let server: HTTPServer
    private let storage: Storage
    private let running: Task<Void, any Error>
    /// The port the system gave the server.
    let port: UInt16

    private init(server: HTTPServer, running: Task<Void, any Error>, port: UInt16, storage: Storage) {
        self.server = server
        self.running = running
        self.port = port
        self.storage = storage
    }

    /// Starts a server on 127.0.0.1, port 0 (the system picks a free one).
    static func start() async throws -> FeedServer {
        let storage = Storage()
        let server = HTTPServer(
            address: try sockaddr_in.inet(ip4: "127.0.0.1", port: 0), timeout: 30, logger: .disabled,
            handler: Handler(storage: storage))
        let running = Task {
            do { try await server.run() } catch {
                storage.lock.withLock { storage.failure = error }
                throw error
            }
        }
        // Until it listens, or its run ends with the reason (FlyingFox's own wait would
        // wait out its limit for a server that failed to start). The limit is generous: a
        // loaded two-core machine can keep the server's tasks from running for a minute.
        let deadline = ContinuousClock.now + .seconds(600)
        while await !server.isListening {
            if let error = storage.lock.withLock({ storage.failure }) {
                throw ServerError(description: "the feed server did not start: \(error)")
            }
            guard ContinuousClock.now < deadline else {
                running.cancel()
                throw ServerError(description: "the feed server did not listen within 600 s")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        guard case .ip4(_, let port) = await server.listeningAddress else {
            running.cancel()
            throw ServerError(description: "the feed server did not report its port")
        }
        return FeedServer(server: server, running: running, port: port, storage: storage)
    }

    struct ServerError: Error, CustomStringConvertible {
        var description: String
    }

    /// Stops listening and ends every connection (a waiting handler is cancelled).
    func stop() async {
        await server.stop(timeout: 0)
        running.cancel()
        _ = await running.result
    }

    /// Puts `resource` at `path` (`/feed.xml`), replacing what was there.
    func set(_ path: String, _ resource: Resource) {
        storage.lock.withLock { storage.resources[path] = resource }
    }

    /// Changes the resource at `path`.
    func update(_ path: String, _ change: (inout Resource) -> Void) {
        storage.lock.withLock {
            var resource = storage.resources[path] ?? Resource()
            change(&resource)
            storage.resources[path] = resource
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// Every request so far, in order.
    var requests: [Request] { storage.lock.withLock { storage.log } }
}

/// Runs `body` with a feed server started for it, and stops the server afterwards,
/// whether `body` returns or throws.
func withFeedServer<T>(_ body: (FeedServer) async throws -> T) async throws -> T {
    let server = try await FeedServer.start()
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

/// A TCP port on 127.0.0.1 bound by a socket that does not listen: connections to it are
/// refused, and the system gives the port to no one else until this goes away.
final class ReservedPort {
    let number: UInt16
    private let descriptor: Int32

    init() throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw FeedServer.ServerError(description: "socket() failed: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw FeedServer.ServerError(description: "bind() failed: \(errno)")
        }
        self.descriptor = descriptor
        number = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }
}
