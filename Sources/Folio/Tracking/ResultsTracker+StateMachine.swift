import Foundation

extension ResultsTracker {
    /// What a tracker knows and what it must do next. Every method runs under the tracker's
    /// lock and only decides: the work it returns (SQL, user code) runs after the lock is
    /// released, and its outcome comes back through ``finish(_:_:)``.
    ///
    /// Phases: *reading* (subscribed, the controller is reading the state: commits are only
    /// noted), *following* (the state is installed: each commit is applied), *stopped*.
    struct StateMachine {
        enum Phase: Equatable {
            case reading, following, stopped
        }

        /// Work for the writer's queue: apply `changed` to `full`, or rescan.
        struct Work {
            var full: ResultsState
            var maxID: Int64
            var changed: Set<Int64>
            /// Rows of unknown identity may have changed: read everything again.
            var rescan: Bool
            /// With `rescan`: the table's change token when `full` was read, if known; an
            /// unchanged token means there is nothing to read.
            var token: TableToken?
            /// Rows the user's own move wrote (``UserMove``): already where the user put
            /// them in `full`, so their updates are the move's echo, not reported.
            var echoes: Set<Int64> = []
            /// Rows a user's move wrote that the controller rebases on instead (it showed an
            /// older state): not told as touched to that rebase.
            var rebasedEchoes: Set<Int64> = []
            /// A hand-over: `full` is the state at this position in the change log, and the
            /// rows to apply are those the log holds after it (``ResultsUpdater/loggedRows(after:_:)``),
            /// not `changed`: read in the transaction the work runs in, they are every row that
            /// differs between `full` and the state that transaction reads.
            var logSince: Int64?
        }

        /// What the work produced; `maxID` bounds the new state's identifiers (computed with
        /// no lock held).
        enum Outcome {
            case updated(ResultsState, ChangeSet, maxID: Int64, token: TableToken?)
            case rescanned(ResultsState, maxID: Int64, token: TableToken?)
            /// A rescan found the table's change token unchanged.
            case unchanged
            case failed(FolioError)
        }

        private(set) var phase = Phase.reading
        private(set) var serial: UInt64 = 0
        /// A work was taken and its outcome has not come back (``finish(_:_:)``). No other
        /// work is taken meanwhile: one taken then would start from the state this one is
        /// replacing, and the first to finish would be overwritten. A notification that
        /// arrives meanwhile (the change hub following other connections' commits when the
        /// work's own read transaction ends) is only noted; ``ResultsTracker`` takes it next.
        private var working = false
        /// Something was noted while a work was out: taken right after it
        /// (``workNotedMeanwhile()``).
        private var notedMeanwhile = false
        /// The full (unwindowed) results, once installed.
        private var full: ResultsState?
        /// No identifier above this is in `full`, so a touched row above it needs no search.
        private var maxID = Int64.min
        /// The table's change token at `full`, when known.
        private var token: TableToken?
        /// Rows touched by commits not applied yet.
        private var pending = Set<Int64>()
        /// Rows of unknown identity changed since `full` (or since the read it came from).
        private var unknown = false
        /// Set at a hand-over (``install(_:maxID:token:seq:_:)``): `full` is the state at this
        /// position in the change log, and the next work applies the rows the log holds after
        /// it instead of those noted (see ``Work/logSince``).
        private var logSince: Int64?
        /// Rows touched since the last delivery, whose loaded records are stale: commits that
        /// changed nothing shown deliver nothing, but a record they changed may come into
        /// view later. `nil`: too many, or unknown.
        private var untold: Set<Int64>? = []
        /// The user's move whose commit is being written: applied to `full` when that
        /// commit's work is taken, with the rows it wrote (`echoes`).
        private var userMove: (moves: [UserMove], echoes: Set<Int64>)?
        /// The rows a user's move wrote when the controller will rebase on the commit instead.
        private var rebasedEchoes: Set<Int64>?
        /// The rows each recent delivery's commits changed, the user's own moves excepted
        /// (`nil`: unknown, as for a reload), oldest first: a controller that rebases a
        /// user's move past deliveries it has not applied yet reports these rows as changed
        /// (``current(since:)``).
        private var told: [(serial: UInt64, rows: Set<Int64>?)] = []
        /// How many deliveries ``told`` keeps.
        private static let toldDeliveries = 64
        /// A memory bound on `untold`, not a reload threshold (those are ``ReloadPolicy``'s):
        /// past it the controller hands over no loaded record; the change set is unchanged.
        private static let untoldLimit = 100_000

