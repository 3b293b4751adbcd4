import SwiftSyntax

/// What the syntax of a stored property tells about its type: its annotation, or its
/// initial value when there is none (`""`, `0`, `Date()`, `ToOne<Source>()`).
struct PropertyType {
    enum Kind: Equatable {
        /// A type the macro leaves to the compiler, through the generated `AttributeDescription`.
        case attribute
        /// `ToOne<Target>`: a to-one relationship.
        case toOne
        /// `ToOne<Target>?`: refused (an empty to-one is `ToOne()`).
        case optionalToOne
        /// A type that can never be a column: why, and what to do.
        case unsupported(Unstorable)
    }

    var kind: Kind
    /// The type as written, or as told by the initial value (`String` for `""`).
    var text: String
    /// The type without its optional mark (`Date` for `Date?`), for the options' checks.
    var baseName: String
    /// Whether the type is optional (`T?`, `T!`, `Optional<T>`): its initial value is `nil`.
    var isOptional: Bool

    /// The type of an annotation.
    init(annotation type: TypeSyntax) {
        text = type.trimmedDescription
        let (base, optional) = Self.unwrapOptional(type)
        baseName = base.trimmedDescription
        isOptional = optional
        if Self.isToOne(base) {
            kind = optional ? .optionalToOne : .toOne
        } else if let unstorable = Self.unstorable(base) ?? Self.knownUnstorable(baseName) {
            kind = .unsupported(unstorable)
        } else {
            kind = .attribute
        }
    }

    /// The type an initial value tells, or `nil` when its syntax cannot tell (a call of a
    /// function, a member such as `Date.now`, an operator).
    init?(initializer value: ExprSyntax) {
        if let cast = value.as(AsExprSyntax.self), cast.questionOrExclamationMark == nil {
            self = PropertyType(annotation: cast.type)
            return
        }
        isOptional = false
        kind = .attribute
        let value = Self.unsigned(value)
        if value.is(StringLiteralExprSyntax.self) {
            text = "String"
        } else if value.is(IntegerLiteralExprSyntax.self) {
            text = "Int"
        } else if value.is(FloatLiteralExprSyntax.self) {
            text = "Double"
        } else if value.is(BooleanLiteralExprSyntax.self) {
            text = "Bool"
        } else if value.is(ArrayExprSyntax.self) || value.is(DictionaryExprSyntax.self) {
            // A collection: never a to-one; the compiler tells whether it can be stored.
            text = value.is(ArrayExprSyntax.self) ? "Array" : "Dictionary"
        } else if value.is(ClosureExprSyntax.self) {
            text = "closure"
            kind = .unsupported(Unstorable("a closure is code, not a value SQLite can store"))
        } else if let tuple = value.as(TupleExprSyntax.self), tuple.elements.count > 1 {
            text = "tuple"
            kind = .unsupported(Unstorable("a tuple has no column type", advice: "declare one property per element"))
        } else if let type = Self.constructedType(value) ?? Self.memberType(value) {
            text = type
            if type == "ToOne" || type.hasPrefix("ToOne<") || type.hasPrefix("Folio.ToOne") {
                kind = .toOne
            }
        } else {
            return nil
        }
        baseName = text
    }

    /// `-1` → `1`, `+0.5` → `0.5`: a signed number literal is read as the literal.
    private static func unsigned(_ value: ExprSyntax) -> ExprSyntax {
        guard let prefix = value.as(PrefixOperatorExprSyntax.self), ["-", "+"].contains(prefix.operator.text),
            prefix.expression.is(IntegerLiteralExprSyntax.self) || prefix.expression.is(FloatLiteralExprSyntax.self)
        else { return value }
        return prefix.expression
    }

    /// The type a static member names, by the convention that a type's static members are of
    /// that type: `Status.draft` → `Status`, `Date.now` → `Date`, `Foundation.Date.now` →
    /// `Foundation.Date`. (`.draft`, without its type, cannot tell.)
    private static func memberType(_ value: ExprSyntax) -> String? {
        guard let member = value.as(MemberAccessExprSyntax.self), let base = member.base,
            member.declName.baseName.text.first?.isUppercase == false
        else { return nil }
        return typeLikeName(base)
    }

