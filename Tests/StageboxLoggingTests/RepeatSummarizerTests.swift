import StageboxLogging
import Testing

@Suite struct RepeatSummarizerTests {
    @Test func aRepeatingWarningIsToldOnceThenSummarised() {
        var r = RepeatSummarizer(windowSeconds: 10)
        let s: Int64 = 1_000_000_000
        #expect(r.note("late wakeup", durationNanos: 3_000_000, now: 0) == "late wakeup (3.0 ms)")
        for i in 1...36 { #expect(r.note("late wakeup", durationNanos: Int64(i) * 100_000, now: Int64(i) * s / 4) == nil) }
        #expect(r.note("poll timeout", durationNanos: 2_700_000, now: 9 * s) == "poll timeout (2.7 ms)", "kinds apart")
        #expect(r.due(now: 9 * s).isEmpty)
        #expect(r.due(now: 10 * s) == ["late wakeup: 36 more in 10.0 s (longest 3.6 ms)"])
        #expect(r.due(now: 11 * s).isEmpty, "told once")
        // Quiet for a window: the next one is told at once again, with any summary before it.
        _ = r.note("late wakeup", durationNanos: 1_000_000, now: 12 * s)
        #expect(r.note("late wakeup", durationNanos: 5_000_000, now: 30 * s)
                == "late wakeup: 1 more in 10.0 s (longest 1.0 ms); late wakeup (5.0 ms)")
    }
}
