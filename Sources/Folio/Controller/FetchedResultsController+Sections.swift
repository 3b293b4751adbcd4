import Foundation

extension FetchedResultsController {
    // MARK: Reading the results

    /// The results, lazily loaded in batches of the request's batch size; `nil` before
    /// ``performFetch()-68xbj``. Never a copied array.
    /// - Complexity: O(1); loads nothing (subscripting it loads batches).
    public var fetchedObjects: FetchedRecords<R>? {
        if let results { return results }
        guard let presented else { return nil }
        let batchSize = fetchRequest.batchSize > 0 ? fetchRequest.batchSize : Swift.max(1, presented.ids.count)
        let made = FetchedRecords(
            loader: BatchLoader<R>(
                store: store, identifiers: presented.ids, batchSize: batchSize,
                maxBatches: fetchRequest.batchSize > 0 ? fetchRequest.maxBatchesInMemory : 1,
                inherited: inheritedRecords))
        inheritedRecords = [:]
        results = made
        return made
    }

    /// Results with no rows (before a fetch): what a model over a controller shows before
    /// its first fetch.
    nonisolated static func noRecords(in store: Store) -> FetchedRecords<R> {
        FetchedRecords(loader: BatchLoader<R>(store: store, identifiers: IdentifierList(), batchSize: 1, maxBatches: 1))
    }

    /// The sections. Computed from counts held in memory; loads no record.
    /// - Complexity: O(sections) the first time after a change, O(1) after that.
    public var sections: [SectionInfo] {
        if let sectionInfos { return sectionInfos }
        guard let presented else { return [] }
        let infos = sections(of: presented)
        sectionInfos = infos
        return infos
    }

    /// The sections of `presented`, which need not be the state shown (a delivery computes
    /// the sections it inserts before it installs them).
    func sections(of presented: ResultsState) -> [SectionInfo] {
        var infos: [SectionInfo] = []
        infos.reserveCapacity(presented.runs.count)
        var offset = 0
        if sectionNames.count > 4 * presented.runs.count + 64 { sectionNames = [:] }
        let (previousRuns, previous) = labelledSections
        var j = 0
        for run in presented.runs {
            let label: (name: String, indexTitle: String?)
            // The sections that stayed come in the same order: compare with the next one or
            // two of the previous sections (one may have gone) before hashing.
            let exact = SQLiteValue.Exact(run.value)
            if j < previousRuns.count, SQLiteValue.Exact(previousRuns[j].value) == exact {
                label = (previous[j].name, previous[j].indexTitle)
                j += 1
            } else if j + 1 < previousRuns.count, SQLiteValue.Exact(previousRuns[j + 1].value) == exact {
                label = (previous[j + 1].name, previous[j + 1].indexTitle)
                j += 2
            } else if let known = sectionNames[exact] {
                label = known
            } else {
                let name = presented.sectioned ? (sectionKey?.name(of: run.value) ?? "") : ""
                label = (name, sectionIndexTitle.map { $0(name) } ?? defaultIndexTitle(name))
                sectionNames[SQLiteValue.Exact(run.value)] = label
            }
            infos.append(
                SectionInfo(
                    name: label.name, indexTitle: label.indexTitle, numberOfObjects: run.count,
                    offset: offset, isNil: presented.sectioned && run.value.isNull))
            offset += run.count
        }
        if presented.sectioned { labelledSections = (presented.runs, infos) }
        return infos
    }

