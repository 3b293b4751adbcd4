import Foundation

/// The stable identity of a stored record: its SQLite rowid.
///
/// Identifiers are what snapshots, change sets and ``FetchedRecords`` hold eagerly;
/// records are loaded from them lazily. An identifier is eight bytes.
public struct RecordID: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// The SQLite rowid.
    public let rawValue: Int64

    /// Creates an identifier from a rowid.
    public init(_ rawValue: Int64) { self.rawValue = rawValue }

    /// Orders identifiers by rowid.
    public static func < (lhs: RecordID, rhs: RecordID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// `#` and the rowid, such as `#42`.
    public var description: String { "#\(rawValue)" }

    /// Decodes the rowid from a single integer.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }
    /// Encodes the rowid as a single integer.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

#if !(os(macOS) || os(iOS) || os(tvOS) || os(watchOS) || os(visionOS))
extension IndexPath {
    /// Creates an index path for an item in a section, as UIKit and AppKit do on Apple platforms.
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
    /// The section of a two-element index path.
    public var section: Int { self[0] }
    /// The item (row) of a two-element index path.
    public var item: Int { self[1] }
}
#endif
