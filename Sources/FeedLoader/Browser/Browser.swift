import Foundation
import Folio
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The full-screen list: newest first, sectioned by day (or by source) with sticky
/// headers, driven by a fetched results controller whose batch size is the terminal's
/// height. Items of muted sources are left out.
///
/// Everything happens on the main actor, one event at a time: keys (read on a thread
/// of their own), terminal resizes, ticks (to fade highlights and refresh the counters)
/// and messages from a background import. Change sets are applied as the controller
/// delivers them (see ``FeedListSource``), then drawn.
@MainActor
final class Browser {
    let store: Store
    let source: FeedListSource
    let terminal: Terminal
    let title: String
    /// What `r` imports.
    let refresh: RefreshSource

    private(set) var model = RowModel()
    /// The first display line on screen (drawn under the sticky header).
    private(set) var top = 0
    /// The selected row, `nil` when the list is empty.
    private(set) var cursor: IndexPath?
    private(set) var mode = Mode.list
    private(set) var filter = ""
    private(set) var newestFirst = true
    /// The unread items only (`u`).
    private(set) var unreadOnly = false
    private(set) var size: Terminal.Size
    private(set) var highlights: [RecordID: (kind: Highlight, until: Date)] = [:]
    private(set) var message: (text: String, until: Date)?
    var importTask: Task<Void, Never>?
    /// Every source by identifier, for the names the rows show (read again after a write of
    /// sources: a few rows).
    var sources: [RecordID: Source] = [:]
    /// Set while the request changes, whose difference is not highlighted.
    var isChangingRequest = false
    private var helpers: [Task<Void, Never>] = []
    private var signalSources: [any DispatchSourceSignal] = []
    var lastFrameText = ""
    /// Change sets drawn as a reload rather than as inserts, deletes and moves (the status
    /// line says how many, when any).
    private(set) var reloads = 0
    /// The store's `changeLogReloads` when a reload was last shown: a reload since that
    /// counter moved is the change log's (the message gives its reason).
    private var changeLogReloadsShown = 0
    /// How the store learns of other processes' commits (`inotify`, `dispatch source`,
    /// `polling`), for the status line: another process's import animates in on its own.
    var watching: String {
        if case .polling = store.externalChangeDetection { return "polling" }
        return store.externalChangeDetection.description
    }
    private var isDone = false

    let events: AsyncStream<Event>
    let post: AsyncStream<Event>.Continuation

    /// How long an inserted or updated row stays highlighted: 2.5 seconds, or
    /// `FEEDLOADER_HIGHLIGHT_SECONDS` (tests on a loaded machine keep the markers longer).
    static let highlightDuration: TimeInterval =
        ProcessInfo.processInfo.environment["FEEDLOADER_HIGHLIGHT_SECONDS"].flatMap(TimeInterval.init)
        .flatMap { $0 > 0 ? $0 : nil } ?? 2.5

    init(store: Store, source: FeedListSource, terminal: Terminal, title: String, refresh: RefreshSource) {
        self.store = store
        self.source = source
        self.terminal = terminal
        self.title = title
        self.refresh = refresh
        self.size = terminal.size
        (events, post) = AsyncStream.makeStream(of: Event.self)
    }

    /// Rows of the list between the title bar and the two bottom lines.
    var listHeight: Int { max(2, size.rows - 3) }

    /// The batch size: one screen.
    static func batchSize(for size: Terminal.Size) -> Int { max(4, size.rows) }

    /// Fetches, takes over the terminal, and runs until `q`.
    func run() async throws {
        try open()
        terminal.enterFullScreen()
        defer {
            terminal.leaveFullScreen()
            for task in helpers { task.cancel() }
            importTask?.cancel()
            for source in signalSources { source.cancel() }
        }
        startProducers()
        render()
        for await event in events {
            handle(event)
            if isDone { break }
            render()
        }
    }

    /// Fetches the list's first screen and follows the controller's change sets.
    func open() throws {
        source.onChange = { [weak self] change in
            self?.apply(change)
            self?.post.yield(.redraw)
        }
        reloadSources()
        store.diagnostics.resetCounters()  // the status line counts the list's work only
        try source.performFetch()
        model = RowModel(sections: source.currentSections())
        cursor = model.isEmpty ? nil : IndexPath(item: 0, section: 0)
    }

