import Foundation

// folio-bench: Folio against its baselines, in one run. See Options.usage.
_ = processStart  // globals are lazy: start the clock now
let options = Options.parse(CommandLine.arguments)
if let path = options.checkTargetsPath {
    guard let design = try? String(contentsOfFile: path, encoding: .utf8) else {
        FileHandle.standardError.write(Data("folio-bench: cannot read \(path)\n".utf8))
        exit(2)
    }
    let differences = Targets.differences(fromDesign: design)
    for difference in differences { print(difference) }
    print(
        differences.isEmpty
            ? "the \(Targets.all.count) targets are identical to \(path)'s"
            : "\(differences.count) differences: update Targets.swift (or the design) so both say the same")
    exit(differences.isEmpty ? 0 : 1)
}
let entityDifferences = EntityIdentity.differences()
guard entityDifferences.isEmpty else {
    FileHandle.standardError.write(Data("folio-bench: the macro's entities differ: \(entityDifferences)\n".utf8))
    exit(1)
}
let machine = Machine.describe()
print("# folio-bench (\(options.quick ? "quick" : "full"), \(Report.count(options.rows)) rows)\n")
print(machine.markdown)
print("")
do {
    let bench = try Bench(options: options, machine: machine)
    try await bench.run()
    let report = bench.report
    let markdown = report.markdown
    print(report.markdown(withMachine: false))
    if let path = options.markdownPath {
        try markdown.write(toFile: path, atomically: true, encoding: .utf8)
        log("wrote \(path)")
    }
    if let path = options.jsonPath {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: path))
        log("wrote \(path)")
    }
    let missed = report.results.filter { $0.met == false }.map(\.what)
    log(missed.isEmpty ? "every measured target met" : "targets missed: \(missed.joined(separator: "; "))")
} catch {
    FileHandle.standardError.write(Data("folio-bench: \(error)\n".utf8))
    exit(1)
}
