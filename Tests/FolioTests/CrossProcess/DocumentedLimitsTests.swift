import Foundation
import GRDB
import Testing
@testable import Folio

/// Limits the documentation states, pinned so that a change to them is seen: each test
/// asserts the behaviour as documented, and that the list it leaves is never wrong in a way
/// the documentation does not say.
@Suite("Documented limits of following other programs")
@MainActor
struct DocumentedLimitsTests {
    /// StoresAndFiles: "Only the unique attributes the model declares are watched: a unique
    /// index or `UNIQUE` constraint that another program added to an entity's table is not,
    /// and a `REPLACE` that deletes rows for it is logged only when that program sets
    /// `PRAGMA recursive_triggers`." The row deleted unlogged stays in a live list until the
    /// list reads everything again; with `recursive_triggers` it leaves as a delete.
    @Test(arguments: [false, true])
    func aReplaceForAUniqueIndexAnotherProgramAddedIsLoggedOnlyWithRecursiveTriggers(recursive: Bool) async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("limits.sqlite")
        let store = try Store(path: path, records: [Article.self])
        try seed(store, count: 10)
        let controller = FetchedResultsController(
            RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]), store: store)
        let recorder = LiveRecorder()
        controller.delegate = recorder
        try fetchNow(controller)
        try Shell.sqlite3(
            path,
            (recursive ? "PRAGMA recursive_triggers = ON; " : "")
                + """
                CREATE UNIQUE INDEX other_program_title ON article (title);
                INSERT OR REPLACE INTO article (title, url, published, score, category, isRead)
                VALUES ('Article 3', 'replacing', 0, 100, 'a', 0);
                """)
        try store.synchronize()
        await controller.waitForChanges()
        let shown = controller.snapshot.identifiers.map(\.rawValue)
        #expect(shown.contains(11), "the new row is shown")
        // Row 4 ("Article 3") was deleted by the REPLACE.
        #expect(shown.contains(4) == !recursive, recursive ? "logged: it left" : "not logged: still shown")
        // A rescan (here forced by a damaged log) shows the truth.
        try Shell.sqlite3(path, "DELETE FROM folio_changes WHERE seq < (SELECT max(seq) FROM folio_changes)")
        try Shell.sqlite3(path, "UPDATE article SET title = 'touched' WHERE id = 1")
        try store.synchronize()
        await controller.waitForChanges()
        #expect(TableViewModel(controller.snapshot) == (try freshModel(of: controller)))
        try store.close()
    }

    /// A store whose change token is unknown (another program damaged `folio_entities`)
    /// cannot always tell that a commit left a list's table unchanged: a commit it follows
    /// without naming rows may make the list read everything again and deliver a reload,
    /// even when nothing in it changed — at most one reload for that commit, and never a
    /// wrong list.
    @Test func anUnknownChangeTokenMakesAnUnnamedChangeAtMostAReload() async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("token.sqlite")
        let store = try Store(path: path, records: [Article.self, LimitNote.self])
        try seed(store, count: 10)
        let controller = FetchedResultsController(
            RecordRequest<Article>(sortBy: [SortDescriptor(\.score)]), store: store)
        let recorder = LiveRecorder()
        controller.delegate = recorder
        try fetchNow(controller)
        try Shell.sqlite3(path, "UPDATE folio_entities SET change_id = NULL WHERE name = 'article'")
        try store.synchronize()
        await controller.waitForChanges()
        recorder.changeSets = []
        // Another table written, and the log trimmed past the store's progress: the store
        // cannot name the rows. With a known token the list sees its table unchanged and
        // delivers nothing; with an unknown one it reads everything and reloads.
        try Shell.sqlite3(
            path,
            """
            INSERT INTO limit_note (text) VALUES ('elsewhere');
            DELETE FROM folio_changes WHERE seq < (SELECT max(seq) FROM folio_changes);
            """)
        try store.synchronize()
        await controller.waitForChanges()
        #expect(recorder.changeSets.count <= 1 && recorder.changeSets.allSatisfy { $0.isReload }, "\(recorder.changeSets)")
        #expect(TableViewModel(controller.snapshot) == (try freshModel(of: controller)), "never a wrong list")
        try store.close()
    }
}

/// Another entity, written to show what a list of articles does when it is not its table.
struct LimitNote: PersistentRecord {
    var id: RecordID?
    var text = ""
    static let entity = EntityDescription<LimitNote>("limit_note", [AttributeDescription(\.text)])
}