    private func startProducers() {
        let post = self.post
        Self.startKeyReader(post)
        helpers.append(
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(200))
                    post.yield(.tick)
                }
            })
        for (number, event) in [(SIGWINCH, Event.resize), (SIGTERM, .terminate), (SIGHUP, .terminate)] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler { post.yield(event) }
            source.resume()
            signalSources.append(source)
        }
    }

    // MARK: Events

    func handle(_ event: Event) {
        switch event {
        case .keys(let keys):
            for key in keys where !isDone { handle(key) }
        case .resize:
            resize(to: terminal.size)
        case .tick:
            let now = Date()
            highlights = highlights.filter { $0.value.until > now }
            if let message, message.until <= now { self.message = nil }
        case .message(let text):
            show(text)
        case .importFinished:
            importTask = nil
            reloadSources()  // an import may have added some
        case .sourcesChanged(let text):
            // The list follows the source's row itself (muted items leave, renamed
            // sections move); only the names shown beside the items are read again.
            reloadSources()
            show(text)
        case .redraw:
            break
        case .terminate:
            quit()
        }
    }

    func resize(to newSize: Terminal.Size) {
        guard newSize != size else { return }
        let oldBatch = Self.batchSize(for: size)
        size = newSize
        lastFrameText = ""
        terminal.write(ANSI.clearScreen)
        if Self.batchSize(for: newSize) != oldBatch {
            var request = source.request
            request.batchSize = Self.batchSize(for: newSize)
            isChangingRequest = true
            defer { isChangingRequest = false }
            do { try source.setRequest(request) } catch { show("Cannot change the batch size: \(error)") }
        }
        keepCursorVisible()
    }

    func show(_ text: String, for seconds: TimeInterval = 4) {
        message = (text, Date().addingTimeInterval(seconds))
    }

    // MARK: Change sets

    /// Applies a change set to the row model as a table view applies batch updates, and
    /// keeps the selection on its record and the screen on what it showed.
    func apply(_ change: ChangeSet) {
        let selected = cursor.map { model.identifier(at: $0) }
        let selectedSection = cursor.map { model.sections[$0.section].name }
        let selectedRow = cursor.map { model.row(of: $0) } ?? 0
        let wasAtTop = top == 0
        let anchor = firstVisibleRow()
        let anchorID = anchor.map { model.identifier(at: $0) }
        let anchorSection = anchor.map { model.sections[$0.section].name }
        let anchorOffset = anchor.map { model.line(of: $0) - top } ?? 0

        var applied = RowModel.Applied()
        if change.isReload || change.isCompletion {
            model = RowModel(sections: source.currentSections())
            if change.isReload && !isChangingRequest {
                // A commit too large to animate (or a log that could not name its rows):
                // shown, so that an import that should animate and did not is noticed.
                reloads += 1
                let reasons = store.diagnostics.counters.changeLogReloads
                show(
                    reasons > changeLogReloadsShown
                        ? "Reloaded the list: \(store.diagnostics.lastReloadReason ?? "the change log could not name the rows")"
                        : "Reloaded the list: a change too large to animate")
                changeLogReloadsShown = reasons
            }
        } else {
            do {
                applied = try model.apply(change) { source.section(at: $0) }
            } catch {
                model = RowModel(sections: source.currentSections())
                reloads += 1
                show("Reloaded the list (\(error))")
            }
        }
        // Highlight what a commit changed; rows that a new filter or sort brings in are not news.
        if !isChangingRequest {
            let until = Date().addingTimeInterval(Self.highlightDuration)
            for id in applied.inserted { highlights[id] = (.inserted, until) }
            for id in applied.updated where highlights[id]?.kind != .inserted { highlights[id] = (.updated, until) }
        }
        for id in applied.removed { highlights[id] = nil }

        guard !model.isEmpty else {
            cursor = nil
            top = 0
            if mode == .detail { mode = .list }
            return
        }
        // The selection follows its record; if it was deleted, the row at its place is selected.
        var next: IndexPath?
        if let selected, !applied.removed.contains(selected) {
            if let moved = applied.moved.first(where: { $0.id == selected }) {
                next = moved.to
            } else {
                next = model.indexPath(of: selected, hint: selectedSection)
            }
        }
        cursor = next ?? model.indexPath(atRow: min(selectedRow, model.rowCount - 1))
        if mode == .detail, let selected, applied.removed.contains(selected) {
            mode = .list
            show("The item was deleted")
        }
        // At the top, stay there so new items show; otherwise keep the first visible row in place.
        if wasAtTop {
            top = 0
        } else if let anchorID, let path = model.indexPath(of: anchorID, hint: anchorSection) {
            top = model.line(of: path) - anchorOffset
        }
        clampTop()
        keepCursorVisible()
    }

    /// The first row drawn below the sticky header.
    func firstVisibleRow() -> IndexPath? {
        guard !model.isEmpty else { return nil }
        var line = top + 1
        while line < model.lineCount {
            if case .row(let path) = model.line(at: line) { return path }
            line += 1
        }
        return nil
    }

    // MARK: Moving

    func moveCursor(byRows delta: Int) {
        guard let cursor else { return }
        let row = max(0, min(model.rowCount - 1, model.row(of: cursor) + delta))
        self.cursor = model.indexPath(atRow: row)
        keepCursorVisible()
    }

    func moveToTop() {
        guard !model.isEmpty else { return }
        cursor = IndexPath(item: 0, section: 0)
        top = 0
    }

    func moveToBottom() {
        guard !model.isEmpty else { return }
        cursor = model.indexPath(atRow: model.rowCount - 1)
        top = model.lineCount - listHeight
        clampTop()
    }

    /// Keeps the selected row between the sticky header and the bottom of the list.
    func keepCursorVisible() {
        guard let cursor else { return }
        let line = model.line(of: cursor)
        if line < top + 1 { top = line - 1 }
        if line > top + listHeight - 1 { top = line - listHeight + 1 }
        clampTop()
    }

    private func clampTop() {
        top = max(0, min(top, model.lineCount - listHeight))
    }

    /// Moves the selected starred item up (`K`) or down (`J`) one row, as a drag would: the
    /// row moves on screen, then the controller is told, which writes its `starOrder`.
    func moveSelectedStarred(by delta: Int) {
        guard source.grouping == .starred else {
            show("K and J reorder the starred view (v)")
            return
        }
        guard let cursor else { return }
        let target = IndexPath(item: cursor.item + delta, section: cursor.section)
        guard target.item >= 0, target.item < model.sections[cursor.section].identifiers.count else { return }
        model.applyUserMove(from: cursor, to: target)
        self.cursor = target
        keepCursorVisible()
        do {
            try source.moveObject(at: cursor, to: target)
        } catch {
            // The controller moved the row back (a change set the list applied).
            show("Cannot move: \(error)")
        }
    }

    /// Jumps to the first day whose name starts with `prefix` (`2025-06`, `2025-06-1`), or
    /// to the nearest day in the list's order.
    func jump(to prefix: String) {
        guard !model.isEmpty else { return }
        let text = prefix.trimmingCharacters(in: .whitespaces)
        var target = model.sections.firstIndex { $0.name.hasPrefix(text) }
        if target == nil {
            // The first day past the prefix, in the list's direction.
            target = model.sections.firstIndex { newestFirst ? $0.name < text : $0.name > text }
            if target == nil { target = model.sections.count - 1 }
            show("No day starts with \(text); went to the nearest, \(model.sections[target!].name)")
        }
        guard let section = target else { return }
        cursor = IndexPath(item: 0, section: section)
        top = model.headerLines[section]
        clampTop()
        keepCursorVisible()
    }

    // MARK: Actions

    func applyFilter(_ text: String) {
        filter = text
        replaceRequest()
    }

    func toggleSort() {
        newestFirst.toggle()
        replaceRequest()
    }

    /// The unread items only ⇄ every item (`u`): a new request on the live controller,
    /// read through the index `(isRead, published)`.
    func toggleUnreadOnly() {
        unreadOnly.toggle()
        replaceRequest()
    }

    /// Rebuilds the rows from the controller's sections (after a new controller): the
    /// selection stays on its item (or goes to the first), and no row is highlighted.
    func reloadRows() {
        let selected = cursor.map { model.identifier(at: $0) }
        model = RowModel(sections: source.currentSections())
        highlights = [:]
        top = 0
        cursor = selected.flatMap { model.indexPath(of: $0) } ?? (model.isEmpty ? nil : IndexPath(item: 0, section: 0))
        keepCursorVisible()
    }

    func setMode(_ mode: Mode) { self.mode = mode }

    func quit() { isDone = true }
}
