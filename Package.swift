// swift-tools-version: 6.2
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Folio",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "Folio", targets: ["Folio"]),
        .executable(name: "feedloader", targets: ["FeedLoader"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // Test-only: the local HTTP server FeedLoader's tests fetch feeds from.
        .package(url: "https://github.com/swhitty/FlyingFox", exact: "0.27.1"),
    ],
    targets: [
        .target(
            name: "Folio",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Internal invariants (`_checkInvariants()`) are checked after every mutation in
            // debug builds, the tests' configuration; release builds compile them out.
            swiftSettings: strict + [.define("FOLIO_INTERNAL_CHECKS", .when(configuration: .debug))]),
        .executableTarget(
            name: "FeedLoader",
            dependencies: [
                "Folio",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            resources: [.copy("Resources/sample-feed.json")],
            swiftSettings: strict),
        // A child process the crash-safety tests kill at random points.
        .executableTarget(
            name: "FolioCrashImporter",
            dependencies: ["Folio"],
            swiftSettings: strict),
        .testTarget(
            name: "FolioTests",
            dependencies: [
                "Folio",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            // Store files written by older Folio versions, opened by the upgrade tests (by path).
            exclude: ["Fixtures"],
            swiftSettings: strict),
        .testTarget(
            name: "FeedLoaderTests",
            dependencies: ["FeedLoader", "Folio", .product(name: "FlyingFox", package: "FlyingFox")],
            // Store files written by older FeedLoader versions, opened by the migration tests (by path).
            exclude: ["Fixtures"],
            swiftSettings: strict),
    ]
)
