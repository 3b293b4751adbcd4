import Foundation

extension IdentifierList {
    /// Builds a list by appending, chunk by chunk.
    struct Builder {
        private var list = IdentifierList()
        private var current: [Int64] = []

        init() { current.reserveCapacity(IdentifierList.chunkCapacity) }

        @inline(__always)
        mutating func append(_ id: Int64) {
            current.append(id)
            if current.count == IdentifierList.chunkCapacity { flush() }
        }

        private mutating func flush() {
            guard !current.isEmpty else { return }
            list.appendChunk(current)
            current = []
            current.reserveCapacity(IdentifierList.chunkCapacity)
        }

        mutating func finish() -> IdentifierList {
            flush()
            list._checkInvariants()
            return list
        }
    }
}
