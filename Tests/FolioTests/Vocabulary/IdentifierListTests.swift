import Foundation
import Testing
@testable import Folio

/// The chunked identifier list under random edits, against a plain array: the
/// randomized controller workloads keep tables small (one chunk holds 4,096
/// identifiers), so chunk splits, emptied chunks and the non-uniform index are
/// exercised here.
@Suite("Identifier list under random edits")
struct IdentifierListTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func matchesAnArray(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var next: Int64 = 1
        var array: [Int64] = []
        var builder = IdentifierList.Builder()
        for _ in 0..<9_000 {
            builder.append(next)
            array.append(next)
            next += 1
        }
        var list = builder.finish()
        var checks = 0
        for step in 0..<12_000 {
            let roll = Int.random(in: 0..<100, using: &rng)
            if roll < 45 || array.isEmpty {
                // Inserts cluster in one region half of the time, so one chunk overflows.
                let index =
                    roll < 25
                    ? Int.random(in: 0...array.count, using: &rng)
                    : min(array.count, array.count / 3 + Int.random(in: 0..<50, using: &rng))
                list.insert(next, at: index)
                array.insert(next, at: index)
                next += 1
            } else if roll < 90 {
                // Removals cluster too, so chunks empty out.
                let index =
                    roll < 70
                    ? Int.random(in: 0..<array.count, using: &rng)
                    : min(array.count - 1, array.count * 2 / 3)
                let removed = list.remove(at: index)
                #expect(removed == array.remove(at: index))
            } else {
                let index = array.count
                list.insert(next, at: index)
                array.insert(next, at: index)
                next += 1
            }
            if step % 400 == 0 || step == 11_999 {
                checks += 1
                list._checkInvariants()
                #expect(list.count == array.count)
                #expect(list.elementsEqual(array), "seed \(seed), step \(step)")
                if !array.isEmpty {
                    let a = Int.random(in: 0..<array.count, using: &rng)
                    let b = Int.random(in: a...array.count, using: &rng)
                    #expect(list.slice(a..<b) == Array(array[a..<b]))
                    let probe = Int.random(in: 0..<array.count, using: &rng)
                    #expect(list[probe] == array[probe])
                    #expect(list.maximum == array.max())
                }
                // Positions of a few and of many identifiers, present and absent.
                for size in [3, 40] {
                    var wanted = Set<Int64>()
                    for _ in 0..<size { wanted.insert(Int64.random(in: 1..<(next + 10), using: &rng)) }
                    var expected: [Int64: Int] = [:]
                    for (i, id) in array.enumerated() where wanted.contains(id) { expected[id] = i }
                    #expect(list.positions(of: wanted) == expected, "seed \(seed), step \(step), \(size) identifiers")
                }
            }
        }
        #expect(checks > 20)
        #expect(list.chunks.count > 2, "the list spans several chunks")
    }
}

extension IdentifierListTests {
    /// The list itself at every chunk boundary, growing and shrinking: appends, inserts at the
    /// front and in the middle, and removals, checked element by element around the boundaries.
    @Test(.tags(Testing.Tag.threadSanitized), arguments: [0, 1, 2, 3])
    func theListIsExactAtEveryChunkBoundary(startChunks: Int) {
        let capacity = IdentifierList.chunkCapacity
        for start in [startChunks * capacity - 1, startChunks * capacity, startChunks * capacity + 1] where start >= 0 {
            var list = IdentifierList(0..<Int64(start))
            var array = Array(0..<Int64(start))
            var next = Int64(start)
            func check(_ what: String) {
                #expect(list.count == array.count, "\(what)")
                var probes = [0, list.count - 1]
                for k in 1...4 { probes += [k * capacity - 1, k * capacity, k * capacity + 1, 2 * k * capacity] }
                for i in probes where i >= 0 && i < array.count {
                    #expect(list[i] == array[i], "\(what): element \(i)")
                }
                if array.count >= 2 {
                    let a = array.count / 3, b = Swift.min(array.count, a + capacity + 3)
                    #expect(list.slice(a..<b) == Array(array[a..<b]), "\(what): slice")
                }
            }
            // Grow past two boundaries at the end (a chunk fills, overflows, splits).
            for step in 0..<(2 * capacity + 3) {
                list.insert(next, at: list.count)
                array.append(next)
                next += 1
                if step % 97 == 0 || (step + 1) % capacity <= 2 { check("start \(start), append \(step)") }
            }
            #expect(list.elementsEqual(array))
            // Grow at the front and in the middle.
            for step in 0..<(capacity + 2) {
                let index = step % 2 == 0 ? 0 : array.count / 2
                list.insert(next, at: index)
                array.insert(next, at: index)
                next += 1
                if step % 101 == 0 || step >= capacity { check("start \(start), insert \(step)") }
            }
            #expect(list.elementsEqual(array))
            // Shrink from the end, the front and the middle, back through every boundary.
            var step = 0
            while !array.isEmpty {
                let index = step % 3 == 0 ? array.count - 1 : (step % 3 == 1 ? 0 : array.count / 2)
                #expect(list.remove(at: index) == array.remove(at: index))
                if step % 211 == 0 || array.count % capacity <= 1 { check("start \(start), remove \(step)") }
                step += 1
            }
            #expect(list.isEmpty)
        }
    }
}

