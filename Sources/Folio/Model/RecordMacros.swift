import Foundation

/// Declares a record once: the struct's stored properties become its entity.
///
/// `@PersistentRecord` reads the struct and writes `static let entity` (an
/// ``EntityDescription`` with one ``AttributeDescription`` per stored property, each with its
/// column name written out) and the conformance to ``PersistentRecord``:
///
/// ```swift
/// @PersistentRecord
/// struct Article {
///     var id: RecordID?
///     @Stored(.folded) var title = ""
///     @Stored(.unique) var url = ""
///     @Stored(.indexed) var published = Date()
///     var source = ToOne<Source>()          // a to-one: a reference column, with an index
///     @NotStored var isExpanded = false     // no column
/// }
/// ```
///
/// - `var id: RecordID?` is the identifier (the rowid); every other stored instance property
///   is a column named after it, in declaration order, with the to-ones' reference columns
///   after the attributes (as ``EntityDescription/init(_:_:relationships:indexes:renamedFrom:)``
///   places them). Computed and `static` properties, and those marked ``NotStored()``, are skipped.
/// - Options are given with ``Stored(_:column:defaultValue:renamedFrom:)``; derived
///   attributes, kept by SQLite from a to-many's records, with
///   ``Derived(_:_:column:renamedFrom:)``; the inverse of another record's to-one with
///   ``ToMany(_:deleteRule:)``; compound indexes with `#CompoundIndex`.
/// - The table is `table`, or the type's name in snake case (`FeedEndpoint` → `feed_endpoint`).
///   Renaming the type renames the table: name it here to keep it.
///
/// Properties can be of every type Folio stores (see <doc:AttributeTypes>): numbers, `Bool`,
/// `String`, `URL`, `Date`, `Data`, `UUID`, enums with raw values, `Codable` values, and
/// their optionals.
///
/// The macro refuses, with a fix-it where one fits, what cannot become a column: a `let`, a
/// `lazy` property, a closure, tuple, metatype or existential type, common types Folio
/// does not store (`Substring`, `NSString`…: declare `String`), an optional `ToOne`, a
/// property whose type its syntax cannot tell (`var when = makeDate()`: annotate it), a
/// missing `id`, a missing initial value. A type the syntax cannot judge is checked by the
/// compiler in the generated `AttributeDescription(\Article.title, column: "title")`, whose
/// line names the property: a type neither ``AttributeValue`` nor `Codable & Sendable` is
/// refused there, with what to do. See <doc:DeclaringRecords>.
///
/// - Parameters:
///   - table: the table name; by default the type's name in snake case.
///   - renamedFrom: the table's name in older model versions (see <doc:EvolvingYourSchema>).
@attached(member, names: named(entity))
@attached(extension, conformances: PersistentRecord)
public macro PersistentRecord(_ table: String? = nil, renamedFrom: String? = nil) =
    #externalMacro(module: "FolioMacros", type: "PersistentRecordMacro")

/// The options of a stored property of a ``PersistentRecord(_:renamedFrom:)`` record, as
/// the initializers of ``AttributeDescription`` take them.
///
/// ```swift
/// @Stored(.unique) var url = ""
/// @Stored(.searchable, column: "source") var sourceName = ""
/// @Stored(defaultValue: false) var starred = false
/// @Stored(column: "source_id") var source = ToOne<Source>()   // a to-one: column: and renamedFrom: only
/// ```
///
/// It expands to nothing: `@PersistentRecord` reads it.
///
/// - Parameters:
///   - options: ``AttributeOption/indexed``, ``AttributeOption/unique``,
///     ``AttributeOption/folded``, ``AttributeOption/searchable``.
///   - column: the column name (a string literal); by default the property's name.
///   - defaultValue: the value existing rows get when a migration adds the attribute or makes
///     it non-optional (see ``AttributeDescription/defaultValue``).
///   - renamedFrom: the column's name in older model versions (a string literal).
@attached(peer)
public macro Stored(
    _ options: AttributeOption..., column: String? = nil, defaultValue: (any Sendable)? = nil, renamedFrom: String? = nil
) = #externalMacro(module: "FolioMacros", type: "StoredMacro")

