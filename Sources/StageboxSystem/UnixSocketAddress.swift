import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a path cannot be a Unix socket's address.
public struct SocketPathTooLong: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var limit: Int

    public var description: String {
        "the socket path \(path) is \(path.utf8.count) bytes long; a Unix socket's path holds at most \(limit)"
    }
}

/// The address of a Unix socket (`sockaddr_un`), built in this one place for the bus server,
/// its clients and the systemd notifier. A path starting with `@` is an abstract socket (as
/// systemd writes it in NOTIFY_SOCKET): the `@` becomes the leading NUL byte.
///
/// It lives in StageboxSystem, not StageboxProtocol, because the watchdog module (the systemd
/// notifier) has no business depending on the bus protocol and its atomics.
public struct UnixSocketAddress: Sendable {
    public let path: String
    private let storage: sockaddr_un
    /// The bytes of `storage` that count: the family, the path and its NUL (none if abstract).
    private let length: socklen_t

    /// The most bytes a path may have (sun_path less its terminating NUL).
    public static var maximumPathLength: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

    public init(path: String) throws(SocketPathTooLong) {
        var bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maximumPathLength else {
            throw SocketPathTooLong(path: path, limit: Self.maximumPathLength)
        }
        let abstract = bytes[0] == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        self.path = path
        storage = address
        length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
    }

    /// Calls `body` with the address as the socket calls take it.
    public func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    /// Connects `socket` here (retried on EINTR).
    public func connect(_ socket: FileDescriptor) throws(Errno) {
        let rc = withSockaddr { address, length in
            retryingOnInterrupt { systemConnect(socket.rawValue, address, length) }
        }
        if rc != 0 { throw Errno.last }
    }

    /// Binds `socket` to this address.
    public func bind(_ socket: FileDescriptor) throws(Errno) {
        let rc = withSockaddr { address, length in systemBind(socket.rawValue, address, length) }
        if rc != 0 { throw Errno.last }
    }
}

// `connect` and `bind` out of reach of the methods' own names.
private func systemConnect(_ fd: Int32, _ a: UnsafePointer<sockaddr>, _ n: socklen_t) -> Int32 { connect(fd, a, n) }
private func systemBind(_ fd: Int32, _ a: UnsafePointer<sockaddr>, _ n: socklen_t) -> Int32 { bind(fd, a, n) }
