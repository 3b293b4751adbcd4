extension IdentifierList {
    #if FOLIO_INTERNAL_CHECKS
    /// Checks the chunk bookkeeping: starts, count, chunk sizes and the uniform flag, which
    /// must be set exactly when index arithmetic is right. O(number of chunks).
    @inline(never)
    func _checkInvariants() {
        precondition(starts.count == chunks.count, "one start per chunk")
        var start = 0
        for (i, chunk) in chunks.enumerated() {
            precondition(starts[i] == start, "chunk \(i) starts at \(starts[i]), expected \(start)")
            precondition(!chunk.isEmpty, "chunk \(i) is empty")
            precondition(chunk.count <= 2 * Self.chunkCapacity, "chunk \(i) holds \(chunk.count), over twice the capacity")
            start += chunk.count
        }
        precondition(start == count, "count \(count), chunks hold \(start)")
        let uniform =
            chunks.dropLast().allSatisfy { $0.count == Self.chunkCapacity }
            && (chunks.last?.count ?? 0) <= Self.chunkCapacity
        precondition(isUniform == uniform, "the uniform flag says \(isUniform) for chunk sizes \(chunks.map(\.count))")
        if let summaries {
            precondition(summaries.count == chunks.count, "one summary per chunk")
            // The first and last identifier of each chunk in its summary (O(chunks), as the rest).
            for (c, chunk) in chunks.enumerated() {
                precondition(
                    summaries[c].mayContain(ChunkSummary.bits(of: chunk[0]))
                        && summaries[c].mayContain(ChunkSummary.bits(of: chunk[chunk.count - 1])),
                    "chunk \(c) holds an identifier its summary does not")
            }
        }
    }
    #else
    @inline(__always)
    func _checkInvariants() {}
    #endif
}
