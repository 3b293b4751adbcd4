import SwiftSyntax

/// What `@PersistentRecord` knows of types by their names: which are not text (for `folded`
/// and `searchable`), the usual initial value of each (for a fix-it), and the common types
/// that Folio cannot store, with what to declare instead. Any other type is checked by the
/// compiler, through the generated `AttributeDescription`.
extension PropertyType {
    /// The types Folio stores that are not text, which `folded` and `searchable` refuse.
    static let nonTextTypes: Set<String> = {
        let names = [
            "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float",
            "Bool", "Array", "Dictionary", "Set",
        ]
        let foundation = ["Date", "Data", "UUID", "Decimal"]
        return Set(names + names.map { "Swift." + $0 } + foundation + foundation.map { "Foundation." + $0 })
    }()

    /// Whether the type is known not to be text: a number, a date, data, a collection (JSON).
    var isKnownNonText: Bool {
        if Self.nonTextTypes.contains(baseName) { return true }
        if baseName.hasPrefix("[") { return true }
        return ["Array<", "Dictionary<", "Set<", "Swift.Array<", "Swift.Dictionary<", "Swift.Set<"].contains {
            baseName.hasPrefix($0)
        }
    }

    /// The initial value a record's `init()` can give a property of a common type, or `nil`
    /// (an enum, a `URL`, a struct of the app's: a fix-it makes it optional instead).
    var usualInitialValue: String? {
        if let value = Self.defaultValues[baseName] { return value }
        if baseName.hasPrefix("[") { return baseName.contains(":") ? "[:]" : "[]" }
        if baseName.hasPrefix("Set<") || baseName.hasPrefix("Array<") { return "[]" }
        if baseName.hasPrefix("Dictionary<") { return "[:]" }
        return nil
    }

    private static let defaultValues: [String: String] = {
        var values = ["String": "\"\"", "Bool": "false", "Date": "Date()", "Data": "Data()", "UUID": "UUID()"]
        for number in [
            "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float",
        ] {
            values[number] = "0"
        }
        return values
    }()

    /// Common types that are neither an `AttributeValue` nor `Codable`: why, and what to
    /// declare instead. Names that an app's own types often take (`Color`, `Image`) are not
    /// listed: those may well be `Codable`.
    static func knownUnstorable(_ name: String) -> Unstorable? {
        let unqualified = name.split(separator: ".").last.map(String.init) ?? name
        let simple = unqualified.split(separator: "<").first.map(String.init) ?? unqualified
        switch simple {
        case "Any", "AnyObject", "AnyHashable":
            return Unstorable("'\(simple)' has no single column type", advice: "declare the concrete type")
        case "Substring", "Character", "NSString":
            return Unstorable("Folio stores text as 'String'", replacement: "String")
        case "NSData": return Unstorable("Folio stores bytes as 'Data'", replacement: "Data")
        case "NSDate": return Unstorable("Folio stores dates as 'Date'", replacement: "Date")
        case "NSURL": return Unstorable("Folio stores URLs as 'URL'", replacement: "URL")
        case "NSUUID": return Unstorable("Folio stores UUIDs as 'UUID'", replacement: "UUID")
        case "UIImage", "NSImage", "CGImage":
            return Unstorable(
                "an image is not a value SQLite can store", advice: "store its encoded bytes (PNG, JPEG) in a 'Data' property")
        case "UIColor", "NSColor", "CGColor":
            return Unstorable(
                "a color is not a value SQLite can store", advice: "store its components (Double properties) or a hex String")
        case "NSAttributedString":
            return Unstorable("it is not Codable", advice: "store its text as 'String', or its encoded form as 'Data'")
        case "RecordRequest":
            return Unstorable(
                "a request is not a value SQLite can store",
                advice: "declare a to-many '@ToMany(\\Child.toOne) var children: RecordRequest<Child>'")
        default:
            return nil
        }
    }
}
