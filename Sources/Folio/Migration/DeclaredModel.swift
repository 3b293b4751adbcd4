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
    /// Declared column → why its declared default value cannot be stored.
    var defaultProblems: [String: String] = [:]
    /// The inverse to-manys the entity declares, with their delete rules.
    var toManys: [DeclaredToMany]
    /// The derived attributes, as declared (checked by ``DeclaredModel/derivedAttributes(_:)``).
    var derivations: [(column: String, type: AttributeType, isOptional: Bool, derivation: Derivation)]

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
            if let problem = attribute.defaultValueProblem { defaultProblems[attribute.column] = problem }
        }
        columnRenames = renames
        foldedKeyRenames = keyRenames
        self.defaults = defaults
        toManys = entity.toManyRules.map {
            DeclaredToMany(child: $0.child.table, column: $0.child.column, inverse: $0.child.inverse, rule: $0.rule)
        }
        derivations = entity.attributes.compactMap { attribute in
            attribute.derivation.map { (attribute.column, attribute.type, attribute.isOptional, $0) }
        }
    }
}

/// A ``StoreModel`` checked and reduced to what the store and the migrator use.
struct DeclaredModel: Sendable {
    var version: Int
    /// By entity name.
    var entities: [String: DeclaredEntity]
    var discarding: Set<StoreModel.DiscardedData>
    var steps: [MigrationStep]
    /// The delete rule of every to-one of the model (``DeclaredModel/deleteRules(_:)``).
    var deleteRules: [DeclaredDeleteRule]
    /// Every derived attribute of the model, checked (``DeclaredModel/derivedAttributes(_:)``).
    var derivedAttributes: [DeclaredDerived]

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
            let entity = try Self.declared(type)
            try Self.validate(entity.schema)
            if entities.keys.contains(where: { $0.lowercased() == entity.name.lowercased() }) {
                throw FolioError.invalidSchema(entity: entity.name, reason: "two record types use the table name")
            }
            entities[entity.name] = entity
        }
        self.entities = entities
        for entity in entities.values { try Self.validateMigrationNames(entity, among: entities) }
        deleteRules = try Self.deleteRules(entities)
        derivedAttributes = try Self.derivedAttributes(entities)
        try Self.checkNamesDistinct(entities.values.map(\.schema), rules: deleteRules, derived: derivedAttributes)
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

    private static func declared<R: PersistentRecord>(_ type: R.Type) throws -> DeclaredEntity {
        // A column name no key path could give is refused by name, before the schema is read.
        try R.entity.checkColumnNames()
        // The compound indexes' errors, which the schema leaves out, are thrown here.
        _ = try R.entity.checkedIndexes()
        return DeclaredEntity(type)
    }

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

    /// Refuses a model where two of the objects Folio would make in the file get one name:
    /// SQLite would refuse the second `CREATE` half-way through creating a file ("index …
    /// already exists"), and a migration would find the name taken. Each entity's table,
    /// its indexes (``SQLBuilder/indexName(_:_:)``: `t.x_y` and `t_x.y` both want
    /// `t_x_y_index`, and an index may take another entity's table name) and full-text
    /// table share one namespace; its triggers have another (the entity `a_fts`'s change
    /// triggers are named as the full-text triggers of a searchable `a`; the delete rule of
    /// `c.x_y` on `p` is named as that of `c_x.y`; the entity `a_conflict`'s insert trigger as
    /// the conflict trigger of an `a` with a unique attribute). SQLite's names ignore ASCII case (identifiers are ASCII, see ``SQLBuilder/isPlainIdentifier(_:)``).
    static func checkNamesDistinct(
        _ schemas: [EntitySchema], rules: [DeclaredDeleteRule] = [], derived: [DeclaredDerived] = []
    ) throws {
        var tables: [String: String] = [:], triggers: [String: String] = [:]
        func claim(_ name: String, _ what: String, in names: inout [String: String]) throws {
            if let other = names.updateValue(what, forKey: name.lowercased()) {
                throw FolioError.nameClash(name: name, first: other, second: what)
            }
        }
        for schema in schemas.sorted(by: { $0.name < $1.name }) {
            let entity = schema.name
            try claim(entity, "the table of the entity '\(entity)'", in: &tables)
            for column in schema.storedColumns where column.isIndexed {
                let what =
                    ColumnSchema.foldedSource(ofKeyColumn: column.name).map {
                        "the index of the folded keys of '\(entity).\($0)'"
                    } ?? "the index of '\(entity).\(column.name)'"
                try claim(SQLBuilder.indexName(entity, column.name), what, in: &tables)
            }
            for index in schema.indexes {
                try claim(SQLBuilder.indexName(entity, index), "the index (\(index.readable)) of '\(entity)'", in: &tables)
            }
            let searchable = !schema.searchableKeyColumns.isEmpty
            if searchable {
                try claim(SQLBuilder.searchTable(entity), "the full-text table of '\(entity)'", in: &tables)
            }
            for trigger in SQLBuilder.changeTriggers(table: entity) + [SQLBuilder.logUpdateTrigger(schema)] {
                try claim(trigger.name, "the change trigger of '\(entity)'", in: &triggers)
            }
            for trigger in SQLBuilder.foldedKeyTriggers(schema) {
                try claim(trigger.name, "the folded-key trigger of '\(entity)'", in: &triggers)
            }
            for trigger in SQLBuilder.searchTriggers(schema) {
                try claim(trigger.name, "the full-text trigger of '\(entity)'", in: &triggers)
            }
            for trigger in SQLBuilder.replaceTriggers(schema) + SQLBuilder.searchReplacedRowsTriggers(schema) {
                try claim(trigger.name, "the conflict trigger of '\(entity)'", in: &triggers)
            }
        }
        for attribute in derived {
            for name in SQLBuilder.derivedAttributeTriggerNames(parent: attribute.parent, column: attribute.column) {
                try claim(name, "the trigger of the derived attribute '\(attribute.parent).\(attribute.column)'", in: &triggers)
            }
        }
        for rule in rules where rule.rule != .noAction {
            try claim(
                SQLBuilder.deleteRuleTriggerName(parent: rule.parent, child: rule.child, column: rule.column),
                "the delete-rule trigger of '\(rule.child).\(rule.column)'", in: &triggers)
            let unique = schemas.first { $0.name == rule.parent }.map(SQLBuilder.uniqueColumns) ?? []
            for trigger in SQLBuilder.deleteRuleReplacedRowsTriggers(
                parent: rule.parent, uniqueColumns: unique, child: rule.child, column: rule.column, rule: rule.rule)
            {
                try claim(
                    trigger.name, "the delete-rule trigger of '\(rule.child).\(rule.column)' for replaced rows", in: &triggers)
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
            if let problem = entity.defaultProblems[column.name] {
                throw FolioError.invalidSchema(
                    entity: entity.name, reason: "the default value of '\(column.name)' cannot be stored: \(problem)")
            }
            guard let value = entity.defaults[column.name], case .double(let number) = value.storage else { continue }
            if number.isNaN {
                throw FolioError.invalidSchema(
                    entity: entity.name, reason: "the default value of '\(column.name)' is NaN, which SQLite cannot store")
            }
            if column.type == .integer || column.type == .bool {
                throw FolioError.invalidSchema(
                    entity: entity.name,
                    reason:
                        "the default value of '\(column.name)' is above Int64.max (\(Int64.max)), the largest integer SQLite stores"
                )
            }
        }
    }
}
