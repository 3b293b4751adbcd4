// swift-tools-version: 6.2
import CompilerPluginSupport
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

/// Folio's internal invariants (`_checkInvariants()`, after every mutation) are compiled into
/// debug builds of Folio's own package — `swift build`, `swift test` in a clone, the README's
/// commands, CI — and not into an app that depends on Folio, whose debug builds would pay for
/// them in every commit. SwiftPM has no condition "this package is the root": a dependency is
/// checked out under a `checkouts` folder (`.build/checkouts/Folio`, Xcode's
/// `SourcePackages/checkouts/Folio`), so that is what tells them apart. The environment
/// variable `FOLIO_INTERNAL_CHECKS` overrides it either way (`1` on, `0` off), for a developer
/// who wants them in an app's debug build or a local dependency (`path:`), or not in a clone.
/// Release builds never compile them.
let internalChecks: Bool = {
    if let setting = Context.environment["FOLIO_INTERNAL_CHECKS"], !setting.isEmpty { return setting != "0" }
    let components = Context.packageDirectory.split(whereSeparator: { $0 == "/" || $0 == "\\" })
    return !components.contains("checkouts")
}()

let package = Package(
    name: "Folio",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "Folio", targets: ["Folio"]),
        .executable(name: "feedloader", targets: ["FeedLoader"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // Test-only: the local HTTP server FeedLoader's tests fetch feeds from.
        .package(url: "https://github.com/swhitty/FlyingFox", exact: "0.27.1"),
        // Test-only: expansions and diagnostics of Folio's macros.
        .package(url: "https://github.com/pointfreeco/swift-macro-testing", from: "0.7.0"),
    ],
    targets: [
        .target(
            name: "Folio",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                "FolioMacros",
            ],
            // Internal invariants: see `internalChecks` above.
            swiftSettings: strict + (internalChecks ? [.define("FOLIO_INTERNAL_CHECKS", .when(configuration: .debug))] : [])),
        // `@PersistentRecord` and the attribute macros it reads (declared in Folio's Model).
        .macro(
            name: "FolioMacros",
            dependencies: [
                "FolioMacrosCore",
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
            ],
            swiftSettings: strict),
        // The macros' implementation, a library so that FolioMacrosTests depends on it rather
        // than on the macro target (which would make SwiftPM build every test target twice).
        .target(
            name: "FolioMacrosCore",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "FeedLoader",
            dependencies: [
                "Folio",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["README.md"],
            resources: [.copy("Resources/sample-feed.json")],
            swiftSettings: strict),
        // A child process the crash-safety tests kill at random points.
        .executableTarget(
            name: "FolioCrashImporter",
            dependencies: ["Folio"],
            swiftSettings: strict),
        // How many tests run at once: set when the test binary loads (see its source).
        .target(name: "TestRunWidth", path: "Tests/TestRunWidth"),
        .testTarget(
            name: "FolioTests",
            dependencies: [
                "Folio",
                "TestRunWidth",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            // Store files written by older Folio versions, opened by the upgrade tests (by path).
            exclude: ["Fixtures"],
            swiftSettings: strict),
        .testTarget(
            name: "FolioMacrosTests",
            dependencies: [
                "FolioMacrosCore",
                .product(name: "MacroTesting", package: "swift-macro-testing"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "FeedLoaderTests",
            dependencies: [
                "FeedLoader", "Folio", "TestRunWidth", .product(name: "FlyingFox", package: "FlyingFox"),
            ],
            // Store files written by older FeedLoader versions, opened by the migration tests (by path).
            exclude: ["Fixtures"],
            swiftSettings: strict),
    ]
)
