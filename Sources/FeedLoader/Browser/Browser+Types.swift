import Foundation
import Folio

// The browser's events, modes and prompts, and what `r` imports.
extension Browser {
    enum Event: Sendable {
        case keys([Key])
        case resize
        case tick
        case message(String)
        case importFinished
        /// A source was muted, unmuted or renamed (the message says which).
        case sourcesChanged(String)
        /// The list changed (a change set was applied); draw it.
        case redraw
        /// SIGTERM or SIGHUP: restore the terminal and leave.
        case terminate
    }

    enum Mode: Equatable {
        case list
        case detail
        case prompt(Prompt)
    }

    struct Prompt: Equatable {
        enum Kind: Equatable {
            case filter, jump
            /// A new name for the source with this identifier.
            case rename(RecordID)
        }
        var kind: Kind
        var text: String
        /// Opened from the detail view, which it shows and goes back to.
        var fromDetail = false
        /// The filter when the prompt opened: Esc goes back to it (the list filters as the
        /// user types).
        var original = ""

        /// The mode the prompt's Enter or Esc goes back to.
        var returnMode: Mode { fromDetail ? .detail : .list }
    }

    enum Highlight { case inserted, updated }

    /// What `r` imports.
    enum RefreshSource: Sendable {
        /// Five pages of simulated live news.
        case liveNews
        /// A feed file.
        case file(String)
        /// A feed over HTTP(S); `conditional`: send the validators of the last import.
        case server(ServerFeedFetcher, conditional: Bool)
    }
}
