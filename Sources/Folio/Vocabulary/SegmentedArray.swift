import Foundation

/// An array kept in segments of 16 elements, copy-on-write at both levels: editing one
/// element of a copy that still shares its storage with another value copies the list of
/// segments and the one segment edited — 16 and about n/16 references — instead of every
/// element.
///
/// ``IdentifierList`` keeps its chunks and their summaries in these. Each commit a live
/// list follows edits a copy of the list its snapshot still shows; with a flat array of a
/// million-row list's 245 chunks, the copy's first edit retained all 245 chunk buffers —
/// each on a cache line of its own, seldom in the processor's caches — for every list the
/// commit reached.
///
/// Inserting or removing an element moves every element after it to its new segment:
/// O(n), as in an array; a list of chunks does so only when a chunk splits or empties.
struct SegmentedArray<Element>: RandomAccessCollection, MutableCollection {
    private static var shift: Int { 4 }
    private static var segmentSize: Int { 1 << shift }

    /// Every segment but the last holds exactly ``segmentSize`` elements; the last 1 to that many.
    private var segments: [[Element]] = []
    private(set) var count = 0

    init() {}

    init<S: Sequence>(_ elements: S) where S.Element == Element {
        for element in elements { append(element) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Element {
        // Yielded, not returned: reading an element through it (a chunk's count, one
        // identifier of a chunk) neither retains nor releases it.
        _read {
            precondition(position >= 0 && position < count, "Index out of range")
            yield segments[position >> Self.shift][position & (Self.segmentSize - 1)]
        }
        _modify {
            precondition(position >= 0 && position < count, "Index out of range")
            yield &segments[position >> Self.shift][position & (Self.segmentSize - 1)]
        }
    }

    mutating func append(_ element: Element) {
        if count & (Self.segmentSize - 1) == 0 {
            var segment: [Element] = []
            segment.reserveCapacity(Self.segmentSize)
            segments.append(segment)
        }
        segments[segments.count - 1].append(element)
        count += 1
    }

    /// Inserts `elements` at `index`.
    ///
    /// - Complexity: O(count − index + elements).
    mutating func insert<C: Collection>(contentsOf elements: C, at index: Int) where C.Element == Element {
        precondition(index >= 0 && index <= count, "Index out of range")
        let tail = Array(self[index...])
        truncate(to: index)
        for element in elements { append(element) }
        for element in tail { append(element) }
    }

    /// - Complexity: O(count − index).
    mutating func insert(_ element: Element, at index: Int) {
        insert(contentsOf: CollectionOfOne(element), at: index)
    }

    /// - Complexity: O(count − index).
    @discardableResult
    mutating func remove(at index: Int) -> Element {
        precondition(index >= 0 && index < count, "Index out of range")
        let removed = self[index]
        let tail = Array(self[(index + 1)...])
        truncate(to: index)
        for element in tail { append(element) }
        return removed
    }

    /// Keeps the first `n` elements.
    private mutating func truncate(to n: Int) {
        let kept = (n + Self.segmentSize - 1) >> Self.shift
        segments.removeLast(segments.count - kept)
        let inLast = n - (kept - 1) << Self.shift
        if kept > 0 && segments[kept - 1].count > inLast {
            segments[kept - 1].removeLast(segments[kept - 1].count - inLast)
        }
        count = n
    }

    /// Calls `body` with each segment's elements in order and the index of its first
    /// element, until it returns `false`: the elements read in place, without copying (or
    /// retaining) them one by one.
    func forEachSegment(_ body: (_ elements: UnsafeBufferPointer<Element>, _ firstIndex: Int) throws -> Bool) rethrows {
        for (s, segment) in segments.enumerated() {
            guard try segment.withUnsafeBufferPointer({ try body($0, s << Self.shift) }) else { return }
        }
    }

    /// Where segment `s`'s storage is: which segments two values share (for tests).
    func _segmentAddress(_ s: Int) -> UnsafeRawPointer? {
        segments[s].withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }
}

extension SegmentedArray: Sendable where Element: Sendable {}
