import Foundation

/// The command line of `folio-bench`.
struct Options {
    var rows = 1_000_000
    var quick = false
    var jsonPath: String?
    var markdownPath: String?
    /// Repetitions of the big measurements (fetches, scans); small ones repeat more.
    var repetitions = 5
    /// One-row changes of each kind.
    var changes = 200
    /// Days the `published` dates span: about this many sections.
    var days = 1_000
    /// Only these measurements (for profiling); empty for all.
    var only: Set<String> = []
    /// A copy of DESIGN.md whose "Performance targets" table to compare with ``Targets/all``.
    var checkTargetsPath: String?
    /// A database file to generate once and reuse (read-only measurements only).
    var dataPath: String?

    /// The measurements that only read: the ones a reused data file allows.
    static let readOnly: Set<String> = ["fetches", "firstBatch", "firstScreen", "randomAccess", "scroll", "searchAsYouType"]

    static let measurements = [
        "fetches", "memory", "firstBatch", "firstScreen", "randomAccess", "scroll", "changes", "liveControllers",
        "externalCommit",
        "naiveChange", "reopen", "backgroundFetch", "text", "relationships", "derived", "compoundIndex", "sectionKinds",
        "localDays",
        "reorder",
        "searchAsYouType",
    ]

    func wants(_ measurement: String) -> Bool { only.isEmpty || only.contains(measurement) }

    static let usage = """
        usage: folio-bench [--quick] [--rows N] [--repetitions N] [--changes N] [--json PATH] [--markdown PATH]
               folio-bench --check-targets PATH/TO/DESIGN.md

          --quick          100,000 rows and fewer repetitions (a couple of minutes at most)
          --rows N         rows in the generated table (default 1,000,000); the design's first-screen and
                           search-as-you-type targets are also set for 10,000,000 rows:
                             --rows 10000000 --only firstScreen
                             --rows 10000000 --only searchAsYouType --data-file PATH
                           (rows measured at another size than 1,000,000 say so: "measured at 10,000,000
                           rows", ids ending in .10M)
          --repetitions N  repetitions of the big measurements (default 5; quick 5)
          --changes N      one-row changes of each kind (default 200; quick 200)
          --json PATH      also write the results as JSON
          --markdown PATH  also write the Markdown table (with the machine) to PATH
          --only A,B       only these measurements (for profiling): \(measurements.joined(separator: ", "))
          --data-file PATH generate the table into PATH once and reuse it in later runs with the same --rows
                           and --days (1.5 GB at 10,000,000 rows; keep it out of the repository); only with
                           --only and measurements that do not write: \(readOnly.sorted().joined(separator: ", "))
                           searchAsYouType generates its text table once too, next to PATH (bench-10m.sqlite →
                           bench-10m-text.sqlite): at 10,000,000 rows 4.2 GB more, about 7 minutes
          --check-targets PATH
                           compare the targets folio-bench checks with the "Performance targets" table
                           of the design (DESIGN.md at PATH) and exit: 0 when identical, 1 otherwise
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var rowsGiven = false
        var index = 1
        func value(_ name: String) -> String {
            index += 1
            guard index < arguments.count else { fail("\(name) needs a value") }
            return arguments[index]
        }
        func number(_ name: String) -> Int {
            let text = value(name).replacingOccurrences(of: "_", with: "").replacingOccurrences(of: ",", with: "")
            guard let n = Int(text), n > 0 else { fail("\(name) needs a positive whole number") }
            return n
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--quick": options.quick = true
            case "--rows": options.rows = number("--rows"); rowsGiven = true
            case "--repetitions": options.repetitions = number("--repetitions")
            case "--changes": options.changes = number("--changes")
            case "--days": options.days = number("--days")
            case "--json": options.jsonPath = value("--json")
            case "--markdown": options.markdownPath = value("--markdown")
            case "--check-targets": options.checkTargetsPath = value("--check-targets")
            case "--data-file": options.dataPath = value("--data-file")
            case "--only":
                options.only = Set(value("--only").split(separator: ",").map(String.init))
                if let unknown = options.only.first(where: { !measurements.contains($0) }) {
                    fail("unknown measurement '\(unknown)'")
                }
            case "-h", "--help": print(usage); exit(0)
            default: fail("unknown argument '\(arguments[index])'")
            }
            index += 1
        }
        if options.quick && !rowsGiven { options.rows = 100_000 }
        if options.dataPath != nil, options.only.isEmpty || !options.only.isSubset(of: readOnly) {
            fail("--data-file needs --only with measurements that do not write: \(readOnly.sorted().joined(separator: ", "))")
        }
        if options.rows < 10_000 { fail("--rows must be at least 10,000") }
        return options
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("folio-bench: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}
