import Foundation
import GRDB

/// How a section value is read: an SQL expression, and what turns its value into the
/// section's identity.
struct SectionExpression: Sendable {
    enum Kind: Sendable {
        /// The expression's value is the section.
        case value
        /// The expression is a date: the section is its day number in the zone (numbers
        /// only; any other stored value is its own section).
        case day(DayZone)
        /// The expression's value passes through the app's closure (a `.computed` section key).
        /// User code: never called while a lock is held.
        case computed(@Sendable (DatabaseValue) -> DatabaseValue)
    }

    let fragment: SQLFragment
    let kind: Kind
    /// The day sections' time zone, `nil` for other kinds.
    let dayZone: DayZone?
    /// The table the value is read from through a to-one, `nil` for the entity's own column.
    let related: RelatedTable?

    init(fragment: SQLFragment, kind: Kind, related: RelatedTable? = nil) {
        self.fragment = fragment
        self.kind = kind
        self.related = related
        if case .day(let zone) = kind { dayZone = zone } else { dayZone = nil }
    }

    /// The section of a row whose section expression has the value `raw`.
    @inline(__always)
    func value(of raw: SQLiteValue) -> SQLiteValue {
        switch kind {
        case .value: return raw
        case .day(let zone): return DayNumber.value(of: raw, in: zone)
        case .computed(let transform): return SQLiteValue(transform(raw.databaseValue))
        }
    }
}
