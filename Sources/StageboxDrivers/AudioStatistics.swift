import Synchronization

/// Counters the audio thread writes and any other thread reads, without locks.
///
/// Every field is a relaxed atomic: a reader sees each value whole, though not all of
/// them from the same instant. Times are in nanoseconds.
public final class AudioStatistics: Sendable {
    /// Periods processed since start (a reset keeps it, so it agrees with the frames processed).
    public let periods = Atomic<Int>(0)
    /// Periods since start or the last reset: what the mean cycle time is over.
    private let periodsSinceReset = Atomic<Int>(0)
    public let captureXruns = Atomic<Int>(0)
    public let playbackXruns = Atomic<Int>(0)
    /// Wakeups that came more than 1.8 periods after the previous one.
    public let lateWakeups = Atomic<Int>(0)
    /// Polls that timed out (two periods without a wakeup), counted as xruns too.
    public let pollTimeouts = Atomic<Int>(0)
    public let lastCycleNanos = Atomic<Int>(0)
    public let maxCycleNanos = Atomic<Int>(0)
    public let totalCycleNanos = Atomic<Int>(0)
    /// Cycles that took more than a quarter of the period: how often, not only how bad the
    /// worst was (one stall of the machine makes the maximum; a budget missed often is ours).
    public let cyclesOverQuarterPeriod = Atomic<Int>(0)
    /// How late the wakeup came after the period boundary the device's timestamp reports.
    public let lastWakeupLatenessNanos = Atomic<Int>(0)
    public let maxWakeupLatenessNanos = Atomic<Int>(0)
    /// The pthread id of the audio thread while it runs (0 before and after).
    public let audioThread = Atomic<UInt>(0)
    /// The length of a period in nanoseconds, for the load figure.
    public let periodNanos = Atomic<Int>(1)
    /// The cycle times since the last reset, for their median and 99th percentile.
    public let cycleHistogram = CycleHistogram()

    public init() {}

    /// Audio side: records one processed period that took `nanos`.
    @inline(__always)
    public func recordCycle(nanos: Int) {
        periods.add(1, ordering: .relaxed)
        periodsSinceReset.add(1, ordering: .relaxed)
        lastCycleNanos.store(nanos, ordering: .relaxed)
        totalCycleNanos.add(nanos, ordering: .relaxed)
        cycleHistogram.record(nanos: nanos)
        if nanos &* 4 > periodNanos.load(ordering: .relaxed) { cyclesOverQuarterPeriod.add(1, ordering: .relaxed) }
        if nanos > maxCycleNanos.load(ordering: .relaxed) {
            maxCycleNanos.store(nanos, ordering: .relaxed)
        }
    }

    /// Audio side: records how late a wakeup came.
    @inline(__always)
    public func recordWakeupLateness(nanos: Int) {
        lastWakeupLatenessNanos.store(nanos, ordering: .relaxed)
        if nanos > maxWakeupLatenessNanos.load(ordering: .relaxed) {
            maxWakeupLatenessNanos.store(nanos, ordering: .relaxed)
        }
    }

    /// Any thread: a consistent-enough copy of the counters.
    public func snapshot() -> AudioStatisticsSnapshot {
        let n = periodsSinceReset.load(ordering: .relaxed)
        let total = totalCycleNanos.load(ordering: .relaxed)
        let period = max(1, periodNanos.load(ordering: .relaxed))
        let last = lastCycleNanos.load(ordering: .relaxed)
        let maxCycle = maxCycleNanos.load(ordering: .relaxed)
        return AudioStatisticsSnapshot(
            periods: periods.load(ordering: .relaxed),
            captureXruns: captureXruns.load(ordering: .relaxed),
            playbackXruns: playbackXruns.load(ordering: .relaxed),
            lateWakeups: lateWakeups.load(ordering: .relaxed),
            pollTimeouts: pollTimeouts.load(ordering: .relaxed),
            lastCycleNanos: last,
            meanCycleNanos: n > 0 ? total / n : 0,
            medianCycleNanos: cycleHistogram.percentile(0.5),
            p99CycleNanos: cycleHistogram.percentile(0.99),
            maxCycleNanos: maxCycle,
            cyclesOverQuarterPeriod: cyclesOverQuarterPeriod.load(ordering: .relaxed),
            lastWakeupLatenessNanos: lastWakeupLatenessNanos.load(ordering: .relaxed),
            maxWakeupLatenessNanos: maxWakeupLatenessNanos.load(ordering: .relaxed),
            loadPercent: Double(last) * 100 / Double(period),
            maxLoadPercent: Double(maxCycle) * 100 / Double(period))
    }

    /// Any thread: zeroes the counters (the console's `reset`), all but the periods since start.
    public func reset() {
        periodsSinceReset.store(0, ordering: .relaxed)
        captureXruns.store(0, ordering: .relaxed)
        playbackXruns.store(0, ordering: .relaxed)
        lateWakeups.store(0, ordering: .relaxed)
        pollTimeouts.store(0, ordering: .relaxed)
        lastCycleNanos.store(0, ordering: .relaxed)
        maxCycleNanos.store(0, ordering: .relaxed)
        totalCycleNanos.store(0, ordering: .relaxed)
        cyclesOverQuarterPeriod.store(0, ordering: .relaxed)
        cycleHistogram.reset()
        lastWakeupLatenessNanos.store(0, ordering: .relaxed)
        maxWakeupLatenessNanos.store(0, ordering: .relaxed)
    }
}

/// A plain copy of `AudioStatistics` at one moment.
public struct AudioStatisticsSnapshot: Sendable, Equatable {
    public var periods: Int
    public var captureXruns: Int
    public var playbackXruns: Int
    public var lateWakeups: Int
    public var pollTimeouts: Int
    public var lastCycleNanos: Int
    public var meanCycleNanos: Int
    /// The median and the 99th percentile of the cycle times (each within about 4 %).
    public var medianCycleNanos: Int = 0
    public var p99CycleNanos: Int = 0
    public var maxCycleNanos: Int
    /// Cycles longer than a quarter of the period, since start or the last reset.
    public var cyclesOverQuarterPeriod: Int = 0
    public var lastWakeupLatenessNanos: Int
    public var maxWakeupLatenessNanos: Int
    /// Time spent processing the last period, in percent of the period.
    public var loadPercent: Double
    public var maxLoadPercent: Double
}
