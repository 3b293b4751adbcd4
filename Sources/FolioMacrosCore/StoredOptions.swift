import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// The options of one `@Stored(…)` attribute: `.indexed`, `.unique`, `.folded`,
/// `.searchable`, `column:`, `defaultValue:`, `renamedFrom:`; or of one `@Derived(…)`,
/// after its derivation.
struct StoredOptions {
    /// The options given, in `AttributeDescription`'s parameter order.
    var flags: [String] = []
    /// The column name, from a string literal.
    var column: String?
    var defaultValue: ExprSyntax?
    /// `renamedFrom:` as written (a string literal), and its value.
    var renamedFrom: (source: String, value: String)?

    static let flagOrder = ["indexed", "unique", "folded", "searchable"]

    /// No options: a property without `@Stored`.
    init() {}

    /// Reads an `@Stored` attribute; a non-literal name is diagnosed and left out.
    init(_ attribute: AttributeSyntax, property: String, in context: some MacroExpansionContext) {
        guard case .argumentList(let arguments) = attribute.arguments else {
            self.init()
            return
        }
        self.init(arguments, property: property, in: context)
    }

    /// Reads the options among an attribute's arguments (`@Derived`'s after its derivation).
    init(_ arguments: some Sequence<LabeledExprSyntax>, property: String, in context: some MacroExpansionContext) {
        var given: Set<String> = []
        for argument in arguments {
            switch argument.label?.text {
            case nil:
                if let member = argument.expression.as(MemberAccessExprSyntax.self) {
                    given.insert(member.declName.baseName.text)
                }
            case "column":
                column = Self.literal(argument.expression, argument: "column:", property: property, in: context)?.value
            case "renamedFrom":
                renamedFrom = Self.literal(argument.expression, argument: "renamedFrom:", property: property, in: context)
            case "defaultValue":
                defaultValue = argument.expression.trimmed
            default:
                break
            }
        }
        flags = Self.flagOrder.filter(given.contains)
    }

    /// The value of a plain string literal (no interpolation), and its source; diagnoses anything else.
    static func literal(
        _ expression: ExprSyntax, argument: String, property: String, in context: some MacroExpansionContext
    ) -> (source: String, value: String)? {
        if let literal = expression.as(StringLiteralExprSyntax.self), let value = literal.representedLiteralValue {
            return (literal.trimmedDescription, value)
        }
        context.diagnose(Diagnostic(node: expression, message: RecordDiagnostic.notALiteral(argument: argument, name: property)))
        return nil
    }
}

/// Names of attributes and what makes a name fit for SQLite.
enum RecordNames {
    /// The last component of an attribute's name (`Folio.Stored` → `Stored`).
    static func name(of attribute: AttributeSyntax) -> String {
        let text = attribute.attributeName.trimmedDescription
        return text.split(separator: ".").last.map(String.init) ?? text
    }

    /// The attributes of a declaration named `name` (`Stored`, `NotStored`, `ToMany`).
    static func attributes(_ list: AttributeListSyntax, named name: String) -> [AttributeSyntax] {
        list.compactMap { element in
            guard case .attribute(let attribute) = element, Self.name(of: attribute) == name else { return nil }
            return attribute
        }
    }

    /// Whether a declaration's attributes include `@PersistentRecord`.
    static func hasRecordAttribute(_ list: AttributeListSyntax) -> Bool {
        !attributes(list, named: "PersistentRecord").isEmpty
    }

    /// Whether the innermost type around a macro carries `@PersistentRecord`.
    static func enclosingTypeIsRecord(_ context: some MacroExpansionContext) -> Bool {
        for syntax in context.lexicalContext {
            if let type = syntax.asProtocol((any DeclGroupSyntax).self) { return hasRecordAttribute(type.attributes) }
        }
        return false
    }

    /// Why `name` cannot name a table or column (as Folio's store checks it when it opens a
    /// file), or `nil` when it can: letters, digits and `_`, starting with a letter or `_`, at
    /// most 64 bytes, without Folio's and SQLite's prefixes.
    static func problem(with name: String) -> String? {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 64,
            first == "_" || (first.isASCII && first.properties.isAlphabetic),
            name.unicodeScalars.allSatisfy({
                $0 == "_" || ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0)
            })
        else {
            return "is not a plain SQLite name (ASCII letters, digits and _, starting with a letter or _, at most 64 bytes)"
        }
        let lower = name.lowercased()
        if lower.hasPrefix("sqlite_") || lower.hasPrefix("folio_") { return "uses a prefix reserved for SQLite and Folio" }
        return nil
    }

    /// A type name in snake case, the default table name: `FeedEndpoint` → `feed_endpoint`,
    /// `URLCache` → `url_cache`, `Article` → `article`.
    static func snakeCase(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
                    result += "_"
                }
            }
            result += character.lowercased()
        }
        return result
    }

    /// A property's name as a column name: without the backticks of an escaped keyword.
    static func unescaped(_ token: TokenSyntax) -> String {
        var text = token.text
        if text.hasPrefix("`"), text.hasSuffix("`"), text.count > 1 { text = String(text.dropFirst().dropLast()) }
        return text
    }
}
