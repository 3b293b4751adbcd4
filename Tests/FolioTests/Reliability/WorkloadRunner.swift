import Foundation
@testable import Folio

/// What a child process is asked to run: a seed's generated workload, or a given list of
/// operations (a replay while shrinking).
struct WorkloadRequest: Codable {
    var seed: UInt64
    var steps: Int
    var fileStore: Bool
    var ops: [Operation]?
    /// Instead of a workload: read a record through a controller inside `store.write`.
    var misuse: Bool? = nil

    var profile: WorkloadProfile { WorkloadProfile.of(seed: seed) }
}

/// What a run found.
struct WorkloadOutcome: Codable {
    var stats: [String: Int] = [:]
    var failure: WorkloadFailure?
    /// The operations run, the failing one last.
    var ops: [Operation] = []
    var seconds: Double = 0
    var fileStore = true
}

enum WorkloadRunner {
    /// Runs a request in this process.
    @MainActor
    static func run(_ request: WorkloadRequest, journal: ((Operation) -> Void)? = nil) async -> WorkloadOutcome {
        let start = ContinuousClock.now
        var outcome = WorkloadOutcome(fileStore: request.fileStore)
        let workload: Workload
        do {
            workload = try Workload(fileStore: request.fileStore)
        } catch {
            outcome.failure = WorkloadFailure(kind: "store", message: "\(error)")
            return outcome
        }
        workload.journal = journal
        let profile = request.profile
        switch profile {
        case .chunks, .bulk:
            workload.deepEvery = 20
            workload.recordEvery = 5
        case .huge:
            workload.deepEvery = 7
            workload.recordEvery = 3
        case .extremes, .races: break
        }
        if let every = environmentInt("FOLIO_DEEP_EVERY") { workload.deepEvery = max(1, every) }
        do {
            if let ops = request.ops {
                for op in ops { try await workload.perform(op) }
            } else {
                var generator = WorkloadGenerator(seed: request.seed, profile: profile, fileStore: request.fileStore)
                for op in generator.start() { try await workload.perform(op) }
                var done = 0
                while done < request.steps {
                    let op = generator.next(rows: workload.rows, slots: workload.slots.map { $0?.spec })
                    try await workload.perform(op)
                    done += 1
                }
            }
            try await workload.checkStreams()
            try workload.checkFoldedKeys()
        } catch let failure as WorkloadFailure {
            outcome.failure = failure
        } catch {
            outcome.failure = WorkloadFailure(kind: "threw", message: "\(error)", step: workload.step)
        }
        outcome.ops = workload.executed
        outcome.stats = workload.stats.values
        outcome.seconds = (ContinuousClock.now - start) / .seconds(1)
        return outcome
    }

    static func defaultFileStore(seed: UInt64) -> Bool {
        // A quarter of the extremes seeds use an in-memory store (one connection).
        !(WorkloadProfile.of(seed: seed) == .extremes && seed % 4 == 0)
    }
}

// MARK: Child processes

/// Runs workloads in child processes (the test binary itself, filtered to
/// `RandomizedWorkloadTests/workloadChild`), so that a trap (`Fatal error: Index out of
/// range`) is a reported failure with its operations, not the end of the test run.
enum WorkloadChild {
    static let requestVariable = "FOLIO_WORKLOAD_CHILD"

    static var requestPath: String? { ProcessInfo.processInfo.environment[requestVariable] }

