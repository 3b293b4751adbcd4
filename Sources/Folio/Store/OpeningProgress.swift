/// How far a store's opening is in rewriting rows of its file: rows done out of a total.
///
/// An opening rewrites rows when the file's folded keys were made by another version of
/// Folio's folding (see <doc:SearchingAndSortingText>): every key is computed again and
/// each full-text index filled again, in the opening transaction, once. A row counts once
/// for its keys and once more for its entity's full-text index, if it has one. It computes
/// a derived attribute (``Derivation``) for every row of its entity when the attribute is
/// new to the file (or its triggers were dropped): a row counts once per such attribute. Pass a
/// closure as `openingProgress` to ``Store/init(path:model:cacheDirectory:openingProgress:)``
/// (or ``Store/init(path:records:cacheDirectory:openingProgress:)``) to be told:
///
/// ```swift
/// let store = try await Task.detached {
///     try Store(path: path, model: model) { step in
///         Task { @MainActor in progressBar.value = step.fractionCompleted }
///     }
/// }.value
/// ```
///
/// The closure is called only when the opening has rows to rewrite: once with
/// ``completed`` 0 and the ``total``, about once per 1,000 rows, and a last time with
/// ``isFinished`` set, ``completed`` equal to ``total`` and ``fractionCompleted`` exactly
/// `1.0`. An opening with nothing to rewrite — every later opening of the same file —
/// never calls it. The total is counted before the first row is rewritten; it grows only
/// when the opening finds, on the way, damage another program did that needs more rows
/// rewritten (a folded-key trigger or a full-text index it dropped).
///
/// The closure runs on the thread of the store's writer, inside the opening transaction,
/// before the initializer returns: keep it short, and do not open or use a store of the
/// same file from it. To show it in a user interface, open the store off the main actor
/// and hand each step over, as above.
public struct OpeningProgress: Sendable, Hashable, CustomStringConvertible {
    /// The row rewrites done so far.
    public var completed: Int
    /// The row rewrites the opening does: for each entity whose keys are rebuilt, its rows,
    /// twice when it has searchable attributes (keys, then full-text index).
    public var total: Int
    /// Whether the opening has rewritten its last row. Only the last step is finished.
    public var isFinished: Bool

    /// Creates a progress step.
    ///
    /// - Complexity: O(1).
    public init(completed: Int, total: Int, isFinished: Bool = false) {
        self.completed = completed
        self.total = total
        self.isFinished = isFinished
    }

    /// `completed / total`, in `0...1`: exactly `1.0` when finished.
    ///
    /// - Complexity: O(1).
    public var fractionCompleted: Double {
        if isFinished { return 1 }
        guard total > 0 else { return 0 }
        return min(1, Double(completed) / Double(total))
    }

    /// `completed/total`, with `finished` at the end.
    ///
    /// - Complexity: O(1).
    public var description: String {
        "\(completed)/\(total)" + (isFinished ? " finished" : "")
    }
}
