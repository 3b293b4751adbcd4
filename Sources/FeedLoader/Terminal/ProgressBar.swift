import Foundation

/// A one-line progress bar on standard error: redrawn in place on a terminal, a line
/// every tenth of the way otherwise (so logs stay short).
///
///     Generating  [██████████████░░░░░░░░░░░░░░░░]  47%  470,000 / 1,000,000  3.1s
final class ProgressBar {
    let label: String
    private(set) var total: Int
    private let isTerminal: Bool
    private let started = Date()
    private var lastDraw = Date.distantPast
    private var lastDecile = -1
    private var finished = false

    init(_ label: String, total: Int) {
        self.label = label
        self.total = total
        self.isTerminal = isatty(STDERR_FILENO) == 1
    }

    /// Sets the total, when it becomes known.
    func setTotal(_ total: Int) { self.total = total }

    /// Shows `completed` of the total (redraws at most 20 times a second).
    func update(_ completed: Int, force: Bool = false) {
        guard !finished else { return }
        if isTerminal {
            let now = Date()
            guard force || completed >= total || now.timeIntervalSince(lastDraw) >= 0.05 else { return }
            lastDraw = now
            Terminal.write("\r" + line(completed) + ANSI.clearToEndOfLine, to: STDERR_FILENO)
        } else {
            let decile = total > 0 ? completed * 10 / total : 10
            guard decile != lastDecile else { return }
            lastDecile = decile
            Terminal.write(line(completed) + "\n", to: STDERR_FILENO)
        }
    }

    /// Draws the final state and ends the line.
    func finish(_ completed: Int, note: String? = nil) {
        guard !finished else { return }
        update(completed, force: true)
        finished = true
        if isTerminal {
            Terminal.write((note.map { "  " + $0 } ?? "") + "\n", to: STDERR_FILENO)
        } else if let note {
            Terminal.write(note + "\n", to: STDERR_FILENO)
        }
    }

    /// Abandons the bar, ending its line.
    func abandon(_ note: String) {
        guard !finished else { return }
        finished = true
        if isTerminal && lastDraw != .distantPast { Terminal.write("\r" + ANSI.clearToEndOfLine, to: STDERR_FILENO) }
        if !note.isEmpty { Terminal.write(note + "\n", to: STDERR_FILENO) }
    }

    func line(_ completed: Int, width: Int = 30) -> String {
        let fraction = total > 0 ? min(1, Double(completed) / Double(total)) : 1
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let percent = String(format: "%3d%%", Int((fraction * 100).rounded(.down)))
        let elapsed = String(format: "%.1fs", Date().timeIntervalSince(started))
        return "\(label)  [\(bar)] \(percent)  \(completed.formatted()) / \(total.formatted())  \(elapsed)"
    }
}
