import StageboxSystem
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite struct HugePagesTests {
    /// After `refuse`, the kernel reports THP off for the process (/proc/self/status has had a
    /// `THP_enabled:` line since Linux 5.0; it is 0 once PR_SET_THP_DISABLE is set).
    @Test func refusingTurnsTHPOffForTheProcess() throws {
        // qemu-user (tools/cross/test) refuses this prctl itself: no kernel sees it. The aarch64
        // kernel's answer is checked in the VM rig (memory-clients wants THP_enabled: 0).
        if getenv("STAGEBOX_UNDER_QEMU").map({ String(cString: $0) }) == "1" {
            print("THP off: not run under qemu-user, which refuses PR_SET_THP_DISABLE (memory-clients checks it on aarch64)")
            return
        }
        #expect(HugePages.refuse())
        let status = try WholeFile.read("/proc/self/status", limit: 1 << 16)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("THP_enabled:") },
                                "this kernel's /proc/self/status has no THP_enabled line")
        #expect(line.split(whereSeparator: { $0 == "\t" || $0 == " " }).last == "0", "\(line)")
    }
}
