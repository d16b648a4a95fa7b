import StageboxSystem
import Testing

@Suite struct ChildProcessTests {
    @Test func aChildsLinesAndStatusComeBack() throws {
        let outcome = try ChildProcess.run("/bin/sh", ["-c", "echo one; echo two >&2; exit 3"])
        #expect(outcome == ChildProcess.Outcome(status: 3, lines: ["one", "two"]))
    }

    @Test func aChildPastItsTimeIsKilledAndSaysSo() throws {
        let t0 = monotonicNanoseconds()
        let outcome = try ChildProcess.run("/bin/sh", ["-c", "echo started; exec sleep 30"], timeoutSeconds: 0.3)
        let seconds = Double(monotonicNanoseconds() - t0) / 1e9
        #expect(outcome.timedOut && outcome.status == 128 + 9 && outcome.lines == ["started"])
        #expect(seconds < 10, "killed at its time, not after its sleep (\(seconds) s)")
        #expect(try ChildProcess.run("/bin/true", [], timeoutSeconds: 5).timedOut == false)
    }
}
