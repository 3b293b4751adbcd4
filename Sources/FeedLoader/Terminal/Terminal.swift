import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The controlling terminal: raw mode through termios, its size, the alternate screen,
/// and writes that go out in one system call per frame. No curses.
@MainActor
final class Terminal {
    struct Size: Equatable, Sendable {
        var rows: Int
        var columns: Int
    }

    private var original = termios()
    private var isRaw = false

    /// Whether standard input and standard output are both terminals.
    nonisolated static var isInteractive: Bool {
        isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
    }

    /// The size of the terminal on `descriptor`, or `nil` when it is not one.
    nonisolated static func size(of descriptor: Int32 = STDOUT_FILENO) -> Size? {
        var size = winsize()
        #if canImport(Glibc)
        let result = ioctl(descriptor, UInt(TIOCGWINSZ), &size)
        #else
        let result = ioctl(descriptor, TIOCGWINSZ, &size)
        #endif
        guard result == 0, size.ws_row > 0, size.ws_col > 0 else { return nil }
        return Size(rows: Int(size.ws_row), columns: Int(size.ws_col))
    }

    var size: Size { Self.size() ?? Size(rows: 24, columns: 80) }

    /// Switches to raw mode and the alternate screen, and hides the cursor.
    func enterFullScreen() {
        guard !isRaw else { return }
        tcgetattr(STDIN_FILENO, &original)
        var raw = original
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
        isRaw = true
        write(ANSI.alternateScreen + ANSI.hideCursor + ANSI.clearScreen)
    }

    /// Restores the terminal as it was.
    func leaveFullScreen() {
        guard isRaw else { return }
        write(ANSI.reset + ANSI.showCursor + ANSI.mainScreen)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
        isRaw = false
    }

    /// Writes the text to standard output, all of it.
    nonisolated func write(_ text: String) {
        Self.write(text, to: STDOUT_FILENO)
    }

    nonisolated static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                #if canImport(Glibc)
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #else
                Darwin.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #endif
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            offset += written
        }
    }
}

/// The escape sequences FeedLoader uses (ECMA-48 / VT100).
enum ANSI {
    static let escape = "\u{1B}["
    static let alternateScreen = "\u{1B}[?1049h"
    static let mainScreen = "\u{1B}[?1049l"
    static let hideCursor = "\u{1B}[?25l"
    static let showCursor = "\u{1B}[?25h"
    static let clearScreen = "\u{1B}[2J"
    static let clearLine = "\u{1B}[2K"
    static let clearToEndOfLine = "\u{1B}[K"
    static let reset = "\u{1B}[0m"
    static let bold = "\u{1B}[1m"
    static let dim = "\u{1B}[2m"
    static let reverse = "\u{1B}[7m"
    static let underline = "\u{1B}[4m"
    static let headerStyle = "\u{1B}[1;36m"
    static let highlightStyle = "\u{1B}[30;43m"
    static let barStyle = "\u{1B}[30;47m"

    /// Moves the cursor to a 1-based row and column.
    static func moveTo(row: Int, column: Int = 1) -> String { "\u{1B}[\(row);\(column)H" }
}

/// Fitting text into terminal cells. Every character counts as one cell except
/// combining marks (zero) and East Asian wide characters and emoji (two).
enum TextLayout {
    static func width(of character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        let value = scalar.value
        if value < 0x300 { return value < 0x20 ? 0 : 1 }
        if scalar.properties.isEmojiPresentation { return 2 }
        switch value {
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    static func width(of text: String) -> Int { text.reduce(0) { $0 + width(of: $1) } }

    /// The text cut (with "…") or padded with spaces to exactly `columns` cells.
    static func fit(_ text: String, _ columns: Int) -> String {
        guard columns > 0 else { return "" }
        var result = ""
        var used = 0
        let total = width(of: text)
        if total <= columns {
            return text + String(repeating: " ", count: columns - total)
        }
        for character in text {
            let w = width(of: character)
            if used + w > columns - 1 { break }
            result.append(character)
            used += w
        }
        result.append("…")
        used += 1
        return result + String(repeating: " ", count: max(0, columns - used))
    }

    /// Word-wraps text to lines of at most `columns` cells.
    static func wrap(_ text: String, _ columns: Int) -> [String] {
        guard columns > 0 else { return [] }
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ") {
                let candidate = line.isEmpty ? String(word) : line + " " + word
                if width(of: candidate) <= columns {
                    line = candidate
                } else {
                    if !line.isEmpty { lines.append(line) }
                    line = width(of: String(word)) > columns ? String(fit(String(word), columns)) : String(word)
                }
            }
            lines.append(line)
        }
        return lines
    }
}
