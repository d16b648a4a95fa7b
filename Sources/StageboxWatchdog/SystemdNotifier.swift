#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinux

/// systemd's notification socket (`sd_notify`), when stagebox runs as a systemd service with
/// `Type=notify` and `WatchdogSec=`: READY=1 once audio runs, WATCHDOG=1 while it makes progress.
/// Without `NOTIFY_SOCKET` in the environment (BusyBox init) there is none.
public final class SystemdNotifier: @unchecked Sendable {
    private let fd: Int32
    private var address = sockaddr_un()
    private let addressLength: socklen_t
    /// How often systemd wants WATCHDOG=1 (half its WatchdogSec), or nil when it does not watch.
    public let watchdogIntervalNanos: UInt64?

    /// Reads NOTIFY_SOCKET and WATCHDOG_USEC; nil when systemd did not start this process.
    public init?(environment: [String: String]) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count < 108 else { return nil }
        fd = stagebox_unix_datagram_socket()
        guard fd >= 0 else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 } // an abstract socket
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
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

    deinit { close(fd) }

    /// Sends one notification such as `READY=1`; false when systemd did not take it.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL), $0, addressLength) }
        }
        return sent == bytes.count
    }
}
