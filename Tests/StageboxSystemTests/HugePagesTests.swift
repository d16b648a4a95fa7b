import StageboxSystem
import Testing

@Suite struct HugePagesTests {
    /// After `refuse`, the kernel reports THP off for the process (/proc/self/status has had a
    /// `THP_enabled:` line since Linux 5.0; it is 0 once PR_SET_THP_DISABLE is set).
    @Test func refusingTurnsTHPOffForTheProcess() throws {
        #expect(HugePages.refuse())
        let status = try WholeFile.read("/proc/self/status", limit: 1 << 16)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("THP_enabled:") },
                                "this kernel's /proc/self/status has no THP_enabled line")
        #expect(line.split(whereSeparator: { $0 == "\t" || $0 == " " }).last == "0", "\(line)")
    }
}