/// A derived attribute of a ``PersistentRecord(_:renamedFrom:)`` record: a column whose value
/// SQLite keeps from the records of one of its to-manys — their count, or the sum, minimum
/// or maximum of one of their attributes, optionally of those matching a filter (see
/// ``Derivation``).
///
/// ```swift
/// @PersistentRecord
/// struct Source {
///     var id: RecordID?
///     @Stored(.indexed) var name = ""
///     @Derived(.count(\Item.source, where: #Predicate { $0.isRead == false }), .indexed)
///     var unreadCount = 0
///     @Derived(.maximum(\Item.published, of: \Item.source)) var newest: Date?
///     @ToMany(\Item.source, deleteRule: .cascade) var items: RecordRequest<Item>
/// }
/// ```
///
/// SQLite's triggers keep the value exact after every commit, whoever writes the children.
/// The app reads it as any attribute (in records, predicates, sorts and sections) and never
/// writes it: ``WriteTransaction`` leaves it out of every insert and update, so a value set
/// on the record is not saved. A non-optional count or sum is 0 for a record without children.
///
/// It expands to nothing: `@PersistentRecord` reads it and declares the attribute with
/// ``AttributeDescription/init(_:derived:column:indexed:renamedFrom:)``, the derivation as
/// written.
///
/// - Parameters:
///   - derivation: what the value is computed from: ``Derivation/count(_:where:)``,
///     ``Derivation/sum(_:of:where:)``, ``Derivation/minimum(_:of:where:)`` or
///     ``Derivation/maximum(_:of:where:)``.
///   - options: ``AttributeOption/indexed`` only, for lists sorted or filtered by the value
///     (a derived value is kept from the children: it is never unique, folded or searchable).
///   - column: the column name (a string literal); by default the property's name.
///   - renamedFrom: the column's name in older model versions (a string literal).
@attached(peer)
public macro Derived(
    _ derivation: Derivation, _ options: AttributeOption..., column: String? = nil, renamedFrom: String? = nil
) = #externalMacro(module: "FolioMacros", type: "DerivedMacro")

/// A stored property of a ``PersistentRecord(_:renamedFrom:)`` record that is no column:
/// Folio neither writes nor reads it, and a record read from the store has its initial value.
///
/// ```swift
/// @NotStored var isExpanded = false
/// ```
///
/// It expands to nothing: `@PersistentRecord` skips the property.
@attached(peer)
public macro NotStored() = #externalMacro(module: "FolioMacros", type: "NotStoredMacro")

/// The inverse to-many of another record's to-one, with its delete rule, as a request of the
/// records that point to this one.
///
/// ```swift
/// @PersistentRecord
/// struct Source {
///     var id: RecordID?
///     @Stored(.indexed) var name = ""
///     @ToMany(\Item.source, deleteRule: .cascade) var items: RecordRequest<Item>
/// }
///
/// let items = try store.fetch(source.items)   // through the reference column's index
/// ```
///
/// The property becomes computed: `RecordRequest<Item>(relatedTo: id, through: \Item.source)`.
/// `@PersistentRecord` declares the to-many in the entity
/// (``RelationshipDescription/toMany(_:deleteRule:)``), so that the rule is kept by the file's
/// triggers.
///
/// - Parameters:
///   - inverse: the child's to-one that points here, with its type (`\Item.source`).
///   - deleteRule: what deleting this record does to the records that point to it.
@attached(accessor, names: named(get))
public macro ToMany<Child: PersistentRecord, Target: PersistentRecord>(
    _ inverse: KeyPath<Child, ToOne<Target>>, deleteRule: DeleteRule = .nullify
) = #externalMacro(module: "FolioMacros", type: "ToManyMacro")

/// A compound index of a ``PersistentRecord(_:renamedFrom:)`` record, over several keys, in
/// order, all ascending (see ``IndexDescription``).
///
/// ```swift
/// #CompoundIndex<Article>(\.isRead, \.published)
/// ```
///
/// It expands to nothing: `@PersistentRecord` adds the index to the entity.
///
/// - Parameter keys: attributes, `\.attribute.folded`, to-ones, or `\.id`.
@freestanding(declaration)
public macro CompoundIndex<Root: PersistentRecord>(_ keys: PartialKeyPath<Root>...) =
    #externalMacro(module: "FolioMacros", type: "CompoundIndexMacro")

/// A compound index of a ``PersistentRecord(_:renamedFrom:)`` record, over several keys, in
/// order, each ascending or descending (see ``IndexDescription``).
///
/// ```swift
/// #CompoundIndex<Article>(.key(\.isRead), .key(\.published, order: .reverse))
/// ```
///
/// It expands to nothing: `@PersistentRecord` adds the index to the entity.
///
/// - Parameter keys: each an attribute, `\.attribute.folded`, a to-one or `\.id`, with its order.
@freestanding(declaration)
public macro CompoundIndex<Root: PersistentRecord>(_ keys: IndexDescription<Root>.Key...) =
    #externalMacro(module: "FolioMacros", type: "CompoundIndexMacro")

/// An option of ``Stored(_:column:defaultValue:renamedFrom:)``: the flags of the initializers
/// of ``AttributeDescription``. ``Derived(_:_:column:renamedFrom:)`` takes ``indexed`` only.
public enum AttributeOption: Sendable, Hashable {
    /// Folio creates an index on the column (for sort and section keys).
    case indexed
    /// The column is unique, with a unique index (the key of ``WriteTransaction/upsert(_:onConflict:)``).
    case unique
    /// Folio keeps the text's folded form in a column of its own, with an index, for case-
    /// and diacritic-insensitive predicates, sorts and sections. Text attributes only.
    case folded
    /// The attribute is in the entity's full-text index, for ``TextSearch`` (implies `folded`).
    /// Text attributes only.
    case searchable
}