        /// Whether the full results carry chunk summaries (``IdentifierList/buildSummaries()``).
        var summarized: Bool { full?.ids.hasSummaries ?? false }

        /// Installs the state read at `seq` in the change log (`nil`: the log may lack rows
        /// changed since); returns whether a catch-up is due.
        ///
        /// The tracker resumes from exactly that position. Commits may lie between it and
        /// what the tracker will be told of when some were noted while the state was read
        /// (they may or may not be in it) or, for a state read before subscribing, when the
        /// log moved since. The next work then applies the rows the log holds after `seq`
        /// (``logSince``), read in the transaction that applies them, whatever state that
        /// transaction reads: the rows noted cover only the commits the change hub followed,
        /// and the state read may already hold others. Without a usable position, the next
        /// work rescans.
        mutating func install(
            _ full: ResultsState, maxID: Int64, token: TableToken?, seq: Int64?, _ resumption: ResultsTracker.Resumption
        ) -> Bool {
            guard phase == .reading else {
                precondition(phase == .stopped, "a tracker's state is installed once")
                return false
            }
            phase = .following
            self.full = full
            self.maxID = maxID
            self.token = token
            let behind: Bool
            switch resumption {
            case .readAfterSubscribing: behind = !pending.isEmpty
            case .readEarlier(let logMoved): behind = logMoved || !pending.isEmpty
            }
            if behind, !unknown {
                if let seq { logSince = seq } else { unknown = true }
            }
            _checkInvariants()
            return unknown || logSince != nil
        }

        /// A commit touched `rows`. With no rows, it wrote the table without changing a value
        /// (rows set to the values they had): the state is current, but the table's change
        /// token was renewed, so the work is to read it again (an empty change, no delivery).
        mutating func rowsChanged(_ rows: Set<Int64>) -> Work? {
            guard phase != .stopped else { return nil }
            if working { notedMeanwhile = true }
            pending.formUnion(rows)
            if rows.isEmpty, phase == .following, !working, let full, !unknown, pending.isEmpty, logSince == nil {
                working = true
                return Work(full: full, maxID: maxID, changed: [], rescan: false, token: token)
            }
            return nextWork()
        }

        /// Rows of unknown identity changed (another connection wrote, or a transaction was
        /// running unobserved when the tracker subscribed).
        mutating func unknownRowsChanged() -> Work? {
            guard phase != .stopped else { return nil }
            if working { notedMeanwhile = true }
            unknown = true
            return nextWork()
        }

        mutating func catchUp() -> Work? { nextWork() }

        /// The work for what was noted while the last work was out, if anything was: not
        /// otherwise (a failed work leaves its rescan to the next commit).
        mutating func workNotedMeanwhile() -> Work? {
            guard notedMeanwhile else { return nil }
            notedMeanwhile = false
            return nextWork()
        }

        /// The user moved rows on screen, and the write of the moves is running: if the
        /// state is exactly the one the controller showed before them (`serial` is the last
        /// delivery it applied, nothing pending), the moves are applied to it with the
        /// commit, so that the commit's change set does not echo them. `false`: the
        /// controller must rebase itself.
        mutating func expectUserMoves(_ moves: [UserMove], echoes: Set<Int64>, ifSerial expected: UInt64) -> Bool {
            guard phase == .following, full != nil, serial == expected, pending.isEmpty, !unknown, logSince == nil,
                userMove == nil
            else {
                if phase == .following { rebasedEchoes = echoes }
                return false
            }
            userMove = (moves, echoes)
            return true
        }

        /// The transaction that wrote the user's move rolled back: nothing to apply.
        mutating func rolledBack() {
            userMove = nil
            rebasedEchoes = nil
        }

        /// The full results now, if installed, with the rows touched by the deliveries after
        /// `applied` (`nil`: unknown — a rescan among them, or older than ``told`` keeps): a
        /// controller rebasing a user move reads them right after its write, on the caller
        /// (the move's commit has been applied: its echoes are forgotten, had it changed nothing here).
        mutating func current(since applied: UInt64) -> (state: ResultsState, serial: UInt64, touched: Set<Int64>?)? {
            rebasedEchoes = nil
            guard let full else { return nil }
            let later = told.drop { $0.serial <= applied }
            guard serial <= applied || later.first?.serial == applied + 1 else { return (full, serial, nil) }
            var touched = Set<Int64>()
            for entry in later {
                guard let rows = entry.rows else { return (full, serial, nil) }
                touched.formUnion(rows)
            }
            return (full, serial, touched)
        }

