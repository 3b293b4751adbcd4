import Foundation
import Folio

/// What `feedloader` prints when standard output is not a terminal: the counts, then
/// the newest items under their day, read through the same controller as the list.
struct PlainReport {
    let store: Store
    let source: FeedListSource
    let title: String
    let limit: Int
    var imported: ImportReport?

    @MainActor
    func text() throws -> String {
        try source.performFetch()
        let sections = source.currentSections()
        let rows = sections.reduce(0) { $0 + $1.identifiers.count }
        var out = "FeedLoader · \(title)\n"
        if let imported { out += "Imported the sample feed: \(imported)\n" }
        out +=
            "\(rows.formatted()) item\(rows == 1 ? "" : "s") in \(sections.count.formatted()) day\(sections.count == 1 ? "" : "s"), newest first\n"
        var shown = 0
        outer: for (sectionIndex, section) in sections.enumerated() {
            guard shown < limit else { break }
            out +=
                "\n\(DayFormat.dayTitle(section.name)) — \(section.identifiers.count.formatted()) item\(section.identifiers.count == 1 ? "" : "s")\n"
            for (item, id) in section.identifiers.enumerated() {
                guard shown < limit else { break outer }
                let feed = source.record(id, at: IndexPath(item: item, section: sectionIndex))
                if let feed {
                    out += "  \(DayFormat.time(feed.published))  \(feed.starred ? "★ " : "")\(feed.title)  (\(feed.sourceName))\n"
                } else {
                    out += "  --:--  (deleted)\n"
                }
                shown += 1
            }
        }
        if shown < rows { out += "\n… \((rows - shown).formatted()) more; run in a terminal to browse them, or pass --limit.\n" }
        let counters = store.diagnostics.counters
        out +=
            "\nstatements \(counters.statements.formatted()) · batches \(counters.batchesLoaded.formatted()) · records \(counters.recordsMaterialized.formatted())\n"
        return out
    }
}
