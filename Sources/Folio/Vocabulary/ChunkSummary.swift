/// A Bloom filter of one chunk of an ``IdentifierList``, blocked by word: an identifier's
/// four bits are in one 64-bit word of 1,024 (16 bits per identifier of a full chunk,
/// 8 KiB), so that testing it costs one memory access per chunk. A search for one
/// identifier tests every chunk's summary, and a tracker's summaries — 2 MiB for a
/// million-row list — are seldom in the processor's caches at a commit: with three bits in
/// three words, the three cache misses per chunk were most of a one-row commit's search.
/// An identifier the chunk does not hold passes for about one chunk in 190 (one in 30 at
/// twice the capacity), as with three bits anywhere. It only ever gains bits, until it is
/// rebuilt.
struct ChunkSummary: Sendable {
    /// Where an identifier's bits are: one word, and the bits within it.
    struct Bits: Sendable {
        var word: Int
        var mask: UInt64
    }

    static let log2Words = 10
    private var words: [UInt64]
    /// Identifiers added since it was built; past ``IdentifierList/chunkCapacity``, the
    /// next addition rebuilds it from the chunk (the bits of removed identifiers go).
    private var added = 0

    init(_ chunk: [Int64]) {
        words = [UInt64](repeating: 0, count: 1 << Self.log2Words)
        words.withUnsafeMutableBufferPointer { words in
            for id in chunk {
                let bits = Self.bits(of: id)
                words[bits.word] |= bits.mask
            }
        }
    }

    /// The word and the four bits of `id`: slices of one 64-bit mix of it (the word from
    /// the top bits, each bit's number from six of the lowest 24).
    @inline(__always)
    static func bits(of id: Int64) -> Bits {
        // The finalizer of SplitMix64: every bit of the result depends on every bit of `id`.
        var h = UInt64(bitPattern: id) &+ 0x9E37_79B9_7F4A_7C15
        h = (h ^ (h >> 30)) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ (h >> 27)) &* 0x94D0_49BB_1331_11EB
        h ^= h >> 31
        let mask: UInt64 =
            (1 << (h & 63)) | (1 << ((h >> 6) & 63)) | (1 << ((h >> 12) & 63)) | (1 << ((h >> 18) & 63))
        return Bits(word: Int(h >> UInt64(64 - log2Words)), mask: mask)
    }

    @inline(__always)
    func mayContain(_ bits: Bits) -> Bool {
        words.withUnsafeBufferPointer { $0[bits.word] } & bits.mask == bits.mask
    }

    /// Adds `id`, now in `chunk`.
    mutating func add(_ id: Int64, chunk: [Int64]) {
        added += 1
        if added > IdentifierList.chunkCapacity {
            self = ChunkSummary(chunk)
            return
        }
        let bits = Self.bits(of: id)
        words.withUnsafeMutableBufferPointer { $0[bits.word] |= bits.mask }
    }
}
