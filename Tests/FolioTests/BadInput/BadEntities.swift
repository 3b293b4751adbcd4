import Foundation
@testable import Folio

// EntityDescription declarations Folio must refuse with `.invalidSchema` before it touches a file.

struct TableNameWithSQL: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<TableNameWithSQL>(#"x"; drop table article; --"#, [AttributeDescription(\.name)])
    init() {}
}

struct ReservedSQLitePrefix: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<ReservedSQLitePrefix>("sqlite_things", [AttributeDescription(\.name)])
    init() {}
}

struct ReservedFolioPrefix: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<ReservedFolioPrefix>("Folio_Entities", [AttributeDescription(\.name)])
    init() {}
}

struct DuplicateColumn: PersistentRecord {
    var id: RecordID?
    var first = ""
    var second = ""
    static let entity = EntityDescription<DuplicateColumn>(
        "duplicate", [AttributeDescription(\.first, column: "same"), AttributeDescription(\.second, column: "SAME")])
    init() {}
}

struct ColumnNamedID: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<ColumnNamedID>("idclash", [AttributeDescription(\.name, column: "ID")])
    init() {}
}

struct ColumnNameWithSQL: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<ColumnNameWithSQL>(
        "quoted", [AttributeDescription(\.name, column: #"name" TEXT); DROP TABLE article; --"#)])
    init() {}
}

struct ComputedAttribute: PersistentRecord {
    var id: RecordID?
    var stored = ""
    var computed: String {
        get { stored }
        set { stored = newValue }
    }
    static let entity = EntityDescription<ComputedAttribute>("computed", [AttributeDescription(\.computed)])
    init() {}
}

struct EmptyTableName: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<EmptyTableName>("", [AttributeDescription(\.name)])
    init() {}
}

struct OverlongTableName: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<OverlongTableName>(String(repeating: "t", count: 65), [AttributeDescription(\.name)])
    init() {}
}

struct NonASCIITableName: PersistentRecord {
    var id: RecordID?
    var name = ""
    static let entity = EntityDescription<NonASCIITableName>("tablé", [AttributeDescription(\.name)])
    init() {}
}