    /// The test binary, when children can be used (Linux; not with FOLIO_IN_PROCESS=1).
    static var executable: String? {
        if ProcessInfo.processInfo.environment["FOLIO_IN_PROCESS"] == "1" { return nil }
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
            path.hasSuffix(".xctest")
        else { return nil }
        return path
    }

    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("folio-workloads-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// Runs `request` in a child process, or in this one when children are not available.
    /// Shrinking replays use slots of their own, so that they do not wait for every seed
    /// still queued.
    static func run(_ request: WorkloadRequest, timeout: Duration, shrinking: Bool = false) async -> WorkloadOutcome {
        guard let executable else { return await WorkloadRunner.run(request) }
        let slots = shrinking ? ChildSlots.shrinking : ChildSlots.shared
        await slots.acquire()
        defer { Task { await slots.release() } }
        let name = "\(request.seed)-\(UUID().uuidString.prefix(8))"
        let base = directory.appendingPathComponent(name)
        let requestURL = base.appendingPathExtension("request.json")
        let resultURL = base.appendingPathExtension("result.json")
        let journalURL = base.appendingPathExtension("journal")
        let outputURL = base.appendingPathExtension("output.txt")
        defer {
            for url in [requestURL, resultURL, journalURL, outputURL] { try? FileManager.default.removeItem(at: url) }
        }
        let start = ContinuousClock.now
        do {
            try JSONEncoder().encode(request).write(to: requestURL)
            var environment = ProcessInfo.processInfo.environment
            environment[requestVariable] = requestURL.path
            let process = try ChildProcess(
                executable, ["--testing-library", "swift-testing", "--filter", "RandomizedWorkloadTests/workloadChild"],
                environment: environment, output: outputURL.path, errors: outputURL.path)
            let deadline = ContinuousClock.now + timeout
            var timedOut = false
            while process.isRunning {
                if ContinuousClock.now > deadline {
                    timedOut = true
                    process.kill(SIGKILL)
                    break
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
            let ended = process.wait()
            if let data = try? Data(contentsOf: resultURL),
                let outcome = try? JSONDecoder().decode(WorkloadOutcome.self, from: data)
            {
                return outcome
            }
            // The child died: take the operations from its journal and the reason from its output.
            var outcome = WorkloadOutcome(fileStore: request.fileStore)
            let journal = (try? String(contentsOf: journalURL, encoding: .utf8)) ?? ""
            outcome.ops = journal.split(separator: "\n").compactMap {
                try? JSONDecoder().decode(Operation.self, from: Data($0.utf8))
            }
            let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").map(String.init)
            let fatal = lines.first {
                $0.contains("Fatal error") || $0.contains("Swift runtime failure") || $0.contains("Precondition failed")
            }
            let kind: String
            if timedOut {
                kind = "hang"
            } else if let fatal {
                // "…/IdentifierList.swift:45: Fatal error: Index out of range" → "crash: Index out of range";
                // "*** Swift runtime failure: arithmetic overflow ***" → "crash: arithmetic overflow".
                let reason =
                    (fatal.components(separatedBy: "rror:").count > 1 ? fatal.components(separatedBy: "rror:").last! : fatal)
                    .replacingOccurrences(of: "*** Swift runtime failure:", with: "").replacingOccurrences(of: "***", with: "")
                kind = "crash: " + reason.filter { !$0.isNumber }.trimmingCharacters(in: .whitespaces).prefix(80)
            } else {
                kind = "crash (\(ended))"
            }
            // The fatal message and the top of the crashed thread's stack.
            var detail = timedOut ? "no answer after \(timeout)" : "the child process died (\(ended))"
            if let fatal { detail += "\n  " + fatal.trimmingCharacters(in: .whitespaces) }
            if let crashed = lines.firstIndex(where: { $0.contains("crashed:") }) {
                let frames = lines[(crashed + 1)...].filter {
                    $0.contains(" in ") && !$0.contains("[system]") && !$0.contains("libswiftCore") && !$0.contains("libc.so")
                }.prefix(8)
                detail +=
                    "\n  " + frames.map { String($0.trimmingCharacters(in: .whitespaces).prefix(220)) }.joined(separator: "\n  ")
            } else {
                detail += "\n  " + lines.suffix(12).joined(separator: "\n  ")
            }
            outcome.failure = WorkloadFailure(kind: kind, message: detail, step: outcome.ops.count)
            outcome.seconds = (ContinuousClock.now - start) / .seconds(1)
            return outcome
        } catch {
            return WorkloadOutcome(failure: WorkloadFailure(kind: "child", message: "could not run a child process: \(error)"))
        }
    }

    /// In the child: run the request, writing each operation to the journal before it runs.
    @MainActor
    static func serve(_ path: String) async throws {
        let request = try JSONDecoder().decode(WorkloadRequest.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        if request.misuse == true {
            // Expected to stop with a message naming the misuse.
            let store = try Store.temporary(records: [Item.self])
            try writeSync(store) { tx in
                for i in 0..<3 {
                    var item = Item()
                    item.key = "k\(i)"
                    try tx.insert(&item)
                }
            }
            let controller = FetchedResultsController(
                RecordRequest<Item>(sortBy: [SortDescriptor(\.rank)]), store: store)
            try fetchSync(controller)
            let record = try writeSync(store) { _ in controller.object(at: IndexPath(item: 0, section: 0)) }
            print("object(at:) inside store.write returned \(record.map(\.summary) ?? "nil")")
            var outcome = WorkloadOutcome(fileStore: true)
            if record?.key != "k0" {
                outcome.failure = WorkloadFailure(
                    kind: "object(at:) inside a write",
                    message: "object(at:) inside store.write returned \(record.map(\.summary) ?? "nil"), not the stored record")
            }
            let base = String(path.dropLast(".request.json".count))
            try JSONEncoder().encode(outcome).write(to: URL(fileURLWithPath: base + ".result.json"))
            return
        }
        let base = String(path.dropLast(".request.json".count))
        _ = FileManager.default.createFile(atPath: base + ".journal", contents: nil)
        let journal = try FileHandle(forWritingTo: URL(fileURLWithPath: base + ".journal"))
        let encoder = JSONEncoder()
        let outcome = await WorkloadRunner.run(request) { op in
            if var line = try? encoder.encode(op) {
                line.append(0x0A)
                journal.write(line)  // one write(2) per operation: it survives a trap
            }
        }
        try journal.close()
        try JSONEncoder().encode(outcome).write(to: URL(fileURLWithPath: base + ".result.json"))
    }
}

/// At most this many child processes at once (the machine's cores, or FOLIO_JOBS).
actor ChildSlots {
    static let shared = ChildSlots(limit: environmentInt("FOLIO_JOBS") ?? max(1, ProcessInfo.processInfo.activeProcessorCount))
    static let shrinking = ChildSlots(limit: 1)
    private let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { self.limit = limit }

    func acquire() async {
        if running < limit {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

// MARK: Shrinking

/// Delta debugging over a failing run's operations: replays subsets (in child processes)
/// until no single operation or write can be removed without losing the failure's kind.
enum WorkloadShrinker {
    struct Result {
        var ops: [Operation]
        var failure: WorkloadFailure
        var runs: Int
        var seconds: Double
        var complete: Bool
    }

    static func shrink(_ outcome: WorkloadOutcome, seed: UInt64, budget: Duration) async -> Result? {
        guard var failure = outcome.failure, !outcome.ops.isEmpty else { return nil }
        let kind = failure.kind
        let start = ContinuousClock.now
        var runs = 0
        var complete = true
        func fails(_ ops: [Operation]) async -> WorkloadFailure? {
            if ContinuousClock.now - start > budget {
                complete = false
                return nil
            }
            runs += 1
            let request = WorkloadRequest(seed: seed, steps: 0, fileStore: outcome.fileStore, ops: ops)
            let result = await WorkloadChild.run(request, timeout: .seconds(60), shrinking: true)
            guard let f = result.failure, f.kind == kind else { return nil }
            return f
        }
        var ops = outcome.ops
        // Does the recorded run replay at all?
        guard let first = await fails(ops) else { return nil }
        failure = first
        // Drop everything after the failing step.
        if failure.step > 0 && failure.step < ops.count, let f = await fails(Array(ops.prefix(failure.step))) {
            ops = Array(ops.prefix(failure.step))
            failure = f
        }
        // ddmin over the operations.
        var n = 2
        while ops.count >= 2 {
            let chunk = Int((Double(ops.count) / Double(n)).rounded(.up))
            var reduced = false
            var i = 0
            while i < ops.count {
                let candidate = Array(ops[..<i] + ops[min(ops.count, i + chunk)...])
                if !candidate.isEmpty, let f = await fails(candidate) {
                    ops = candidate
                    failure = f
                    reduced = true
                    n = max(n - 1, 2)
                } else {
                    i += chunk
                }
            }
            if !reduced {
                if n >= ops.count { break }
                n = min(ops.count, n * 2)
            }
            if !complete { break }
        }
        // Then the writes inside each operation, one at a time, then halves.
        var index = 0
        while index < ops.count && complete {
            var lists = ops[index].writeLists
            for l in lists.indices {
                var w = 0
                while w < lists[l].count {
                    var candidateLists = lists
                    candidateLists[l].remove(at: w)
                    var candidate = ops
                    candidate[index] = ops[index].with(writeLists: candidateLists)
                    if let f = await fails(candidate) {
                        lists = candidateLists
                        ops = candidate
                        failure = f
                    } else {
                        w += 1
                    }
                }
            }
            index += 1
        }
        // Then simpler controllers: no window, no predicate, no cache, no stream…
        index = 0
        while index < ops.count && complete {
            var improved = true
            while improved && complete {
                improved = false
                for simpler in ops[index].simplerVariants() {
                    var candidate = ops
                    candidate[index] = simpler
                    if let f = await fails(candidate) {
                        ops = candidate
                        failure = f
                        improved = true
                        break
                    }
                }
            }
            index += 1
        }
        return Result(
            ops: ops, failure: failure, runs: runs, seconds: (ContinuousClock.now - start) / .seconds(1), complete: complete)
    }

    /// The reproduction as readable steps.
    static func describe(_ ops: [Operation], fileStore: Bool) -> String {
        var text = "  store: \(fileStore ? "Store.temporary (WAL file)" : "Store.inMemory")\n"
        for (i, op) in ops.enumerated() {
            text += "  \(i + 1). \(op)\n"
        }
        return text
    }

    /// The reproduction as Swift (writes and controllers; races and the other connection as comments).
    static func swiftCode(_ ops: [Operation], fileStore: Bool) -> String {
        var code = "let store = try Store.\(fileStore ? "temporary" : "inMemory")(records: [Item.self])\n"
        for op in ops {
            switch op {
            case .create(let slot, let spec):
                code += "// controller \(slot)\n" + spec.swiftCode + "\ntry controller.performFetch()\n"
            case .write(let writes):
                code += "try store.write { tx in\n" + writes.map { "    do { " + $0.swiftCode + " }\n" }.joined() + "}\n"
            default:
                code += "// " + op.description.replacingOccurrences(of: "\n", with: "\n// ") + "\n"
            }
        }
        return code
    }
}

extension ControllerSpec {
    /// The same controller with one complication removed, for each there is.
    var simplerVariants: [ControllerSpec] {
        var result: [ControllerSpec] = []
        func variant(_ change: (inout ControllerSpec) -> Void) {
            var s = self
            change(&s)
            if s != self { result.append(s) }
        }
        variant {
            $0.limit = nil
            $0.offset = nil
        }
        variant { $0.limit = nil }
        variant { $0.offset = nil }
        variant { $0.predicate = 0 }
        variant { $0.cacheName = nil }
        variant { $0.stream = .none }
        variant { $0.batchSize = 0 }
        variant { $0.asyncFetch = false }
        variant { $0.delegateFirst = true }
        variant { $0.sort = 0 }
        return result
    }
}

extension Operation {
    /// Variants with one controller made simpler (see ``ControllerSpec/simplerVariants``).
    func simplerVariants() -> [Operation] {
        switch self {
        case .create(let slot, let spec): spec.simplerVariants.map { .create(slot: slot, spec: $0) }
        case .setRequest(let slot, let spec, let w): spec.simplerVariants.map { .setRequest(slot: slot, spec: $0, writers: w) }
        case .replace(let slot, let spec, let w): spec.simplerVariants.map { .replace(slot: slot, spec: $0, writers: w) }
        default: []
        }
    }
}
