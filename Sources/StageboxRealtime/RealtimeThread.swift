import CLinux
import StageboxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What happened when the audio thread asked for real-time scheduling.
public enum RealtimeOutcome: Sendable, Equatable {
    /// SCHED_FIFO at `priority`; `asked` is what the configuration wanted (higher when the
    /// process's RLIMIT_RTPRIO allowed only `priority`).
    case fifo(priority: Int32, asked: Int32)
    /// Normal scheduling, as configured (rt_priority = 0); `nice` is the thread's nice value.
    case normal(nice: Int32)
    /// SCHED_FIFO was asked for and refused; `errno` says why (usually EPERM), `rtprioLimit` is
    /// the process's RLIMIT_RTPRIO hard limit, and `nice` what the thread got instead.
    case refused(priority: Int32, errno: Int32, rtprioLimit: Int32, nice: Int32)
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

    /// Stack the audio thread touches before its body runs, so that under `MCL_ONFAULT` its
    /// pages are locked before the first period (a release build uses 16-24 KiB of it, a debug
    /// build up to 44 KiB).
    public static let prefaultedStack = 128 * 1024

    /// Asks for SCHED_FIFO at `priority` for the calling thread (0 = stay on normal scheduling).
    ///
    /// Refused, it takes the routes an unprivileged process has: RLIMIT_RTPRIO (what
    /// `ulimit -r`, limits.conf or systemd's LimitRTPRIO= grant) lets it raise its own soft limit
    /// and take SCHED_FIFO up to the hard limit; failing that, RLIMIT_NICE may still allow a
    /// lower nice value, which makes the scheduler favour this thread over the clients it wakes.
    /// (rtkit needs D-Bus, which the appliance does not run; a desktop user can use the limit.)
    public static func makeCurrentThreadRealtime(priority: Int32) -> RealtimeOutcome {
        guard priority > 0 else { return .normal(nice: favourCurrentThread()) }
        if setFIFO(priority) == 0 { return .fifo(priority: priority, asked: priority) }
        var soft = 0, hard = 0
        if stagebox_get_limit(1, &soft, &hard) == 0, hard != 0 {
            let allowed = hard < 0 ? priority : min(priority, Int32(clamping: hard))
            if soft >= 0 && soft < allowed { _ = stagebox_raise_soft_limit(1) }
            if setFIFO(allowed) == 0 { return .fifo(priority: allowed, asked: priority) }
        }
        let hardLimit: Int32 = hard < 0 ? 99 : Int32(clamping: hard)
        let refused = setFIFO(priority)
        return .refused(priority: priority, errno: refused, rtprioLimit: hardLimit, nice: favourCurrentThread())
    }

    private static func setFIFO(_ priority: Int32) -> Int32 {
        var param = sched_param()
        param.sched_priority = priority
        return pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &param)
    }

    /// Lowers the calling thread's nice value as far as RLIMIT_NICE allows (to −20 with
    /// CAP_SYS_NICE); returns the nice value it has then. On Linux, PRIO_PROCESS with a thread
    /// id sets that thread alone.
    private static func favourCurrentThread() -> Int32 {
        var soft = 0, hard = 0
        _ = stagebox_raise_soft_limit(0)
        // RLIMIT_NICE is 20 − the lowest nice allowed; −20 first, for CAP_SYS_NICE.
        let floor: Int32 = stagebox_get_limit(0, &soft, &hard) != 0 ? 0 : hard < 0 ? -20 : 20 - Int32(clamping: min(hard, 40))
        for nice: Int32 in [-20, floor] where nice < 0 {
            if stagebox_set_thread_nice(nice) == 0 { break }
        }
        return stagebox_thread_nice()
    }

    public init(body: @escaping () -> Void) {
        self.body = body
    }

    /// Starts the thread; throws when the system cannot start one (the caller says so and
    /// may try again: a thread limit is not a reason to trap).
    public func start() throws(SystemCallError) {
        thread = try PosixThread.start(named: "the audio thread", stackSize: PosixThread.serviceStackSize, {
            stagebox_prefault_stack(Self.prefaultedStack)
            self.body()
        }).get()
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
