import CLinux
import StageboxProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One connected client: its socket, who it is, its ports, and the bytes it sent that were
/// not yet a whole message. Used on the server thread only.
final class ClientSession {
    let socket: Int32
    let pid: Int32
    let uid: UInt32
    let gid: UInt32
    /// Set by hello.
    var name: String?
    var ports: [String: ClientPortRecord] = [:]
    var inbound: [UInt8] = []

    init(socket: Int32) {
        self.socket = socket
        var pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0
        _ = stagebox_peer_credentials(socket, &pid, &uid, &gid)
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    deinit { close(socket) }

    var label: String { "\(name ?? "client") (pid \(pid), uid \(uid), gid \(gid))" }

    /// Sends one frame with descriptors attached. False when the client cannot take it
    /// (its socket buffer is full: it stopped reading) or is gone.
    func send(_ bytes: [UInt8], fds: [Int32] = []) -> Bool {
        var offset = 0
        var fdsToSend = fds
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                fdsToSend.withUnsafeBufferPointer { f in
                    stagebox_send_with_fds(socket, raw.baseAddress! + offset, raw.count - offset, f.baseAddress,
                                           Int32(f.count))
                }
            }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    // Give a slow reader a moment, never more: the server must not stall.
                    var p = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
                    if poll(&p, 1, 100) > 0 { continue }
                }
                return false
            }
            offset += n
            fdsToSend = []
        }
        return true
    }
}
