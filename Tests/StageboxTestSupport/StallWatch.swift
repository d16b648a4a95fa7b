import CLinux
import Foundation
import StageboxRealtime
import StageboxSystem
import Synchronization

/// Notes when the machine itself stalled: on each CPU, a SCHED_FIFO thread pinned there asks
/// to wake every millisecond and records each wake-up more than 4 ms late. A shared build
/// machine stops a virtual CPU now and then for tens of milliseconds (once 573 times in five
/// minutes); a dropout in such a moment is the machine's, not stagebox's. Timed tests judge
/// their zero-glitch claims only where the machine kept running.
public final class StallWatch: @unchecked Sendable {
    // @unchecked: each thread writes its own slot of `stalls`; they are read after `finish()`.
    public let origin = monotonicNanoseconds()
    private var stalls: [[Int64]]
    private let stop = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let cpus: Int

    public init() {
        cpus = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        stalls = Array(repeating: [], count: cpus)
        for cpu in 0..<cpus {
            Thread {
                _ = stagebox_pin_to_cpu(Int32(cpu))
                _ = RealtimeThread.makeCurrentThreadRealtime(priority: 80)
                var next = self.origin
                while !self.stop.load(ordering: .relaxed) {
                    next += 1_000_000
                    sleepUntil(monotonicNanos: next)
                    let now = monotonicNanoseconds()
                    if now - next > 4_000_000 {
                        self.stalls[cpu].append(now - self.origin)
                        next = now
                    }
                }
                self.done.signal()
            }.start()
        }
    }

    /// Stops watching; the times of the stalls on any CPU, in nanoseconds from the start.
    public func finish() -> [Int64] {
        stop.store(true, ordering: .relaxed)
        for _ in 0..<cpus { done.wait() }
        return stalls.flatMap { $0 }.sorted()
    }

    /// A line for the test's output: how often the machine stalled, and whether that leaves the
    /// test's real-time claim to be judged.
    public static func report(_ stalls: [Int64], _ what: String) -> String {
        stalls.isEmpty ? "\(what): the machine did not stall; judged"
            : "\(what): the machine stalled \(stalls.count) times (a 1 ms timer more than 4 ms late); "
                + "its real-time claim is not judged in this run"
    }
}
