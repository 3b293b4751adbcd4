import Foundation

extension Browser {
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
        case .character("/"): setMode(.prompt(Prompt(kind: .filter, text: filter)))
        case .character(let c) where c.isASCII && c.isNumber: setMode(.prompt(Prompt(kind: .jump, text: String(c))))
        case .character("s"): toggleSort()
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
        case .escape, .enter, .left, .backspace, .character("q"), .character("h"): setMode(.list)
        case .up, .character("k"): moveCursor(byRows: -1)
        case .down, .character("j"): moveCursor(byRows: 1)
        case .character("d"), .delete:
            deleteSelected()
            setMode(.list)
        case .character("*"): toggleStarOfSelected()
        case .control("c"), .control("d"): quit()
        case .control("l"): forceRedraw()
        default: break
        }
    }

    private func handlePrompt(_ key: Key, _ prompt: Prompt) {
        var prompt = prompt
        switch key {
        case .escape, .control("c"):
            setMode(.list)
        case .enter:
            setMode(.list)
            switch prompt.kind {
            case .filter: applyFilter(prompt.text)
            case .jump: jump(to: prompt.text)
            }
        case .backspace:
            if prompt.text.isEmpty {
                setMode(.list)
            } else {
                prompt.text.removeLast()
                setMode(.prompt(prompt))
            }
        case .control("u"):
            prompt.text = ""
            setMode(.prompt(prompt))
        case .character(let c):
            prompt.text.append(c)
            setMode(.prompt(prompt))
        default: break
        }
    }
}
