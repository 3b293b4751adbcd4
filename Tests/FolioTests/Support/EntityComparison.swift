import Foundation
import Testing

import Folio

/// Expects two entities of one record type to be the same declaration: table, old name,
/// schema and version hash (so a file made with one opens with the other, unmigrated), and
/// each attribute's key path, old name and default, and each relationship's delete rule.
func expectSameEntity<R: PersistentRecord>(
    _ actual: EntityDescription<R>, _ expected: EntityDescription<R>, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(actual.name == expected.name, sourceLocation: sourceLocation)
    #expect(actual.renamedFrom == expected.renamedFrom, sourceLocation: sourceLocation)
    #expect(actual.schema == expected.schema, sourceLocation: sourceLocation)
    #expect(actual.versionHash == expected.versionHash, sourceLocation: sourceLocation)
    #expect(actual.attributes.count == expected.attributes.count, sourceLocation: sourceLocation)
    for (mine, theirs) in zip(actual.attributes, expected.attributes) {
        #expect(mine.keyPath == theirs.keyPath, "\(mine.column)", sourceLocation: sourceLocation)
        #expect(mine.renamedFrom == theirs.renamedFrom, "\(mine.column)", sourceLocation: sourceLocation)
        #expect(mine.defaultValue == theirs.defaultValue, "\(mine.column)", sourceLocation: sourceLocation)
    }
    #expect(actual.relationships.map(\.deleteRule) == expected.relationships.map(\.deleteRule), sourceLocation: sourceLocation)
    #expect(actual.indexes.count == expected.indexes.count, sourceLocation: sourceLocation)
}