/// Copies of a list edited in turn: a list edits in place the chunk it copied last, and that
/// chunk may be shared by a copy made since (a snapshot of the state a tracker goes on
/// editing) — each copy must still see only its own edits.
@Suite("Identifier list copies edited in turn")
struct IdentifierListCopyTests {
    @Test(arguments: [1, 2] as [UInt64])
    func copiesEditedInTurnStayIndependent(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var next: Int64 = 100_000
        let start = (1...Int64(10_000)).map { $0 }
        var lists = [IdentifierList(start)]
        var arrays = [start]
        for step in 0..<3_000 {
            // Often a new copy of a list just edited: it shares the chunk its source edits in place.
            if step % 7 == 0 && lists.count < 6 {
                let k = Int.random(in: 0..<lists.count, using: &rng)
                lists.append(lists[k])
                arrays.append(arrays[k])
            }
            let k = Int.random(in: 0..<lists.count, using: &rng)
            // Edits near one place, so the same chunk is edited again and again.
            let around = (step / 300) * 1_000 % max(1, arrays[k].count)
            if Bool.random(using: &rng) || arrays[k].isEmpty {
                let index = min(arrays[k].count, around + Int.random(in: 0..<40, using: &rng))
                lists[k].insert(next, at: index)
                arrays[k].insert(next, at: index)
                next += 1
            } else {
                let index = min(arrays[k].count - 1, around + Int.random(in: 0..<40, using: &rng))
                #expect(lists[k].remove(at: index) == arrays[k].remove(at: index))
            }
            if step % 250 == 0 {
                for (list, array) in zip(lists, arrays) { #expect(Array(list) == array) }
            }
        }
        for (list, array) in zip(lists, arrays) { #expect(Array(list) == array) }
    }

    /// A commit of many rows edits chunks all over the list, each copied once and edited in
    /// place after: copies taken meanwhile (the state a snapshot shows) never change, and
    /// lists compare equal chunk by chunk or element by element, however they are cut.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func copiesEditedAllOverStayIndependent(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var next: Int64 = 1_000_000
        var list = IdentifierList((1...Int64(40_000)).map { $0 })
        var array = Array(list)
        var kept: [(list: IdentifierList, array: [Int64])] = []
        for round in 0..<12 {
            if round % 3 == 1 { list.beginEdits() }
            kept.append((list, array))
            for _ in 0..<400 {
                if Bool.random(using: &rng) {
                    let index = Int.random(in: 0...array.count, using: &rng)
                    list.insert(next, at: index)
                    array.insert(next, at: index)
                    next += 1
                } else {
                    let index = Int.random(in: 0..<array.count, using: &rng)
                    #expect(list.remove(at: index) == array.remove(at: index))
                }
            }
            list._checkInvariants()
            #expect(Array(list) == array, "seed \(seed), round \(round)")
            #expect(list == IdentifierList(array), "equal to the same identifiers cut into uniform chunks")
        }
        for (copy, expected) in kept {
            #expect(Array(copy) == expected, "a copy taken before a round of edits is unchanged")
            #expect(copy == IdentifierList(expected))
            #expect(copy != list)
        }
        // Equal counts, one identifier different, in the last chunk or the first.
        for index in [0, array.count - 1] {
            var other = list
            other.remove(at: index)
            other.insert(-1, at: index)
            #expect(other != list && list != other)
            #expect(other.count == list.count)
        }
        #expect(list == list, "a list equals itself (every chunk shared)")
    }
}

/// A commit's edits applied at once (``IdentifierList/remove(atSortedIndices:)`` then
/// ``IdentifierList/insert(_:atSortedPositions:)``), against a plain array edited one element at
/// a time: sizes on both sides of every chunk threshold, removals that empty whole chunks and
/// the whole list, inserts piled into one gap past several times the chunk capacity, at the
/// front and at the end; with and without summaries, and copies taken before that never change.
@Suite("Identifier list, a commit's edits at once", .tags(Testing.Tag.longTier))
struct IdentifierListBatchTests {
    static let capacity = IdentifierList.chunkCapacity

