/// A one-hash Bloom filter over identifiers: `mayContain` is false for most identifiers
/// not in the set (about one in 64 or fewer slips through) and true for every one in it.
struct MembershipFilter {
    private var words: [UInt64]
    private let shift: UInt64

    init(_ identifiers: Set<Int64>) {
        var log2Bits = 12
        while log2Bits < 24 && (1 << log2Bits) < identifiers.count * 64 { log2Bits += 1 }
        shift = UInt64(64 - log2Bits)
        words = [UInt64](repeating: 0, count: (1 << log2Bits) / 64)
        for id in identifiers {
            let bit = Self.hash(id) >> shift
            words[Int(bit >> 6)] |= 1 << (bit & 63)
        }
    }

    @inline(__always)
    private static func hash(_ id: Int64) -> UInt64 { UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15 }

    @inline(__always)
    func mayContain(_ id: Int64) -> Bool {
        let bit = Self.hash(id) >> shift
        return words.withUnsafeBufferPointer { $0[Int(bit >> 6)] } & (1 << (bit & 63)) != 0
    }
}
