import StageboxFormatting

extension AudioStatisticsSnapshot {
    /// One line for logs and `--frames` runs.
    public var summary: String {
        func us(_ n: Int) -> String { fixed(Double(n) / 1000, digits: 1) + " µs" }
        return "periods=\(periods) xruns: capture=\(captureXruns) playback=\(playbackXruns) "
            + "late-wakeups=\(lateWakeups) poll-timeouts=\(pollTimeouts) "
            + "cycle: mean=\(us(meanCycleNanos)) max=\(us(maxCycleNanos)) "
            + "median=\(us(medianCycleNanos)) p99=\(us(p99CycleNanos)) over-quarter-period=\(cyclesOverQuarterPeriod) "
            + "load: now=\(fixed(loadPercent, digits: 1))% max=\(fixed(maxLoadPercent, digits: 1))% "
            + "wakeup-lateness: max=\(us(maxWakeupLatenessNanos))"
    }
}
