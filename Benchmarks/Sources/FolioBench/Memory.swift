import Foundation
import MallocStats

/// The process's memory, from /proc/self (Linux) and glibc's allocator statistics.
enum Memory {
    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// The resident set now (`/proc/self/statm`, second field), in bytes.
    static func resident() -> Int {
        guard let text = readProcFile("/proc/self/statm") else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * pageSize
    }

    /// The peak resident set (`VmHWM` in `/proc/self/status`), in bytes.
    static func peakResident() -> Int {
        guard let text = readProcFile("/proc/self/status") else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let digits = line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first
            return (digits.flatMap { Int($0) } ?? 0) * 1024
        }
        return 0
    }

    /// Resets the peak resident set to the current one (`echo 5 > /proc/self/clear_refs`).
    @discardableResult
    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    /// Bytes the allocator has handed out and not taken back.
    static func heapInUse() -> Int { Int(folio_bench_heap_in_use()) }

    /// Gives free heap pages back to the system, so the resident set shows what is live.
    static func trim() { folio_bench_trim() }

    /// A settled reading: free memory trimmed first.
    static func settled() -> (resident: Int, heap: Int) {
        trim()
        return (resident(), heapInUse())
    }

    static func readProcFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Samples the resident set during a long loop, for a peak where `VmHWM` cannot be reset.
struct PeakSampler {
    private(set) var peak = 0
    private let usesKernelPeak: Bool

    init() {
        usesKernelPeak = Memory.resetPeak()
        peak = Memory.resident()
    }

    mutating func sample() {
        let r = Memory.resident()
        if r > peak { peak = r }
    }

    /// The peak since `init`.
    mutating func finish() -> Int {
        sample()
        if usesKernelPeak { peak = Swift.max(peak, Memory.peakResident()) }
        return peak
    }
}
