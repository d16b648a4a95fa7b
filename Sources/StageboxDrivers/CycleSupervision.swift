import StageboxSystem

/// The audio thread's timing supervision, the same for every driver: late wakeups, how late
/// a wakeup came after its period was due, cycle times, xruns and the frames processed.
/// Owned by the audio thread; everything it records goes to `DriverControl`'s atomics and
/// event queue. Allocates nothing.
struct CycleSupervision {
    let control: DriverControl
    let periodNanos: Int64
    private var lastWake: Int64 = 0
    /// No period processed yet since the streams (re)started.
    private var awaitingFirstPeriod = true

    init(control: DriverControl, periodNanos: Int64) {
        self.control = control
        self.periodNanos = periodNanos
        control.statistics.periodNanos.store(Int(periodNanos), ordering: .relaxed)
    }

    /// Forgets the last wakeup: the streams (re)started, and the gap before is no lateness.
    mutating func restart() {
        lastWake = 0
        awaitingFirstPeriod = true
    }

    /// A wakeup at `now`. `due` is when the period was due on the codec's clock (0: not known);
    /// `paced` says whether the loop waits at all (a free-running loop is never late).
    /// A wakeup more than 1.8 periods after the previous one is a late wakeup: counted and
    /// reported as an event.
    @inline(__always)
    mutating func wakeup(at now: Int64, due: Int64, paced: Bool) {
        let stats = control.statistics
        if paced && lastWake > 0 {
            let gap = now - lastWake
            if gap * 10 > periodNanos * 18 {
                stats.lateWakeups.add(1, ordering: .relaxed)
                control.report(.lateWakeup, at: now, duration: gap)
            }
        }
        lastWake = now
        if due > 0 && due <= now { stats.recordWakeupLateness(nanos: Int(now - due)) }
    }

    /// One period processed, started at `t0`. Returns the time it ended (a loop that paces
    /// itself starts its next wait from it, with no other look at the clock).
    @inline(__always) @discardableResult
    mutating func cycleDone(frames: Int, startedAt t0: Int64) -> Int64 {
        if awaitingFirstPeriod {
            awaitingFirstPeriod = false
            control.firstPeriodAt.store(t0, ordering: .relaxed)
        }
        control.framesProcessed.add(frames, ordering: .relaxed)
        let end = monotonicNanoseconds()
        control.statistics.recordCycle(nanos: Int(end - t0))
        return end
    }

    /// An xrun of one stream.
    @inline(__always)
    func xrun(inCapture: Bool) {
        let stats = control.statistics
        if inCapture {
            stats.captureXruns.add(1, ordering: .relaxed)
        } else {
            stats.playbackXruns.add(1, ordering: .relaxed)
        }
    }
}
