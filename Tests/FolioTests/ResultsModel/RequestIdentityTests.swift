import Foundation
import PropertyBased
import Testing
@testable import Folio

/// A live model or controller given a request that Swift finds equal to the current one but
/// SQLite answers differently (canonically equivalent strings, -0.0 and 0.0, look-alike
/// search texts) applies it: one notification, and exactly what a fresh fetch returns.
@Suite("Request identity on live lists")
@MainActor
struct RequestIdentityTests {
    /// The spellings stored, one row each (some twice), and looked for.
    static let spellings = [
        LookAlikes.nfc, LookAlikes.nfd, LookAlikes.latinK, LookAlikes.kelvin, LookAlikes.aRing,
        LookAlikes.aPlusRing, LookAlikes.angstromSign, "a", "a\0b", "a\0c", "",
    ]

    let store: Store

    init() throws {
        store = try Store.inMemory(records: [Labelled.self])
        try store.write { tx in
            for (index, spelling) in (Self.spellings + Self.spellings.prefix(4)).enumerated() {
                var row = Labelled(
                    group: spelling, note: index % 3 == 0 ? nil : spelling, amount: index % 2 == 0 ? 0.0 : -0.0,
                    count: index, payload: Data(spelling.utf8))
                try tx.insert(&row)
            }
        }
    }

    func request(_ predicate: Predicate<Labelled>?) -> RecordRequest<Labelled> {
        var request = RecordRequest<Labelled>(predicate: predicate, sortBy: [SortDescriptor(\.count)])
        request.batchSize = 4
        return request
    }

    func fresh(_ request: RecordRequest<Labelled>) throws -> [RecordID] {
        Array(try store.fetchIdentifiers(request))
    }

    func shown(_ model: FetchedResultsModel<Labelled>) -> [RecordID] { model.items.map(\.id) }

