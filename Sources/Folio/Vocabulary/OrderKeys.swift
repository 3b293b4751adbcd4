import Foundation

/// Folio's order values for lists ordered by hand: 64-bit integers with gaps between
/// neighbours, so that a row dropped between two others takes the middle of their gap and
/// is the only row written. When a gap is used up (about 20 drops into the same place), the
/// rows around it are spread again, over a window that doubles until it has room, so a drop
/// writes O(1) rows amortized and the values never grow: every value is 8 bytes, always.
///
/// Values written by other programs — duplicates, `NULL`, no gap — are valid: the list is
/// ordered by them, ties by identifier (`NULL` first, as SQLite sorts it), and the next drop
/// that needs room there spreads them.
enum OrderKeys {
    /// The gap Folio leaves between neighbours when it spreads values: 2²⁰, room for 20
    /// halvings; a list of 8 billion rows fits in 2⁶³.
    static let spacing: Int64 = 1 << 20

    /// The smallest gap a spread may leave between neighbours: below it the window grows.
    static let minimumSpread: Int64 = 16

    /// The value for a row dropped between neighbours holding `lower` and `upper` (`nil` for
    /// an end of the list), or `nil` when there is no integer strictly between them.
    /// `NULL` values (`.some(nil)`) leave no room: they must be spread first.
    static func between(_ lower: Int64??, _ upper: Int64??) -> Int64? {
        switch (lower, upper) {
        case (nil, nil): return 0
        case (nil, .some(let high?)): return high > Int64.min + spacing ? high - spacing : nil
        case (.some(let low?), nil): return low < Int64.max - spacing ? low + spacing : nil
        case (.some(let low?), .some(let high?)):
            guard low < high else { return nil }
            let (difference, overflow) = high.subtractingReportingOverflow(low)
            // Overflow: low < 0 < high, far apart; the sum of the halves is strictly between.
            if overflow { return low / 2 + high / 2 }
            guard difference >= 2 else { return nil }
            return low + difference / 2
        default: return nil
        }
    }

    /// Evenly spread values for `count` rows strictly between `lower` and `upper` (`nil` for
    /// an end of the list), or `nil` when the gap leaves less than ``minimumSpread`` between
    /// neighbours (or a bound is `NULL`): the caller widens the window.
    static func spread(_ count: Int, between lower: Int64??, and upper: Int64??) -> [Int64]? {
        guard count > 0 else { return [] }
        let n = Int64(count)
        switch (lower, upper) {
        case (nil, nil):
            return (0..<n).map { $0 * spacing }
        case (nil, .some(let high?)):
            guard high > Int64.min / 2 else { return nil }
            return (0..<n).map { high - (n - $0) * spacing }
        case (.some(let low?), nil):
            guard low < Int64.max / 2 else { return nil }
            return (0..<n).map { low + ($0 + 1) * spacing }
        case (.some(let low?), .some(let high?)):
            guard low < high else { return nil }
            let (difference, overflow) = high.subtractingReportingOverflow(low)
            let step = overflow ? Int64.max / (n + 1) : difference / (n + 1)
            guard step >= minimumSpread else { return nil }
            return (0..<n).map { low + ($0 + 1) * step }
        default:
            return nil
        }
    }
}
