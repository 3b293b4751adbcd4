import Foundation

/// A key press, decoded from the bytes a terminal sends in raw mode.
enum Key: Equatable, Sendable {
    case character(Character)
    case up, down, left, right
    case pageUp, pageDown, home, end
    case enter, escape, backspace, tab, delete
    case control(Character)

    /// Decodes every key in a chunk of input (a read may return several).
    static func parse(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x1B:
                let (key, length) = escapeSequence(bytes, from: index)
                keys.append(key)
                index += length
                continue
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            case 0x09: keys.append(.tab)
            case 0x01...0x1A: keys.append(.control(Character(Unicode.Scalar(byte + 0x60))))
            case 0x00..<0x80: keys.append(.character(Character(Unicode.Scalar(byte))))
            default:
                // A UTF-8 sequence: take as many continuation bytes as its lead byte says.
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                let end = min(bytes.count, index + length)
                if let text = String(bytes: bytes[index..<end], encoding: .utf8), let character = text.first {
                    keys.append(.character(character))
                }
                index = end
                continue
            }
            index += 1
        }
        return keys
    }

    /// `ESC [ A`, `ESC O A`, `ESC [ 5 ~`…; a lone ESC is Escape.
    private static func escapeSequence(_ bytes: [UInt8], from start: Int) -> (Key, Int) {
        guard start + 1 < bytes.count else { return (.escape, 1) }
        let introducer = bytes[start + 1]
        guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else { return (.escape, 1) }
        var end = start + 2
        // Parameters and intermediates, then one final byte in 0x40...0x7E.
        while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) { end += 1 }
        guard end < bytes.count else { return (.escape, bytes.count - start) }
        let parameters = String(decoding: bytes[(start + 2)..<end], as: UTF8.self)
        let final = bytes[end]
        let length = end - start + 1
        let key: Key
        switch final {
        case UInt8(ascii: "A"): key = .up
        case UInt8(ascii: "B"): key = .down
        case UInt8(ascii: "C"): key = .right
        case UInt8(ascii: "D"): key = .left
        case UInt8(ascii: "H"): key = .home
        case UInt8(ascii: "F"): key = .end
        case UInt8(ascii: "~"):
            switch parameters.split(separator: ";").first ?? "" {
            case "1", "7": key = .home
            case "4", "8": key = .end
            case "3": key = .delete
            case "5": key = .pageUp
            case "6": key = .pageDown
            default: key = .escape
            }
        default: key = .escape
        }
        return (key, length)
    }
}
