import Foundation
import Testing

@testable import Folio

/// A mailbox whose derived attributes, declared with `@Derived`, read its ``Letter``s: the
/// unread ones counted (indexed), all of them counted, and the newest one's date.
@PersistentRecord
struct Mailbox: Equatable {
    var id: RecordID?
    @Stored(.unique) var name = ""
    @Derived(.count(\Letter.mailbox, where: #Predicate { $0.isRead == false }), .indexed) var unreadCount = 0
    @Derived(.count(\Letter.mailbox)) var letterCount = 0
    @Derived(.maximum(\Letter.received, of: \Letter.mailbox), column: "newest_letter") var newest: Date?
    @ToMany(\Letter.mailbox, deleteRule: .cascade) var letters: RecordRequest<Letter>
}

/// A letter of a ``Mailbox``.
@PersistentRecord
struct Letter: Equatable {
    var id: RecordID?
    var subject = ""
    var isRead = false
    var received = Date(timeIntervalSince1970: 0)
    var mailbox = ToOne<Mailbox>()
}

/// ``Mailbox``'s entity, written by hand.
enum HandWrittenMail {
    static let mailbox = EntityDescription<Mailbox>(
        "mailbox",
        [
            AttributeDescription(\.name, unique: true),
            AttributeDescription(
                \.unreadCount, derived: .count(\Letter.mailbox, where: #Predicate { $0.isRead == false }), indexed: true),
            AttributeDescription(\.letterCount, derived: .count(\Letter.mailbox)),
            AttributeDescription(\.newest, derived: .maximum(\Letter.received, of: \Letter.mailbox), column: "newest_letter"),
        ],
        relationships: [.toMany(\Letter.mailbox, deleteRule: .cascade)])
}

@Suite("@Derived end to end")
struct DerivedMacroTests {
    static let day: TimeInterval = 86_400

    @Test func theMacroEntityIsTheHandWrittenOne() throws {
        expectSameEntity(Mailbox.entity, HandWrittenMail.mailbox)
        #expect(Mailbox.entity.versionHash == HandWrittenMail.mailbox.versionHash)
        #expect(Mailbox.entity.schema.columns.map(\.name) == ["name", "unreadCount", "letterCount", "newest_letter"])
        for (mine, theirs) in zip(Mailbox.entity.attributes, HandWrittenMail.mailbox.attributes) {
            #expect(mine.derivation?.kind == theirs.derivation?.kind, "\(mine.column)")
            #expect(try mine.derivation?.resolveChild() == theirs.derivation?.resolveChild(), "\(mine.column)")
        }
        let unread = try #require(try Mailbox.entity.attributes[1].derivation?.resolveChild())
        #expect(unread.table == "letter" && unread.reference == "mailbox" && unread.filterRow != nil)
    }

    /// Each mailbox as read from the store: its derived values, by name.
    func mailboxes(_ store: Store) throws -> [String: Mailbox] {
        let all = try store.fetch(RecordRequest<Mailbox>(sortBy: [SortDescriptor(\.name)])).map { $0! }
        return Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
    }

    @Test func theDerivedValuesFollowTheLetters() throws {
        let store = try Store.temporary(records: [Mailbox.self, Letter.self])
        let (home, work) = try store.write { tx -> (Mailbox, Mailbox) in
            var home = Mailbox(name: "Home")
            var work = Mailbox(name: "Work", unreadCount: 99, letterCount: 99, newest: Date())
            try tx.insert(&home)
            try tx.insert(&work)
            for number in 0..<5 {
                var letter = Letter(
                    subject: "Letter \(number)", isRead: number.isMultiple(of: 2),
                    received: Date(timeIntervalSince1970: Double(number) * Self.day), mailbox: ToOne(home))
                try tx.insert(&letter)
            }
            return (home, work)
        }
        var read = try mailboxes(store)
        #expect(read["Home"]?.unreadCount == 2 && read["Home"]?.letterCount == 5)
        #expect(read["Home"]?.newest == Date(timeIntervalSince1970: 4 * Self.day))
        // The values the app set on a record are not written: SQLite keeps them.
        #expect(read["Work"]?.unreadCount == 0 && read["Work"]?.letterCount == 0 && read["Work"]?.newest == nil)

        // Reading a letter, moving the newest to the other mailbox, and adding one there.
        try store.write { tx in
            var letters = try tx.fetchAll(RecordRequest<Letter>(sortBy: [SortDescriptor(\.received)]))
            letters[1].isRead = true
            try tx.update(letters[1])
            letters[4].mailbox = ToOne(work)
            try tx.update(letters[4])
            var late = Letter(subject: "Late", received: Date(timeIntervalSince1970: 9 * Self.day), mailbox: ToOne(work))
            try tx.insert(&late)
        }
        read = try mailboxes(store)
        #expect(read["Home"]?.unreadCount == 1 && read["Home"]?.letterCount == 4)
        #expect(read["Home"]?.newest == Date(timeIntervalSince1970: 3 * Self.day))
        #expect(read["Work"]?.unreadCount == 1 && read["Work"]?.letterCount == 2)
        #expect(read["Work"]?.newest == Date(timeIntervalSince1970: 9 * Self.day))

        // A list sorted and filtered by a derived value, through the macro's key paths.
        let unread = try store.fetch(
            RecordRequest<Mailbox>(
                predicate: #Predicate { $0.letterCount > 1 }, sortBy: [SortDescriptor(\.newest, order: .reverse)]))
        #expect(unread.map { $0!.name } == ["Work", "Home"])
        #expect(try store.count(home.letters) == 4)
        #expect(try store.count(work.letters) == 2)
    }
}
