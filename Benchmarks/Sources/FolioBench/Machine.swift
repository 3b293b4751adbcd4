import Foundation
import GRDBSQLite

/// What the benchmark ran on, printed at the top of every report.
struct Machine: Codable, Sendable {
    var cpus: Int
    var cpuModel: String
    var memory: String
    var swift: String
    var sqlite: String
    var grdb: String
    var os: String
    var loadAverageAtStart: String
    var date: String

    static func describe() -> Machine {
        let cpuinfo = Memory.readProcFile("/proc/cpuinfo") ?? ""
        let model =
            cpuinfo.split(separator: "\n")
            .first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let meminfo = Memory.readProcFile("/proc/meminfo") ?? ""
        let totalKB =
            meminfo.split(separator: "\n")
            .first { $0.hasPrefix("MemTotal:") }
            .flatMap { $0.split(separator: " ").dropFirst().first }
            .flatMap { Int($0) } ?? 0
        let load = (Memory.readProcFile("/proc/loadavg") ?? "")
            .split(separator: " ").prefix(3).joined(separator: " ")
        let os =
            (Memory.readProcFile("/etc/os-release") ?? "")
            .split(separator: "\n")
            .first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst(12).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? "Linux"
        var kernel = utsname()
        uname(&kernel)
        let release = withUnsafeBytes(of: &kernel.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let formatter = ISO8601DateFormatter()
        return Machine(
            cpus: ProcessInfo.processInfo.activeProcessorCount,
            cpuModel: model,
            memory: String(format: "%.1f GiB", Double(totalKB) / 1_048_576),
            swift: swiftVersion(),
            sqlite: String(cString: sqlite3_libversion()),
            grdb: "7.10.0",
            os: "\(os), kernel \(release)",
            loadAverageAtStart: load,
            date: formatter.string(from: Date()))
    }

    /// The first line of `swift --version` (the toolchain on PATH, the one that built us).
    private static func swiftVersion() -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("folio-bench-swift-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        if let child = try? Child("/usr/bin/env", ["swift", "--version"], output: output.path), child.wait() == 0,
            let data = try? Data(contentsOf: output),
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init), !line.isEmpty
        {
            return line
        }
        #if swift(>=6.3)
        return "Swift 6.3 or later (compiler)"
        #else
        return "Swift (unknown)"
        #endif
    }

    var markdown: String {
        """
        - Machine: \(cpus) cores (\(cpuModel)), \(memory) of memory; \(os)
        - \(swift); SQLite \(sqlite); GRDB \(grdb)
        - Load average at start: \(loadAverageAtStart) (the machine is shared; see the note on noise); \(date)
        """
    }
}
