import Foundation

/// One section of a ``FetchedResultsModel``: its name and its rows.
///
/// ```swift
/// ForEach(model.sections) { section in
///     Section(section.name) {
///         ForEach(section.items) { item in ArticleRow(article: item.record) }
///     }
/// }
/// ```
///
/// Results without a section key have one section, named `""`, holding every row.
public struct FetchedSection<R: PersistentRecord>: Identifiable, Sendable {
    /// A section's identity: the value of the section key that makes the section, compared
    /// as SQLite compares it.
    ///
    /// Two sections never share an identifier, even when their names read the same (the
    /// integer `1` and the text `"1"`, a precomposed and a decomposed `"é"`), and a
    /// section keeps its identifier across commits, filter and sort changes.
    public struct ID: Hashable, Sendable, CustomStringConvertible {
        let value: SQLiteValue

        /// The value as SQLite stores it: text quoted (`"a"`), numbers in decimal (a day
        /// section is its day number, such as `19000`), blobs as `x'…'`, or `NULL`.
        ///
        /// - Complexity: O(length of the value).
        public var description: String { value.description }
    }

    /// The section's identity, stable across commits.
    ///
    /// - Complexity: O(1).
    public let id: ID
    /// The section key's value as text (a day as `YYYY-MM-DD`); `""` for the section of
    /// records whose key is `nil`, and for results without a section key.
    ///
    /// - Complexity: O(1).
    public let name: String
    /// The title shown in a section index (see
    /// ``FetchedResultsController/sectionIndexTitle``), or `nil`.
    ///
    /// - Complexity: O(1).
    public let indexTitle: String?
    /// Whether the section holds the records whose key is `nil`.
    ///
    /// - Complexity: O(1).
    public let isNil: Bool
    /// The section's rows. Reading their identifiers loads nothing.
    ///
    /// - Complexity: O(1); loads nothing.
    public let items: FetchedItems<R>

    init(id: ID, info: SectionInfo, records: FetchedRecords<R>) {
        self.id = id
        self.name = info.name
        self.indexTitle = info.indexTitle
        self.isNil = info.isNil
        self.items = FetchedItems(records: records, bounds: info.offset..<(info.offset + info.numberOfObjects))
    }
}
