import Foundation
import GRDB
import Testing
@testable import Folio

/// A record with a column of each storage class, for request-identity tests.
struct Labelled: PersistentRecord {
    var id: RecordID?
    var group = ""
    var note: String? = nil
    var amount = 0.0
    var count = 0
    var payload = Data()

    static let entity = EntityDescription<Labelled>(
        "labelled",
        [
            AttributeDescription(\.group), AttributeDescription(\.note), AttributeDescription(\.amount),
            AttributeDescription(\.count), AttributeDescription(\.payload),
        ])

    init() {}
    init(group: String, note: String? = nil, amount: Double = 0, count: Int = 0, payload: Data = Data()) {
        self.group = group
        self.note = note
        self.amount = amount
        self.count = count
        self.payload = payload
    }
}

/// Values that Swift (or GRDB's `DatabaseValue`) finds equal but SQLite does not treat alike,
/// or that differ only in their storage class.
enum LookAlikes {
    static let nfc = "\u{E9}"  // é, precomposed
    static let nfd = "e\u{301}"  // e + combining acute
    static let latinK = "K"
    static let kelvin = "\u{212A}"
    static let angstromSign = "\u{212B}"
    static let aRing = "\u{C5}"
    static let aPlusRing = "A\u{30A}"

    /// Pairs of bound values that must never make two requests the same.
    static let valuePairs: [(DatabaseValue, DatabaseValue, String)] = [
        (nfc.databaseValue, nfd.databaseValue, "NFC and NFD"),
        (latinK.databaseValue, kelvin.databaseValue, "K and the Kelvin sign"),
        (aRing.databaseValue, angstromSign.databaseValue, "Å and the Angstrom sign"),
        (1.databaseValue, 1.0.databaseValue, "1 and 1.0"),
        (Int64.max.databaseValue, Double(Int64.max).databaseValue, "Int64.max and its Double"),
        (Int64(9_007_199_254_740_993).databaseValue, 9_007_199_254_740_992.0.databaseValue, "2^53+1 and the real 2^53"),
        (0.0.databaseValue, (-0.0).databaseValue, "0.0 and -0.0"),
        ("a\0b".databaseValue, "a\0c".databaseValue, "NULs inside"),
        ("a\0b".databaseValue, "a".databaseValue, "a NUL and what follows it"),
        (Data("abc".utf8).databaseValue, "abc".databaseValue, "a blob and a text with the same bytes"),
        (Data([1, 2]).databaseValue, Data([3, 4]).databaseValue, "two blobs of one length"),
        (DatabaseValue.null, "".databaseValue, "NULL and the empty text"),
        (DatabaseValue.null, 0.databaseValue, "NULL and 0"),
    ]
}

@Suite("Request identity: SQL and bound values byte for byte, with their storage class")
struct RequestEqualityTests {
    @Test func swiftAndGRDBFindTheseEqualButTheyAreDifferentBoundValues() {
        #expect(LookAlikes.nfc == LookAlikes.nfd)
        #expect(LookAlikes.latinK == LookAlikes.kelvin)
        #expect(1.databaseValue == 1.0.databaseValue)
        #expect(0.0.databaseValue == (-0.0).databaseValue)
        for (a, b, what) in LookAlikes.valuePairs {
            let first = SQLFragment("(x = ?)", [a])
            let second = SQLFragment("(x = ?)", [b])
            #expect(first != second, "\(what)")
            #expect(first.fingerprint != second.fingerprint, "\(what)")
            #expect(!first.fingerprint.utf8.elementsEqual(second.fingerprint.utf8), "\(what)")
            #expect(first == SQLFragment("(x = ?)", [a]), "\(what): the same value again is the same fragment")
            #expect(first.hashValue == SQLFragment("(x = ?)", [a]).hashValue)
        }
    }

    @Test func aMissingArgumentIsNotANullOne() {
        #expect(SQLFragment("(x IS NULL)") != SQLFragment("(x IS NULL)", [.null]))
        #expect(SQLFragment("(x = ?)", [.null]) == SQLFragment("(x = ?)", [.null]))
    }

    @Test func theSQLTextIsComparedByItsBytes() {
        let a = SQLFragment("(\"\(LookAlikes.nfc)\" = 1)")
        let b = SQLFragment("(\"\(LookAlikes.nfd)\" = 1)")
        #expect(a != b)
        #expect(Set([a, b]).count == 2)
    }

