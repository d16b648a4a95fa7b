import StageboxRealtime
import StageboxSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs a driver loop on its own real-time thread while the calling thread keeps ticking
/// (draining events, logging) until the loop ends.
public enum AudioThreadRunner {
    /// How often the control thread ticks while something is in motion (a take, a fade, events
    /// from the audio thread), and while nothing is: an idle box must cost next to nothing, and
    /// what needs the control thread sooner signals its wakeup (a trigger, a port or connection,
    /// a stop, SIGINT and SIGTERM). A watchdog fed more often than this shortens it
    /// (`Appliance`).
    public static let busyTickNanos: Int64 = 50_000_000
    public static let idleTickNanos: Int64 = 1_000_000_000

    /// Starts `loop` on a new thread at SCHED_FIFO `priority` (0 = normal), calls `scheduled`
    /// on the calling thread with what the scheduler said as soon as the new thread knows, calls
    /// `tick` on the calling thread until the loop returns, and returns the loop's result.
    /// `tick` says whether it is busy: the next tick comes 50 ms later then, else a second later,
    /// or as soon as `wakeup` is signalled (the loop's end signals it too). Throws when the
    /// thread cannot be started.
    public static func run<Result: Sendable>(priority: Int, scheduled: (RealtimeOutcome) -> Void = { _ in },
                                             wakeup: Wakeup? = nil, idleTickNanos: Int64 = AudioThreadRunner.idleTickNanos,
                                             tick: () -> Bool,
                                             loop: @escaping @Sendable () -> Result) throws(SystemCallError) -> Result {
        let box = ResultBox<Result>()
        let thread = RealtimeThread {
            box.outcome = RealtimeThread.makeCurrentThreadRealtime(priority: Int32(priority))
            box.scheduled.store(true, ordering: .releasing)
            box.result = loop()
            box.done.store(true, ordering: .releasing)
            wakeup?.signal() // the loop is over: its one system call outside it
        }
        try thread.start()
        var told = false
        while true {
            if !told && box.scheduled.load(ordering: .acquiring) {
                told = true
                scheduled(box.outcome)
            }
            if box.done.load(ordering: .acquiring) { break }
            let busy = tick() || !told
            pause(busy ? busyTickNanos : idleTickNanos, wakeup: wakeup)
        }
        thread.join()
        _ = tick()
        return box.result!
    }

    /// Sleeps `nanos`, or until `wakeup` is signalled; says whether it was.
    @discardableResult
    public static func pause(_ nanos: Int64, wakeup: Wakeup?) -> Bool {
        if let wakeup { return wakeup.wait(timeoutNanos: nanos) }
        usleep(UInt32(nanos / 1000))
        return false
    }
}

/// Carries the loop's result from the audio thread back to the caller.
private final class ResultBox<Result>: @unchecked Sendable {
    var result: Result?
    /// Written by the audio thread before `scheduled` is set, read by the caller after.
    var outcome: RealtimeOutcome = .normal(nice: 0)
    let scheduled = Atomic<Bool>(false)
    let done = Atomic<Bool>(false)
}
