import Foundation
import GRDB

/// How a derived attribute is computed from the records of one of the entity's to-manys:
/// their count, or the sum, minimum or maximum of one of their attributes, optionally of
/// those matching a filter — Core Data's derived attributes (`items.@count`), kept exact by
/// SQLite.
///
/// ```swift
/// @PersistentRecord
/// struct Source {
///     var id: RecordID?
///     @Stored(.indexed) var name = ""
///     @Derived(.count(\Item.source, where: #Predicate { $0.isRead == false }), .indexed)
///     var unreadCount = 0
///     @Derived(.maximum(\Item.published, of: \Item.source)) var newest: Date?
/// }
/// ```
///
/// The value is a column of the parent's table, kept by triggers made of SQLite built-ins
/// only, so it is exact after every commit whoever writes the children — Folio, raw SQL,
/// the `sqlite3` shell, another process — and a list of parents sorted, filtered or
/// sectioned by it follows its children live, at the cost of the changed rows. The app
/// reads it and never writes it: ``WriteTransaction`` leaves it out of every insert and
/// update. See <doc:Relationships>.
// @unchecked Sendable: the closure captures only immutable key paths and a `Predicate`.
public struct Derivation: @unchecked Sendable {
    enum Kind: String, Sendable, Hashable {
        case count, sum, minimum, maximum
    }

    let kind: Kind
    /// The child's side, as declared (``DerivedFrom``); resolved when the store opens (two
    /// entities may point to each other: reading the child's description while the parent's
    /// is built would never end).
    let source: any DerivationSource

    /// The number of records whose to-one `inverse` points to the record, of those matching
    /// `filter` when there is one. The attribute is an integer (`Int`, `Int64`…), never
    /// optional: 0 for a record without children.
    ///
    /// - Parameters:
    ///   - inverse: the child's to-one that points to this entity (`\Item.source`).
    ///   - filter: which children count (`#Predicate { $0.isRead == false }`); it reads the
    ///     child's own stored attributes only — not folded text, not through a to-one.
    /// - Complexity: O(1); the child's description is read when the store opens.
    public static func count<Child: PersistentRecord, Parent: PersistentRecord>(
        _ inverse: KeyPath<Child, ToOne<Parent>>, where filter: Predicate<Child>? = nil
    ) -> Derivation {
        Derivation(kind: .count, source: DerivedFrom(inverse: inverse, value: nil, filter: filter))
    }

    /// The sum of the child attribute `value` over the records whose to-one `inverse` points
    /// to the record (of those matching `filter`), as SQLite's `sum` computes it: an integer
    /// attribute sums integers exactly, and a write that would take it past `Int64` is
    /// refused (SQLite's "integer overflow"); a `Double` attribute is SQLite's `total`. A
    /// non-optional attribute is 0 for a record without children, an optional one `nil`.
    ///
    /// - Complexity: O(1); the child's description is read when the store opens.
    public static func sum<Child: PersistentRecord, Parent: PersistentRecord, Value>(
        _ value: KeyPath<Child, Value>, of inverse: KeyPath<Child, ToOne<Parent>>, where filter: Predicate<Child>? = nil
    ) -> Derivation {
        Derivation(kind: .sum, source: DerivedFrom(inverse: inverse, value: value, filter: filter))
    }

    /// The smallest value of the child attribute `value` over the records whose to-one
    /// `inverse` points to the record (of those matching `filter`), as SQLite's `min`
    /// compares stored values; `nil` for a record without such children, so the attribute
    /// is optional, of the child attribute's type (`Date?` for a `Date`).
    ///
    /// - Complexity: O(1); the child's description is read when the store opens.
    public static func minimum<Child: PersistentRecord, Parent: PersistentRecord, Value>(
        _ value: KeyPath<Child, Value>, of inverse: KeyPath<Child, ToOne<Parent>>, where filter: Predicate<Child>? = nil
    ) -> Derivation {
        Derivation(kind: .minimum, source: DerivedFrom(inverse: inverse, value: value, filter: filter))
    }

    /// The largest value of the child attribute `value` (the newest item's date), as
    /// ``minimum(_:of:where:)`` is the smallest.
    ///
    /// - Complexity: O(1); the child's description is read when the store opens.
    public static func maximum<Child: PersistentRecord, Parent: PersistentRecord, Value>(
        _ value: KeyPath<Child, Value>, of inverse: KeyPath<Child, ToOne<Parent>>, where filter: Predicate<Child>? = nil
    ) -> Derivation {
        Derivation(kind: .maximum, source: DerivedFrom(inverse: inverse, value: value, filter: filter))
    }
}

/// What a ``Derivation`` reads, as declared (``DerivedFrom``); resolved by Query.
protocol DerivationSource {}

/// A derivation's child side as declared: the child's to-one that points to the parent, the
/// child attribute aggregated (none for a count) and the filter.
struct DerivedFrom<Child: PersistentRecord, Parent: PersistentRecord>: DerivationSource {
    let inverse: KeyPath<Child, ToOne<Parent>>
    let value: AnyKeyPath?
    let filter: Predicate<Child>?
}
