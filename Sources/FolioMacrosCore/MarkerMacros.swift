import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Stored(…)`: a stored property's options, read by `@PersistentRecord`; it adds nothing.
public struct StoredMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        MarkerCheck.check(node, on: declaration, in: context)
        return []
    }
}

/// `@Derived(.count(\Child.toOne), …)`: a derived attribute's derivation and options, read by
/// `@PersistentRecord`; it adds nothing.
public struct DerivedMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        MarkerCheck.check(node, on: declaration, in: context)
        return []
    }
}

/// `@NotStored`: a stored property that is no column, skipped by `@PersistentRecord`; it adds nothing.
public struct NotStoredMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        MarkerCheck.check(node, on: declaration, in: context)
        return []
    }
}

/// `@ToMany(\Child.toOne, deleteRule: …) var children: RecordRequest<Child>`: the inverse
/// to-many, read by `@PersistentRecord` for its delete rule, and a computed request of the
/// records that point to this one.
public struct ToManyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        MarkerCheck.check(node, on: declaration, in: context)
        guard case .argumentList(let arguments) = node.arguments, let first = arguments.first,
            let keyPath = first.expression.as(KeyPathExprSyntax.self), let root = keyPath.root
        else { return [] }
        return ["get { RecordRequest<\(root.trimmed)>(relatedTo: self.id, through: \(keyPath.trimmed)) }"]
    }
}

/// `#CompoundIndex<Record>(\.a, \.b)`: an index over several keys, read by
/// `@PersistentRecord`; it adds nothing.
public struct CompoundIndexMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        if !RecordNames.enclosingTypeIsRecord(context) {
            context.diagnose(Diagnostic(node: node, message: RecordDiagnostic.outsideRecord(attribute: "#CompoundIndex")))
        } else if node.arguments.isEmpty {
            let reason = "needs at least one key: #CompoundIndex<Record>(\\.first, \\.second)"
            context.diagnose(
                Diagnostic(node: node, message: RecordDiagnostic.misplacedAttribute(attribute: "#CompoundIndex", reason: reason)))
        }
        return []
    }
}

/// What every attribute macro checks of itself: it is on a property of a `@PersistentRecord`
/// type. The rest is checked by `@PersistentRecord`, which sees the whole type.
enum MarkerCheck {
    static func check(_ node: AttributeSyntax, on declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext) {
        let name = "@" + RecordNames.name(of: node)
        guard declaration.is(VariableDeclSyntax.self) else {
            context.diagnose(
                Diagnostic(
                    node: node,
                    message: RecordDiagnostic.misplacedAttribute(attribute: name, reason: "applies to a property of a record")))
            return
        }
        if !RecordNames.enclosingTypeIsRecord(context) {
            context.diagnose(Diagnostic(node: node, message: RecordDiagnostic.outsideRecord(attribute: name)))
        }
    }
}
