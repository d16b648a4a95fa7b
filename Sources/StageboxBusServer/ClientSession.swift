import CLinux
import StageboxProtocol
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One connected client: its socket, who it is, its ports, and the bytes it sent that were
/// not yet a whole message. Used on the server thread only.
final class ClientSession {
    let socket: FileDescriptor
    /// Tells this session from one that came after it under the same name (events for a
    /// client's trigger are queued on other threads and must not reach its successor).
    let serial: UInt64
    let pid: Int32
    let uid: UInt32
    let gid: UInt32
    /// Set by hello.
    var name: String?
    var ports: [String: ClientPortRecord] = [:]
    /// The full names (`client.trigger`) of the triggers this client made.
    var triggers: Set<String> = []
    var inbound: [UInt8] = []

    /// Takes `socket`: the session closes it.
    init(socket: FileDescriptor, serial: UInt64) {
        self.socket = socket
        self.serial = serial
        var pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0
        _ = stagebox_peer_credentials(socket.rawValue, &pid, &uid, &gid)
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    deinit { try? socket.close() }

    var label: String { "\(name ?? "client") (pid \(pid), uid \(uid), gid \(gid))" }

    /// Sends one frame with descriptors attached. Nil when sent; else why the client could not
    /// take it, for its leave line: its socket buffer stayed full (it stopped reading), or it
    /// is gone (it closed its end while the bus was writing to it).
    func send(_ bytes: [UInt8], fds: [FileDescriptor] = []) -> String? {
        var offset = 0
        var fdsToSend = fds
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                Result { () throws(Errno) in
                    try DescriptorPassing.send(socket, UnsafeRawBufferPointer(rebasing: raw[offset...]), descriptors: fdsToSend)
                }
            }
            switch sent {
            case .success(let n):
                offset += n
                fdsToSend = []
            case .failure(.wouldBlock):
                // Give a slow reader a moment, never more: the server must not stall.
                var p = pollfd(fd: socket.rawValue, events: Int16(POLLOUT), revents: 0)
                if poll(&p, 1, 100) <= 0 { return "not reading its socket" }
            case .failure(.brokenPipe), .failure(.connectionReset):
                return "disconnected"
            case .failure(let error):
                return "socket error: \(error)"
            }
        }
        return nil
    }
}
