import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// A record struct as `@PersistentRecord` reads it: its table, its columns (attributes and
/// to-ones, in declaration order), its inverse to-manys and its compound indexes. Reading it
/// diagnoses every declaration that cannot become part of the entity.
struct RecordDeclaration {
    /// One column: a stored property.
    struct Column {
        var property: String
        /// The property's name as written (backticks kept), for its key path.
        var keyPathName: String
        var isToOne: Bool
        var column: String
        var options: StoredOptions
        /// A derived attribute's derivation, as written in `@Derived(…)`.
        var derivation: String?
        /// The property's name in the source, where a diagnostic about its column points.
        var node: Syntax
    }

    /// One inverse to-many: the child's to-one and the delete rule.
    struct ToMany {
        var inverse: String
        var deleteRule: String?
    }

    var typeName: String
    var table: String
    var tableRenamedFrom: String?
    var access: String
    var columns: [Column] = []
    var toManys: [ToMany] = []
    /// Each compound index's keys, as written in `#CompoundIndex<Type>(…)`.
    var indexes: [String] = []

    /// Reads the struct; `nil` (after a diagnostic) for a declaration the macro cannot describe at all.
    init?(_ node: AttributeSyntax, _ declaration: some DeclGroupSyntax, in context: some MacroExpansionContext) {
        guard let record = declaration.as(StructDeclSyntax.self) else {
            let kind =
                declaration.is(ClassDeclSyntax.self)
                ? "class"
                : declaration.is(EnumDeclSyntax.self) ? "enum" : declaration.is(ActorDeclSyntax.self) ? "actor" : "declaration"
            context.diagnose(Diagnostic(node: node, message: RecordDiagnostic.notAStruct(kind: kind)))
            return nil
        }
        typeName = record.name.text
        if let generics = record.genericParameterClause {
            context.diagnose(Diagnostic(node: generics, message: RecordDiagnostic.genericType(type: typeName)))
            return nil
        }
        access =
            record.modifiers.first { ["public", "package"].contains($0.name.text) }.map { $0.name.text + " " } ?? ""
        table = RecordNames.snakeCase(typeName)
        readArguments(node, in: context)
        if let problem = RecordNames.problem(with: table) {
            context.diagnose(Diagnostic(node: node, message: RecordDiagnostic.invalidTableName(table: table, reason: problem)))
        }
        let explicitInit = record.memberBlock.members.contains {
            guard let initializer = $0.decl.as(InitializerDeclSyntax.self) else { return false }
            return initializer.signature.parameterClause.parameters.isEmpty && initializer.optionalMark == nil
        }
        var hasIdentifier = false
        for member in record.memberBlock.members {
            if let variable = member.decl.as(VariableDeclSyntax.self) {
                if readVariable(variable, explicitInit: explicitInit, in: context) { hasIdentifier = true }
            } else if let expansion = member.decl.as(MacroExpansionDeclSyntax.self),
                expansion.macroName.text == "CompoundIndex"
            {
                let keys = expansion.arguments.map { $0.expression.trimmedDescription }
                indexes.append("[" + keys.joined(separator: ", ") + "]")
            }
        }
        if !hasIdentifier { diagnoseMissingIdentifier(record, in: context) }
        diagnoseDuplicateColumns(in: context)
    }

    /// `@PersistentRecord("table", renamedFrom: "old")`.
    private mutating func readArguments(_ node: AttributeSyntax, in context: some MacroExpansionContext) {
        guard case .argumentList(let arguments) = node.arguments else { return }
        for argument in arguments {
            switch argument.label?.text {
            case nil:
                if let name = StoredOptions.literal(
                    argument.expression, argument: "The table name", property: typeName, in: context)
                {
                    table = name.value
                }
            case "renamedFrom":
                tableRenamedFrom =
                    StoredOptions.literal(argument.expression, argument: "renamedFrom:", property: typeName, in: context)?
                    .source
            default:
                break
            }
        }
    }

