import Foundation
import Folio

/// The sources' keys: sections by day ⇄ by source (`t`), mute the selected item's source
/// (`m`), unmute every source (`M`), rename the selected item's source (`n`, a prompt).
/// Each write changes a row of `source`; the list filters and sections through the items'
/// to-one, so muted items leave it and renamed sections move.
extension Browser {
    /// Sections the list by day or by source: a new controller; the selection stays on
    /// its item.
    func toggleGrouping() {
        let next: FeedListSource.Grouping = source.grouping == .day ? .source : .day
        regroup(next)
    }

    /// The starred items in the reader's order (`v`) ⇄ the feed by day.
    func toggleStarredView() {
        regroup(source.grouping == .starred ? .day : .starred)
    }

    private func regroup(_ next: FeedListSource.Grouping) {
        do {
            try source.setGrouping(next, request: listRequest(grouping: next))
        } catch {
            show("Cannot section the list by \(next): \(error)")
            return
        }
        reloadRows()
    }

    /// Reads every source again (their names and mutes).
    func reloadSources() {
        do {
            let all = try store.fetch(RecordRequest<Source>())
            sources = Dictionary(all.compactMap { $0 }.compactMap { s in s.id.map { ($0, s) } }, uniquingKeysWith: { a, _ in a })
        } catch {
            show("Cannot read the sources: \(error)")
        }
    }

    /// The name the list shows for an item's source: its source's, else the one its feed gave.
    func sourceName(of feed: Feed) -> String {
        feed.source.id.flatMap { sources[$0]?.shownName } ?? Source.shownName(feed.sourceName)
    }

    /// The selected item's source, as last read; `nil` (and a message) when it has none.
    private func sourceOfSelected() -> Source? {
        guard let cursor, let feed = record(at: cursor) else { return nil }
        guard let id = feed.source.id, let source = sources[id] else {
            show("“\(feed.title.truncated(to: 50))” has no source")
            return nil
        }
        return source
    }

    /// Mutes the selected item's source: one `UPDATE` of the source's row; the list's
    /// request leaves out the items of a muted source, so they leave the list.
    func muteSourceOfSelected() {
        guard let muted = sourceOfSelected() else { return }
        let key = muted.feedName, name = muted.shownName
        writeSources("mute") { tx in
            _ = try tx.updateAll(Source.self, where: #Predicate { $0.feedName == key }, set: [.set(\.muted, to: true)])
            return "Muted \(name): its items are hidden (M unmutes every source)"
        }
    }

    /// Unmutes every muted source: their items come back.
    func unmuteAllSources() {
        let names = sources.values.filter(\.muted).map(\.shownName).sorted()
        guard !names.isEmpty else {
            show("No source is muted")
            return
        }
        writeSources("unmute") { tx in
            _ = try tx.updateAll(Source.self, where: #Predicate { $0.muted == true }, set: [.set(\.muted, to: false)])
            return "Unmuted " + names.joined(separator: ", ").truncated(to: 80)
        }
    }

    /// Opens the prompt that renames the selected item's source, with its name.
    func startRenamingSourceOfSelected() {
        guard let renamed = sourceOfSelected(), let id = renamed.id else { return }
        setMode(.prompt(Prompt(kind: .rename(id), text: renamed.name, fromDetail: mode == .detail)))
    }

    /// Renames the source `id` (the prompt's Enter). An empty name gives it back the name
    /// its feed gives. Sectioned by source, its items move to the new name's section.
    func renameSource(_ id: RecordID, to text: String) {
        guard let renamed = sources[id] else { return }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let name = trimmed.isEmpty ? renamed.feedName : trimmed
        guard name != renamed.name else { return }
        let key = renamed.feedName, old = renamed.shownName
        writeSources("rename") { tx in
            _ = try tx.updateAll(Source.self, where: #Predicate { $0.feedName == key }, set: [.set(\.name, to: name)])
            return "Renamed \(old) to \(Source.shownName(name))"
        }
    }

    /// Writes sources in the background; then the browser reads them again and shows what
    /// `body` returns (``Browser/Event/sourcesChanged(_:)``).
    private func writeSources(_ verb: String, _ body: @escaping @Sendable (WriteTransaction) throws -> String) {
        let store = self.store, post = self.post
        Task.detached {
            do {
                post.yield(.sourcesChanged(try await store.write { tx in try body(tx) }))
            } catch {
                post.yield(.message("Cannot \(verb): \(error)"))
            }
        }
    }
}