    @Test func fingerprintsSpellValuesInASCII() {
        let fragment = SQLFragment(
            "?", [LookAlikes.nfd.databaseValue, Data([0xFF]).databaseValue, (-0.0).databaseValue, 7.databaseValue, .null])
        #expect(fragment.fingerprint.utf8.allSatisfy { $0 < 0x80 })
        #expect(fragment.fingerprint.contains("text x'65cc81'"))
        #expect(fragment.fingerprint.contains("blob x'ff'"))
        #expect(fragment.fingerprint.contains("integer 7"))
    }

    @Test func compiledPredicatesOnLookAlikeStringsDiffer() throws {
        for (x, y) in [
            (LookAlikes.nfc, LookAlikes.nfd), (LookAlikes.latinK, LookAlikes.kelvin),
            (LookAlikes.aRing, LookAlikes.aPlusRing), ("a\0b", "a\0c"),
        ] {
            let a = try RecordRequest<Labelled>(predicate: #Predicate { $0.group == x }).compile()
            let b = try RecordRequest<Labelled>(predicate: #Predicate { $0.group == y }).compile()
            let again = try RecordRequest<Labelled>(predicate: #Predicate { $0.group == x }).compile()
            #expect(a != b, "\(x.debugDescription) vs \(y.debugDescription)")
            #expect(a.fingerprint != b.fingerprint)
            #expect(a == again)
            #expect(a.hashValue == again.hashValue)
        }
    }

    @Test func compiledPredicatesOnLookAlikeNumbersDiffer() throws {
        let zero = 0.0, negativeZero = -0.0
        let a = try RecordRequest<Labelled>(predicate: #Predicate { $0.amount == zero }).compile()
        let b = try RecordRequest<Labelled>(predicate: #Predicate { $0.amount == negativeZero }).compile()
        #expect(a != b)
        let big = Int.max, bigReal = Double(Int.max)
        let c = try RecordRequest<Labelled>(predicate: #Predicate { $0.count == big }).compile()
        let d = try RecordRequest<Labelled>(predicate: #Predicate { $0.amount == bigReal }).compile()
        #expect(c != d)
    }

    @Test func noteNilIsNotAnEmptyNoteNorNoPredicate() throws {
        let empty: String? = ""
        let isNil = try RecordRequest<Labelled>(predicate: #Predicate { $0.note == nil }).compile()
        let isEmpty = try RecordRequest<Labelled>(predicate: #Predicate { $0.note == empty }).compile()
        let none = try RecordRequest<Labelled>().compile()
        #expect(isNil != isEmpty)
        #expect(isNil != none)
        #expect(isEmpty != none)
    }

    @Test func searchTextsAreComparedByTheirBytes() throws {
        let nfc = try compiledSearch(LookAlikes.nfc)
        let nfd = try compiledSearch(LookAlikes.nfd)
        // The compiled queries are the same exactly when their full-text queries are the same bytes.
        let nfcQuery = try #require(nfc.search?.query), nfdQuery = try #require(nfd.search?.query)
        #expect((nfc == nfd) == nfcQuery.utf8.elementsEqual(nfdQuery.utf8))
        // A query text that differs only in its bytes is another query.
        var a = try RecordRequest<SearchableArticle>(search: TextSearch("x")).compile()
        var b = a
        a.search?.query = "\"\(LookAlikes.nfc)\""
        b.search?.query = "\"\(LookAlikes.nfd)\""
        #expect(a != b)
    }

    @Test func windowsAndOrdersDiffer() throws {
        let base = RecordRequest<Labelled>(sortBy: [SortDescriptor(\.group)])
        var limited = base
        limited.limit = 3
        var offset = base
        offset.offset = 0
        var reversed = base
        reversed.sortBy = [SortDescriptor(\.group, order: .reverse)]
        var byCount = base
        byCount.sortBy = [SortDescriptor(\.count)]
        let compiled = try [base, limited, reversed, byCount].map { try $0.compile() }
        #expect(Set(compiled).count == 4)
        #expect(try offset.compile() != base.compile(), "offset 0 is spelled differently; a scan too many at worst")
    }
}

/// The compiled full-text query of a search for `text` over `SearchableArticle`.
private func compiledSearch(_ text: String) throws -> CompiledQuery {
    try RecordRequest<SearchableArticle>(search: TextSearch(text)).compile()
}
