import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches a feed over HTTP or HTTPS with URLSession: the reference app's `ServerFeedFetcher`.
///
/// One `GET`, with a timeout for the whole fetch, at most ``maximumRedirects`` redirects
/// (the conditional headers follow them), and at most ``maximumBytes`` of body. With
/// validators it asks `If-None-Match` / `If-Modified-Since`, and a `304 Not Modified` is
/// ``FetchResult/notModified``. Every failure is a ``FeedLoaderError`` that names the
/// address and what went wrong; no URL cache is used, so a fetch is always a request.
/// The response's `Content-Type` goes with the body, its `charset` included
/// (``FeedDocument/charset``): it decides the encoding of an XML feed over the feed's XML
/// declaration, as RFC 7303 and browsers say (a byte order mark decides over both).
struct ServerFeedFetcher: FeedFetcher {
    /// The feed's address (http or https).
    let url: URL
    /// Seconds the whole fetch may take.
    var timeout: TimeInterval
    /// Redirects followed before giving up.
    var maximumRedirects: Int
    /// The largest body accepted, in bytes.
    var maximumBytes: Int

    static let defaultTimeout: TimeInterval = 30
    static let defaultMaximumRedirects = 5
    static let defaultMaximumBytes = 16 << 20

    /// What FeedLoader reads, best first.
    static let accept =
        "application/feed+json, application/atom+xml, application/rss+xml, application/json;q=0.9, "
        + "application/xml;q=0.8, text/xml;q=0.8, */*;q=0.1"
    static let userAgent = "FeedLoader/1.0 (Folio reference app)"

    init(
        url: URL, timeout: TimeInterval = defaultTimeout, maximumRedirects: Int = defaultMaximumRedirects,
        maximumBytes: Int = defaultMaximumBytes
    ) {
        self.url = url
        self.timeout = timeout
        self.maximumRedirects = maximumRedirects
        self.maximumBytes = maximumBytes
    }

