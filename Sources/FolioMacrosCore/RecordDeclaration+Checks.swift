import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

extension RecordDeclaration {
    /// `var id: RecordID?`: another type is refused, with a fix-it.
    func checkIdentifier(_ binding: PatternBindingSyntax, in context: some MacroExpansionContext) {
        guard let annotation = binding.typeAnnotation else { return }
        let text = String(annotation.type.trimmedDescription.filter { $0 != " " })
        guard !["RecordID?", "Optional<RecordID>", "Folio.RecordID?", "Optional<Folio.RecordID>"].contains(text) else { return }
        let fixed = annotation.type.with(\.leadingTrivia, annotation.type.leadingTrivia)
        let replacement = TypeSyntax(
            OptionalTypeSyntax(wrappedType: IdentifierTypeSyntax(name: .identifier("RecordID")))
        ).with(\.leadingTrivia, fixed.leadingTrivia).with(\.trailingTrivia, fixed.trailingTrivia)
        let fixIt = FixIt(
            message: RecordFixIt("Declare 'id' as 'RecordID?'"),
            changes: [.replace(oldNode: Syntax(annotation.type), newNode: Syntax(replacement))])
        context.diagnose(
            Diagnostic(node: annotation.type, message: RecordDiagnostic.identifierType(found: text), fixIts: [fixIt]))
    }

    /// The property's type from its annotation or initial value; `nil` (after a diagnostic)
    /// when it cannot be told, or can never be a column.
    func propertyType(
        _ binding: PatternBindingSyntax, of variable: VariableDeclSyntax, name: String, in context: some MacroExpansionContext
    ) -> PropertyType? {
        let type: PropertyType
        if let annotation = binding.typeAnnotation {
            type = PropertyType(annotation: annotation.type)
        } else if let value = binding.initializer?.value {
            guard let told = PropertyType(initializer: value) else {
                diagnoseMissingType(binding, name: name, value: value, in: context)
                return nil
            }
            type = told
        } else {
            return nil
        }
        switch type.kind {
        case .attribute, .toOne:
            return type
        case .unsupported(let unstorable):
            diagnoseUnsupportedType(binding, of: variable, name: name, type: type, unstorable, in: context)
            return nil
        case .optionalToOne:
            guard let annotation = binding.typeAnnotation else { return nil }
            let wrapped = PropertyType.unwrapOptional(annotation.type).0.with(\.trailingTrivia, annotation.type.trailingTrivia)
            var fixed = binding.with(\.typeAnnotation, annotation.with(\.type, wrapped))
            if let initializer = binding.initializer, initializer.value.is(NilLiteralExprSyntax.self) {
                fixed = fixed.with(
                    \.initializer,
                    initializer.with(\.value, ExprSyntax("ToOne()").with(\.trailingTrivia, initializer.value.trailingTrivia)))
            }
            let fixIt = FixIt(
                message: RecordFixIt("Declare '\(name)' as '\(wrapped.trimmedDescription)'"),
                changes: [.replace(oldNode: Syntax(binding), newNode: Syntax(fixed))])
            context.diagnose(
                Diagnostic(node: annotation.type, message: RecordDiagnostic.optionalToOne(name: name), fixIts: [fixIt]))
            return nil
        }
    }

    /// A type Folio never stores: fix-its declare the type that stores the same value, where
    /// there is one (`String` for `Substring`), and mark the property `@NotStored`.
    private func diagnoseUnsupportedType(
        _ binding: PatternBindingSyntax, of variable: VariableDeclSyntax, name: String, type: PropertyType,
        _ unstorable: Unstorable, in context: some MacroExpansionContext
    ) {
        var fixIts: [FixIt] = []
        var advice = unstorable.advice
        if let replacement = unstorable.replacement {
            advice = "declare it '\(replacement)\(type.isOptional ? "?" : "")'"
        }
        if let replacement = unstorable.replacement, let annotation = binding.typeAnnotation {
            let base = PropertyType.unwrapOptional(annotation.type).0
            let newBase = TypeSyntax(IdentifierTypeSyntax(name: .identifier(replacement))).with(
                \.leadingTrivia, base.leadingTrivia
            )
            .with(\.trailingTrivia, base.trailingTrivia)
            let newType = type.isOptional ? TypeSyntax(OptionalTypeSyntax(wrappedType: newBase.trimmed)) : newBase.trimmed
            fixIts.append(
                FixIt(
                    message: RecordFixIt("Declare '\(name)' as '\(newType.description)'"),
                    changes: [
                        .replace(
                            oldNode: Syntax(annotation.type),
                            newNode: Syntax(
                                newType.with(\.leadingTrivia, annotation.type.leadingTrivia)
                                    .with(\.trailingTrivia, annotation.type.trailingTrivia)))
                    ]))
        }
        fixIts.append(
            FixIt(
                message: RecordFixIt("Mark '\(name)' @NotStored"),
                changes: [.replace(oldNode: Syntax(variable), newNode: Syntax(RecordFixIts.adding("NotStored", to: variable)))]))
        let node: Syntax = binding.typeAnnotation.map { Syntax($0.type) } ?? Syntax(binding)
        context.diagnose(
            Diagnostic(
                node: node,
                message: RecordDiagnostic.unsupportedType(
                    name: name, type: type.text, reason: unstorable.reason, advice: advice),
                fixIts: fixIts))
    }

