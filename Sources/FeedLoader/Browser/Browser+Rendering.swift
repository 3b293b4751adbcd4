import Foundation
import Folio

extension Browser {
    /// Draws the screen, writing only when it changed.
    func render() {
        let frame = self.frame()
        guard frame != lastFrameText else { return }
        lastFrameText = frame
        terminal.write(frame)
    }

    func forceRedraw() {
        lastFrameText = ""
        terminal.write(ANSI.clearScreen)
    }

    /// The whole screen as one string of escape sequences.
    func frame() -> String {
        let lines = screenLines()
        var frame = ""
        for (index, line) in lines.enumerated() {
            frame += ANSI.moveTo(row: index + 1) + line + ANSI.reset + ANSI.clearToEndOfLine
        }
        return frame
    }

    /// One styled string per terminal row. The list is drawn before the status line, so
    /// the counters include the batches the visible rows needed.
    func screenLines() -> [String] {
        let width = size.columns
        var lines: [String] = []
        lines.append(titleBar(width))
        switch mode {
        case .detail: lines += detailLines(width)
        case .prompt(let prompt) where prompt.fromDetail: lines += detailLines(width)
        case .list, .prompt: lines += listLines(width)
        }
        lines.append(bottomLine(width))
        lines.append(statusLine(width))
        return lines
    }

    private func titleBar(_ width: Int) -> String {
        var text = " FeedLoader · \(title) · \(newestFirst ? "newest first" : "oldest first")"
        if source.grouping == .source { text += " · by source" }
        if source.grouping == .starred { text += " · starred, in your order (K J move)" }
        if unreadOnly && source.grouping != .starred { text += " · unread" }
        let muted = sources.values.filter(\.muted).count
        if muted > 0 { text += " · \(muted) muted" }
        if !filter.isEmpty { text += " · filter “\(filter)”" }
        if case .detail = mode, let cursor {
            text += " · item \((model.row(of: cursor) + 1).formatted()) of \(model.rowCount.formatted())"
            if !source.isComplete { text += "+" }
        }
        return ANSI.barStyle + TextLayout.fit(text, width)
    }

    private func bottomLine(_ width: Int) -> String {
        if case .prompt(let prompt) = mode {
            let months = source.indexTitles
            let range = months.isEmpty ? "" : "; \(months.first!)…\(months.last!)"
            let label =
                switch prompt.kind {
                case .filter: "Filter (title or source): "
                case .jump: "Go to day (YYYY-MM-DD prefix\(range)): "
                case .rename: "Rename the source (Enter; empty: the feed's name): "
                }
            return ANSI.bold + TextLayout.fit(" " + label + prompt.text + "▏", width)
        }
        if let message { return ANSI.bold + TextLayout.fit(" " + message.text, width) }
        let keys =
            mode == .detail
            ? " Esc back · j/k previous/next · * star · m mute source · n rename source · d delete · q back"
            : source.grouping == .starred
                ? " ↑↓ jk · K J move the item up, down · v back to the feed · ⏎ open · * unstar · r import · q quit"
                : " ↑↓ jk · / filter · 0-9 day · s sort · u unread · t day⇄source · v starred · ⏎ open · * star · m mute · M unmute · n rename"
                    + " · d delete · r import · q quit"
        return ANSI.dim + TextLayout.fit(keys, width)
    }

    private func statusLine(_ width: Int) -> String {
        let counters = store.diagnostics.counters
        let text =
            (source.isComplete
                ? " rows \(model.rowCount.formatted()) │ sections \(model.sections.count.formatted())"
                : " rows \(source.rowsKnown.formatted())+ counting… │ sections \(model.sections.count.formatted())+")
            + " │ statements \(counters.statements.formatted()) │ batches \(counters.batchesLoaded.formatted())"
            + " │ records \(counters.recordsMaterialized.formatted()) │ batch size \(source.request.batchSize)"
            + (reloads > 0 ? " │ reloads \(reloads.formatted())" : "") + " │ watching: \(watching)"
        return ANSI.reverse + TextLayout.fit(text, width)
    }

    // MARK: List

    private func listLines(_ width: Int) -> [String] {
        var lines: [String] = []
        let height = listHeight
        if model.isEmpty {
            lines.append("")
            lines.append(
                TextLayout.fit(
                    filter.isEmpty
                        ? "  No items. Press r to import some." : "  Nothing matches “\(filter)”. Press Esc to clear the filter.",
                    width))
            while lines.count < height { lines.append("") }
            return lines
        }
        for offset in 0..<height {
            let index = top + offset
            guard index < model.lineCount else {
                lines.append("")
                continue
            }
            switch model.line(at: index) {
            case .header(let section):
                lines.append(headerLine(section, width))
            case .row(let path):
                // The first line is the sticky header of the section being scrolled.
                lines.append(offset == 0 ? headerLine(path.section, width) : rowLine(path, width))
            }
        }
        return lines
    }

