import SwiftDiagnostics
import SwiftSyntax

/// Every diagnostic Folio's macros emit: each names the declaration and says what to do.
enum RecordDiagnostic: DiagnosticMessage {
    case notAStruct(kind: String)
    case genericType(type: String)
    case missingIdentifier(type: String)
    case identifierType(found: String)
    case identifierOption(attribute: String)
    case handWrittenEntity(type: String)
    case letProperty(name: String)
    case lazyProperty(name: String)
    case missingTypeAnnotation(name: String, initializer: String)
    case unsupportedType(name: String, type: String, reason: String, advice: String?)
    case missingInitialValue(name: String, isToOne: Bool)
    case optionalToOne(name: String)
    case toOneOption(name: String, option: String)
    case foldedNonText(name: String, option: String, type: String)
    case notALiteral(argument: String, name: String)
    case invalidColumnName(name: String, column: String, reason: String, isDerived: Bool)
    case duplicateColumn(column: String, first: String, second: String)
    case invalidTableName(table: String, reason: String)
    case conflictingAttributes(name: String, first: String, second: String)
    case repeatedAttribute(name: String, attribute: String)
    case misplacedAttribute(attribute: String, reason: String)
    case outsideRecord(attribute: String)
    case toManyType(name: String, expected: String)
    case toManyInitializer(name: String)
    case toManyLet(name: String)
    case toManyKeyPath(name: String)
    case derivedOption(name: String, option: String, reason: String)
    case derivedWithoutDerivation(name: String)
    case derivedToOne(name: String)
    case tuplePattern

    var message: String {
        switch self {
        case .notAStruct(let kind):
            "@PersistentRecord applies to a struct, not to a \(kind): a record is a value that Folio builds with init() and sets through writable key paths"
        case .genericType(let type):
            "@PersistentRecord cannot describe the generic type '\(type)': a generic type has no static stored 'entity'; declare a non-generic record"
        case .missingIdentifier(let type):
            "'\(type)' has no identifier: a record declares 'var id: RecordID?', its rowid (nil until inserted)"
        case .identifierType(let found):
            "'id' is the record's rowid and must be declared 'var id: RecordID?', not '\(found)'"
        case .identifierOption(let attribute):
            "'id' is the record's rowid, stored by Folio: it takes no \(attribute)"
        case .handWrittenEntity(let type):
            "'\(type)' declares its entity by hand and with @PersistentRecord: remove the 'entity' declaration (the macro makes it from the stored properties) or remove @PersistentRecord"
        case .letProperty(let name):
            "'\(name)' is a 'let': Folio sets a record's attributes when it reads one, through writable key paths; declare it 'var', or mark it @NotStored if it is no column"
        case .lazyProperty(let name):
            "'\(name)' is 'lazy': a lazy property cannot be a column (reading it changes the record); drop 'lazy', or mark it @NotStored"
        case .missingTypeAnnotation(let name, let initializer):
            "'\(name)' needs a type annotation: @PersistentRecord cannot tell the type of '\(initializer)', and must know whether the property is an attribute or a to-one (ToOne)"
        case .unsupportedType(let name, let type, let reason, let advice):
            "'\(name)' cannot be a column (\(type)): \(reason); \(advice ?? "declare a type Folio stores (a number, Bool, String, URL, Date, Data, UUID, an enum with raw values, a Codable value)"), or mark it @NotStored"
        case .missingInitialValue(let name, let isToOne):
            "'\(name)' needs an initial value: Folio creates records with init() before it sets their attributes; \(isToOne ? "give it ToOne() (empty)" : "give it one, declare it optional"), or declare init() yourself"
        case .optionalToOne(let name):
            "'\(name)' is an optional to-one: a ToOne is empty when it holds no identifier (ToOne()), so declare it 'ToOne<Target>' without '?'"
        case .toOneOption(let name, let option):
            "'\(name)' is a to-one, whose reference column is always indexed: it takes column: and renamedFrom: only, not \(option)"
        case .foldedNonText(let name, let option, let type):
            "'\(name)' is declared \(option), which applies to text attributes only (String, URL, an enum with String raw values); it is '\(type)'"
        case .notALiteral(let argument, let name):
            "\(argument) of '\(name)' must be a string literal: it is a name in the file, which the schema (and its version hash) records"
        case .invalidColumnName(let name, let column, let reason, let isDerived):
            "'\(name)' would be stored in the column '\(column)', which \(reason); give it another name with \(isDerived ? "@Derived(…, column: \"…\")" : "@Stored(column: \"…\")")"
        case .duplicateColumn(let column, let first, let second):
            "'\(first)' and '\(second)' would both be stored in the column '\(column)' (column names ignore case); give one of them another name with @Stored(column: \"…\")"
        case .invalidTableName(let table, let reason):
            "The table name '\(table)' \(reason); name the table with @PersistentRecord(\"…\")"
        case .conflictingAttributes(let name, let first, let second):
            "'\(name)' is marked both \(first) and \(second): keep one"
        case .repeatedAttribute(let name, let attribute):
            "'\(name)' has \(attribute) twice: merge the options into one"
        case .misplacedAttribute(let attribute, let reason):
            "\(attribute) \(reason)"
        case .outsideRecord(let attribute):
            "\(attribute) is read by @PersistentRecord, and the enclosing type has none: add @PersistentRecord to the type, or declare this in its hand-written EntityDescription"
        case .toManyType(let name, let expected):
            "'\(name)' is a to-many, read as a request: declare it '\(expected)'"
        case .toManyInitializer(let name):
            "'\(name)' is a to-many: @ToMany makes it a computed request of the records that point here, so it has no initial value"
        case .toManyLet(let name):
            "'\(name)' is a to-many: @ToMany makes it a computed property, which is declared 'var'"
        case .toManyKeyPath(let name):
            "@ToMany on '\(name)' needs the inverse to-one as a key path with its type: @ToMany(\\Child.toOne, deleteRule: …)"
        case .derivedOption(let name, let option, let reason):
            "'\(name)' is @Derived: SQLite keeps its value from the children, so it takes .indexed only, not \(option) (\(reason))"
        case .derivedWithoutDerivation(let name):
            "@Derived on '\(name)' needs its derivation first: @Derived(.count(\\Child.toOne)), or .sum, .minimum or .maximum(\\Child.value, of: \\Child.toOne)"
        case .derivedToOne(let name):
            "'\(name)' is a to-one, which cannot be @Derived: a derived value is a count of the children, or the sum, minimum or maximum of one of their attributes; declare it of that type (Int, Double, Date?…)"
        case .tuplePattern:
            "@PersistentRecord needs one name per property: declare each property on its own ('var a = 0', 'var b = \"\"')"
        }
    }

    var diagnosticID: MessageID {
        let label = "\(self)".prefix { $0 != "(" }
        return MessageID(domain: "FolioMacros", id: String(label))
    }

    var severity: DiagnosticSeverity { .error }
}

/// A fix-it's title.
struct RecordFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "FolioMacros", id: message) }

    init(_ message: String) { self.message = message }
}
