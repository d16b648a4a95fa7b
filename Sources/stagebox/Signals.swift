import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// SIGINT and SIGTERM ask the running driver to stop; the handler only sets a flag.
enum StopSignals {
    static let received = Atomic<Int32>(0)

    static func install() {
        // A parent may have started us with these blocked (a thread pool's mask is inherited
        // through fork and exec): unblock them, or a stop request would never arrive.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        signal(SIGINT) { StopSignals.received.store($0, ordering: .relaxed) }
        signal(SIGTERM) { StopSignals.received.store($0, ordering: .relaxed) }
        // A client or console that goes away must not kill the appliance.
        signal(SIGPIPE, SIG_IGN)
    }

    static var stopRequested: Bool { received.load(ordering: .relaxed) != 0 }

    /// Stops as SIGINT would (the console on the terminal stagebox runs in).
    static func requestStop() { received.store(SIGINT, ordering: .relaxed) }
}