    /// The sections of `state`, reached from `old` (whose sections are `previous`) by a
    /// change set that inserted and deleted no section: the same sections, in the same order,
    /// with `state`'s counts (what most commits change). `nil` when a section's value is not
    /// the very same as before — a section of values SQLite finds equal takes its value, and
    /// so its name, from its first row, which a commit may change (`1` then `1.0`) — or the
    /// number of sections differs: then the sections are computed whole.
    ///
    /// O(sections): one comparison of two values and two integers written a section, in place
    /// unless a snapshot handed out still holds `previous` (then it is copied first); no value
    /// is hashed and no name is made.
    func sections(recounting previous: consuming [SectionInfo], from old: ResultsState, for state: ResultsState)
        -> [SectionInfo]?
    {
        let runs = state.runs, oldRuns = old.runs
        guard previous.count == runs.count, oldRuns.count == runs.count else { return nil }
        let sameValues = runs.withUnsafeBufferPointer { runs in
            oldRuns.withUnsafeBufferPointer { oldRuns in
                runs.indices.allSatisfy { SQLiteValue.Exact(runs[$0].value) == SQLiteValue.Exact(oldRuns[$0].value) }
            }
        }
        guard sameValues else { return nil }
        // So that `previous` may be the only reference left (set again below).
        labelledSections = ([], [])
        var infos = previous
        var offset = 0
        infos.withUnsafeMutableBufferPointer { infos in
            runs.withUnsafeBufferPointer { runs in
                for index in infos.indices {
                    let count = runs[index].count
                    infos[index].numberOfObjects = count
                    infos[index].offset = offset
                    offset += count
                }
            }
        }
        #if FOLIO_INTERNAL_CHECKS
        let slow = sections(of: state)
        precondition(slow == infos, "sections recounted after a change set without section changes differ from the state's")
        #endif
        if state.sectioned { labelledSections = (runs, infos) }
        return infos
    }

    private func defaultIndexTitle(_ name: String) -> String? {
        if case .day = sectionKey?.kind { return String(name.prefix(7)) }
        return name.first.map { String($0).uppercased() }
    }

    /// The index titles of the sections, in order, without repeats.
    ///
    /// While the results are incomplete (``isComplete`` is `false`), the titles of the
    /// sections shown: a prefix of the complete results' titles, which grow at the completion.
    /// - Complexity: O(sections).
    public var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return sections.compactMap(\.indexTitle).filter { seen.insert($0).inserted }
    }

    /// The section a section-index title jumps to: the first section with that title;
    /// for a title with no section, the first section whose title sorts after it (or the
    /// last section). `index` is the title's position in ``sectionIndexTitles``.
    ///
    /// While the results are incomplete, a title of a section not read yet jumps to the last
    /// section shown, the end of what is known; after the completion, to its own section.
    /// - Complexity: O(sections).
    public func section(forSectionIndexTitle title: String, at index: Int) -> Int {
        let all = sections
        if let exact = all.firstIndex(where: { $0.indexTitle == title }) { return exact }
        if let after = all.firstIndex(where: { ($0.indexTitle ?? "") > title }) { return after }
        return Swift.max(0, all.count - 1)
    }

    /// The record at an index path (loading its batch if needed); `nil` if it was deleted
    /// since the last change set was delivered.
    ///
    /// The record is the stored one: a record loaded before a commit that changed it is
    /// read again once that commit's change set is delivered.
    ///
    /// It works inside one of the store's own `read` or `write` closures too (never a `nil`
    /// that would read as "deleted"): a batch that is not loaded is then read through that
    /// closure's connection — in a `write`, it sees the transaction's own uncommitted
    /// changes — and is not kept.
    /// - Complexity: O(1) when the item's batch is loaded; otherwise one query that loads
    ///   the batch (`batchSize` records).
    public func object(at indexPath: IndexPath) -> R? {
        guard let objects = fetchedObjects else { return nil }
        return objects[flatIndex(indexPath)]
    }

    /// The identifier at an index path. Loads nothing.
    /// - Complexity: O(1).
    public func identifier(at indexPath: IndexPath) -> RecordID {
        guard let presented else { preconditionFailure("identifier(at:) before performFetch(): there are no results yet") }
        return RecordID(presented.ids[flatIndex(indexPath)])
    }

    /// The index path of a record, or `nil` if it is not in the results.
    /// - Complexity: O(n): one pass over the identifiers in memory; loads nothing.
    public func indexPath(for id: RecordID) -> IndexPath? {
        guard let presented, let index = presented.ids.positions(of: [id.rawValue])[id.rawValue] else { return nil }
        return ResultsState.path(of: index, offsets: presented.offsets)
    }

    /// The sections and identifiers now, loading no record.
    /// - Complexity: O(sections); the identifiers are shared, not copied.
    public var snapshot: Snapshot {
        Snapshot(state: presented ?? .empty(sectioned: sectionKey != nil), sections: sections)
    }

    private func flatIndex(_ indexPath: IndexPath) -> Int {
        let info = sections[indexPath.section]
        precondition(indexPath.item >= 0 && indexPath.item < info.numberOfObjects, "Index path out of range")
        return info.offset + indexPath.item
    }
}
