import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// SIGINT and SIGTERM ask the running driver to stop; the handler sets a flag and signals the
/// eventfd in `wakes` (a `write`, safe in a handler), so that a control thread that ticks once
/// a second when idle stops at once.
enum StopSignals {
    static let received = Atomic<Int32>(0)
    /// The eventfd the handler signals (a copy of the control thread's, never closed: a
    /// handler that loaded it just before it was cleared still writes to that eventfd); -1: none.
    static let wakes = Atomic<Int32>(-1)

    static func install() {
        // Both atomics made now, not first in a handler (a static's first touch takes a lock).
        _ = received.load(ordering: .relaxed)
        _ = wakes.load(ordering: .relaxed)
        // A parent may have started us with these blocked (a thread pool's mask is inherited
        // through fork and exec): unblock them, or a stop request would never arrive.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        signal(SIGINT) { StopSignals.handle($0) }
        signal(SIGTERM) { StopSignals.handle($0) }
        // A client or console that goes away must not kill the appliance.
        signal(SIGPIPE, SIG_IGN)
    }

    private static func handle(_ signal: Int32) {
        received.store(signal, ordering: .relaxed)
        let fd = wakes.load(ordering: .relaxed)
        guard fd >= 0 else { return }
        let saved = errno // the interrupted code may be about to read it
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
        errno = saved
    }

    static var stopRequested: Bool { received.load(ordering: .relaxed) != 0 }

    /// Stops as SIGINT would (the console on the terminal stagebox runs in).
    static func requestStop() { handle(SIGINT) }
}
