import StageboxLogging
import Testing

@Suite struct RepeatSummarizerTests {
    /// A handful are each told (an appliance's log keeps every xrun while they are few); a flood
    /// is told five times and then summarised once a window, and whatever is left at the end too.
    @Test func aRepeatingWarningIsToldThenSummarised() {
        var r = RepeatSummarizer(windowSeconds: 10, burst: 5)
        let s: Int64 = 1_000_000_000
        #expect(r.note("late wakeup", durationNanos: 3_000_000, now: 0) == "late wakeup (3.0 ms)")
        for i in 1...4 { #expect(r.note("late wakeup", durationNanos: 1_000_000, now: Int64(i) * s / 8) == "late wakeup (1.0 ms)") }
        for i in 1...36 { #expect(r.note("late wakeup", durationNanos: Int64(i) * 100_000, now: Int64(i) * s / 4) == nil) }
        #expect(r.note("poll timeout", durationNanos: 2_700_000, now: 9 * s) == "poll timeout (2.7 ms)", "kinds apart")
        #expect(r.due(now: 9 * s).isEmpty)
        #expect(r.due(now: 10 * s) == ["late wakeup: 36 more in 10.0 s (longest 3.6 ms)"])
        #expect(r.due(now: 11 * s).isEmpty, "told once")
        // Right after a summary the flood is still on: counted, and flushed at the end.
        #expect(r.note("late wakeup", durationNanos: 1_000_000, now: 12 * s) == nil)
        #expect(r.flushAll(now: 13 * s) == ["late wakeup: 1 more in 10.0 s (longest 1.0 ms)"])
        // Quiet for a window: the next ones are told at once again.
        #expect(r.note("late wakeup", durationNanos: 5_000_000, now: 40 * s) == "late wakeup (5.0 ms)")
    }
}
