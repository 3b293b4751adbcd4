import MacroTesting
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros

@testable import FolioMacrosCore

/// Every macro of Folio, under the names Folio declares them with; `@PersistentRecord`
/// adds the conformance to `PersistentRecord`, as the compiler asks it to.
let folioMacros: [String: MacroSpec] = [
    "PersistentRecord": MacroSpec(type: PersistentRecordMacro.self, conformances: ["PersistentRecord"]),
    "Stored": MacroSpec(type: StoredMacro.self),
    "Derived": MacroSpec(type: DerivedMacro.self),
    "NotStored": MacroSpec(type: NotStoredMacro.self),
    "ToMany": MacroSpec(type: ToManyMacro.self),
    "CompoundIndex": MacroSpec(type: CompoundIndexMacro.self),
]
