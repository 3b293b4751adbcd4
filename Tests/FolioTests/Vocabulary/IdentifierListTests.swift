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
