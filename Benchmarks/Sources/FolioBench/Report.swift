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
    /// Median and 99th percentile of the process's CPU time, in milliseconds.
    var cpuMedian: Double?
    var cpuP99: Double?
    var samples: Int?
    /// The id of the baseline row this one is compared with.
    var baseline: String?
    var baselineMedian: Double?
    var baselineCPUMedian: Double?
    /// `median / baselineMedian`.
    var ratio: Double?
    /// `baselineMedian / median`: how many times faster than the baseline.
    var speedup: Double?
    /// The same two in CPU time.
    var cpuRatio: Double?
    var cpuSpeedup: Double?
    var memory: MemoryFigures?
    /// The design's target this row checks (a clause of it where the row checks only that),
    /// verbatim from ``Targets``.
    var target: String?
    /// The "what" cell of the design's target row this row checks.
    var designRow: String?
    /// Whether the design's target is met in wall-clock time; `nil` where there is none or
    /// nothing was measured.
    var met: Bool?
    /// Whether it is met in CPU time (the process's own work, without waiting for a core).
    var metOnCPU: Bool?
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

    mutating func update(_ id: String, _ change: (inout ResultRow) -> Void) {
        if let i = results.firstIndex(where: { $0.id == id }) { change(&results[i]) }
        if let i = baselines.firstIndex(where: { $0.id == id }) { change(&baselines[i]) }
    }

    // MARK: Markdown

    var markdown: String { markdown(withMachine: true) }

    func markdown(withMachine: Bool) -> String {
        var text = """
            ## Folio benchmark: \(Self.count(rows)) rows (\(mode))

            \(withMachine ? machine.markdown + "\n" : "")- Release build; \(repetitions) repetitions of each large measurement, \(changesPerKind) changes of each kind; \
            medians, with the 99th percentile where there are enough samples. Ratios are against baselines measured in \
            the same run. Table generated in \(String(format: "%.1f", generationSeconds)) s; whole run \(String(format: "%.0f", totalSeconds)) s.

            | Folio | median | p99 | CPU median | memory | vs baseline (wall; CPU) | target | met (wall; CPU) |
            |---|---:|---:|---:|---|---|---|---|

            """
        for r in results {
            text +=
                "| \(r.what) | \(Self.ms(r.median)) | \(Self.ms(r.p99)) | \(Self.ms(r.cpuMedian)) | \(Self.memoryText(r.memory)) | \(comparison(r)) | \(r.target ?? "") | \(Self.metText(r.met, r.metOnCPU)) |\n"
        }
        text += """

            | baseline | median | p99 | CPU median | memory |
            |---|---:|---:|---:|---|

            """
        for r in baselines {
            text +=
                "| `\(r.id)`: \(r.what) | \(Self.ms(r.median)) | \(Self.ms(r.p99)) | \(Self.ms(r.cpuMedian)) | \(Self.memoryText(r.memory)) |\n"
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
        let cpu = r.baselineCPUMedian.map { "; CPU \(Self.ms($0))" } ?? ""
        if let speedup = r.speedup {
            let cpuFactor = r.cpuSpeedup.map { "; \(Self.factor($0))" } ?? ""
            return "\(Self.factor(speedup))\(cpuFactor) faster than `\(baseline)` (\(Self.ms(base))\(cpu))"
        }
        if let ratio = r.ratio {
            let cpuFactor = r.cpuRatio.map { "; \(Self.factor($0))" } ?? ""
            return "\(Self.factor(ratio))\(cpuFactor) `\(baseline)` (\(Self.ms(base))\(cpu))"
        }
        return ""
    }

    static func metText(_ met: Bool?, _ metOnCPU: Bool?) -> String {
        func text(_ value: Bool?) -> String {
            switch value {
            case true?: "yes"
            case false?: "**no**"
            case nil: "–"
            }
        }
        if met == nil && metOnCPU == nil { return "" }
        if metOnCPU == nil || met == metOnCPU { return text(met) }
        return "\(text(met)); \(text(metOnCPU))"
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

extension ResultRow {
    /// A row with no samples yet, showing `target` (or one clause of it).
    init(id: String, what: String, target: Target?, clause: Int? = nil) {
        self.init(id: id, what: what)
        if let target {
            self.target = clause.map { target.clause($0) } ?? target.text
            designRow = target.what
        }
    }
}

/// What a target is checked against: the wall-clock figures or the CPU ones.
struct Figures {
    var median: Double
    var p99: Double
    /// `median / baseline median`.
    var ratio: Double?
    /// `baseline median / median`.
    var speedup: Double?
}

extension ResultRow {
    /// A row from samples, compared with a baseline's samples when given, with `check`
    /// deciding whether the target is met (once on wall-clock figures, once on CPU ones).
    init(
        id: String, what: String, samples: Samples, withP99: Bool = false,
        baseline: (id: String, samples: Samples)? = nil, asSpeedup: Bool = false,
        memory: MemoryFigures? = nil, target: Target? = nil, clause: Int? = nil, check: ((Figures) -> Bool)? = nil,
        detail: String? = nil
    ) {
        self.init(id: id, what: what, target: target, clause: clause)
        self.samples = samples.count
        self.memory = memory
        self.detail = detail
        median = samples.median
        cpuMedian = samples.cpuMedian
        if withP99 {
            p99 = samples.p99
            cpuP99 = samples.cpuP99
        }
        var wall = Figures(median: samples.median, p99: samples.p99)
        var cpu = Figures(median: samples.cpuMedian, p99: samples.cpuP99)
        if let baseline {
            self.baseline = baseline.id
            baselineMedian = baseline.samples.median
            baselineCPUMedian = baseline.samples.cpuMedian
            if asSpeedup {
                speedup = baseline.samples.median / samples.median
                cpuSpeedup = baseline.samples.cpuMedian / samples.cpuMedian
            } else {
                ratio = samples.median / baseline.samples.median
                cpuRatio = samples.cpuMedian / baseline.samples.cpuMedian
            }
            wall.ratio = ratio
            wall.speedup = speedup
            cpu.ratio = cpuRatio
            cpu.speedup = cpuSpeedup
        }
        if let check {
            met = check(wall)
            metOnCPU = check(cpu)
        }
    }
}
