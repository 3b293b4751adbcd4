import Foundation

/// Monotonic nanoseconds.
@inline(__always)
func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// CPU time of the whole process (every thread), in nanoseconds. On a machine shared
/// with other work, it is the steadier measure: it does not count time spent waiting for
/// a core.
@inline(__always)
func cpuNow() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// CPU time of the calling thread, in nanoseconds.
@inline(__always)
func threadCPUNow() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// A start point in wall-clock and CPU time.
struct Stopwatch {
    let wall = now()
    let cpu = cpuNow()

    /// Wall-clock and CPU time since the start.
    func lap() -> Lap { Lap(wall: now() - wall, cpu: cpuNow() - cpu) }
    /// Until `wallEnd`, a wall-clock reading taken earlier (CPU time until now).
    func lap(until wallEnd: UInt64) -> Lap { Lap(wall: wallEnd - wall, cpu: cpuNow() - cpu) }
}

struct Lap {
    var wall: UInt64
    var cpu: UInt64
}

/// Durations of repeated runs of one measurement, in wall-clock and CPU time.
struct Samples: Sendable {
    private(set) var wall: [UInt64] = []
    private(set) var cpu: [UInt64] = []

    mutating func add(_ lap: Lap) {
        wall.append(lap.wall)
        cpu.append(lap.cpu)
    }

    /// Times `body` once and records it.
    @discardableResult
    mutating func time<T>(_ body: () throws -> T) rethrows -> T {
        let watch = Stopwatch()
        let result = try body()
        add(watch.lap())
        return result
    }

    var count: Int { wall.count }

    /// Median wall-clock time in milliseconds.
    var median: Double { Self.median(wall) }
    /// 99th percentile (nearest rank) of the wall-clock time, in milliseconds.
    var p99: Double { Self.percentile(wall, 0.99) }
    /// Median CPU time in milliseconds.
    var cpuMedian: Double { Self.median(cpu) }
    var cpuP99: Double { Self.percentile(cpu, 0.99) }
    /// Total wall-clock time in milliseconds.
    var total: Double { Double(wall.reduce(0, +)) / 1e6 }

    static func median(_ values: [UInt64]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return .nan }
        let mid = s.count / 2
        let ns = s.count % 2 == 1 ? Double(s[mid]) : (Double(s[mid - 1]) + Double(s[mid])) / 2
        return ns / 1e6
    }

    static func percentile(_ values: [UInt64], _ p: Double) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return .nan }
        let rank = Int((p * Double(s.count)).rounded(.up))
        return Double(s[Swift.min(s.count, Swift.max(1, rank)) - 1]) / 1e6
    }
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
