import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// systemd's notification socket (`sd_notify`), when stagebox runs as a systemd service with
/// `Type=notify` and `WatchdogSec=`: READY=1 once audio runs, WATCHDOG=1 while it makes progress.
/// Without `NOTIFY_SOCKET` in the environment (BusyBox init) there is none.
public final class SystemdNotifier: Sendable {
    private let socket: FileDescriptor
    private let address: UnixSocketAddress
    /// How often systemd wants WATCHDOG=1 (half its WatchdogSec), or nil when it does not watch.
    public let watchdogIntervalNanos: UInt64?

    /// Reads NOTIFY_SOCKET and WATCHDOG_USEC; nil when systemd did not start this process (or
    /// its socket cannot be addressed or opened: then there is no one to tell).
    public init?(environment: [String: String]) {
        guard let path = environment["NOTIFY_SOCKET"], let address = try? UnixSocketAddress(path: path),
              let socket = try? UnixSocket.datagram() else { return nil }
        self.address = address
        self.socket = socket
        if let usec = environment["WATCHDOG_USEC"].flatMap({ UInt64($0) }), usec > 0 {
            watchdogIntervalNanos = usec * 1000 / 2
        } else {
            watchdogIntervalNanos = nil
        }
    }

    /// From this process's environment.
    public convenience init?() {
        var environment: [String: String] = [:]
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        self.init(environment: environment)
    }

    deinit { try? socket.close() }

    /// Sends one notification such as `READY=1`; false when systemd did not take it.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        let bytes = Array(state.utf8)
        let sent = address.withSockaddr { to, length in
            retryingOnInterrupt { sendto(socket.rawValue, bytes, bytes.count, Int32(MSG_NOSIGNAL), to, length) }
        }
        return sent == bytes.count
    }
}
