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
    private(set) var summaries: SegmentedArray<ChunkSummary>?
    /// `starts[i]` is the index of the first element of `chunks[i]`.
    private(set) var starts: [Int] = []
    private(set) var count = 0
    /// The buffers of the chunks this list copied to edit them: most likely referenced by
    /// this list only, so edited in place (a commit of a thousand rows spread over the list
    /// copies each chunk it edits once, not once per row). Only a hint — should another list
    /// share one after all, the array copies it before writing, as arrays do.
    private var freshChunks: Set<UInt> = []
    /// Every chunk but the last holds exactly `chunkCapacity`, and the last at most that
    /// many: index arithmetic finds a chunk.
    private(set) var isUniform = true

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

    /// Appends `chunk` after the last one: how ``Builder`` builds a list.
    mutating func appendChunk(_ chunk: [Int64]) {
        starts.append(count)
        count += chunk.count
        chunks.append(chunk)
    }
}
