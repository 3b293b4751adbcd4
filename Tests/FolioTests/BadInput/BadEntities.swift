import Foundation
@testable import Folio

// Entity declarations Folio must refuse with `.invalidSchema` before it touches a file.

struct TableNameWithSQL: Folio.Record {
    var id: RecordID?
    var name = ""
    static let entity = Entity<TableNameWithSQL>(#"x"; drop table article; --"#, [Attribute(\.name)])
    init() {}
}

struct ReservedSQLitePrefix: Folio.Record {
    var id: RecordID?
    var name = ""
    static let entity = Entity<ReservedSQLitePrefix>("sqlite_things", [Attribute(\.name)])
    init() {}
}

struct ReservedFolioPrefix: Folio.Record {
    var id: RecordID?
    var name = ""
    static let entity = Entity<ReservedFolioPrefix>("Folio_Entities", [Attribute(\.name)])
    init() {}
}

struct DuplicateColumn: Folio.Record {
    var id: RecordID?
    var first = ""
    var second = ""
    static let entity = Entity<DuplicateColumn>("duplicate", [Attribute(\.first, column: "same"), Attribute(\.second, column: "SAME")])
    init() {}
}

struct ColumnNamedID: Folio.Record {
    var id: RecordID?
    var name = ""
    static let entity = Entity<ColumnNamedID>("idclash", [Attribute(\.name, column: "ID")])
    init() {}
}

struct ColumnNameWithSQL: Folio.Record {
    var id: RecordID?
    var name = ""
    static let entity = Entity<ColumnNameWithSQL>("quoted", [Attribute(\.name, column: #"name" TEXT); DROP TABLE article; --"#)])
    init() {}
}

struct ComputedAttribute: Folio.Record {
    var id: RecordID?
    var stored = ""
    var computed: String {
        get { stored }
        set { stored = newValue }
    }
    static let entity = Entity<ComputedAttribute>("computed", [Attribute(\.computed)])
    init() {}
}

struct EmptyTableName: Folio.Record {
    var id: RecordID?
    var name = ""
    static let entity = Entity<EmptyTableName>("", [Attribute(\.name)])
    init() {}
}

struct OverlongTableName: Folio.Record {
    var id: RecordID?
    var name = ""
    static let entity = Entity<OverlongTableName>(String(repeating: "t", count: 65), [Attribute(\.name)])
    init() {}
}

struct NonASCIITableName: Folio.Record {
    var id: RecordID?
    var name = ""
    static let entity = Entity<NonASCIITableName>("tablé", [Attribute(\.name)])
    init() {}
}
