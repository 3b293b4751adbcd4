import SwiftSyntax

/// Edits of a property declaration that fix-its propose, keeping its indentation.
enum RecordFixIts {
    /// `variable` with `@name` before its other attributes.
    static func adding(_ name: String, to variable: VariableDeclSyntax) -> VariableDeclSyntax {
        let leading = variable.leadingTrivia
        let attribute = AttributeSyntax(
            atSign: .atSignToken(leadingTrivia: leading),
            attributeName: IdentifierTypeSyntax(name: .identifier(name), trailingTrivia: .space))
        let stripped = variable.with(\.leadingTrivia, [])
        return stripped.with(\.attributes, AttributeListSyntax([.attribute(attribute)] + Array(stripped.attributes)))
    }

    /// `variable` without `attribute`.
    static func removing(_ attribute: AttributeSyntax, from variable: VariableDeclSyntax) -> VariableDeclSyntax {
        let leading = variable.leadingTrivia
        let remaining = variable.attributes.filter {
            guard case .attribute(let other) = $0 else { return true }
            return other.id != attribute.id
        }
        return variable.with(\.attributes, remaining).with(\.leadingTrivia, leading)
    }
}