    /// The type a call constructs, when its callee names a type: `Date(…)`, `ToOne<Source>()`,
    /// `Foundation.Date(…)`, `Date.init(…)`, `URL(string: "…")!`, `[String]()`.
    private static func constructedType(_ value: ExprSyntax) -> String? {
        let value = value.as(ForceUnwrapExprSyntax.self)?.expression ?? value
        guard let call = value.as(FunctionCallExprSyntax.self) else { return nil }
        var callee = call.calledExpression
        if callee.is(ArrayExprSyntax.self) { return "Array" }
        if callee.is(DictionaryExprSyntax.self) { return "Dictionary" }
        if let member = callee.as(MemberAccessExprSyntax.self), member.declName.baseName.text == "init",
            let base = member.base
        {
            callee = base
        }
        if let specialized = callee.as(GenericSpecializationExprSyntax.self),
            let name = typeLikeName(specialized.expression)
        {
            return name + specialized.genericArgumentClause.trimmedDescription
        }
        return typeLikeName(callee)
    }

    /// `Date`, `Foundation.Date`: a name that starts with a capital, as types do.
    private static func typeLikeName(_ expression: ExprSyntax) -> String? {
        if let reference = expression.as(DeclReferenceExprSyntax.self) {
            let name = reference.baseName.text
            return name.first?.isUppercase == true ? name : nil
        }
        if let member = expression.as(MemberAccessExprSyntax.self), let base = member.base,
            let baseName = typeLikeName(base), member.declName.baseName.text.first?.isUppercase == true
        {
            return baseName + "." + member.declName.baseName.text
        }
        return nil
    }

    /// `T?`, `T!` and `Optional<T>` → `T` and `true`; anything else as it is.
    static func unwrapOptional(_ type: TypeSyntax) -> (TypeSyntax, Bool) {
        if let optional = type.as(OptionalTypeSyntax.self) { return (optional.wrappedType, true) }
        if let unwrapped = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return (unwrapped.wrappedType, true) }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
            let argument = identifier.genericArgumentClause?.arguments.first,
            case .type(let wrapped) = argument.argument
        {
            return (wrapped, true)
        }
        return (type, false)
    }

    /// `ToOne<Target>` or `Folio.ToOne<Target>`.
    static func isToOne(_ type: TypeSyntax) -> Bool {
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text == "ToOne" }
        if let member = type.as(MemberTypeSyntax.self) {
            return member.name.text == "ToOne" && member.baseType.trimmedDescription == "Folio"
        }
        return false
    }

    /// Why a type can never be a column, when its syntax shows it: a function, a tuple, a
    /// metatype, an existential or opaque type. `nil` for anything else.
    static func unstorable(_ type: TypeSyntax) -> Unstorable? {
        if let attributed = type.as(AttributedTypeSyntax.self) { return unstorable(attributed.baseType) }
        if type.is(FunctionTypeSyntax.self) { return Unstorable("a closure is code, not a value SQLite can store") }
        if let tuple = type.as(TupleTypeSyntax.self) {
            if tuple.elements.count == 1, let only = tuple.elements.first {
                return unstorable(unwrapOptional(only.type).0)
            }
            return Unstorable("a tuple has no column type", advice: "declare one property per element")
        }
        if type.is(MetatypeTypeSyntax.self) { return Unstorable("a metatype is a type, not a value SQLite can store") }
        if let some = type.as(SomeOrAnyTypeSyntax.self) {
            let kind = some.someOrAnySpecifier.text == "any" ? "an existential ('any')" : "an opaque ('some')"
            return Unstorable("\(kind) type has no single column type", advice: "declare the concrete type")
        }
        return nil
    }
}

/// Why a type can never be a column, and what to do: declare `replacement` where one type
/// stores the same value (`String` for `Substring`), else follow `advice`, else declare a
/// type Folio stores; or mark the property `@NotStored`.
struct Unstorable: Equatable {
    var reason: String
    var advice: String?
    var replacement: String?

    init(_ reason: String, advice: String? = nil, replacement: String? = nil) {
        self.reason = reason
        self.advice = advice
        self.replacement = replacement
    }
}
