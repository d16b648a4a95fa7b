import Foundation
import Testing
import StageboxTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `stagebox run` does and says when SCHED_FIFO is refused, with the refusal made real:
/// util-linux's `setpriv` drops CAP_SYS_NICE (which would override every limit) and `prlimit`
/// sets RLIMIT_RTPRIO, as a user account, limits.conf or a systemd unit would.
@Suite(.serialized) struct SchedulingRouteTests {
    private static let canDropCapabilities = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit")

    /// Runs a tenth of a second of the simulated board at rt_priority 70 under `rtprio` and
    /// returns its log.
    private func board(rtprio: Int) throws -> String {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let config = try scratch.write("board.toml", """
            [audio]
            rt_priority = 70
            [bus]
            socket = "\(scratch.path("bus.sock"))"
            [recorder]
            directory = "\(scratch.path("takes"))"
            """)
        let process = Process()
        // The limit first (raising it takes root's CAP_SYS_RESOURCE), then the capability goes.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--rtprio=\(rtprio):\(rtprio)",
                             "setpriv", "--inh-caps", "-sys_nice", "--bounding-set", "-sys_nice",
                             StageboxProcess.binary.path, "run", "--simulate", "--config", config, "--frames", "4800"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try process.run()
        let log = readTextToEnd(err.fileHandleForReading.fileDescriptor)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(log)")
        return log
    }

    @Test(.enabled(if: canDropCapabilities)) func aRefusalSaysSoAtStartWithWhatItRisksAndHowToGrantIt() throws {
        let log = try board(rtprio: 0)
        let warning = try #require(log.split(separator: "\n").first { $0.range(of: "SCHED_FIFO priority 70 refused") != nil })
        #expect(warning.range(of: "warning") != nil)
        #expect(warning.range(of: "RLIMIT_RTPRIO is 0") != nil)
        #expect(warning.range(of: "without real-time scheduling") != nil)
        #expect(warning.range(of: "1.33 ms deadline and cause an xrun") != nil)
        #expect(warning.range(of: "ulimit -r 70") != nil)
        // Said at start, not when the run ends.
        let end = try #require(log.range(of: "stopped after 4800 frames"))
        #expect(log.range(of: "SCHED_FIFO priority 70 refused")!.lowerBound < end.lowerBound)
    }

    /// Raising the hard limit to 10 takes CAP_SYS_RESOURCE, which some sandboxes withhold.
    private static let canRaiseRtprio: Bool = {
        guard canDropCapabilities else { return false }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        p.arguments = ["--rtprio=10:10", "true"]
        p.standardError = Pipe()
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    @Test(.enabled(if: canRaiseRtprio)) func anRtprioLimitIsTakenUpToWhatItAllows() throws {
        let log = try board(rtprio: 10)
        #expect(log.range(of: "audio thread: SCHED_FIFO priority 10 (rt_priority asks 70; RLIMIT_RTPRIO allows at most 10)") != nil, "\(log)")
        #expect(log.range(of: "refused") == nil, "\(log)")
    }

    @Test func rtPriorityZeroSaysItRunsAtNormalScheduling() throws {
        let board = try SimulatedBoard(realtimePriority: 0)
        usleep(300_000)
        let log = board.stop()
        #expect(log.range(of: "audio thread: normal scheduling, nice ") != nil, "\(log)")
        #expect(log.range(of: "(rt_priority = 0): any busy program on the board can delay a period") != nil, "\(log)")
    }
}
