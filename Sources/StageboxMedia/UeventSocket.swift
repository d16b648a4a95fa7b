import CLinux
import StageboxSystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The kernel's device events as they happen: a netlink socket, polled by the media thread.
final class UeventSocket {
    let descriptor: FileDescriptor
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

    init() throws(SystemCallError) {
        let fd = stagebox_uevent_socket()
        guard fd >= 0 else { throw SystemCallError.last("listening to the kernel's device events (netlink)") }
        descriptor = FileDescriptor(rawValue: fd)
    }

    deinit { try? descriptor.close() }

    /// Every message waiting now (none when nothing is; the socket never blocks). A burst
    /// larger than the socket's buffer loses messages: `lost` says so, and the media thread
    /// then scans what is there.
    func receive() -> (events: [Uevent], lost: Bool) {
        var events: [Uevent] = []
        var lost = false
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(descriptor.rawValue, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ENOBUFS { lost = true; continue }
                break
            }
            if n == 0 { break }
            if let event = Uevent(message: buffer[0..<n]) { events.append(event) }
        }
        return (events, lost)
    }
}
