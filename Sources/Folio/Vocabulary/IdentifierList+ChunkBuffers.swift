import Foundation

// The buffer work of the list's edits: chunks copied with one element more or less,
// merged, cut; pure functions of the chunks, which the edits in `IdentifierList.swift` call.
extension IdentifierList {
    /// Free room a commit's removals leave in each chunk they rebuild, beyond the rows it had.
    static let insertionSlack = 16

    /// Writes the `n` identifiers at `source` with `elements` merged in to `destination`
    /// (room for `n + elements.count`), `elements[m]` after `positions[m] - m - start` of
    /// them: each run of identifiers is moved once, from the end, so `destination` may be
    /// `source` itself (a buffer grown in place).
    static func merge(
        _ source: UnsafePointer<Int64>, count n: Int, into destination: UnsafeMutablePointer<Int64>,
        _ elements: ArraySlice<Int64>, positions: ArraySlice<Int>, start: Int
    ) {
        var end = n, write = n + elements.count
        for m in elements.indices.reversed() {
            let offset = positions[m] - m - start
            let tail = end - offset
            write -= tail
            if tail > 0 && UnsafePointer(destination + write) != source + offset {
                memmove(destination + write, source + offset, tail * MemoryLayout<Int64>.stride)
            }
            end = offset
            write -= 1
            destination[write] = elements[m]
        }
        if end > 0 && UnsafePointer(destination) != source { memmove(destination, source, end * MemoryLayout<Int64>.stride) }
    }

    /// `chunk` itself when it holds at most twice the capacity; otherwise cut into pieces of
    /// about the capacity each.
    static func pieces(of chunk: [Int64]) -> [[Int64]] {
        guard chunk.count > 2 * chunkCapacity else { return [chunk] }
        let n = (chunk.count + chunkCapacity - 1) / chunkCapacity
        return (0..<n).map { i in Array(chunk[(i * chunk.count / n)..<((i + 1) * chunk.count / n)]) }
    }

    /// `chunk` with `id` inserted at `offset`, in one pass: the chunk is usually shared with
    /// the state a snapshot still shows, and editing it in place would copy it, then shift it.
    /// The list edits in place only the chunks it copied (``freshChunks``), which a commit
    /// of many rows edits again and again.
    static func inserting(_ id: Int64, at offset: Int, in chunk: [Int64]) -> [Int64] {
        [Int64](unsafeUninitializedCapacity: chunk.count + 1) { buffer, initialized in
            let base = buffer.baseAddress!
            chunk.withUnsafeBufferPointer { old in
                if let start = old.baseAddress {
                    base.initialize(from: start, count: offset)
                    (base + offset + 1).initialize(from: start + offset, count: old.count - offset)
                }
            }
            (base + offset).initialize(to: id)
            initialized = chunk.count + 1
        }
    }

    /// Where a chunk's elements are: which buffer it is, for ``freshChunks``.
    static func address(of chunk: [Int64]) -> UInt {
        chunk.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    /// `chunk` without its element at `offset`, in one pass (see ``inserting(_:at:in:)``).
    static func removing(at offset: Int, from chunk: [Int64]) -> [Int64] {
        [Int64](unsafeUninitializedCapacity: chunk.count - 1) { buffer, initialized in
            chunk.withUnsafeBufferPointer { old in
                guard let base = buffer.baseAddress else { return }
                base.initialize(from: old.baseAddress!, count: offset)
                (base + offset).initialize(from: old.baseAddress! + offset + 1, count: old.count - offset - 1)
            }
            initialized = chunk.count - 1
        }
    }

    /// Whether index arithmetic finds the chunks — all but the last full, the last not over
    /// — from the chunks' starts and the list's count.
    static func isUniform(starts: [Int], count: Int) -> Bool {
        guard let last = starts.last else { return true }
        if count - last > chunkCapacity { return false }
        return starts.withUnsafeBufferPointer { starts in
            for i in starts.indices where starts[i] != i << chunkShift { return false }
            return true
        }
    }
}
