import Foundation

/// An ordered list of rowids in chunks of a few thousand, so that a controller's live
/// list and the copy its current snapshot shares can diverge by one chunk per edit
/// rather than by a copy of a million identifiers. Eight bytes per identifier.
///
/// The chunks and their summaries are kept in ``SegmentedArray``s, so that an edit of such
/// a copy also copies few references to chunks (a segment of 16, and the list of segments),
/// not one per chunk; and the starts of the chunks an edit did not touch are moved without
/// reading those chunks.
///
/// Chunks hold 1 to `2 × chunkCapacity` identifiers (an insert splits a chunk that grows
/// past that; a removal drops a chunk that empties). While every chunk but the last holds
/// exactly `chunkCapacity` and the last at most that many — as a freshly built list — an
/// index finds its chunk by a shift; otherwise by a binary search of the chunk starts.
/// ``_checkInvariants()`` checks this bookkeeping after every mutation when internal checks
/// are compiled in.
///
/// A list a live tracker follows can carry a summary of each chunk
/// (``buildSummaries()``): a Bloom filter of two bytes per identifier, four bits in one word, so that
/// finding where a few identifiers are (``positions(of:)``) searches the chunks that may
/// hold them — about one in 190 besides the right one — instead of every identifier.
/// Edits keep the summaries: an insert sets its identifier's bits, a split rebuilds both
/// halves, and a chunk rebuilds its summary once as many identifiers were added to it as
/// it was built for (removed identifiers leave their bits: a chunk searched for nothing).
struct IdentifierList: RandomAccessCollection, Sendable, Equatable {
    static let chunkShift = 12
    static let chunkCapacity = 1 << chunkShift
    /// Lists of at least this many identifiers get chunk summaries when a tracker follows
    /// them; shorter ones are searched whole (a few chunks).
    static let summaryThreshold = 2 * chunkCapacity

    private(set) var chunks = SegmentedArray<[Int64]>()
    /// One summary per chunk, when built (``buildSummaries()``).
    private var summaries: SegmentedArray<ChunkSummary>?
    /// `starts[i]` is the index of the first element of `chunks[i]`.
    private var starts: [Int] = []
    private(set) var count = 0
    /// The buffers of the chunks this list copied to edit them: most likely referenced by
    /// this list only, so edited in place (a commit of a thousand rows spread over the list
    /// copies each chunk it edits once, not once per row). Only a hint — should another list
    /// share one after all, the array copies it before writing, as arrays do.
    private var freshChunks: Set<UInt> = []
    /// Every chunk but the last holds exactly `chunkCapacity`, and the last at most that
    /// many: index arithmetic finds a chunk.
    private var isUniform = true

    init() {}

    init<S: Sequence>(_ elements: S) where S.Element == Int64 {
        var builder = Builder()
        for e in elements { builder.append(e) }
        self = builder.finish()
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    @inline(__always)
    private func locate(_ index: Int) -> (chunk: Int, offset: Int) {
        if isUniform {
            let c = index >> Self.chunkShift
            return (c, index - (c << Self.chunkShift))
        }
        var low = 0, high = starts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if starts[mid] <= index { low = mid } else { high = mid - 1 }
        }
        return (low, index - starts[low])
    }

    subscript(position: Int) -> Int64 {
        precondition(position >= 0 && position < count, "Index out of range")
        let (c, o) = locate(position)
        return chunks[c][o]
    }

