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
    /// Starts `loop` on a new thread at SCHED_FIFO `priority` (0 = normal), calls `tick` about
    /// every 50 ms on the calling thread until the loop returns, and returns the loop's result
    /// with what the scheduler said. Throws when the thread cannot be started.
    public static func run<Result: Sendable>(priority: Int, tick: () -> Void,
                                             loop: @escaping @Sendable () -> Result) throws(SystemCallError)
        -> (Result, RealtimeOutcome) {
        let box = ResultBox<Result>()
        let thread = RealtimeThread {
            box.outcome = RealtimeThread.makeCurrentThreadRealtime(priority: Int32(priority))
            box.result = loop()
            box.done.store(true, ordering: .releasing)
        }
        try thread.start()
        while !box.done.load(ordering: .acquiring) {
            tick()
            usleep(50_000)
        }
        thread.join()
        tick()
        return (box.result!, box.outcome)
    }
}

/// Carries the loop's result from the audio thread back to the caller.
private final class ResultBox<Result>: @unchecked Sendable {
    var result: Result?
    var outcome: RealtimeOutcome = .normal
    let done = Atomic<Bool>(false)
}
