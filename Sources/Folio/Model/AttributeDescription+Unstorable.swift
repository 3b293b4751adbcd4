extension AttributeDescription {
    /// Refuses, at compile time, an attribute of a type Folio cannot store: neither an
    /// ``AttributeValue`` nor `Codable & Sendable` (an enum with raw values that is not
    /// declared `Codable`, a class, a non-`Sendable` value).
    ///
    /// Swift picks this initializer only when no other one applies, and reports its message
    /// at the declaration — in a `@PersistentRecord` record, at the generated line that names
    /// the property (`AttributeDescription(\Post.status, column: "status")`):
    ///
    /// ```swift
    /// enum Status: String { case draft, published }    // not Codable
    /// AttributeDescription(\Post.status)
    /// // error: 'init(_:column:…)' is unavailable: Folio cannot store this property's type: …
    /// ```
    ///
    /// Declare the type `Codable` (an enum with raw values is then stored by its raw value,
    /// anything else as JSON text; see <doc:AttributeTypes>) and `Sendable`, or leave the
    /// property out of the entity (mark it `@NotStored` in a `@PersistentRecord` record).
    ///
    /// - Complexity: Never called.
    @available(
        *, unavailable,
        message:
            "Folio cannot store this property's type: it is neither an AttributeValue nor Codable & Sendable. Declare the type Codable and Sendable (an enum with Int or String raw values is then stored by its raw value, any other type as JSON text), or leave the property out of the entity (@NotStored with @PersistentRecord)"
    )
    @_disfavoredOverload
    public init<Value>(
        _ keyPath: WritableKeyPath<Root, Value>,
        column: String? = nil,
        indexed: Bool = false,
        unique: Bool = false,
        folded: Bool = false,
        searchable: Bool = false,
        defaultValue: Value? = nil,
        renamedFrom: String? = nil
    ) {
        fatalError("unavailable")
    }
}
