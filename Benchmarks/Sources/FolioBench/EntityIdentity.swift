import Foundation
import Folio

/// The benchmark's records are declared with `@PersistentRecord`; these are the entities it
/// declared by hand before, which the macro's must equal (table, columns, indexes, version
/// hash), so that results stay comparable with earlier runs. Checked at every start (CI
/// runs the quick mode): a difference stops the run.
enum EntityIdentity {
    static func differences() -> [String] {
        compare(
            Article.entity,
            EntityDescription<Article>(
                "article",
                [
                    AttributeDescription(\.title),
                    AttributeDescription(\.url),
                    AttributeDescription(\.published, indexed: true),
                    AttributeDescription(\.score),
                    AttributeDescription(\.category),
                    AttributeDescription(\.isRead),
                ]))
            + compare(
                FeedSource.entity,
                EntityDescription<FeedSource>(
                    "source", [AttributeDescription(\.name, indexed: true)],
                    relationships: [.toMany(\FeedItem.source, deleteRule: .nullify)]))
            + compare(
                FeedItem.entity,
                EntityDescription<FeedItem>(
                    "item", [AttributeDescription(\.title), AttributeDescription(\.published, indexed: true)],
                    relationships: [.toOne(\.source)]))
            + compare(
                KeyedRow.entity,
                EntityDescription<KeyedRow>(
                    "keyed",
                    [
                        AttributeDescription(\.key, unique: true),
                        AttributeDescription(\.title),
                        AttributeDescription(\.published, indexed: true),
                    ]))
            + compare(
                HandOrdered.entity,
                EntityDescription<HandOrdered>(
                    "hand_ordered", [AttributeDescription(\.title), AttributeDescription(\.position, indexed: true)]))
            + compare(
                Person.entity,
                EntityDescription<Person>(
                    "person", [AttributeDescription(\.name, indexed: true), AttributeDescription(\.team)],
                    indexes: [IndexDescription([.key(\.team), .key(\.name)])]))
            + compare(
                TextArticle.entity,
                EntityDescription<TextArticle>(
                    "text_article",
                    [
                        AttributeDescription(\.title, indexed: true, searchable: true),
                        AttributeDescription(\.published, indexed: true),
                        AttributeDescription(\.score),
                    ]))
    }

    private static func compare<R: PersistentRecord>(_ macro: EntityDescription<R>, _ hand: EntityDescription<R>) -> [String] {
        var differences: [String] = []
        if macro.schema != hand.schema { differences.append("\(R.self): schema \(macro.schema) ≠ \(hand.schema)") }
        if macro.versionHash != hand.versionHash {
            differences.append("\(R.self): version hash \(macro.versionHash) ≠ \(hand.versionHash)")
        }
        if macro.attributes.map(\.keyPath) != hand.attributes.map(\.keyPath) { differences.append("\(R.self): key paths") }
        if macro.relationships.map(\.deleteRule) != hand.relationships.map(\.deleteRule) {
            differences.append("\(R.self): delete rules")
        }
        return differences
    }
}
