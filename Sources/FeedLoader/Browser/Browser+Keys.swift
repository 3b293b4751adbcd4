import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Browser {
    /// Reads standard input on a thread of its own (a blocking read), decoding keys.
    nonisolated static func startKeyReader(_ post: AsyncStream<Event>.Continuation) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 512)
            while true {
                let count = read(STDIN_FILENO, &buffer, buffer.count)
                if count > 0 {
                    post.yield(.keys(Key.parse(Array(buffer[0..<count]))))
                } else if count == 0 || errno != EINTR {
                    post.yield(.keys([.control("d")]))
                    return
                }
            }
        }
        thread.start()
    }

    /// One key, in the current mode.
    func handle(_ key: Key) {
        switch mode {
        case .list: handleList(key)
        case .detail: handleDetail(key)
        case .prompt(let prompt): handlePrompt(key, prompt)
        }
    }

    private func handleList(_ key: Key) {
        let page = max(1, listHeight - 2)
        switch key {
        case .up, .character("k"): moveCursor(byRows: -1)
        case .down, .character("j"): moveCursor(byRows: 1)
        case .pageUp, .control("b"), .character("b"): moveCursor(byRows: -page)
        case .pageDown, .control("f"), .character(" "): moveCursor(byRows: page)
        case .home, .character("g"): moveToTop()
        case .end, .character("G"): moveToBottom()
        case .character("/"): setMode(.prompt(Prompt(kind: .filter, text: filter, original: filter)))
        case .character(let c) where c.isASCII && c.isNumber && source.grouping == .day:
            setMode(.prompt(Prompt(kind: .jump, text: String(c))))
        case .character("s"): toggleSort()
        case .character("u"): toggleUnreadOnly()
        case .character("t"): toggleGrouping()
        case .character("v"): toggleStarredView()
        case .character("K"): moveSelectedStarred(by: -1)
        case .character("J"): moveSelectedStarred(by: 1)
        case .character("m"): muteSourceOfSelected()
        case .character("M"): unmuteAllSources()
        case .character("n"): startRenamingSourceOfSelected()
        case .enter, .right, .character("l"): if cursor != nil { setMode(.detail) }
        case .character("d"), .delete: deleteSelected()
        case .character("*"): toggleStarOfSelected()
        case .character("r"): startImport()
        case .escape: if !filter.isEmpty { applyFilter("") }
        case .character("q"), .control("c"), .control("d"): quit()
        case .control("l"): forceRedraw()
        default: break
        }
    }

    private func handleDetail(_ key: Key) {
        switch key {
        case .escape, .enter, .left, .backspace, .character("q"), .character("h"):
            markRead(at: cursor)
            setMode(.list)
        case .up, .character("k"):
            markRead(at: cursor)
            moveCursor(byRows: -1)
        case .down, .character("j"):
            markRead(at: cursor)
            moveCursor(byRows: 1)
        case .character("d"), .delete:
            deleteSelected()
            setMode(.list)
        case .character("*"): toggleStarOfSelected()
        case .character("m"): muteSourceOfSelected()
        case .character("n"): startRenamingSourceOfSelected()
        case .control("c"), .control("d"): quit()
        case .control("l"): forceRedraw()
        default: break
        }
    }

    private func handlePrompt(_ key: Key, _ prompt: Prompt) {
        var prompt = prompt
        switch key {
        case .escape, .control("c"):
            setMode(prompt.returnMode)
            if prompt.kind == .filter, filter != prompt.original { applyFilter(prompt.original) }
        case .enter:
            setMode(prompt.returnMode)
            switch prompt.kind {
            case .filter: applyFilter(prompt.text)
            case .jump: jump(to: prompt.text)
            case .rename(let id): renameSource(id, to: prompt.text)
            }
        case .backspace:
            if prompt.text.isEmpty {
                setMode(prompt.returnMode)
            } else {
                prompt.text.removeLast()
                setMode(.prompt(prompt))
                filterAsTyped(prompt)
            }
        case .control("u"):
            prompt.text = ""
            setMode(.prompt(prompt))
            filterAsTyped(prompt)
        case .character(let c):
            prompt.text.append(c)
            setMode(.prompt(prompt))
            filterAsTyped(prompt)
        default: break
        }
    }

    /// The filter prompt filters the list at each keystroke: the new request shows its first
    /// screen at once, and stops the background read of the previous keystroke's.
    private func filterAsTyped(_ prompt: Prompt) {
        guard prompt.kind == .filter, prompt.text != filter else { return }
        applyFilter(prompt.text)
    }
}
