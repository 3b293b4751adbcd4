import Foundation

/// One section of a controller's results (`NSFetchedResultsSectionInfo`).
public struct SectionInfo: Sendable, Hashable {
    /// The section key's value as text; `""` for records whose key is `nil`.
    public var name: String
    /// The title shown in a section index, see ``FetchedResultsController/sectionIndexTitle``.
    public var indexTitle: String?
    /// The number of records in the section.
    public var numberOfObjects: Int
    /// The index of the section's first record among all results.
    public var offset: Int
    /// Whether the section holds the records whose key is `nil`.
    public var isNil: Bool
}