    /// No annotation, and an initial value whose type the syntax cannot tell: a fix-it adds
    /// the annotation (`: Date` for `Date.now`, a placeholder otherwise).
    private func diagnoseMissingType(
        _ binding: PatternBindingSyntax, name: String, value: ExprSyntax, in context: some MacroExpansionContext
    ) {
        var guess = "<#Type#>"
        if let member = value.as(MemberAccessExprSyntax.self), let base = member.base?.as(DeclReferenceExprSyntax.self),
            base.baseName.text.first?.isUppercase == true
        {
            guess = base.baseName.text
        }
        let annotated = binding.with(\.pattern, binding.pattern.trimmed)
            .with(
                \.typeAnnotation,
                TypeAnnotationSyntax(
                    colon: .colonToken(trailingTrivia: .space),
                    type: IdentifierTypeSyntax(name: .identifier(guess), trailingTrivia: .space))
            )
            .with(\.leadingTrivia, binding.leadingTrivia)
        let fixIt = FixIt(
            message: RecordFixIt("Add the type annotation ': \(guess)'"),
            changes: [.replace(oldNode: Syntax(binding), newNode: Syntax(annotated))])
        context.diagnose(
            Diagnostic(
                node: binding.pattern,
                message: RecordDiagnostic.missingTypeAnnotation(name: name, initializer: value.trimmedDescription),
                fixIts: [fixIt]))
    }

    /// A non-optional property without an initial value, in a struct without `init()`;
    /// fix-its give it the usual one of its type (`""`, `0`, `Date()`, `[]`, `ToOne()`) where
    /// there is one, and make an attribute optional (`nil` until set).
    func diagnoseMissingInitialValue(
        _ binding: PatternBindingSyntax, name: String, type: PropertyType, in context: some MacroExpansionContext
    ) {
        let value = type.kind == .toOne ? "ToOne()" : type.usualInitialValue
        var fixIts: [FixIt] = []
        if let value, let annotation = binding.typeAnnotation {
            let initialized = binding.with(\.typeAnnotation, annotation.with(\.trailingTrivia, .space))
                .with(
                    \.initializer,
                    InitializerClauseSyntax(
                        equal: .equalToken(trailingTrivia: .space), value: ExprSyntax("\(raw: value)"),
                        trailingTrivia: annotation.trailingTrivia))
            fixIts.append(
                FixIt(
                    message: RecordFixIt("Give '\(name)' the initial value \(value)"),
                    changes: [.replace(oldNode: Syntax(binding), newNode: Syntax(initialized))]))
        }
        if type.kind == .attribute, let annotation = binding.typeAnnotation {
            let optional = TypeSyntax(OptionalTypeSyntax(wrappedType: annotation.type.trimmed))
                .with(\.trailingTrivia, annotation.type.trailingTrivia)
            fixIts.append(
                FixIt(
                    message: RecordFixIt("Declare '\(name)' as '\(optional.trimmedDescription)'"),
                    changes: [.replace(oldNode: Syntax(annotation.type), newNode: Syntax(optional))]))
        }
        context.diagnose(
            Diagnostic(
                node: binding.pattern, message: RecordDiagnostic.missingInitialValue(name: name, isToOne: type.kind == .toOne),
                fixIts: fixIts))
    }

    /// A to-one takes `column:` and `renamedFrom:` only; `folded` and `searchable` need text.
    func checkOptions(
        _ options: StoredOptions, _ attribute: AttributeSyntax?, name: String, type: PropertyType,
        in context: some MacroExpansionContext
    ) {
        guard let attribute else { return }
        if type.kind == .toOne {
            let refused = options.flags.map { "." + $0 } + (options.defaultValue == nil ? [] : ["defaultValue:"])
            if let first = refused.first {
                context.diagnose(Diagnostic(node: attribute, message: RecordDiagnostic.toOneOption(name: name, option: first)))
            }
        } else if type.isKnownNonText,
            let option = options.flags.first(where: { $0 == "folded" || $0 == "searchable" })
        {
            context.diagnose(
                Diagnostic(node: attribute, message: RecordDiagnostic.foldedNonText(name: name, option: option, type: type.text)))
        }
    }

