import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TestRunWidth
import Testing

/// The test binary sets how many tests run at once before Swift Testing reads it.
@Suite("How many tests run at once")
struct TestRunWidthTests {
    @Test func theWidthIsSetBeforeTheTestsStart() throws {
        let variable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"
        let given = try #require(ProcessInfo.processInfo.environment[variable], "\(variable) was not set at load")
        let width = try #require(Int(given), "\(variable) is \(given), not a number")
        #expect(width >= 1)
        // Set at load (not by the environment the tests were started in): twice the
        // processors, at least 4.
        let chosen = Int(folio_test_run_width())
        if chosen != 0 {
            #expect(width == chosen)
            #expect(width == max(4, 2 * sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        }
    }
}
