import FolioMacrosCore
import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

// The compiler plug-in of Folio's macros. Their implementation is `FolioMacrosCore`, a
// library of its own so that the macro tests depend on it and not on this plug-in (a test
// target that depends on a macro target makes SwiftPM build every test target for the host
// too). The compiler finds a macro by this module's name and the type's (`FolioMacros.
// StoredMacro`), so each type here forwards to its implementation.

@main
struct FolioMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        PersistentRecordMacro.self, StoredMacro.self, DerivedMacro.self, NotStoredMacro.self, ToManyMacro.self,
        CompoundIndexMacro.self,
    ]
}

/// `@PersistentRecord`: see `FolioMacrosCore.PersistentRecordMacro`.
public struct PersistentRecordMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try FolioMacrosCore.PersistentRecordMacro.expansion(
            of: node, providingMembersOf: declaration, conformingTo: protocols, in: context)
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        try FolioMacrosCore.PersistentRecordMacro.expansion(
            of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context)
    }
}

/// `@Stored`: see `FolioMacrosCore.StoredMacro`.
public struct StoredMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try FolioMacrosCore.StoredMacro.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}

/// `@Derived`: see `FolioMacrosCore.DerivedMacro`.
public struct DerivedMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try FolioMacrosCore.DerivedMacro.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}

/// `@NotStored`: see `FolioMacrosCore.NotStoredMacro`.
public struct NotStoredMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try FolioMacrosCore.NotStoredMacro.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}

/// `@ToMany`: see `FolioMacrosCore.ToManyMacro`.
public struct ToManyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        try FolioMacrosCore.ToManyMacro.expansion(of: node, providingAccessorsOf: declaration, in: context)
    }
}

/// `#CompoundIndex`: see `FolioMacrosCore.CompoundIndexMacro`.
public struct CompoundIndexMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try FolioMacrosCore.CompoundIndexMacro.expansion(of: node, in: context)
    }
}
