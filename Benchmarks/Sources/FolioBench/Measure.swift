import Foundation

/// Monotonic nanoseconds.
@inline(__always)
func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Durations of repeated runs of one measurement.
struct Samples: Sendable {
    private(set) var nanoseconds: [UInt64] = []

    mutating func add(_ ns: UInt64) { nanoseconds.append(ns) }

    /// Times `body` once and records it.
    @discardableResult
    mutating func time<T>(_ body: () throws -> T) rethrows -> T {
        let start = now()
        let result = try body()
        add(now() - start)
        return result
    }

    var count: Int { nanoseconds.count }
    private var sorted: [UInt64] { nanoseconds.sorted() }

    /// Median in milliseconds (mean of the two middle values for an even count).
    var median: Double {
        let s = sorted
        guard !s.isEmpty else { return .nan }
        let mid = s.count / 2
        let ns = s.count % 2 == 1 ? Double(s[mid]) : (Double(s[mid - 1]) + Double(s[mid])) / 2
        return ns / 1e6
    }

    /// 99th percentile (nearest rank) in milliseconds.
    var p99: Double { percentile(0.99) }

    func percentile(_ p: Double) -> Double {
        let s = sorted
        guard !s.isEmpty else { return .nan }
        let rank = Int((p * Double(s.count)).rounded(.up))
        return Double(s[Swift.min(s.count, Swift.max(1, rank)) - 1]) / 1e6
    }

    var min: Double { Double(sorted.first ?? 0) / 1e6 }
    var max: Double { Double(sorted.last ?? 0) / 1e6 }
}

/// SplitMix64: a small, seeded, reproducible generator.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Progress lines on standard error, so standard output stays the report.
func log(_ message: String) {
    FileHandle.standardError.write(Data("[\(String(format: "%7.1f", Double(now() - processStart) / 1e9)) s] \(message)\n".utf8))
}

let processStart = now()
