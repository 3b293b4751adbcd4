import Foundation
import GRDB

/// How the values of a `Codable` type that ``AttributeDescription`` declares without an
/// ``AttributeValue`` conformance are stored, chosen once from the type, at run time:
///
/// 1. an ``AttributeValue`` (seen in generic code) as it stores itself;
/// 2. an `Optional`: `nil` as `NULL`, a value as its wrapped type stores it;
/// 3. a `RawRepresentable` type whose raw value is an ``AttributeValue`` (an enum with `Int`
///    or `String` raw values) as its raw value;
/// 4. anything else as JSON text (``JSONText``), ``AttributeType/json``.
struct CodableStorage<Value>: Sendable {
    var type: AttributeType
    var isOptional: Bool
    /// The stored value; throws ``UnstorableValue`` (JSON encoding failed).
    var encode: @Sendable (Value) throws -> DatabaseValue
    /// The value of a stored value; throws ``FolioError/decoding(column:reason:)``.
    var decode: @Sendable (DatabaseValue, String) throws -> Value
}

/// Why a value cannot be stored; the caller names the entity and the attribute
/// (``FolioError/unstorableValue(entity:attribute:reason:)``).
struct UnstorableValue: Error {
    var reason: String
}

extension CodableStorage where Value: Codable & Sendable {
    /// The storage of `Value` (see ``CodableStorage``).
    static var chosen: CodableStorage<Value> {
        if let attribute = Value.self as? any AttributeValue.Type,
            let storage = CodableStorage<Never>.attribute(attribute) as? CodableStorage<Value>
        {
            return storage
        }
        if let optional = Value.self as? any OptionalAttributeValue.Type,
            let wrapped = optional.wrappedType as? any (Codable & Sendable).Type,
            let storage = CodableStorage<Never>.optional(wrapped) as? CodableStorage<Value>
        {
            return storage
        }
        if let raw = Value.self as? any (RawRepresentable & Sendable).Type,
            let storage = CodableStorage<Never>.raw(raw) as? CodableStorage<Value>
        {
            return storage
        }
        return CodableStorage(
            type: .json, isOptional: false, encode: { try JSONText.encode($0) },
            decode: { try JSONText.decode(Value.self, from: $0, column: $1) })
    }
}

/// The storages of types seen at run time, each returned as `Any` (a `CodableStorage` of
/// the type), so that a metatype the caller holds as an existential can be passed.
extension CodableStorage where Value == Never {
    static func attribute<T: AttributeValue>(_ type: T.Type) -> Any {
        CodableStorage<T>(
            type: T.attributeType, isOptional: T.isOptional, encode: { $0.storedValue },
            decode: { try T.decode(stored: $0, column: $1) })
    }

    /// The raw-value storage of `type`, when its raw value is an attribute value.
    static func raw<T: RawRepresentable & Sendable>(_ type: T.Type) -> Any? {
        guard let raw = T.RawValue.self as? any AttributeValue.Type else { return nil }
        return rawStorage(type, raw)
    }

    private static func rawStorage<T: RawRepresentable & Sendable, Raw: AttributeValue>(_ type: T.Type, _ raw: Raw.Type)
        -> CodableStorage<T>
    {
        CodableStorage<T>(
            type: Raw.attributeType, isOptional: Raw.isOptional,
            encode: { value in
                guard let raw = value.rawValue as? Raw else { throw UnstorableValue(reason: "its raw value is no \(Raw.self)") }
                return raw.storedValue
            },
            decode: { try decodeRawValue($0, column: $1, as: T.self, raw: Raw.self) })
    }

    /// The storage of `Wrapped?`: `nil` as `NULL`, a value as `Wrapped` stores it.
    static func optional<Wrapped: Codable & Sendable>(_ type: Wrapped.Type) -> Any {
        let wrapped = CodableStorage<Wrapped>.chosen
        return CodableStorage<Wrapped?>(
            type: wrapped.type, isOptional: true, encode: { try $0.map(wrapped.encode) ?? .null },
            decode: { stored, column in stored.isNull ? nil : try wrapped.decode(stored, column) })
    }
}

/// A `Codable` value as JSON text: UTF-8, keys sorted and slashes unescaped, so that equal
/// values of one type store equal text (a `Set`, or a dictionary keyed by anything but
/// `String` or `Int`, encodes in an order that varies from launch to launch: see
/// <doc:AttributeTypes>).
enum JSONText {
    static func encode(_ value: some Encodable) throws -> DatabaseValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self).databaseValue
        } catch {
            throw UnstorableValue(reason: "it does not encode as JSON (\(error))")
        }
    }

    static func decode<V: Decodable>(_ type: V.Type, from stored: DatabaseValue, column: String) throws -> V {
        guard case .string(let text) = stored.storage else { throw decodingMismatch(stored, column, "JSON text") }
        do {
            return try JSONDecoder().decode(V.self, from: Data(text.utf8))
        } catch {
            throw FolioError.decoding(column: column, reason: "the JSON text does not decode as \(V.self): \(error)")
        }
    }

    /// A value of a predicate compared with an attribute stored as JSON: its JSON text, or
    /// `NULL` for `nil`.
    static func predicateValue(_ value: Any) throws -> DatabaseValue {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return .null }
            return try predicateValue(wrapped)
        }
        guard let encodable = value as? any Encodable else {
            throw UnstorableValue(reason: "\(type(of: value)) is not Encodable")
        }
        return try encode(encodable)
    }
}