    /// A section's header: its name and its items — while the list is being counted, the
    /// last section read so far has more to come, and its count says so (`51+ items`).
    private func headerLine(_ section: Int, _ width: Int) -> String {
        let value = model.sections[section]
        let count = value.identifiers.count
        let more = !source.isComplete && section == model.sections.count - 1
        let right = "\(count.formatted())\(more ? "+" : "") item\(count == 1 && !more ? "" : "s") "
        let left =
            "▌"
            + (source.grouping == .day
                ? DayFormat.dayTitle(value.name) : source.grouping == .starred ? "★ Starred" : Source.shownName(value.name))
        let space = max(1, width - TextLayout.width(of: left) - TextLayout.width(of: right))
        return ANSI.headerStyle + TextLayout.fit(left + String(repeating: " ", count: space) + right, width)
    }

    private func rowLine(_ path: IndexPath, _ width: Int) -> String {
        let id = model.identifier(at: path)
        let feed = source.record(id, at: path)
        let highlight = highlights[id]?.kind
        let marker = (path == cursor ? "▶" : " ") + (highlight == .inserted ? "+" : highlight == .updated ? "~" : " ")
        let sourceWidth = 14
        // Sectioned by source, a row says its day too: `06-13 14:51`.
        let whenWidth = source.grouping == .day ? 5 : 11
        let titleWidth = max(10, width - 2 - 2 - whenWidth - 2 - 2 - sourceWidth - 1)
        let text: String
        if let feed {
            let time = DayFormat.time(feed.published)
            let when = source.grouping == .day ? time : DayFormat.dayName(feed.published).dropFirst(5) + " " + time
            text =
                marker + (feed.starred ? "★" : " ") + " " + when + "  "
                + TextLayout.fit(feed.title, titleWidth) + "  " + TextLayout.fit(sourceName(of: feed), sourceWidth)
        } else {
            text = marker + "  " + "--:--" + "  " + TextLayout.fit("(deleted)", titleWidth)
        }
        var style = ""
        if highlight != nil { style += ANSI.highlightStyle }
        if path == cursor { style += ANSI.reverse + ANSI.bold }
        if feed == nil { style += ANSI.dim }
        return style + TextLayout.fit(text, width)
    }

    // MARK: Detail

    private func detailLines(_ width: Int) -> [String] {
        var lines: [String] = [""]
        let inner = max(10, width - 4)
        if let cursor, let feed = record(at: cursor) {
            for line in TextLayout.wrap(feed.title, inner) { lines.append(ANSI.bold + "  " + line) }
            lines.append("")
            lines.append("  " + ANSI.dim + "Source     " + ANSI.reset + sourceLine(of: feed))
            lines.append(
                "  " + ANSI.dim + "Published  " + ANSI.reset + feed.shownPublished
                    + (feed.undated ? "" : ANSI.dim + "  (" + feed.published.formatted(.iso8601) + ")"))
            lines.append(
                "  " + ANSI.dim + "URL        " + ANSI.reset + (feed.link == nil ? "" : ANSI.underline)
                    + TextLayout.fit(feed.shownAddress, inner - 11).trimmingCharacters(in: .whitespaces))
            lines.append(
                "  " + ANSI.dim + "Image      " + ANSI.reset
                    + TextLayout.fit(feed.imageURL ?? "none", inner - 11).trimmingCharacters(in: .whitespaces))
            lines.append("  " + ANSI.dim + "Starred    " + ANSI.reset + (feed.starred ? "★ yes (* to unstar)" : "no (* to star)"))
            lines.append("")
            for line in TextLayout.wrap(feed.summary, min(inner, 90)) { lines.append("  " + line) }
        } else {
            lines.append("  This item was deleted.")
        }
        let height = listHeight
        if lines.count > height { lines = Array(lines.prefix(height)) }
        while lines.count < height { lines.append("") }
        return lines
    }
}

extension Browser {
    /// The detail view's source: its name, its site, whether it is muted, and the keys.
    fileprivate func sourceLine(of feed: Feed) -> String {
        guard let id = feed.source.id, let source = sources[id] else { return Source.shownName(feed.sourceName) }
        var text = source.shownName
        if let site = source.siteURL { text += ANSI.dim + "  " + site + ANSI.reset }
        if source.name != source.feedName {
            text += ANSI.dim + "  (the feed calls it \(Source.shownName(source.feedName)))" + ANSI.reset
        }
        text += ANSI.dim + (source.muted ? "  muted (M unmutes)" : "  (m mutes, n renames)")
        return text
    }
}

extension Feed {
    /// The detail view's date: the day and time the feed gives, or that it gives none and
    /// when the item was first imported (`not given (imported Friday 13 June at 10:00)`).
    var shownPublished: String {
        let when = DayFormat.longDay(DayFormat.dayName(published)) + " at " + DayFormat.time(published)
        return undated ? "not given (imported \(when))" : when
    }

    /// The detail view's address: the web address, or that there is none and which guid
    /// identifies the item.
    var shownAddress: String {
        link ?? "none (identified by its guid \(guid ?? "?"))"
    }
}