    /// `text` as an http or https address with a host; `nil` when it is not one.
    static func address(_ text: String) -> URL? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard FeedParser.webHost(trimmed) != nil, let url = URL(string: trimmed) else { return nil }
        return url
    }

    /// Whether `text` names a scheme (`ftp:`, `https:`), so that it is meant as an address
    /// rather than a file path.
    static func looksLikeAddress(_ text: String) -> Bool {
        text.range(of: #"^[A-Za-z][A-Za-z0-9+.-]*://"#, options: .regularExpression) != nil
    }

    var name: String { url.absoluteString }
    var validatorKey: String? { url.absoluteString }

    func fetchFeed(validators: FeedValidators?) async throws -> FetchResult {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "GET"
        request.setValue(Self.accept, forHTTPHeaderField: "Accept")
        request.setValue(Self.userAgent, forHTTPHeaderField: "User-Agent")
        if let tag = validators?.entityTag { request.setValue(tag, forHTTPHeaderField: "If-None-Match") }
        if let date = validators?.lastModified { request.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        let isConditional = !(validators?.isEmpty ?? true)

        let outcome: HTTPTransfer.Outcome
        do {
            outcome = try await HTTPTransfer(
                request: request, timeout: timeout, maximumRedirects: maximumRedirects, maximumBytes: maximumBytes
            ).run()
        } catch let error as HTTPTransfer.Failure {
            switch error {
            case .tooLarge: throw FeedLoaderError.tooLarge(source: name, limit: maximumBytes)
            case .redirectedTo(let target): throw FeedLoaderError.unsupportedAddress(target.absoluteString)
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw Self.failure(error, source: name, timeout: timeout, maximumRedirects: maximumRedirects)
        }

        let response = outcome.response
        switch response.statusCode {
        case 304:
            guard isConditional else { throw FeedLoaderError.unexpectedNotModified(source: name) }
            return .notModified
        case 200..<300:
            let validators = FeedValidators(
                entityTag: response.value(forHTTPHeaderField: "ETag"),
                lastModified: response.value(forHTTPHeaderField: "Last-Modified"))
            return .document(
                FeedDocument(
                    data: outcome.body, contentType: response.value(forHTTPHeaderField: "Content-Type"),
                    url: response.url ?? url, validators: validators))
        case 300..<400 where outcome.redirectLimitReached:
            throw FeedLoaderError.tooManyRedirects(source: name, limit: maximumRedirects)
        default:
            throw FeedLoaderError.httpStatus(source: name, status: response.statusCode, reason: Self.reason(response.statusCode))
        }
    }

    /// A URL loading error as the message FeedLoader prints.
    static func failure(
        _ error: any Error, source: String, timeout: TimeInterval, maximumRedirects: Int = defaultMaximumRedirects
    ) -> FeedLoaderError {
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain else {
            return .unreachable(source: source, reason: nsError.localizedDescription)
        }
        let host = URL(string: source)?.host ?? source
        let reason: String
        switch nsError.code {
        case NSURLErrorTimedOut:
            return .timedOut(source: source, seconds: timeout)
        case NSURLErrorHTTPTooManyRedirects:
            return .tooManyRedirects(source: source, limit: maximumRedirects)
        case NSURLErrorUnsupportedURL, NSURLErrorBadURL:
            return .unsupportedAddress(source)
        case NSURLErrorCannotConnectToHost:
            reason = "the connection to \(host) was refused (no server is listening there, or the host is unreachable)"
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            reason = "the host name \(host) was not found"
        case NSURLErrorNetworkConnectionLost:
            reason = "the connection was lost before the answer was complete"
        case NSURLErrorNotConnectedToInternet:
            reason = "this machine is not connected to a network"
        case NSURLErrorBadServerResponse:
            reason = "the server's answer is not valid HTTP"
        case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateUntrusted,
            NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateNotYetValid,
            NSURLErrorClientCertificateRejected, NSURLErrorClientCertificateRequired:
            reason = "the secure connection failed (\(nsError.localizedDescription))"
        default:
            reason = nsError.localizedDescription
        }
        return .unreachable(source: source, reason: reason)
    }

    /// `404` → `Not Found`.
    static func reason(_ status: Int) -> String {
        switch status {
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 429: "Too Many Requests"
        case 451: "Unavailable For Legal Reasons"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default:
            switch status {
            case 100..<200: "(informational)"
            case 300..<400: "(a redirect without a usable Location)"
            case 400..<500: "(a client error)"
            default: "(a server error)"
            }
        }
    }
}

/// One `GET` through URLSession's delegate API, so that redirects can be counted (and
/// carry the request's own headers along) and an oversized body stopped early.
private final class HTTPTransfer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: `state` is only touched with `lock` held; URLSession calls the
    // delegate on its own serial queue, and the continuation is resumed exactly once.

    struct Outcome: Sendable {
        var response: HTTPURLResponse
        var body: Data
        /// Whether a redirect was refused because ``maximumRedirects`` were followed.
        var redirectLimitReached: Bool
    }

    enum Failure: Error {
        case tooLarge
        case redirectedTo(URL)
    }

    private struct State {
        var redirects = 0
        var redirectLimitReached = false
        var refusedRedirect: URL?
        var response: HTTPURLResponse?
        var body = Data()
        var tooLarge = false
        var cancelled = false
        /// The whole transfer outlasted the timeout (FeedLoader's own deadline: on Linux,
        /// URLSession's timeouts do not bound a server that accepts and never answers).
        var timedOut = false
        var continuation: CheckedContinuation<Outcome, any Error>?
    }

    private let request: URLRequest
    private let timeout: TimeInterval
    private let maximumRedirects: Int
    private let maximumBytes: Int
    private let lock = NSLock()
    private var state = State()
    private var session: URLSession!

    init(request: URLRequest, timeout: TimeInterval, maximumRedirects: Int, maximumBytes: Int) {
        self.request = request
        self.timeout = timeout
        self.maximumRedirects = maximumRedirects
        self.maximumBytes = maximumBytes
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        // The session keeps its delegate (this object) until it is invalidated, when the
        // task completes.
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// Runs the request; cancelling the calling task cancels it.
    func run() async throws -> Outcome {
        let task = session.dataTask(with: request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let start = lock.withLock {
                    guard !state.cancelled else { return false }
                    state.continuation = continuation
                    return true
                }
                if start {
                    task.resume()
                    DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
                        guard let self else { return }
                        let running = lock.withLock {
                            guard state.continuation != nil else { return false }
                            state.timedOut = true
                            return true
                        }
                        if running { task.cancel() }
                    }
                } else {
                    session.invalidateAndCancel()
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            lock.withLock { state.cancelled = true }
            task.cancel()
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let scheme = newRequest.url?.scheme?.lowercased()
        let follow: URLRequest? = lock.withLock {
            guard scheme == "http" || scheme == "https" else {
                state.refusedRedirect = newRequest.url
                return nil
            }
            guard state.redirects < maximumRedirects else {
                state.redirectLimitReached = true
                return nil
            }
            state.redirects += 1
            var next = newRequest
            // The validators belong to the feed, wherever it lives now.
            for field in ["Accept", "User-Agent", "If-None-Match", "If-Modified-Since"] {
                if let value = request.value(forHTTPHeaderField: field) { next.setValue(value, forHTTPHeaderField: field) }
            }
            next.timeoutInterval = request.timeoutInterval
            return next
        }
        completionHandler(follow)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let allow: Bool = lock.withLock {
            state.response = response as? HTTPURLResponse
            if response.expectedContentLength > Int64(maximumBytes) {
                state.tooLarge = true
                return false
            }
            return true
        }
        completionHandler(allow ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let stop: Bool = lock.withLock {
            guard !state.tooLarge else { return false }
            if state.body.count + data.count > maximumBytes {
                state.tooLarge = true
                state.body = Data()
                return true
            }
            state.body.append(data)
            return false
        }
        if stop { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, result): (CheckedContinuation<Outcome, any Error>?, Result<Outcome, any Error>) = lock.withLock {
            let continuation = state.continuation
            state.continuation = nil
            let result: Result<Outcome, any Error>
            if state.tooLarge {
                result = .failure(Failure.tooLarge)
            } else if state.timedOut {
                result = .failure(URLError(.timedOut))
            } else if state.cancelled {
                result = .failure(CancellationError())
            } else if let error {
                result = .failure(error)
            } else if let refused = state.refusedRedirect {
                result = .failure(Failure.redirectedTo(refused))
            } else if let response = state.response {
                result = .success(
                    Outcome(response: response, body: state.body, redirectLimitReached: state.redirectLimitReached))
            } else {
                result = .failure(URLError(.badServerResponse))
            }
            return (continuation, result)
        }
        session.finishTasksAndInvalidate()
        continuation?.resume(with: result)
    }
}