    /// `@ToMany(\Child.toOne, deleteRule: …) var children: RecordRequest<Child>`: the key
    /// path has its root, the property is a `var` of that request type without a value.
    mutating func readToMany(_ variable: VariableDeclSyntax, _ attribute: AttributeSyntax, in context: some MacroExpansionContext)
    {
        let name = variable.bindings.first?.pattern.trimmedDescription ?? "?"
        guard case .argumentList(let arguments) = attribute.arguments, let first = arguments.first,
            first.label == nil, let keyPath = first.expression.as(KeyPathExprSyntax.self), let root = keyPath.root
        else {
            context.diagnose(Diagnostic(node: attribute, message: RecordDiagnostic.toManyKeyPath(name: name)))
            return
        }
        let rule = arguments.first { $0.label?.text == "deleteRule" }?.expression.trimmedDescription
        toManys.append(ToMany(inverse: keyPath.trimmedDescription, deleteRule: rule))
        let expected = "RecordRequest<\(root.trimmedDescription)>"
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            let fixIt = FixIt(
                message: RecordFixIt("Change 'let' to 'var'"),
                changes: [
                    .replace(
                        oldNode: Syntax(variable.bindingSpecifier),
                        newNode: Syntax(variable.bindingSpecifier.with(\.tokenKind, .keyword(.var))))
                ])
            context.diagnose(
                Diagnostic(node: variable.bindingSpecifier, message: RecordDiagnostic.toManyLet(name: name), fixIts: [fixIt]))
        }
        guard let binding = variable.bindings.first else { return }
        let written = binding.typeAnnotation.map { String($0.type.trimmedDescription.filter { $0 != " " }) }
        if written == expected || written == "Folio." + expected {
            guard let initializer = binding.initializer else { return }
            let cleared = binding.with(\.initializer, nil).with(\.trailingTrivia, [])
            let fixIt = FixIt(
                message: RecordFixIt("Remove the initial value"),
                changes: [.replace(oldNode: Syntax(binding), newNode: Syntax(cleared))])
            context.diagnose(
                Diagnostic(node: initializer, message: RecordDiagnostic.toManyInitializer(name: name), fixIts: [fixIt]))
            return
        }
        // One edit of the binding: the request type, and no initial value (a computed property has none).
        let annotation = TypeAnnotationSyntax(
            colon: .colonToken(trailingTrivia: .space), type: IdentifierTypeSyntax(name: .identifier(expected)))
        let typed = binding.with(\.pattern, binding.pattern.trimmed).with(\.typeAnnotation, annotation)
            .with(\.initializer, nil).with(\.leadingTrivia, binding.leadingTrivia)
        let fixIt = FixIt(
            message: RecordFixIt(
                binding.initializer == nil
                    ? "Declare '\(name)' as '\(expected)'" : "Declare '\(name)' as '\(expected)', without initial value"),
            changes: [.replace(oldNode: Syntax(binding), newNode: Syntax(typed))])
        let node: Syntax = binding.typeAnnotation.map { Syntax($0.type) } ?? Syntax(binding.pattern)
        context.diagnose(
            Diagnostic(node: node, message: RecordDiagnostic.toManyType(name: name, expected: expected), fixIts: [fixIt]))
    }

    /// No `var id: RecordID?`: a fix-it declares it first.
    func diagnoseMissingIdentifier(_ record: StructDeclSyntax, in context: some MacroExpansionContext) {
        let members = record.memberBlock.members
        let indentation = members.first?.leadingTrivia.indentation ?? "    "
        let identifier = MemberBlockItemSyntax(decl: DeclSyntax("\n\(raw: indentation)var id: RecordID?"))
        let fixIt = FixIt(
            message: RecordFixIt("Declare 'var id: RecordID?'"),
            changes: [
                .replace(oldNode: Syntax(members), newNode: Syntax(MemberBlockItemListSyntax([identifier] + Array(members))))
            ])
        context.diagnose(
            Diagnostic(node: record.name, message: RecordDiagnostic.missingIdentifier(type: typeName), fixIts: [fixIt]))
    }

    /// Two columns whose names SQLite takes as one, or a column named like the identifier or
    /// not fit for SQLite.
    func diagnoseDuplicateColumns(in context: some MacroExpansionContext) {
        var seen: [String: String] = ["id": "id"]
        for column in columns {
            if let problem = RecordNames.problem(with: column.column) {
                context.diagnose(
                    Diagnostic(
                        node: column.node,
                        message: RecordDiagnostic.invalidColumnName(
                            name: column.property, column: column.column, reason: problem, isDerived: column.derivation != nil)))
            } else if let first = seen.updateValue(column.property, forKey: column.column.lowercased()) {
                context.diagnose(
                    Diagnostic(
                        node: column.node,
                        message: RecordDiagnostic.duplicateColumn(column: column.column, first: first, second: column.property)))
            }
        }
    }
}

extension Trivia {
    /// The spaces after the last newline: a line's indentation.
    var indentation: String? {
        let text = description
        guard let newline = text.lastIndex(of: "\n") else { return nil }
        return String(text[text.index(after: newline)...])
    }
}