    @Test(arguments: [0, 1, capacity - 1, capacity, capacity + 1, 2 * capacity, 2 * capacity + 1, 5 * capacity + 7])
    func batchedEditsMatchOneByOne(size: Int) {
        var rng = SplitMix64(seed: UInt64(size) &+ 11)
        var next: Int64 = 10_000_000
        // Rounds alternate with and without summaries.
        for round in 0..<TestTier.pick(quick: 4, long: 40) {
            var list = IdentifierList((0..<Int64(size)).map { $0 * 3 })
            if round % 2 == 1 { list.buildSummaries() }
            var array = Array(list)
            for _ in 0..<6 {
                let copy = list
                let copied = array
                // Removals: a random share, or a whole region (emptying chunks), or everything.
                var removed = Set<Int>()
                if !array.isEmpty {
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0:
                        for _ in 0..<Int.random(in: 0...min(array.count, 900), using: &rng) {
                            removed.insert(Int.random(in: 0..<array.count, using: &rng))
                        }
                    case 1:
                        let a = Int.random(in: 0..<array.count, using: &rng)
                        let b = min(array.count, a + Int.random(in: 1...(3 * Self.capacity), using: &rng))
                        removed.formUnion(a..<b)
                    case 2: removed.formUnion(0..<array.count)
                    default: break
                    }
                }
                let indices = removed.sorted()
                list.remove(atSortedIndices: indices)
                for index in indices.reversed() { array.remove(at: index) }
                list._checkInvariants()
                #expect(Array(list) == array, "size \(size), round \(round): removals")
                // Inserts: scattered, or piled into one gap (front, end or middle).
                let k = Int.random(in: 0...(Int.random(in: 0..<3, using: &rng) == 0 ? 5 * Self.capacity : 700), using: &rng)
                var gaps: [Int] = []
                let pile = [0, array.count, array.count / 2][Int.random(in: 0..<3, using: &rng)]
                let piled = Bool.random(using: &rng)
                for _ in 0..<k { gaps.append(piled ? pile : Int.random(in: 0...array.count, using: &rng)) }
                gaps.sort()
                let elements = (0..<k).map { _ in
                    next += 1
                    return next
                }
                let positions = gaps.indices.map { gaps[$0] + $0 }
                list.insert(elements, atSortedPositions: positions)
                for (j, position) in positions.enumerated() { array.insert(elements[j], at: position) }
                list._checkInvariants()
                #expect(Array(list) == array, "size \(size), round \(round): inserts")
                #expect(list == IdentifierList(array))
                #expect(list.count == array.count)
                if list.hasSummaries, !array.isEmpty {
                    var wanted = Set(elements.prefix(5))
                    wanted.insert(array[array.count / 2])
                    wanted.insert(-5)
                    var expected: [Int64: Int] = [:]
                    for (i, id) in array.enumerated() where wanted.contains(id) { expected[id] = i }
                    #expect(list.positions(of: wanted) == expected, "summaries hold the inserted identifiers")
                }
                #expect(Array(copy) == copied, "a copy taken before the edits is unchanged")
                // A single edit after a batch still works on the batch's chunks.
                if !array.isEmpty {
                    let at = Int.random(in: 0..<array.count, using: &rng)
                    #expect(list.remove(at: at) == array.remove(at: at))
                    list.insert(-7, at: at)
                    array.insert(-7, at: at)
                    list.remove(at: at)
                    array.remove(at: at)
                    #expect(Array(list) == array)
                }
            }
        }
    }
}
