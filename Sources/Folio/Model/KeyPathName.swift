import Foundation

/// A key path's text, read safely, and the property name a hand-written attribute takes as
/// its column when it gives none.
///
/// Swift describes `\Article.title` as `\Article.title` only while the app keeps its
/// reflection metadata. Without property names (`-disable-reflection-names`, Xcode's
/// "Reflection Metadata Level: Without Names") the standard library's description traps
/// (Swift 6.3: it unwraps a missing name); without any reflection metadata it gives
/// `\Article.<offset 16 (String)>`. So Folio describes a key path only when the root's
/// properties have names (a ``PersistentRecord`` can be made with `init()` and mirrored to
/// tell), and a column name is a property name only when the text is `\Root.identifier`.
enum KeyPathName {
    /// Whether the stored properties of `Root` have names at run time: every child of a
    /// mirror of `Root()` is labelled. (With no reflection metadata at all the mirror has
    /// no children, and the key path's description does not trap.)
    static func namesAvailable<Root: PersistentRecord>(in root: Root.Type) -> Bool {
        Mirror(reflecting: Root()).children.allSatisfy { $0.label != nil }
    }

    /// The key path's text (`\Article.title`), or a placeholder naming its root where the
    /// app holds no property names.
    static func describe<Root: PersistentRecord>(_ keyPath: AnyKeyPath, in root: Root.Type) -> String {
        namesAvailable(in: root) ? String(describing: keyPath) : "\\\(Root.self).<unnamed: the app has no reflection names>"
    }

    /// `\Article.title` → `title`; `nil` when the key path's text is anything else: a path of
    /// several components (`\Article.source.name`), a computed property
    /// (`\Article.<computed 0x… (Int)>`), an offset without metadata
    /// (`\Article.<offset 16 (String)>`), or no text at all (no property names).
    static func propertyName<Root: PersistentRecord>(of keyPath: AnyKeyPath, in root: Root.Type) -> String? {
        guard namesAvailable(in: root) else { return nil }
        let text = String(describing: keyPath)
        let prefix = "\\\(Root.self)."
        guard text.hasPrefix(prefix) else { return nil }
        let name = String(text.dropFirst(prefix.count))
        return isIdentifier(name) ? name : nil
    }

    /// A Swift identifier as a key path's text shows a property: a letter or `_`, then
    /// letters, digits and `_` (no `.`, `<`, space or parenthesis).
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || $0.properties.numericType != nil }
    }
}

extension EntityDescription {
    /// Refuses an attribute (or to-one) declared without a column name whose key path's text
    /// gives none (see ``KeyPathName``), before anything reads the schema.
    /// - Throws: ``FolioError/unnamedKeyPath(entity:keyPath:)``.
    func checkColumnNames() throws {
        if let attribute = attributes.first(where: { $0.unnamedKeyPath != nil }), let text = attribute.unnamedKeyPath {
            throw FolioError.unnamedKeyPath(entity: name, keyPath: text)
        }
    }
}
