import StageboxTestSupport
import Foundation
import Testing

@Suite struct AllocationTests {
    /// The audio thread of the real ALSA loop allocates nothing, takes no lock and takes no page
    /// fault (the memory locked as the appliance locks it: code whole, the rest on first touch)
    /// in steady state,
    /// with the bus at work: the probe program (Tests/AllocationProbe) counts heap allocations
    /// (a malloc interposer) and lock calls (Tests/LockCounter) on it over 6 000 periods with 8
    /// client ports, a graph change every 10 periods, a codec restart and a client process killed
    /// mid-stream, in a process of its own so that the interposers replace nobody else's functions.
    @Test func theAudioThreadAllocatesNothingInSteadyState() throws {
        let probe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("stagebox-allocation-probe")
        try #require(FileManager.default.fileExists(atPath: probe.path),
                     "build it first: swift build --product stagebox-allocation-probe")
        let process = Process()
        process.executableURL = probe
        process.arguments = ["6000"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = readTextToEnd(out.fileHandleForReading.fileDescriptor)
        process.waitUntilExit()
        print("allocation test: \(text)")
        #expect(text.hasPrefix("allocations=0 locks=0 "), "\(text)")
        #expect(text.contains(" page-faults=0 "), "\(text)")
        #expect(text.contains("client-ports=8") && text.contains("restart=true") && text.contains("killed-client-removed=true"),
                "\(text)")
        #expect(!text.contains("counter-check=0") && !text.contains(",0 "), "the counters see allocations and locks at all")
        #expect(process.terminationStatus == 0)
    }
}
