import Foundation
import GRDB

/// One entity as a ``StoreModel`` declares it: its table, and what a migration needs to
/// know beyond the table (old names, defaults), which the version hash leaves out.
struct DeclaredEntity: Sendable {
    var schema: EntitySchema
    /// The table's name in older versions.
    var renamedFrom: String?
    /// Declared column → its name in older versions.
    var columnRenames: [String: String]
    /// The folded-key column of a renamed folded attribute → its name in older versions
    /// (Folio's own columns, kept apart from the declared names the model checks).
    var foldedKeyRenames: [String: String]
    /// Declared column → the stored value rows get when the column is added or made required.
    var defaults: [String: DatabaseValue]

    var name: String { schema.name }

    init<R: PersistentRecord>(_ type: R.Type) {
        let entity = R.entity
        schema = entity.schema
        renamedFrom = entity.renamedFrom
        var renames: [String: String] = [:]
        var keyRenames: [String: String] = [:]
        var defaults: [String: DatabaseValue] = [:]
        for attribute in entity.attributes {
            if let old = attribute.renamedFrom {
                renames[attribute.column] = old
                if attribute.isFolded {
                    keyRenames[ColumnSchema.foldedKeyColumn(of: attribute.column)] = ColumnSchema.foldedKeyColumn(of: old)
                }
            }
            if let value = attribute.defaultValue { defaults[attribute.column] = value }
        }
        columnRenames = renames
        foldedKeyRenames = keyRenames
        self.defaults = defaults
    }
}

/// A ``StoreModel`` checked and reduced to what the store and the migrator use.
struct DeclaredModel: Sendable {
    var version: Int
    /// By entity name.
    var entities: [String: DeclaredEntity]
    var discarding: Set<StoreModel.DiscardedData>
    var steps: [MigrationStep]

    var schemas: [String: EntitySchema] { entities.mapValues(\.schema) }
    /// The entities in a stable order (by name), so that migrations run the same way every time.
    var sortedEntities: [DeclaredEntity] { entities.values.sorted { $0.name < $1.name } }

    /// Checks the model: entity and attribute names (as the store always did), old names,
    /// defaults, version and step names.
    init(_ model: StoreModel) throws {
        guard model.version >= 0 else {
            throw FolioError.invalidStoreModel(reason: "the version is \(model.version); versions start at 0")
        }
        // The file keeps versions up to Int32.max, and refuses to open one that says more.
        guard model.version <= Int(Int32.max) else {
            throw FolioError.invalidStoreModel(
                reason: "the version is \(model.version); versions go up to \(Int32.max)")
        }
        version = model.version
        discarding = Set(model.discarding)
        var entities: [String: DeclaredEntity] = [:]
        for type in model.records {
            let entity = Self.declared(type)
            try Self.validate(entity.schema)
            if entities.keys.contains(where: { $0.lowercased() == entity.name.lowercased() }) {
                throw FolioError.invalidSchema(entity: entity.name, reason: "two record types use the table name")
            }
            entities[entity.name] = entity
        }
        self.entities = entities
        for entity in entities.values { try Self.validateMigrationNames(entity, among: entities) }
        var names: Set<String> = []
        for step in model.steps {
            guard !step.name.isEmpty else { throw FolioError.invalidStoreModel(reason: "a migration step has an empty name") }
            // The name is recorded in the file as text, which ends at a NUL: two names that
            // differ after one would be recorded as one, and the second step never run.
            guard !step.name.unicodeScalars.contains("\u{0}") else {
                throw FolioError.invalidStoreModel(
                    reason: "the migration step name \(step.name.debugDescription) contains a NUL character")
            }
            guard names.insert(step.name).inserted else {
                throw FolioError.invalidStoreModel(reason: "two migration steps are named '\(step.name)'")
            }
        }
        steps = model.steps
    }

    private static func declared<R: PersistentRecord>(_ type: R.Type) -> DeclaredEntity { DeclaredEntity(type) }

    private static func validate(_ schema: EntitySchema) throws {
        try SQLBuilder.validateIdentifier(schema.name, entity: schema.name)
        var seen: Set<String> = ["id"]
        for column in schema.columns {
            try SQLBuilder.validateIdentifier(column.name, entity: schema.name)
            guard seen.insert(column.name.lowercased()).inserted else {
                throw FolioError.invalidSchema(
                    entity: schema.name, reason: "the column '\(column.name)' is declared twice (or is 'id')")
            }
            if column.isFolded && column.type != .string {
                throw FolioError.invalidSchema(
                    entity: schema.name,
                    reason:
                        "'\(column.name)' is declared \(column.isSearchable ? "searchable" : "folded"), which applies to text (String) attributes only; it is \(column.type.rawValue)"
                )
            }
        }
    }

    /// Old names must be identifiers, differ from the new one, and not name anything the
    /// model still declares (that would be two things at once).
    private static func validateMigrationNames(_ entity: DeclaredEntity, among entities: [String: DeclaredEntity]) throws {
        if let old = entity.renamedFrom {
            try SQLBuilder.validateIdentifier(old, entity: entity.name)
            if entities.keys.contains(where: { $0.lowercased() == old.lowercased() }) {
                throw FolioError.invalidSchema(
                    entity: entity.name, reason: "renamedFrom '\(old)' names an entity the model still declares")
            }
            if let other = entities.values.first(where: {
                $0.name != entity.name && $0.renamedFrom?.lowercased() == old.lowercased()
            }) {
                throw FolioError.invalidSchema(
                    entity: entity.name, reason: "'\(other.name)' is renamed from '\(old)' too")
            }
        }
        let columns = Set(entity.schema.columns.map { $0.name.lowercased() })
        var oldNames: Set<String> = []
        for (column, old) in entity.columnRenames.sorted(by: { $0.key < $1.key }) {
            try SQLBuilder.validateIdentifier(old, entity: entity.name)
            if columns.contains(old.lowercased()) || old.lowercased() == "id" {
                throw FolioError.invalidSchema(
                    entity: entity.name,
                    reason: "the attribute '\(column)' is renamed from '\(old)', which the entity still declares")
            }
            guard oldNames.insert(old.lowercased()).inserted else {
                throw FolioError.invalidSchema(
                    entity: entity.name, reason: "two attributes are renamed from '\(old)'")
            }
        }
        for column in entity.schema.columns {
            if let value = entity.defaults[column.name], case .double(let number) = value.storage, number.isNaN {
                throw FolioError.invalidSchema(
                    entity: entity.name, reason: "the default value of '\(column.name)' is NaN, which SQLite cannot store")
            }
        }
    }
}
