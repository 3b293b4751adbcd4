import Foundation

// Finding identifiers in a list: with the chunk summaries, or by one pass over the chunks.
extension IdentifierList {
    /// How many identifiers ``positions(of:)`` looks for with the chunk summaries (each
    /// tested against every chunk's summary); past it, one pass over every identifier is cheaper.
    private var summarySearchLimit: Int { Swift.max(8, chunks.count / 4) }

    /// The index of each of `identifiers` in the list and the number of chunks searched for
    /// them: with summaries, only the chunks whose summary may hold one.
    func positionsSearch(of identifiers: Set<Int64>) -> (found: [Int64: Int], chunksSearched: Int) {
        guard let summaries, !identifiers.isEmpty, identifiers.count <= summarySearchLimit else {
            return (positions(scanning: identifiers), identifiers.isEmpty ? 0 : chunks.count)
        }
        var found: [Int64: Int] = [:]
        var searched = 0
        // The identifiers not found yet, with their summary bits.
        var pending = identifiers.map { (id: $0, bits: ChunkSummary.bits(of: $0)) }
        summaries.forEachSegment { summaries, first in
            for s in summaries.indices {
                guard !pending.isEmpty else { return false }
                guard pending.contains(where: { summaries[s].mayContain($0.bits) }) else { continue }
                searched += 1
                let c = first + s
                chunks[c].withUnsafeBufferPointer { buffer in
                    var k = 0
                    while k < pending.count {
                        let wanted = pending[k]
                        if summaries[s].mayContain(wanted.bits), let o = Self.firstIndex(of: wanted.id, in: buffer) {
                            found[wanted.id] = starts[c] + o
                            pending.swapAt(k, pending.count - 1)
                            pending.removeLast()
                        } else {
                            k += 1
                        }
                    }
                }
            }
            return !pending.isEmpty
        }
        return (found, searched)
    }

    /// Where `id` is in `buffer`: first a branch-free count the optimizer vectorizes (a
    /// chunk a summary let through wrongly, about one in 190, holds none), then the search.
    @inline(__always)
    private static func firstIndex(of id: Int64, in buffer: UnsafeBufferPointer<Int64>) -> Int? {
        var hits = 0
        for value in buffer { hits &+= value == id ? 1 : 0 }
        return hits == 0 ? nil : buffer.firstIndex(of: id)
    }

    /// The index of each of `identifiers` in the list: with chunk summaries, a search of
    /// the chunks that may hold them; otherwise one pass over the chunks.
    func positions(of identifiers: Set<Int64>) -> [Int64: Int] {
        positionsSearch(of: identifiers).found
    }

    /// ``positions(of:)`` by one pass over the chunks.
    ///
    /// For a few identifiers each chunk is first tested with a branch-free loop the
    /// optimizer vectorizes, and searched only when it holds one of them.
    private func positions(scanning identifiers: Set<Int64>) -> [Int64: Int] {
        var found: [Int64: Int] = [:]
        guard !identifiers.isEmpty else { return found }
        if identifiers.count <= 8 {
            let wanted = Array(identifiers)
            for (c, chunk) in chunks.enumerated() {
                chunk.withUnsafeBufferPointer { buffer in
                    for w in wanted where found[w] == nil {
                        var hits = 0
                        for value in buffer { hits &+= value == w ? 1 : 0 }
                        if hits > 0, let o = buffer.firstIndex(of: w) { found[w] = starts[c] + o }
                    }
                }
                if found.count == identifiers.count { break }
            }
        } else {
            // A bit per hashed identifier, 64 bits or more per wanted one: almost every
            // element is rejected by one bit test, and only the rest is looked up in the set.
            let filter = MembershipFilter(identifiers)
            found.reserveCapacity(identifiers.count)
            for (c, chunk) in chunks.enumerated() {
                chunk.withUnsafeBufferPointer { buffer in
                    for o in buffer.indices where filter.mayContain(buffer[o]) && identifiers.contains(buffer[o]) {
                        found[buffer[o]] = starts[c] + o
                    }
                }
                if found.count == identifiers.count { break }
            }
        }
        return found
    }

    /// The largest identifier. O(n).
    var maximum: Int64 {
        var result = Int64.min
        for chunk in chunks {
            chunk.withUnsafeBufferPointer { buffer in
                for value in buffer { result = Swift.max(result, value) }
            }
        }
        return result
    }
}
