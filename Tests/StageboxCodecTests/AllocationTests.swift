import StageboxTestSupport
import Foundation
import Testing

@Suite struct AllocationTests {
    /// The audio thread of the real ALSA loop allocates nothing in steady state: the probe program
    /// (Tests/AllocationProbe) counts heap allocations on it over 10 000 periods with a malloc
    /// interposer, in a process of its own so that the interposer replaces nobody else's malloc.
    @Test func theAudioThreadAllocatesNothingInSteadyState() throws {
        let probe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("stagebox-allocation-probe")
        try #require(FileManager.default.fileExists(atPath: probe.path),
                     "build it first: swift build --product stagebox-allocation-probe")
        let process = Process()
        process.executableURL = probe
        process.arguments = ["10000"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = readTextToEnd(out.fileHandleForReading.fileDescriptor)
        process.waitUntilExit()
        print("allocation test: \(text)")
        #expect(text.hasPrefix("allocations=0 "), "\(text)")
        #expect(!text.contains("counter-check=0"), "the counter sees allocations at all")
        #expect(process.terminationStatus == 0)
    }
}
