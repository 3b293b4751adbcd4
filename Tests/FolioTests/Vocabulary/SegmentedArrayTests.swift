import Foundation
import Testing
@testable import Folio

/// The two-level copy-on-write array under random edits, against a plain array: sizes
/// across the segment boundaries (16, 32, 48 elements), inserts and removals at every
/// place, and copies edited apart from the value they were copied from.
@Suite("Segmented array under random edits", .tags(Testing.Tag.longTier))
struct SegmentedArrayTests {
    @Test(arguments: [0, 1, 15, 16, 17, 31, 32, 33, 48, 245] as [Int])
    func matchesAnArray(initialCount: Int) {
        var rng = SplitMix64(seed: UInt64(initialCount) + 11)
        var array = (0..<initialCount).map { [$0] }
        var segmented = SegmentedArray(array)
        #expect(Array(segmented) == array)
        var next = initialCount
        for step in 0..<TestTier.pick(quick: 300, long: 2_000) {
            // A copy shares the storage until one of them is edited: both must keep their own.
            let copy = segmented
            let copied = array
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<30:
                let index = Int.random(in: 0...array.count, using: &rng)
                segmented.insert([next], at: index)
                array.insert([next], at: index)
                next += 1
            case 30..<40:
                let index = Int.random(in: 0...array.count, using: &rng)
                let new = (0..<Int.random(in: 0...20, using: &rng)).map { [next + $0] }
                segmented.insert(contentsOf: new, at: index)
                array.insert(contentsOf: new, at: index)
                next += new.count
            case 40..<70 where !array.isEmpty:
                let index = Int.random(in: 0..<array.count, using: &rng)
                #expect(segmented.remove(at: index) == array.remove(at: index))
            case 70..<80:
                segmented.append([next])
                array.append([next])
                next += 1
            case 80..<100 where !array.isEmpty:
                // Edited in place through the subscript, as the list edits a chunk.
                let index = Int.random(in: 0..<array.count, using: &rng)
                segmented[index].append(-step)
                array[index].append(-step)
            default:
                break
            }
            #expect(segmented.count == array.count, "step \(step)")
            #expect(Array(copy) == copied, "step \(step): the copy changed with the original")
            if step % 50 == 0 || array.count < 40 {
                #expect(Array(segmented) == array, "step \(step)")
                var visited: [[Int]] = []
                segmented.forEachSegment { elements, first in
                    #expect(first == visited.count)
                    visited.append(contentsOf: elements)
                    return true
                }
                #expect(visited == array)
            }
        }
        #expect(Array(segmented) == array)
    }

    /// `forEachSegment` stops when its body returns `false`.
    @Test func forEachSegmentStops() {
        let segmented = SegmentedArray(0..<100)
        var seen: [Int] = []
        segmented.forEachSegment { elements, first in
            seen.append(first)
            return elements.last! < 40
        }
        #expect(seen == [0, 16, 32])
    }

    /// Editing one element of a copy copies that element's segment alone: the copy's other
    /// segments are still the original's storage.
    @Test func anEditCopiesOneSegment() {
        let original = SegmentedArray((0..<64).map { [Int64($0)] })
        var copy = original
        copy[40].append(99)
        for s in 0..<4 {
            let shared = copy._segmentAddress(s) == original._segmentAddress(s)
            #expect(shared == (s != 40 / 16), "segment \(s)")
        }
        #expect(original[40] == [40])
        #expect(copy[40] == [40, 99])
    }
}
