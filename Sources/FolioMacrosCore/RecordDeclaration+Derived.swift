import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

extension RecordDeclaration {
    /// Why each option of `@Stored` that `@Derived` refuses does not apply to a value SQLite
    /// keeps from the children.
    static let refusedDerivedOptions: [String: String] = [
        "unique":
            "many records derive the same value, as two without children both count 0, and a unique index would refuse their children's writes",
        "folded": "Folio folds text when the app writes a record, and the app never writes a derived value",
        "searchable": "Folio indexes text for search when the app writes a record, and the app never writes a derived value",
    ]

    /// `@Derived(.count(\Child.toOne, where: …), .indexed, column: "…", renamedFrom: "…")`:
    /// the derivation as written and the options; `nil` (after a diagnostic) without a
    /// derivation, or on a to-one. `.unique`, `.folded` and `.searchable` are diagnosed and
    /// left out.
    func readDerived(
        _ attribute: AttributeSyntax, name: String, type: PropertyType, in context: some MacroExpansionContext
    ) -> (derivation: String, options: StoredOptions)? {
        guard case .argumentList(let arguments) = attribute.arguments, let first = arguments.first, first.label == nil else {
            context.diagnose(Diagnostic(node: attribute, message: RecordDiagnostic.derivedWithoutDerivation(name: name)))
            return nil
        }
        if type.kind == .toOne {
            context.diagnose(Diagnostic(node: attribute, message: RecordDiagnostic.derivedToOne(name: name)))
            return nil
        }
        let rest = arguments.dropFirst()
        for argument in rest where argument.label == nil {
            guard let member = argument.expression.as(MemberAccessExprSyntax.self),
                let reason = Self.refusedDerivedOptions[member.declName.baseName.text]
            else { continue }
            context.diagnose(
                Diagnostic(
                    node: argument.expression,
                    message: RecordDiagnostic.derivedOption(
                        name: name, option: "." + member.declName.baseName.text, reason: reason)))
        }
        var options = StoredOptions(rest, property: name, in: context)
        options.flags = options.flags.filter { $0 == "indexed" }
        options.defaultValue = nil
        return (first.expression.trimmedDescription, options)
    }
}