    /// Reads one `var`/`let` declaration; returns whether it declares the identifier.
    private mutating func readVariable(
        _ variable: VariableDeclSyntax, explicitInit: Bool, in context: some MacroExpansionContext
    ) -> Bool {
        let names = variable.bindings.compactMap { $0.pattern.as(IdentifierPatternSyntax.self)?.identifier.text }
        let display = names.first ?? variable.bindings.first?.pattern.trimmedDescription ?? "?"
        if variable.modifiers.contains(where: { ["static", "class"].contains($0.name.text) }) {
            if names.contains("entity") {
                context.diagnose(Diagnostic(node: variable, message: RecordDiagnostic.handWrittenEntity(type: typeName)))
            }
            for attribute in folioAttributes(variable) {
                let reason = "applies to an instance property: a static property is never a column"
                context.diagnose(
                    Diagnostic(
                        node: attribute,
                        message: RecordDiagnostic.misplacedAttribute(
                            attribute: "@\(RecordNames.name(of: attribute))", reason: reason)))
            }
            return false
        }
        let stored = RecordNames.attributes(variable.attributes, named: "Stored")
        let derived = RecordNames.attributes(variable.attributes, named: "Derived")
        let notStored = RecordNames.attributes(variable.attributes, named: "NotStored")
        let toMany = RecordNames.attributes(variable.attributes, named: "ToMany")
        for (label, list) in [("@Stored", stored), ("@Derived", derived)] {
            if let second = list.dropFirst().first {
                context.diagnose(
                    Diagnostic(node: second, message: RecordDiagnostic.repeatedAttribute(name: display, attribute: label)))
            }
        }
        // In source order: the second one written is the one diagnosed.
        let marks = [("@Stored", stored), ("@Derived", derived), ("@NotStored", notStored), ("@ToMany", toMany)]
            .filter { !$0.1.isEmpty }.sorted { $0.1[0].position < $1.1[0].position }
        if marks.count > 1 {
            context.diagnose(
                Diagnostic(
                    node: marks[1].1[0],
                    message: RecordDiagnostic.conflictingAttributes(name: display, first: marks[0].0, second: marks[1].0)))
            return names.contains("id")
        }
        if names.contains("id"), let attribute = stored.first ?? derived.first ?? notStored.first ?? toMany.first {
            let label = "@" + RecordNames.name(of: attribute)
            let fixIt = FixIt(
                message: RecordFixIt("Remove \(label)"),
                changes: [.replace(oldNode: Syntax(variable), newNode: Syntax(RecordFixIts.removing(attribute, from: variable)))])
            context.diagnose(
                Diagnostic(node: attribute, message: RecordDiagnostic.identifierOption(attribute: label), fixIts: [fixIt]))
        }
        if let attribute = toMany.first {
            readToMany(variable, attribute, in: context)
            return false
        }
        if !notStored.isEmpty { return names.contains("id") }
        var declaresIdentifier = false
        for binding in variable.bindings {
            guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
                context.diagnose(Diagnostic(node: binding.pattern, message: RecordDiagnostic.tuplePattern))
                continue
            }
            let name = RecordNames.unescaped(pattern.identifier)
            if Self.isComputed(binding) {
                if let attribute = stored.first ?? derived.first {
                    let reason = "applies to a stored property: '\(name)' is computed, and is never a column"
                    context.diagnose(
                        Diagnostic(
                            node: attribute,
                            message: RecordDiagnostic.misplacedAttribute(
                                attribute: "@\(RecordNames.name(of: attribute))", reason: reason)))
                }
                continue
            }
            if name == "id" {
                declaresIdentifier = true
                checkIdentifier(binding, in: context)
                continue
            }
            guard checkMutability(variable, name: name, in: context) else { continue }
            guard let type = propertyType(binding, of: variable, name: name, in: context) else { continue }
            if binding.initializer == nil && !type.isOptional && !explicitInit {
                diagnoseMissingInitialValue(binding, name: name, type: type, in: context)
            }
            var options = stored.first.map { StoredOptions($0, property: name, in: context) } ?? StoredOptions()
            var derivation: String?
            if let attribute = derived.first {
                guard let read = readDerived(attribute, name: name, type: type, in: context) else { continue }
                (derivation, options) = (read.derivation, read.options)
            } else {
                checkOptions(options, stored.first, name: name, type: type, in: context)
            }
            columns.append(
                Column(
                    property: name, keyPathName: pattern.identifier.text, isToOne: type.kind == .toOne,
                    column: options.column ?? name, options: options, derivation: derivation, node: Syntax(pattern)))
        }
        return declaresIdentifier
    }

    /// A property with a getter (or `set`, `_read`, `_modify`) is computed; one with
    /// observers only is stored.
    static func isComputed(_ binding: PatternBindingSyntax) -> Bool {
        guard let block = binding.accessorBlock else { return false }
        switch block.accessors {
        case .getter: return true
        case .accessors(let accessors):
            return accessors.contains { !["willSet", "didSet"].contains($0.accessorSpecifier.text) }
        }
    }

    /// The `@Stored`, `@Derived`, `@NotStored` and `@ToMany` attributes of a declaration.
    private func folioAttributes(_ variable: VariableDeclSyntax) -> [AttributeSyntax] {
        ["Stored", "Derived", "NotStored", "ToMany"].flatMap { RecordNames.attributes(variable.attributes, named: $0) }
    }

    /// `let` and `lazy` are refused, with fix-its; returns whether the property can be a column.
    private func checkMutability(_ variable: VariableDeclSyntax, name: String, in context: some MacroExpansionContext) -> Bool {
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            let fixVar = FixIt(
                message: RecordFixIt("Change 'let' to 'var'"),
                changes: [
                    .replace(
                        oldNode: Syntax(variable.bindingSpecifier),
                        newNode: Syntax(variable.bindingSpecifier.with(\.tokenKind, .keyword(.var))))
                ])
            let fixNotStored = FixIt(
                message: RecordFixIt("Mark '\(name)' @NotStored"),
                changes: [.replace(oldNode: Syntax(variable), newNode: Syntax(RecordFixIts.adding("NotStored", to: variable)))])
            context.diagnose(
                Diagnostic(
                    node: variable.bindingSpecifier, message: RecordDiagnostic.letProperty(name: name),
                    fixIts: [fixVar, fixNotStored]))
            return false
        }
        if let lazy = variable.modifiers.first(where: { $0.name.tokenKind == .keyword(.lazy) }) {
            let remaining = variable.modifiers.filter { $0.name.tokenKind != .keyword(.lazy) }
            let fixed = variable.with(\.modifiers, remaining).with(\.leadingTrivia, variable.leadingTrivia)
            let fixIt = FixIt(
                message: RecordFixIt("Remove 'lazy'"), changes: [.replace(oldNode: Syntax(variable), newNode: Syntax(fixed))])
            context.diagnose(Diagnostic(node: lazy, message: RecordDiagnostic.lazyProperty(name: name), fixIts: [fixIt]))
            return false
        }
        return true
    }

}
