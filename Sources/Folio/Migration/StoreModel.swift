import Foundation
import GRDB

/// The record types of a store file, with the version of that model and how files of
/// older versions become this one.
///
/// The version is an integer the app increases whenever the model changes (version hashes
/// change too, but cannot be ordered). It is stored in the file, in Folio's own metadata
/// (never in `PRAGMA user_version`, which belongs to the app). Opening a file:
///
/// - of the same version: its tables must match the entities, as with
///   ``Store/init(path:records:cacheDirectory:openingProgress:)``; an entity the file lacks is created;
/// - of an older version: the file is **migrated** at open, in one transaction — the
///   changes Folio can infer (attributes and entities added, removed or renamed, made
///   optional or required, indexes added or removed), then the custom ``steps`` not yet
///   run on this file, then what removes data; see <doc:EvolvingYourSchema>;
/// - of a newer version: refused with ``FolioError/newerModelVersion(path:version:declared:)``
///   and left unchanged — an older app never drops what a newer one added.
///
/// ```swift
/// let model = StoreModel(
///     version: 2,
///     records: [Article.self, Feed.self],
///     discarding: [.attribute("summary", of: "article")],
///     steps: [
///         MigrationStep("fill article.wordCount") { db in
///             try db.execute(sql: "UPDATE article SET wordCount = length(body) - length(replace(body, ' ', '')) + 1")
///         }
///     ])
/// let store = try Store(path: "feeds.sqlite", model: model)
/// ```
///
/// At a version change the model is complete: an entity of the file that no record type
/// declares is removed (its table dropped). A store that opens the file at the same
/// version may declare fewer record types; the others' tables are left alone.
public struct StoreModel: Sendable {
    /// The model version: 0 for ``Store/init(path:records:cacheDirectory:openingProgress:)``, which declares none.
    public let version: Int
    /// The record types, one entity each.
    public let records: [any PersistentRecord.Type]
    /// The removals whose data may be lost: without one, a migration that would remove an
    /// attribute or entity still holding data throws
    /// ``FolioError/migrationDiscardsData(entity:attribute:rows:)``.
    public let discarding: [DiscardedData]
    /// The custom migration steps, in the order they run. Each runs once per file; see ``MigrationStep``.
    public let steps: [MigrationStep]

    /// Declares a model version.
    ///
    /// - Parameters:
    ///   - version: the model version, from 1 to `Int32.max`; increase it with every
    ///     change of the record types' tables and every new step.
    ///   - records: every record type of the model.
    ///   - discarding: attributes and entities whose data a migration may drop.
    ///   - steps: the custom migration steps of every version so far, oldest first.
    public init(
        version: Int, records: [any PersistentRecord.Type], discarding: [DiscardedData] = [], steps: [MigrationStep] = []
    ) {
        self.version = version
        self.records = records
        self.discarding = discarding
        self.steps = steps
    }

    /// The unversioned model of ``Store/init(path:records:cacheDirectory:openingProgress:)``: version 0, no steps.
    init(unversioned records: [any PersistentRecord.Type]) {
        self.version = 0
        self.records = records
        self.discarding = []
        self.steps = []
    }

    /// An attribute or entity whose stored data a migration may drop.
    public enum DiscardedData: Sendable, Hashable {
        /// The column `attribute` (its name in the file) of the entity `entity`.
        case attribute(String, of: String)
        /// The entity (table) named `entity` in the file, with all its rows.
        case entity(String)
    }
}

/// A named piece of migration code that runs once per store file, for what Folio cannot
/// infer: splitting an attribute, changing a type, filling a new attribute from others.
///
/// A step receives the GRDB `Database` inside the migration's single transaction. It
/// sees the file after Folio's additive changes — new entities' tables created, renamed
/// tables and columns under their new names, added attributes present (`NULL` in
/// existing rows) — and before the removing ones: removed attributes and entities are
/// still there to read. After the steps, a non-optional attribute still `NULL` gets its
/// declared default; then removed columns and tables are dropped and `NOT NULL` and
/// indexes are applied.
///
/// A step that throws rolls the whole migration back: the file keeps its tables, rows and
/// schema, and the store throws ``FolioError/migrationStepFailed(step:reason:)`` naming the step.
/// Once the migration commits, the step's name is recorded in the file and it never runs
/// there again. A new file records every step as run (it is created in the final shape).
///
/// ```swift
/// MigrationStep("split name into first and last") { db in
///     try db.execute(sql: """
///         UPDATE person SET first = substr(name, 1, instr(name, ' ') - 1),
///                           last = substr(name, instr(name, ' ') + 1)
///         WHERE instr(name, ' ') > 0
///         """)
/// }
/// ```
///
/// The rows a step writes go through the entities' change triggers, so their change
/// tokens are renewed and no persistent section cache of them is trusted afterwards.
public struct MigrationStep: Sendable {
    /// The step's name: unique in the model, recorded in the file once the step has run.
    public let name: String
    let body: @Sendable (Database) throws -> Void

    /// Declares a step.
    ///
    /// - Parameters:
    ///   - name: a name unique among the model's steps, not empty and without NUL
    ///     characters; never rename a step that shipped (it would run again on files that
    ///     ran it under the old name).
    ///   - body: the migration code, given the database inside the migration transaction.
    public init(_ name: String, _ body: @escaping @Sendable (Database) throws -> Void) {
        self.name = name
        self.body = body
    }
}
