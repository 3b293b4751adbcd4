import Foundation

/// Memory figures of one measurement.
struct MemoryFigures: Codable, Sendable {
    /// Resident-set growth retained after the operation (free heap trimmed before both readings).
    var residentDelta: Int?
    /// Allocator bytes in use, growth retained after the operation.
    var heapDelta: Int?
    /// Peak resident set during the operation minus the resident set before it.
    var peakDelta: Int?
    /// `residentDelta / rows`, where the design states a per-row target.
    var residentBytesPerRow: Double?
    /// `heapDelta / rows`.
    var heapBytesPerRow: Double?
}

/// One line of the report.
struct ResultRow: Codable, Sendable {
    var id: String
    var what: String
    /// Median in milliseconds.
    var median: Double?
    /// 99th percentile in milliseconds, where many samples were taken.
    var p99: Double?
    var samples: Int?
    /// The id of the baseline row this one is compared with.
    var baseline: String?
    var baselineMedian: Double?
    /// `median / baselineMedian`.
    var ratio: Double?
    /// `baselineMedian / median`: how many times faster than the baseline.
    var speedup: Double?
    var memory: MemoryFigures?
    var target: String?
    /// Whether the design's target is met; `nil` where there is none or nothing was measured.
    var met: Bool?
    var detail: String?
}

struct Report: Codable, Sendable {
    var machine: Machine
    var rows: Int
    var mode: String
    var repetitions: Int
    var changesPerKind: Int
    var generationSeconds: Double
    var totalSeconds: Double
    var baselines: [ResultRow] = []
    var results: [ResultRow] = []
    var notes: [String] = []

    func row(_ id: String) -> ResultRow? {
        (baselines + results).first { $0.id == id }
    }

    // MARK: Markdown

    var markdown: String { markdown(withMachine: true) }

    func markdown(withMachine: Bool) -> String {
        var text = """
            ## Folio benchmark: \(Self.count(rows)) rows (\(mode))

            \(withMachine ? machine.markdown + "\n" : "")- Release build; \(repetitions) repetitions of each large measurement, \(changesPerKind) changes of each kind; \
            medians, with the 99th percentile where there are enough samples. Ratios are against baselines measured in \
            the same run. Table generated in \(String(format: "%.1f", generationSeconds)) s; whole run \(String(format: "%.0f", totalSeconds)) s.

            | Folio | median | p99 | memory | vs baseline | target | met |
            |---|---:|---:|---|---|---|---|

            """
        for r in results {
            text += "| \(r.what) | \(Self.ms(r.median)) | \(Self.ms(r.p99)) | \(Self.memoryText(r.memory)) | \(comparison(r)) | \(r.target ?? "") | \(Self.metText(r.met)) |\n"
        }
        text += """

            | baseline | median | p99 | memory |
            |---|---:|---:|---|

            """
        for r in baselines {
            text += "| `\(r.id)`: \(r.what) | \(Self.ms(r.median)) | \(Self.ms(r.p99)) | \(Self.memoryText(r.memory)) |\n"
        }
        let details = results.filter { $0.detail != nil }
        if !details.isEmpty || !notes.isEmpty {
            text += "\nNotes:\n"
            for r in details { text += "- \(r.what): \(r.detail!)\n" }
            for note in notes { text += "- \(note)\n" }
        }
        return text
    }

    private func comparison(_ r: ResultRow) -> String {
        guard let baseline = r.baseline, let base = r.baselineMedian else { return "" }
        if let speedup = r.speedup { return "\(Self.factor(speedup)) faster than `\(baseline)` (\(Self.ms(base)))" }
        if let ratio = r.ratio { return "\(Self.factor(ratio)) `\(baseline)` (\(Self.ms(base)))" }
        return ""
    }

    static func metText(_ met: Bool?) -> String {
        switch met {
        case true?: "yes"
        case false?: "**no**"
        case nil: ""
        }
    }

    static func ms(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "" }
        if value >= 1_000 { return String(format: "%.2f s", value / 1_000) }
        if value >= 100 { return String(format: "%.0f ms", value) }
        if value >= 10 { return String(format: "%.1f ms", value) }
        if value >= 1 { return String(format: "%.2f ms", value) }
        return String(format: "%.0f µs", value * 1_000)
    }

    static func factor(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f ×", value) : String(format: "%.2f ×", value)
    }

    static func bytes(_ value: Int) -> String {
        let v = Double(value)
        if abs(v) >= 1_048_576 { return String(format: "%.1f MB", v / 1_048_576) }
        if abs(v) >= 1_024 { return String(format: "%.0f KB", v / 1_024) }
        return "\(value) B"
    }

    static func memoryText(_ m: MemoryFigures?) -> String {
        guard let m else { return "" }
        var parts: [String] = []
        if let perRow = m.residentBytesPerRow {
            var part = String(format: "%.1f B/row", perRow)
            if let heap = m.heapBytesPerRow { part += String(format: " (heap %.1f B/row)", heap) }
            parts.append(part)
        } else if let delta = m.residentDelta {
            parts.append("retained \(bytes(delta))")
        }
        if let peak = m.peakDelta { parts.append("peak +\(bytes(peak))") }
        return parts.joined(separator: ", ")
    }

    static func count(_ n: Int) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.groupingSeparator = ","
        formatter.usesGroupingSeparator = true
        return formatter.string(from: NSNumber(value: n)) ?? "\(n)"
    }
}