    /// The identifiers in `range`, copied.
    func slice(_ range: Range<Int>) -> [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            let (c, o) = locate(index)
            let chunk = chunks[c]
            let take = Swift.min(chunk.count - o, range.upperBound - index)
            result.append(contentsOf: chunk[o..<(o + take)])
            index += take
        }
        return result
    }

    /// Chunk by chunk where both lists cut their chunks alike (a buffer shared by both is
    /// equal at once), element by element otherwise.
    static func == (lhs: IdentifierList, rhs: IdentifierList) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard lhs.starts == rhs.starts else { return lhs.elementsEqual(rhs) }
        for c in lhs.chunks.indices where lhs.chunks[c] != rhs.chunks[c] { return false }
        return true
    }

    // MARK: Chunk summaries

    /// Whether the chunks carry summaries.
    var hasSummaries: Bool { summaries != nil }

    /// Builds a summary of every chunk, when the list is long enough to need them
    /// (``summaryThreshold``) and has none. O(n), once: edits keep them.
    mutating func buildSummaries() {
        guard summaries == nil, count >= Self.summaryThreshold else { return }
        summaries = SegmentedArray(chunks.lazy.map { ChunkSummary($0) })
    }

    // MARK: Search

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

    // MARK: Editing

    mutating func insert(_ id: Int64, at index: Int) {
        precondition(index >= 0 && index <= count, "Index out of range")
        if chunks.isEmpty {
            chunks = SegmentedArray([[id]]); starts = [0]; count = 1; isUniform = true; summaries = nil
            _checkInvariants()
            return
        }
        let (c, o) = index == count ? (chunks.count - 1, chunks[chunks.count - 1].count) : locate(index)
        if freshChunks.contains(Self.address(of: chunks[c])) {
            chunks[c].insert(id, at: o)
        } else {
            chunks[c] = Self.inserting(id, at: o, in: chunks[c])
        }
        noteFresh(c)
        count += 1
        if summaries != nil { summaries![c].add(id, chunk: chunks[c]) }
        if chunks[c].count > 2 * Self.chunkCapacity {
            let chunk = chunks[c]
            let half = chunk.count / 2
            chunks[c] = Array(chunk[..<half])
            chunks.insert(Array(chunk[half...]), at: c + 1)
            starts.insert(0, at: c + 1)
            if summaries != nil {
                summaries![c] = ChunkSummary(chunks[c])
                summaries!.insert(ChunkSummary(chunks[c + 1]), at: c + 1)
            }
            reindex(from: c)
        } else {
            shiftStarts([(c, 1)])
        }
        _checkInvariants()
    }

    @discardableResult
    mutating func remove(at index: Int) -> Int64 {
        precondition(index >= 0 && index < count, "Index out of range")
        let (c, o) = locate(index)
        let id = chunks[c][o]
        if freshChunks.contains(Self.address(of: chunks[c])) {
            chunks[c].remove(at: o)
        } else {
            chunks[c] = Self.removing(at: o, from: chunks[c])
        }
        noteFresh(c)
        count -= 1
        if chunks[c].isEmpty {
            chunks.remove(at: c)
            starts.remove(at: c)
            summaries?.remove(at: c)
            reindex(from: Swift.min(c, Swift.max(0, chunks.count - 1)))
        } else {
            shiftStarts([(c, -1)])
        }
        _checkInvariants()
        return id
    }

    /// Removes the elements at `indices` (ascending, each once), rebuilding each chunk that
    /// loses some once: a commit's removals cost one copy of the chunks they touch, not a
    /// shift of a chunk per element. Summaries keep the removed identifiers' bits, as
    /// ``remove(at:)`` does.
    ///
    /// - Complexity: O(k + c · chunk size) for k indices in c chunks, plus O(chunks).
    mutating func remove(atSortedIndices indices: [Int]) {
        guard !indices.isEmpty else { return }
        precondition(indices.first! >= 0 && indices.last! < count, "Index out of range")
        // The buffers made here are this list's own (see ``freshChunks``); no other is.
        freshChunks.removeAll()
        // The chunks before the first one edited keep their starts.
        let firstEdited = locate(indices[0]).chunk
        var emptied: [Int] = []
        var changes: [(chunk: Int, delta: Int)] = []
        var i = 0
        while i < indices.count {
            let (c, _) = locate(indices[i])
            let start = starts[c]
            let end = start + chunks[c].count
            var j = i
            while j < indices.count && indices[j] < end {
                precondition(j == i || indices[j] > indices[j - 1], "indices must ascend, each once")
                j += 1
            }
            let old = chunks[c]
            let kept = old.count - (j - i)
            if kept == 0 {
                emptied.append(c)
            } else {
                // Room for as many rows as it had and a few more: the commit's insertions
                // that follow usually merge into this buffer in place.
                chunks[c] = [Int64](unsafeUninitializedCapacity: old.count + Self.insertionSlack) { buffer, initialized in
                    old.withUnsafeBufferPointer { old in
                        var from = 0, to = 0
                        for k in i..<j {
                            let offset = indices[k] - start
                            (buffer.baseAddress! + to).initialize(from: old.baseAddress! + from, count: offset - from)
                            to += offset - from
                            from = offset + 1
                        }
                        (buffer.baseAddress! + to).initialize(from: old.baseAddress! + from, count: old.count - from)
                    }
                    initialized = kept
                }
                freshChunks.insert(Self.address(of: chunks[c]))
            }
            changes.append((c, -(j - i)))
            count -= j - i
            i = j
        }
        if emptied.isEmpty {
            shiftStarts(changes)
        } else {
            for c in emptied.reversed() {
                chunks.remove(at: c)
                starts.remove(at: c)
                summaries?.remove(at: c)
            }
            reindex(from: firstEdited)
        }
        _checkInvariants()
    }

    /// Inserts `elements`, `elements[j]` ending at index `positions[j]` of the new list
    /// (`positions` ascending, each once, the last below the new count), rebuilding each
    /// chunk that gains some once; a chunk grown past twice the capacity is cut into
    /// chunks of about the capacity. Summaries gain the new identifiers.
    ///
    /// - Complexity: O(k + c · chunk size) for k elements into c chunks, plus O(chunks).
    mutating func insert(_ elements: [Int64], atSortedPositions positions: [Int]) {
        precondition(elements.count == positions.count, "one position per element")
        guard !elements.isEmpty else { return }
        precondition(
            positions.first! >= 0 && positions.last! < count + elements.count, "Index out of range")
        if chunks.isEmpty {
            self = IdentifierList(elements)
            return
        }
        // Element j goes after `positions[j] - j` elements of the list as it is: into the
        // chunk holding that index, or at the end of the last chunk.
        // Chunks grown past twice the capacity, cut once every chunk is merged (a cut moves
        // the chunks after it).
        var split: [(chunk: Int, pieces: [[Int64]])] = []
        let oldCount = count
        // The chunks before the first one edited keep their starts.
        let firstEdited = positions[0] == oldCount ? chunks.count - 1 : locate(positions[0]).chunk
        var changes: [(chunk: Int, delta: Int)] = []
        var j = 0
        while j < elements.count {
            let before = positions[j] - j
            precondition(j == 0 || positions[j] > positions[j - 1], "positions must ascend, each once")
            let c = before == oldCount ? chunks.count - 1 : locate(before).chunk
            let start = starts[c]
            let end = start + chunks[c].count
            var k = j
            while k < elements.count && (positions[k] - k < end || (c == chunks.count - 1)) {
                precondition(k == j || positions[k] > positions[k - 1], "positions must ascend, each once")
                k += 1
            }
            let total = chunks[c].count + (k - j)
            let merged: [Int64]
            if total <= 2 * Self.chunkCapacity, chunks[c].capacity >= total,
                freshChunks.contains(Self.address(of: chunks[c]))
            {
                // A buffer this list made (the commit's removals): merged in place.
                let n = chunks[c].count
                chunks[c].append(contentsOf: repeatElement(0, count: k - j))
                chunks[c].withUnsafeMutableBufferPointer { buffer in
                    Self.merge(
                        UnsafePointer(buffer.baseAddress!), count: n, into: buffer.baseAddress!, elements[j..<k],
                        positions: positions[j..<k], start: start)
                }
                merged = chunks[c]
            } else {
                let old = chunks[c]
                merged = [Int64](unsafeUninitializedCapacity: total) { buffer, initialized in
                    old.withUnsafeBufferPointer { old in
                        Self.merge(
                            old.baseAddress!, count: old.count, into: buffer.baseAddress!, elements[j..<k],
                            positions: positions[j..<k], start: start)
                    }
                    initialized = total
                }
            }
            if total <= 2 * Self.chunkCapacity {
                chunks[c] = merged
                if summaries != nil { for m in j..<k { summaries![c].add(elements[m], chunk: merged) } }
                changes.append((c, k - j))
            } else {
                split.append((c, Self.pieces(of: merged)))
            }
            count += k - j
            j = k
        }
        freshChunks.removeAll()
        guard !split.isEmpty else {
            shiftStarts(changes)
            _checkInvariants()
            return
        }
        // Highest chunk first, so that a cut does not move the chunks still to be cut.
        for (c, pieces) in split.reversed() {
            chunks[c] = pieces[0]
            chunks.insert(contentsOf: pieces[1...], at: c + 1)
            starts.insert(contentsOf: repeatElement(0, count: pieces.count - 1), at: c + 1)
            if summaries != nil {
                summaries![c] = ChunkSummary(pieces[0])
                summaries!.insert(contentsOf: pieces[1...].map { ChunkSummary($0) }, at: c + 1)
            }
        }
        reindex(from: firstEdited)
        _checkInvariants()
    }

    /// Free room a commit's removals leave in each chunk they rebuild, beyond the rows it had.
    private static let insertionSlack = 16

    /// Writes the `n` identifiers at `source` with `elements` merged in to `destination`
    /// (room for `n + elements.count`), `elements[m]` after `positions[m] - m - start` of
    /// them: each run of identifiers is moved once, from the end, so `destination` may be
    /// `source` itself (a buffer grown in place).
    private static func merge(
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
    private static func pieces(of chunk: [Int64]) -> [[Int64]] {
        guard chunk.count > 2 * chunkCapacity else { return [chunk] }
        let n = (chunk.count + chunkCapacity - 1) / chunkCapacity
        return (0..<n).map { i in Array(chunk[(i * chunk.count / n)..<((i + 1) * chunk.count / n)]) }
    }

    /// `chunk` with `id` inserted at `offset`, in one pass: the chunk is usually shared with
    /// the state a snapshot still shows, and editing it in place would copy it, then shift it.
    /// The list edits in place only the chunks it copied (``freshChunks``), which a commit
    /// of many rows edits again and again.
    private static func inserting(_ id: Int64, at offset: Int, in chunk: [Int64]) -> [Int64] {
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

    /// Starts a series of edits of a copy of a list another state still holds: none of its
    /// chunks is this copy's own yet.
    mutating func beginEdits() {
        freshChunks.removeAll()
    }

    /// Notes chunk `c`'s buffer (after an edit: its own copy, or one edited in place, which
    /// may have moved as it grew) as the list's own. The set never holds more than twice the
    /// chunks: addresses of buffers freed since are forgotten then.
    private mutating func noteFresh(_ c: Int) {
        if freshChunks.count >= 2 * chunks.count + 8 { freshChunks.removeAll(keepingCapacity: true) }
        freshChunks.insert(Self.address(of: chunks[c]))
    }

    /// Where a chunk's elements are: which buffer it is, for ``freshChunks``.
    private static func address(of chunk: [Int64]) -> UInt {
        chunk.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    /// `chunk` without its element at `offset`, in one pass (see ``inserting(_:at:in:)``).
    private static func removing(at offset: Int, from chunk: [Int64]) -> [Int64] {
        [Int64](unsafeUninitializedCapacity: chunk.count - 1) { buffer, initialized in
            chunk.withUnsafeBufferPointer { old in
                guard let base = buffer.baseAddress else { return }
                base.initialize(from: old.baseAddress!, count: offset)
                (base + offset).initialize(from: old.baseAddress! + offset + 1, count: old.count - offset - 1)
            }
            initialized = chunk.count - 1
        }
    }

    /// Recomputes the starts of the chunks from `chunk` on (those before it kept their
    /// sizes and places), reading their counts, and the uniform flag: after chunks were
    /// added or removed.
    private mutating func reindex(from chunk: Int) {
        guard !chunks.isEmpty else { starts = []; isUniform = true; return }
        let first = Swift.min(chunk, chunks.count)
        var start = first == 0 ? 0 : starts[first - 1] + chunks[first - 1].count
        for i in first..<chunks.count {
            starts[i] = start
            start += chunks[i].count
        }
        isUniform = Self.isUniform(starts: starts, count: count)
    }

    /// Moves the starts of the chunks after each of `changes` (ascending chunks, each with
    /// how many identifiers it gained or lost) by those changes, when no chunk was added or
    /// removed: the starts alone are read, not the chunks (each chunk's count is on a cache
    /// line of its own, for the few hundred chunks of a long list at every commit).
    private mutating func shiftStarts(_ changes: [(chunk: Int, delta: Int)]) {
        guard let first = changes.first?.chunk else { return }
        starts.withUnsafeMutableBufferPointer { starts in
            var delta = 0, k = 0
            for i in first..<starts.count {
                starts[i] += delta
                while k < changes.count && changes[k].chunk == i {
                    delta += changes[k].delta
                    k += 1
                }
            }
        }
        isUniform = Self.isUniform(starts: starts, count: count)
    }

    /// Whether index arithmetic finds the chunks — all but the last full, the last not over
    /// — from the chunks' starts and the list's count.
    private static func isUniform(starts: [Int], count: Int) -> Bool {
        guard let last = starts.last else { return true }
        if count - last > chunkCapacity { return false }
        return starts.withUnsafeBufferPointer { starts in
            for i in starts.indices where starts[i] != i << chunkShift { return false }
            return true
        }
    }

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
            list.starts.append(list.count)
            list.count += current.count
            list.chunks.append(current)
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

extension IdentifierList {
    /// Identifiers as a JSON array of integers (`[3,1,2]`, in the sequence's order), the
    /// form in which a batch of identifiers is bound to one SQL argument and read back with
    /// `json_each`.
    ///
    /// - Complexity: O(n).
    static func jsonArray<S: Sequence<Int64>>(_ identifiers: S) -> String {
        // Digits written into one byte buffer: no string per identifier.
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(2 + 8 * identifiers.underestimatedCount)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: a 64-bit integer has at most 20 digits
        for id in identifiers {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            if id < 0 { bytes.append(UInt8(ascii: "-")) }
            var magnitude = id.magnitude
            withUnsafeMutableBytes(of: &digits) { buffer in
                var end = buffer.count
                repeat {
                    end -= 1
                    buffer[end] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                    magnitude /= 10
                } while magnitude > 0
                bytes.append(contentsOf: buffer[end...])
            }
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
