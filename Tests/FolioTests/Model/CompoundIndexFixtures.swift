import Foundation
import GRDB
import Testing
@testable import Folio

// The "item" entity of the compound-index tests, in the versions the tests move between:
// the same table, its compound indexes declared differently.

/// The target of the items' to-one.
struct ListSource: PersistentRecord, Equatable {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<ListSource>("listsource", [AttributeDescription(\.name)])
}

/// What every version of the item declares, with `indexes` left to a case.
protocol ListItemIndexes: Sendable {
    static var indexes: [IndexDescription<ListItem<Self>>] { get }
}

/// An item whose compound indexes are `Indexes.indexes`.
struct ListItem<Indexes: ListItemIndexes>: PersistentRecord, Equatable {
    var id: RecordID?
    var title = ""
    var isRead = false
    var published = 0.0
    var rank = 0
    var source = ToOne<ListSource>()
    /// No attribute: an index over it is refused.
    var doubled: Int { rank * 2 }

    static var entity: EntityDescription<ListItem> {
        EntityDescription(
            "item",
            [
                AttributeDescription(\.title, folded: true),
                AttributeDescription(\.isRead),
                AttributeDescription(\.published, indexed: true),
                AttributeDescription(\.rank),
            ],
            relationships: [.toOne(\.source)],
            indexes: Indexes.indexes)
    }

    static func make(_ i: Int) -> ListItem {
        ListItem(title: "Item \(i % 97)", isRead: i % 3 != 0, published: Double((i * 7919) % 1000), rank: i % 5)
    }
}

/// No compound index.
enum NoIndexes: ListItemIndexes {
    static var indexes: [IndexDescription<ListItem<Self>>] { [] }
}

/// `(isRead, published DESC)`: unread items, newest first.
enum UnreadNewest: ListItemIndexes {
    static var indexes: [IndexDescription<ListItem<Self>>] {
        [IndexDescription([.key(\.isRead), .key(\.published, order: .reverse)])]
    }
}

/// `(isRead, published)` ascending, and `(source, title.folded DESC)`.
enum UnreadOldestAndBySource: ListItemIndexes {
    static var indexes: [IndexDescription<ListItem<Self>>] {
        [
            IndexDescription([\.isRead, \.published]),
            IndexDescription([.key(\.source), .key(\.title.folded, order: .reverse)]),
        ]
    }
}

/// Each refused declaration.
enum EmptyIndex: ListItemIndexes {
    static var indexes: [IndexDescription<ListItem<Self>>] { [IndexDescription([] as [PartialKeyPath<ListItem<Self>>])] }
}
enum UnknownKey: ListItemIndexes {
    static var indexes: [IndexDescription<ListItem<Self>>] { [IndexDescription([\.isRead, \.doubled])] }
}
enum KeyTwice: ListItemIndexes {
    static var indexes: [IndexDescription<ListItem<Self>>] {
        [IndexDescription([.key(\.rank), .key(\.rank, order: .reverse)])]
    }
}
enum IndexTwice: ListItemIndexes {
    static var indexes: [IndexDescription<ListItem<Self>>] {
        [IndexDescription([\.isRead, \.rank]), IndexDescription([\.isRead, \.rank])]
    }
}
enum TargetAttribute: ListItemIndexes {
    static var indexes: [IndexDescription<ListItem<Self>>] { [IndexDescription([\.isRead, \.source.name])] }
}
enum UnfoldedText: ListItemIndexes {
    // `title` is folded; `\.source.name.folded` goes through the to-one: refused too.
    static var indexes: [IndexDescription<ListItem<Self>>] { [IndexDescription([\.source.name.folded])] }
}
