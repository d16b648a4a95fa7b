import Foundation
import StageboxProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A raw connection to the bus socket, for sending what no well-behaved client would.
public final class RawSocket {
    public let fd: Int32

    public init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw POSIXError(.ECONNREFUSED) }
        var tv = timeval(tv_sec: 30, tv_usec: 0) // an answer on a loaded machine can take seconds
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    public func send(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }

    /// Reads one whole server message, or nil when the server closed the connection (or timed out).
    public func receive() -> ServerMessage? {
        var inbound: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let frame = try? Frame.next(from: &inbound) {
                return try? ServerMessage.decode(type: frame.type, body: frame.body)
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return nil }
            inbound += buffer[0..<n]
        }
    }
}
