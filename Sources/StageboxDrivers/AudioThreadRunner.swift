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
    /// Starts `loop` on a new thread at SCHED_FIFO `priority` (0 = normal), calls `scheduled`
    /// on the calling thread with what the scheduler said as soon as the new thread knows, calls
    /// `tick` about every 50 ms on the calling thread until the loop returns, and returns the
    /// loop's result. Throws when the thread cannot be started.
    public static func run<Result: Sendable>(priority: Int, scheduled: (RealtimeOutcome) -> Void = { _ in },
                                             tick: () -> Void,
                                             loop: @escaping @Sendable () -> Result) throws(SystemCallError) -> Result {
        let box = ResultBox<Result>()
        let thread = RealtimeThread {
            box.outcome = RealtimeThread.makeCurrentThreadRealtime(priority: Int32(priority))
            box.scheduled.store(true, ordering: .releasing)
            box.result = loop()
            box.done.store(true, ordering: .releasing)
        }
        try thread.start()
        var told = false
        while true {
            if !told && box.scheduled.load(ordering: .acquiring) {
                told = true
                scheduled(box.outcome)
            }
            if box.done.load(ordering: .acquiring) { break }
            tick()
            usleep(50_000)
        }
        thread.join()
        tick()
        return box.result!
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