    @Test func aCanonicallyEquivalentPredicateValueIsAppliedWithOneNotification() throws {
        for (old, new) in [
            (LookAlikes.nfd, LookAlikes.nfc), (LookAlikes.nfc, LookAlikes.nfd), (LookAlikes.latinK, LookAlikes.kelvin),
            (LookAlikes.aRing, LookAlikes.angstromSign), (LookAlikes.aPlusRing, LookAlikes.aRing),
        ] {
            let model = FetchedResultsModel(request(#Predicate { $0.group == old }), store: store)
            try model.performFetch()
            let oldRows = shown(model)
            #expect(oldRows == (try fresh(model.fetchRequest)))
            let notifications = ObservationCounter {
                _ = model.items
                _ = model.sections
            }
            model.predicate = #Predicate { $0.group == new }
            #expect(model.lastError == nil)
            #expect(notifications.take() == 1, "\(old.debugDescription) → \(new.debugDescription)")
            #expect(shown(model) == (try fresh(request(#Predicate { $0.group == new }))))
            #expect(shown(model) != oldRows, "the stored spellings differ, so do the rows")
            // The same bytes again: nothing to do.
            model.predicate = #Predicate { $0.group == new }
            #expect(notifications.take() == 0)
        }
    }

    @Test func aNegativeZeroPredicateIsAppliedAndAgreesWithAFreshFetch() throws {
        let zero = 0.0, negativeZero = -0.0
        let model = FetchedResultsModel(request(#Predicate { $0.amount == zero }), store: store)
        try model.performFetch()
        let counter = ObservationCounter { _ = model.items }
        model.predicate = #Predicate { $0.amount == negativeZero }
        #expect(counter.take() == 1, "not the same bound value: scanned again")
        #expect(shown(model) == (try fresh(request(#Predicate { $0.amount == negativeZero }))))
    }

    @Test func nulInsideAStringIsPartOfTheValue() throws {
        let first = "a\0b", second = "a\0c", prefix = "a"
        let model = FetchedResultsModel(request(#Predicate { $0.group == first }), store: store)
        try model.performFetch()
        #expect(shown(model).count == 1)
        let counter = ObservationCounter { _ = model.items }
        for value in [second, prefix, first] {
            model.predicate = #Predicate { $0.group == value }
            #expect(counter.take() == 1)
            #expect(shown(model) == (try fresh(request(#Predicate { $0.group == value }))))
            #expect(shown(model).count == 1)
        }
    }

    @Test func nilAndTheEmptyNoteAreDifferentRequests() throws {
        let empty: String? = ""
        let model = FetchedResultsModel(request(#Predicate { $0.note == nil }), store: store)
        try model.performFetch()
        let counter = ObservationCounter { _ = model.items }
        model.predicate = #Predicate { $0.note == empty }
        #expect(counter.take() == 1)
        #expect(shown(model) == (try fresh(request(#Predicate { $0.note == empty }))))
        model.predicate = nil
        #expect(counter.take() == 1)
        #expect(shown(model) == (try fresh(request(nil))))
    }

    @Test func aLookAlikeSearchTextIsApplied() throws {
        let searchable = try Store.inMemory(records: [SearchableArticle.self])
        try searchable.write { tx in
            for (index, title) in ["caf\u{E9} noir", "cafe\u{301} au lait", "tea"].enumerated() {
                var row = SearchableArticle(title: title, score: index)
                try tx.insert(&row)
            }
        }
        var request = RecordRequest<SearchableArticle>(sortBy: [SortDescriptor(\.score)])
        request.search = TextSearch("caf\u{E9}")
        let model = FetchedResultsModel(request, store: searchable)
        try model.performFetch()
        let counter = ObservationCounter {
            _ = model.items
            _ = model.fetchRequest
        }
        model.search = TextSearch("cafe\u{301}")
        #expect(counter.take() == 1)
        #expect(model.search.map { Array($0.text.utf8) } == Array("cafe\u{301}".utf8), "the request shown is the one set")
        request.search = TextSearch("cafe\u{301}")
        #expect(model.items.map(\.id) == Array(try searchable.fetchIdentifiers(request)))
    }

    @Test func aCacheForOneSpellingIsNotReusedForAnother() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-identity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Store(path: directory.appendingPathComponent("store.sqlite").path, records: [Labelled.self])
        let spellings = Self.spellings
        try writeSync(file) { tx in
            for spelling in spellings {
                var row = Labelled(group: spelling, payload: Data(spelling.utf8.reversed()))
                try tx.insert(&row)
            }
        }
        func cachedFetch(_ predicate: Predicate<Labelled>) async throws -> SectionCache.Outcome {
            let controller = FetchedResultsController(
                request(predicate), store: file, sectionBy: .attribute(\.count), cacheName: "identity")
            try await controller.performFetch()
            await controller.flushCache()
            #expect(Array(controller.snapshot.identifiers) == Array(try file.fetchIdentifiers(request(predicate))))
            return controller.lastCacheOutcome
        }
        let nfc = LookAlikes.nfc, nfd = LookAlikes.nfd
        _ = try await cachedFetch(#Predicate { $0.group == nfd })
        #expect(try await cachedFetch(#Predicate { $0.group == nfd }) == .reused)
        #expect(try await cachedFetch(#Predicate { $0.group == nfc }) == .rebuilt("fetch request differs"))
        // Two blobs of one length (a fingerprint once spelled both "Data(2 bytes)").
        let ab = Data("ab".utf8), ba = Data("ba".utf8)
        _ = try await cachedFetch(#Predicate { $0.payload == ab })
        #expect(try await cachedFetch(#Predicate { $0.payload == ba }) == .rebuilt("fetch request differs"))
    }

    /// `group == first`, `group != first`, or `values.contains(group)`.
    static func predicate(kind: Int, first: String, values: [String]) -> Predicate<Labelled> {
        if kind == 0 { return #Predicate { $0.group == first } }
        if kind == 1 { return #Predicate { $0.group != first } }
        return #Predicate { values.contains($0.group) }
    }

    /// Randomized: a live model and a live controller are given predicates drawn from
    /// look-alike spellings (equality, inequality, membership); after each change both show
    /// exactly what a fresh fetch returns, and the model notifies once when the bound values
    /// differ in their bytes, never when they are the same bytes.
    @Test func randomLookAlikePredicatesAlwaysShowAFreshFetch() async throws {
        let spellings = Self.spellings
        let model = FetchedResultsModel(request(nil), store: store)
        try performFetchSync(model)
        let controller = FetchedResultsController(request(nil), store: store)
        try await controller.performFetch()
        let counter = ObservationCounter { _ = model.items }
        var current: (kind: Int, values: [String])? = nil
        await propertyCheck(
            count: 60,
            input: Gen<Int>.int(in: 0...(spellings.count - 1)).array(of: 1...3), Gen<Int>.int(in: 0...2)
        ) { picks, kind in
            let values = picks.map { spellings[$0] }
            let first = values[0]
            let predicate = Self.predicate(kind: kind, first: first, values: values)
            // The values the predicate binds.
            let bound = kind < 2 ? [first] : values
            let sameBytes =
                current.map { old in
                    old.kind == kind && old.values.count == bound.count
                        && zip(old.values, bound).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
                } ?? false
            _ = counter.take()
            model.predicate = predicate
            let expected = try fresh(request(predicate))
            #expect(model.lastError == nil)
            #expect(shown(model) == expected, "\(values.map(\.debugDescription)) kind \(kind)")
            #expect(counter.take() == (sameBytes ? 0 : 1))
            try controller.setRequest(request(predicate))
            #expect(Array(controller.snapshot.identifiers) == expected)
            current = (kind, bound)
        }
    }
}
