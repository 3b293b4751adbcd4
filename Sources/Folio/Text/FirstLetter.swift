/// The first letter of a text, defined on its bytes: the section value of
/// `SectionKey.firstLetter`, computed in SQL by ``SQLBuilder/section(firstLetterOf:)`` and
/// in Swift by ``prefix(of:)`` (tests check that both agree).
///
/// The first letter is the first `n` bytes of the text (all of it when it is shorter),
/// where `n` depends on the first byte alone:
///
/// | first byte | `n` |
/// |---|---|
/// | `00`–`7F` (ASCII, NUL included) | 1 |
/// | `80`–`C1` (a continuation byte, or the lead of an overlong form) | 1 |
/// | `C2`–`DF` | 2 |
/// | `E0`–`EF` | 3 |
/// | `F0`–`F4` | 4 |
/// | `F5`–`FF` (never in UTF-8) | 1 |
///
/// For valid UTF-8 this is the first Unicode scalar — `"é"` is `é`, `"e\u{301}"` is `e`,
/// `"👍🏽"` is `👍` — as SQLite's `substr(text, 1, 1)` gives it, but unlike `substr` it never
/// stops at a NUL (`"\0x"` is `"\0"`, not `""`) and is defined for any bytes another program
/// stored. Because `n` depends only on the first byte, no first letter is a proper prefix of
/// another one except a whole text shorter than `n` (which sorts before every longer text
/// with its bytes): texts with the same first letter are one run of the byte order, so
/// `.firstLetter` sections are contiguous under any sort by the text, whatever its bytes.
enum FirstLetter {
    /// The first bytes of a sequence that takes `length` bytes, by its first byte: the
    /// table above, as ranges `lowest...` up to the next entry's lowest byte.
    static let lengths: [(lowest: UInt8, length: Int)] = [
        (0x00, 1), (0xC2, 2), (0xE0, 3), (0xF0, 4), (0xF5, 1),
    ]

    /// How many bytes the first letter of a text starting with `lead` takes (at most).
    @inline(__always)
    static func length(lead: UInt8) -> Int {
        var result = 1
        for entry in lengths where lead >= entry.lowest { result = entry.length }
        return result
    }

    /// The first letter of text `bytes`: its first ``length(lead:)`` bytes; empty for
    /// empty text.
    static func prefix(of bytes: [UInt8]) -> [UInt8] {
        guard let lead = bytes.first else { return [] }
        return Array(bytes.prefix(length(lead: lead)))
    }

    /// The least byte string greater than every string that starts with `bytes`: `bytes`
    /// with its trailing `FF` bytes dropped and its last byte then increased; `nil` when
    /// `bytes` is empty or all `FF` (no string of bytes follows those).
    static func successor(of bytes: [UInt8]) -> [UInt8]? {
        var next = bytes
        while let last = next.last, last == 0xFF { next.removeLast() }
        guard let last = next.last else { return nil }
        next[next.count - 1] = last + 1
        return next
    }
}