        /// Notes what a delivery told.
        private mutating func note(_ rows: Set<Int64>?) {
            told.append((serial, rows))
            if told.count > Self.toldDeliveries { told.removeFirst(told.count - Self.toldDeliveries) }
            // The same memory bound as `untold`'s: past it, the oldest are forgotten.
            while told.count > 1, told.reduce(0, { $0 + ($1.rows?.count ?? 0) }) > Self.untoldLimit { told.removeFirst() }
        }

        /// Takes what is pending, if the state is installed.
        private mutating func nextWork() -> Work? {
            guard phase == .following, !working, var full, unknown || !pending.isEmpty || logSince != nil else {
                return nil
            }
            working = true
            var echoes: Set<Int64> = []
            if let userMove {
                full = full.applying(userMove.moves)
                self.full = full
                echoes = userMove.echoes
                self.userMove = nil
            }
            var work = Work(full: full, maxID: maxID, changed: pending, rescan: unknown, token: token)
            work.echoes = echoes
            work.rebasedEchoes = rebasedEchoes ?? []
            // A rescan reads everything: no position to resume from.
            work.logSince = unknown ? nil : logSince
            logSince = nil
            rebasedEchoes = nil
            pending = []
            unknown = false
            return work
        }

        /// Installs the outcome of `work`; returns what to deliver, if anything.
        /// Deliveries carry the full state; the caller presents it (applies the window) after
        /// releasing the lock.
        mutating func finish(_ work: Work, _ outcome: Outcome) -> Delivery? {
            working = false
            guard phase == .following else { return nil }
            defer { _checkInvariants() }
            switch outcome {
            case .unchanged:
                return nil
            case .rescanned(let new, let newMaxID, let newToken):
                full = new
                maxID = newMaxID
                token = newToken
                untold = []
                serial += 1
                note(nil)
                // Which records changed is unknown: the app reloads everything.
                return Delivery(event: .change(.reload, state: new, changed: nil, token: newToken), serial: serial)
            case .updated(let new, let updated, let newMaxID, let newToken):
                let change = updated.removingUpdates(of: work.echoes)
                full = new
                maxID = newMaxID
                token = newToken
                if var rows = untold, rows.count + work.changed.count <= Self.untoldLimit {
                    rows.formUnion(work.changed)
                    untold = rows
                } else {
                    untold = nil
                }
                guard !change.isEmpty else { return nil }
                let told = change.isReload ? nil : untold
                untold = []
                serial += 1
                // The rows this commit changed, for a rebase past this delivery: every row the
                // commit touched, not only those the change set calls updated or moved. A row
                // whose section went or came is an insert (or a delete) here, yet a survivor
                // for a controller whose base still holds it there (another list, a rebased
                // move). The rows of the user's own move are not changes (`echoes`,
                // `rebasedEchoes`).
                note(change.isReload ? nil : work.changed.subtracting(work.echoes).subtracting(work.rebasedEchoes))
                return Delivery(event: .change(change, state: new, changed: told, token: newToken), serial: serial)
            case .failed(let error):
                // Nothing of `work` was applied: read everything again at the next commit.
                unknown = true
                untold = nil
                serial += 1
                note([])
                return Delivery(event: .failure(error), serial: serial)
            }
        }

        mutating func stop() {
            phase = .stopped
            working = false
            notedMeanwhile = false
            full = nil
            pending = []
            logSince = nil
            told = []
        }

        #if FOLIO_INTERNAL_CHECKS
        /// The phase matches what is held; the installed state is consistent, and `maxID`
        /// bounds its identifiers (checked for lists of up to 4,096 identifiers).
        @inline(never)
        func _checkInvariants() {
            switch phase {
            case .reading: precondition(full == nil, "a state before install")
            case .following: precondition(full != nil, "following without a state")
            case .stopped: precondition(full == nil && pending.isEmpty, "a stopped tracker holds state")
            }
            precondition(logSince == nil || phase == .following, "a position in the log without a state")
            if let full {
                full._checkInvariants()
                if full.ids.count <= IdentifierList.chunkCapacity {
                    precondition(full.ids.allSatisfy { $0 <= maxID }, "an identifier above maxID \(maxID)")
                }
            }
            if let untold { precondition(untold.count <= Self.untoldLimit, "untold rows over the limit") }
        }
        #else
        @inline(__always)
        func _checkInvariants() {}
        #endif
    }
}
