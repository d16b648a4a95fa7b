import StageboxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What happened when the audio thread asked for real-time scheduling.
public enum RealtimeOutcome: Sendable, Equatable {
    case fifo(priority: Int32)
    case normal
    /// SCHED_FIFO was asked for and refused; `errno` says why (usually EPERM).
    case refused(priority: Int32, errno: Int32)
}

/// Starts and joins the audio thread.
///
/// A plain pthread rather than a Swift task: the audio thread must never be suspended
/// by a cooperative executor, and it asks the kernel for SCHED_FIFO itself.
public final class RealtimeThread: @unchecked Sendable {
    // @unchecked: started and joined by the one thread that owns it; `body` runs on the new
    // thread only.
    private var thread: PosixThread?
    private let body: () -> Void

    /// Locks all current and future memory so that the audio thread never page-faults.
    /// Returns errno on failure (not being allowed to lock memory is not fatal).
    @discardableResult
    public static func lockMemory() -> Int32 {
        mlockall(Int32(MCL_CURRENT | MCL_FUTURE)) == 0 ? 0 : errno
    }

    /// Asks for SCHED_FIFO at `priority` for the calling thread (0 = stay on normal scheduling).
    public static func makeCurrentThreadRealtime(priority: Int32) -> RealtimeOutcome {
        guard priority > 0 else { return .normal }
        var param = sched_param()
        param.sched_priority = priority
        let rc = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &param)
        return rc == 0 ? .fifo(priority: priority) : .refused(priority: priority, errno: rc)
    }

    public init(body: @escaping () -> Void) {
        self.body = body
    }

    /// Starts the thread; throws when the system cannot start one (the caller says so and
    /// may try again: a thread limit is not a reason to trap).
    public func start() throws(SystemCallError) {
        thread = try PosixThread.start(named: "the audio thread", { self.body() }).get()
    }

    /// Waits for the thread to end.
    public func join() {
        thread?.join(); thread = nil
    }
}

/// The calling thread's pthread id as a number (for statistics and allocation tests).
@inline(__always)
public func currentThreadID() -> UInt {
    #if canImport(Musl)
    UInt(bitPattern: pthread_self())  // musl's pthread_t is a pointer
    #else
    UInt(pthread_self())
    #endif
}
