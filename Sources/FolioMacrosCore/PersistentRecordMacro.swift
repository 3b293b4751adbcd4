import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@PersistentRecord`: the entity of a struct from its stored properties (`static let
/// entity`), and its conformance to `PersistentRecord`.
public struct PersistentRecordMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let record = RecordDeclaration(node, declaration, in: context) else { return [] }
        let hasEntity = declaration.memberBlock.members.contains { member in
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { return false }
            return variable.bindings.contains { $0.pattern.as(IdentifierPatternSyntax.self)?.identifier.text == "entity" }
        }
        if hasEntity { return [] }
        return [DeclSyntax(stringLiteral: record.entityDeclaration)]
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(StructDeclSyntax.self), !protocols.isEmpty else { return [] }
        let conformances = protocols.map(\.trimmedDescription).joined(separator: ", ")
        return [try ExtensionDeclSyntax("extension \(type.trimmed): \(raw: conformances) {}")]
    }
}

extension RecordDeclaration {
    /// `static let entity = EntityDescription<Type>("table", [attributes…], relationships: […], indexes: […])`,
    /// one line per attribute, each naming its property and its column.
    var entityDeclaration: String {
        let attributes = columns.filter { !$0.isToOne }.map(attributeLine)
        let relationships =
            columns.filter(\.isToOne).map(toOneLine)
            + toManys.map { ".toMany(\($0.inverse)" + ($0.deleteRule.map { ", deleteRule: \($0)" } ?? "") + ")" }
        var text = "\(access)static let entity = EntityDescription<\(typeName)>(\n    \"\(table)\",\n"
        text += attributes.isEmpty ? "    []" : "    [\n" + attributes.map { "        \($0),\n" }.joined() + "    ]"
        if !relationships.isEmpty {
            text += ",\n    relationships: [\n" + relationships.map { "        \($0),\n" }.joined() + "    ]"
        }
        if !indexes.isEmpty {
            text +=
                ",\n    indexes: [\n" + indexes.map { "        IndexDescription<\(typeName)>(\($0)),\n" }.joined() + "    ]"
        }
        if let tableRenamedFrom { text += ",\n    renamedFrom: \(tableRenamedFrom)" }
        return text + "\n)"
    }

    /// `AttributeDescription(\Type.property, column: "column", …)`, with the options in the
    /// initializer's order; overload resolution picks the property's type. A derived
    /// attribute's derivation comes first, as written: `AttributeDescription(\Type.property,
    /// derived: .count(\Child.toOne), column: "column", …)`.
    private func attributeLine(_ column: Column) -> String {
        var arguments = ["\\\(typeName).\(column.keyPathName)"]
        if let derivation = column.derivation { arguments.append("derived: \(derivation)") }
        arguments.append("column: \"\(column.column)\"")
        arguments += column.options.flags.map { "\($0): true" }
        if let value = column.options.defaultValue { arguments.append("defaultValue: \(value.trimmedDescription)") }
        if let old = column.options.renamedFrom { arguments.append("renamedFrom: \(old.source)") }
        return "AttributeDescription(" + arguments.joined(separator: ", ") + ")"
    }

    /// `.toOne(\Type.property, column: "column")`: a reference column, with an index.
    private func toOneLine(_ column: Column) -> String {
        var arguments = ["\\\(typeName).\(column.keyPathName)", "column: \"\(column.column)\""]
        if let old = column.options.renamedFrom { arguments.append("renamedFrom: \(old.source)") }
        return ".toOne(" + arguments.joined(separator: ", ") + ")"
    }
}
