// swift-tools-version: 6.1
import PackageDescription

// The benchmark lives in its own package so that `swift test` at the root never builds it.
// Run it with `swift run -c release --package-path Benchmarks folio-bench --quick`.
let package = Package(
    name: "FolioBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Folio", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .target(name: "MallocStats", path: "Sources/MallocStats"),
        .executableTarget(
            name: "folio-bench",
            dependencies: [
                .product(name: "Folio", package: "Folio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                "MallocStats",
            ],
            path: "Sources/FolioBench",
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .enableUpcomingFeature("ExistentialAny"),
            ]),
    ]
)
